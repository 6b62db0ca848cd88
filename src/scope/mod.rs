//! The scope resolver: which files need checking, and why.

pub mod git;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use git2::{Repository, Status, StatusOptions};

use crate::state::{BranchState, ToolStamp};
use serde::Serialize;

use crate::config::Config;
use crate::error::QgError;
use crate::file_name;
use crate::workspace::Workspace;

/// The scope modes of `--scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ScopeMode {
    /// Changed since the last green run, plus what failed last time.
    Auto,
    /// Changed since the merge-base with the parent branch.
    Branch,
    /// Every project file the `project_scope` globs select.
    Project,
    /// The paths given on the command line.
    Files,
}

impl ScopeMode {
    /// Lowercase name, as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeMode::Auto => "auto",
            ScopeMode::Branch => "branch",
            ScopeMode::Project => "project",
            ScopeMode::Files => "files",
        }
    }
}

/// Why a file is in scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Differs from the baseline.
    Changed,
    /// Not tracked by git and not ignored.
    Untracked,
    /// Had violations in the previous run.
    FailedLastRun,
    /// Selected by `project_scope` globs.
    ProjectGlob,
    /// Named on the command line.
    Explicit,
    /// Imports a changed file (directly or through other modules): for the
    /// gates that check importers, an edit can break it.
    ImportsChanged,
}

/// One file to check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopeFile {
    /// Root-relative, `/`-separated (quoted in JSON when not UTF-8).
    #[serde(serialize_with = "crate::file_name::serialize")]
    pub path: String,
    /// Every reason it is in scope.
    pub reasons: Vec<Reason>,
    /// For `imports_changed`: the changed files it depends on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
}

impl ScopeFile {
    /// A file in scope for one reason.
    pub fn new(path: String, reason: Reason) -> ScopeFile {
        ScopeFile {
            path,
            reasons: vec![reason],
            depends_on: Vec::new(),
        }
    }

    /// In scope only because it imports a changed file: only the gates that
    /// check importers check it.
    pub fn only_imports_changed(&self) -> bool {
        self.reasons.iter().all(|r| *r == Reason::ImportsChanged)
    }
}

/// The resolved scope.
#[derive(Debug, Clone, Serialize)]
pub struct Scope {
    /// The mode actually used.
    pub mode: ScopeMode,
    /// The mode asked for (differs after a fallback).
    pub requested: ScopeMode,
    /// Files to check, sorted by path.
    pub files: Vec<ScopeFile>,
    /// Baseline commit the diff was taken from, if any.
    pub baseline_sha: Option<String>,
    /// Why the requested mode could not be used as is.
    pub fallback_reason: Option<String>,
    /// Named paths that yielded no file, and the filter that removed them.
    pub unmatched: Vec<Unmatched>,
    /// Why the importers of the changed files are unknown, when they are:
    /// the gates that check importers then check the whole project.
    pub importers_unknown: Option<String>,
    /// What the diff behind this scope saw: the files whose content may
    /// differ from the index, and the deleted ones. `None` when no diff was
    /// taken (`project`, named paths).
    #[serde(skip)]
    pub diff: Option<git::Changes>,
}

/// A path named on the command line that yielded no file to check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    /// The path as given (quoted in JSON when not UTF-8).
    #[serde(serialize_with = "crate::file_name::serialize")]
    pub path: String,
    /// Which filter removed it.
    pub reason: String,
}

impl Unmatched {
    /// `path: reason`, as the summary line and warnings print it.
    pub fn describe(&self) -> String {
        format!("{}: {}", file_name::display(&self.path), self.reason)
    }
}

impl Scope {
    /// The paths alone, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct ScopeRequest {
    /// `--scope`, if given.
    pub mode: Option<ScopeMode>,
    /// Positional paths (imply `files`).
    pub paths: Vec<PathBuf>,
    /// `--parent REF` for `branch` scope (and `auto`'s fallback to it).
    pub parent: Option<String>,
}

impl ScopeRequest {
    /// The mode the request amounts to (paths imply `files`; default `auto`).
    pub fn effective_mode(&self) -> Result<ScopeMode, QgError> {
        match (self.mode, self.paths.is_empty()) {
            (Some(ScopeMode::Files), true) => Err(QgError::Usage(
                "--scope files needs at least one path".to_string(),
            )),
            (Some(mode), true) => Ok(mode),
            (None | Some(ScopeMode::Files), false) => Ok(ScopeMode::Files),
            (Some(mode), false) => Err(QgError::Usage(format!(
                "paths imply --scope files; drop --scope {} or the paths",
                mode.as_str()
            ))),
            (None, true) => Ok(ScopeMode::Auto),
        }
    }
}

/// What `auto` scope compares against: this branch's state and the tools in force.
#[derive(Debug, Clone, Default)]
pub struct Baseline<'a> {
    /// The branch's state entry, if any.
    pub state: Option<&'a BranchState>,
    /// The resolved tool of each active gate now.
    pub tools: BTreeMap<String, ToolStamp>,
}

/// Resolves the request against the workspace.
pub fn resolve(
    ws: &Workspace,
    config: &Config,
    request: &ScopeRequest,
    baseline: &Baseline<'_>,
) -> Result<Scope, QgError> {
    let requested = request.effective_mode()?;
    match requested {
        ScopeMode::Files => explicit_scope(ws, config, &request.paths),
        ScopeMode::Project => project_scope(ws, config, ScopeMode::Project, None),
        ScopeMode::Auto | ScopeMode::Branch => {
            let Some(repo) = &ws.repo else {
                return Err(QgError::Git(format!(
                    "--scope {} needs a git repository and {} is not in one; use --scope project or name paths",
                    requested.as_str(),
                    ws.root.display()
                )));
            };
            let context = GitScope {
                ws,
                repo,
                config,
                request,
                head: git::head(repo)?,
            };
            if requested == ScopeMode::Auto {
                context.auto(baseline)
            } else {
                context.branch(ScopeMode::Branch, None)
            }
        }
    }
}

/// Resolution of the git-based scopes.
struct GitScope<'a> {
    ws: &'a Workspace,
    repo: &'a Repository,
    config: &'a Config,
    request: &'a ScopeRequest,
    head: git::Head,
}

impl GitScope<'_> {
    fn auto(&self, baseline: &Baseline<'_>) -> Result<Scope, QgError> {
        let head = &self.head;
        let Some(head_commit) = head.commit else {
            let reason = "no commits yet (unborn HEAD)".to_string();
            return project_scope(self.ws, self.config, ScopeMode::Auto, Some(reason));
        };
        let state = baseline.state;
        let failed = state.map(|s| s.failed_files.as_slice()).unwrap_or_default();
        let mut scope = match self.trusted_baseline(head, baseline) {
            Ok(sha) => {
                let oid = git2::Oid::from_str(&sha).expect("checked by trusted_baseline");
                let tree = self.tree_of(oid)?;
                let changes = git::changes_since(self.repo, Some(&tree))?;
                let clean = state.map(|s| &s.clean_blobs);
                let mut scope = self.scope_of_changes(ScopeMode::Auto, &changes, clean);
                self.add_drifted_clean_files(&mut scope, &changes, clean);
                scope.baseline_sha = Some(sha);
                scope.diff = Some(changes);
                scope
            }
            Err(reason) => self.fallback(head_commit, reason)?,
        };
        scope.requested = ScopeMode::Auto;
        self.add_failed_files(&mut scope, failed);
        Ok(scope)
    }

    /// `Ok(baseline sha)` when the baseline can be trusted, else why not.
    fn trusted_baseline(
        &self,
        head: &git::Head,
        baseline: &Baseline<'_>,
    ) -> Result<String, String> {
        let Some(state) = baseline.state else {
            return Err(format!("no baseline for branch {}", head.branch));
        };
        let Some(sha) = &state.baseline_sha else {
            return Err(format!("no baseline for branch {}", head.branch));
        };
        let exists = git2::Oid::from_str(sha)
            .ok()
            .is_some_and(|oid| self.repo.find_commit(oid).is_ok());
        if !exists {
            return Err(format!(
                "baseline {} no longer exists (rebased or garbage-collected)",
                git::short(sha)
            ));
        }
        if state.config_hash.as_deref() != Some(self.config.hash.as_str()) {
            return Err(format!("config changed since baseline {}", git::short(sha)));
        }
        if let Some(gate) = changed_tool(&state.tools, &baseline.tools) {
            return Err(format!(
                "the tool of gate {gate} changed since baseline {}",
                git::short(sha)
            ));
        }
        Ok(sha.clone())
    }

    /// `branch` when a parent resolves and HEAD is ahead of it, else `project`.
    fn fallback(&self, head: git2::Oid, reason: String) -> Result<Scope, QgError> {
        let parent = self.parent()?.ok();
        let ahead = parent.as_ref().is_some_and(|p| {
            self.repo
                .merge_base(p.commit, head)
                .is_ok_and(|base| base != head)
        });
        if ahead {
            self.branch(ScopeMode::Auto, Some(reason))
        } else {
            project_scope(self.ws, self.config, ScopeMode::Auto, Some(reason))
        }
    }

    /// Changed since `merge-base(parent, HEAD)`, plus untracked.
    fn branch(
        &self,
        requested: ScopeMode,
        why_auto_fell_back: Option<String>,
    ) -> Result<Scope, QgError> {
        let head = &self.head;
        let join = |detail: String| match &why_auto_fell_back {
            Some(first) => format!("{first}; {detail}"),
            None => detail,
        };
        let Some(head_commit) = head.commit else {
            let reason = join("no commits yet (unborn HEAD)".to_string());
            return project_scope(self.ws, self.config, requested, Some(reason));
        };
        let parent = match self.parent()? {
            Ok(parent) => parent,
            Err(tried) => {
                return project_scope(self.ws, self.config, requested, Some(join(tried)));
            }
        };
        let base = match self.repo.merge_base(parent.commit, head_commit) {
            Ok(base) => base,
            Err(_) => {
                let reason = join(format!(
                    "no merge-base between HEAD and {} (a shallow clone? fetch more history)",
                    parent.name
                ));
                return project_scope(self.ws, self.config, requested, Some(reason));
            }
        };
        let tree = self.tree_of(base)?;
        let changes = git::changes_since(self.repo, Some(&tree))?;
        let mut scope = self.scope_of_changes(ScopeMode::Branch, &changes, None);
        scope.requested = requested;
        scope.baseline_sha = Some(base.to_string());
        scope.fallback_reason = why_auto_fell_back;
        scope.diff = Some(changes);
        Ok(scope)
    }

    /// The parent branch (`--parent`, the config's, origin/HEAD, main,
    /// master), never HEAD's own branch; `Err` says what was tried.
    fn parent(&self) -> Result<Result<git::Parent, String>, QgError> {
        git::resolve_parent(
            self.repo,
            self.request.parent.as_deref(),
            self.config.parent_branch.as_deref(),
            &self.head.branch,
        )
    }

    fn tree_of(&self, commit: git2::Oid) -> Result<git2::Tree<'_>, QgError> {
        self.repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| QgError::Git(format!("cannot read commit {commit}: {}", e.message())))
    }

    /// Changed ∪ untracked, minus excluded, non-files and content that
    /// already passed (`clean`).
    fn scope_of_changes(
        &self,
        mode: ScopeMode,
        changes: &git::Changes,
        clean: Option<&BTreeMap<String, String>>,
    ) -> Scope {
        let mut files: BTreeMap<String, Vec<Reason>> = BTreeMap::new();
        let tagged = changes
            .changed
            .iter()
            .map(|p| (p, Reason::Changed))
            .chain(changes.untracked.iter().map(|p| (p, Reason::Untracked)));
        for (path, reason) in tagged {
            if self.is_out_of_scope(path) {
                continue;
            }
            let passed = clean.and_then(|c| c.get(path)).is_some_and(|blob| {
                git::blob_id(&file_name::join(&self.ws.root, path)).as_ref() == Some(blob)
            });
            if !passed {
                files.entry(path.clone()).or_default().push(reason);
            }
        }
        Scope {
            mode,
            requested: mode,
            files: into_scope_files(files),
            baseline_sha: None,
            fallback_reason: None,
            unmatched: Vec::new(),
            importers_unknown: None,
            diff: None,
        }
    }

    /// Files that passed with uncommitted content (`clean`) and now hold
    /// something else, though the diff against the baseline shows nothing
    /// (a stash or checkout brought the baseline's version back): the
    /// baseline vouches for the content that was checked, not for HEAD's.
    fn add_drifted_clean_files(
        &self,
        scope: &mut Scope,
        changes: &git::Changes,
        clean: Option<&BTreeMap<String, String>>,
    ) {
        let drifted: Vec<&String> = clean
            .into_iter()
            .flatten()
            .filter(|(path, _)| {
                !changes.changed.contains(*path) && !changes.untracked.contains(*path)
            })
            .filter(|(path, _)| !self.is_out_of_scope(path))
            .filter(|(path, blob)| {
                git::blob_id(&file_name::join(&self.ws.root, path)).as_ref() != Some(*blob)
            })
            .map(|(path, _)| path)
            .collect();
        if drifted.is_empty() {
            return;
        }
        let mut files: BTreeMap<String, Vec<Reason>> =
            scope.files.drain(..).map(|f| (f.path, f.reasons)).collect();
        for path in drifted {
            files.entry(path.clone()).or_default().push(Reason::Changed);
        }
        scope.files = into_scope_files(files);
    }

    /// Outside the project (`project_scope` include and exclude globs: the
    /// git scopes are parts of `project`), qg's own state, or not a regular
    /// file (deleted, a directory, a symlink).
    fn is_out_of_scope(&self, path: &str) -> bool {
        !self.config.project_scope.matches(path)
            || crate::state::is_state_file(path)
            || !is_regular_file(&file_name::join(&self.ws.root, path))
    }

    /// Files that failed last time are checked again until they pass.
    fn add_failed_files(&self, scope: &mut Scope, failed: &[String]) {
        let mut files: BTreeMap<String, Vec<Reason>> =
            scope.files.drain(..).map(|f| (f.path, f.reasons)).collect();
        for path in failed {
            if self.is_out_of_scope(path) {
                continue;
            }
            files
                .entry(path.clone())
                .or_default()
                .push(Reason::FailedLastRun);
        }
        scope.files = into_scope_files(files);
    }
}

/// Adds the files that import a changed one (`importer → the changed file
/// it depends on`); a file already in scope is checked by every gate anyway.
pub fn add_importers(scope: &mut Scope, importers: BTreeMap<String, String>) {
    let present: BTreeSet<String> = scope.paths().map(str::to_string).collect();
    scope.files.extend(
        importers
            .into_iter()
            .filter(|(path, _)| !present.contains(path))
            .map(|(path, origin)| ScopeFile {
                path,
                reasons: vec![Reason::ImportsChanged],
                depends_on: vec![origin],
            }),
    );
    scope.files.sort_by(|a, b| a.path.cmp(&b.path));
}

fn into_scope_files(files: BTreeMap<String, Vec<Reason>>) -> Vec<ScopeFile> {
    files
        .into_iter()
        .map(|(path, mut reasons)| {
            reasons.sort();
            reasons.dedup();
            ScopeFile {
                path,
                reasons,
                depends_on: Vec::new(),
            }
        })
        .collect()
}

/// The first gate whose tool differs from the one the baseline was taken with.
fn changed_tool(
    then: &BTreeMap<String, ToolStamp>,
    now: &BTreeMap<String, ToolStamp>,
) -> Option<String> {
    now.iter()
        .find(|(gate, stamp)| then.get(*gate) != Some(stamp))
        .map(|(gate, _)| gate.clone())
}

/// Every file `project` scope covers: tracked and untracked-not-ignored
/// files that pass the `project_scope` globs.
pub fn project_files(ws: &Workspace, config: &Config) -> Result<Vec<String>, QgError> {
    Ok(candidate_files(ws)?
        .into_iter()
        .filter(|path| config.project_scope.matches(path) && !crate::state::is_state_file(path))
        .collect())
}

fn project_scope(
    ws: &Workspace,
    config: &Config,
    requested: ScopeMode,
    fallback_reason: Option<String>,
) -> Result<Scope, QgError> {
    let files = project_files(ws, config)?
        .into_iter()
        .map(|path| ScopeFile::new(path, Reason::ProjectGlob))
        .collect();
    Ok(Scope {
        mode: ScopeMode::Project,
        requested,
        files,
        baseline_sha: None,
        fallback_reason,
        unmatched: Vec::new(),
        importers_unknown: None,
        diff: None,
    })
}

/// The paths named on the command line. One rule: a file you name is
/// checked (by every gate of its type) unless an exclude glob removes it; a
/// directory you name stands for the project files under it (tracked and
/// untracked-not-ignored, passing the `project_scope` globs). A named path
/// that yields nothing is recorded in [`Scope::unmatched`] with the reason.
fn explicit_scope(ws: &Workspace, config: &Config, paths: &[PathBuf]) -> Result<Scope, QgError> {
    let mut selected = BTreeSet::new();
    let mut unmatched = Vec::new();
    let mut candidates: Option<Vec<String>> = None;
    for raw in paths {
        let (relative, is_dir) = resolve_named(ws, raw)?;
        let yielded = if is_dir {
            let all = match &candidates {
                Some(all) => all,
                None => candidates.insert(candidate_files(ws)?),
            };
            directory_files(ws, config, all, &relative)
        } else {
            named_file(config, &relative)
        };
        match yielded {
            Ok(files) => selected.extend(files),
            Err(reason) => unmatched.push(Unmatched {
                path: file_name::from_os_str(raw.as_os_str()),
                reason,
            }),
        }
    }
    let files = selected
        .into_iter()
        .map(|path| ScopeFile::new(path, Reason::Explicit))
        .collect();
    Ok(Scope {
        mode: ScopeMode::Files,
        requested: ScopeMode::Files,
        files,
        baseline_sha: None,
        fallback_reason: None,
        unmatched,
        importers_unknown: None,
        diff: None,
    })
}

/// The root-relative form of a named path, and whether it is a directory.
fn resolve_named(ws: &Workspace, raw: &Path) -> Result<(String, bool), QgError> {
    let canonical = ws
        .cwd
        .join(raw)
        .canonicalize()
        .map_err(|_| QgError::Usage(format!("path does not exist: {}", raw.display())))?;
    let relative = ws.relative(&canonical).ok_or_else(|| {
        QgError::Usage(format!(
            "path is outside the project root {}: {}",
            ws.root.display(),
            raw.display()
        ))
    })?;
    Ok((relative, canonical.is_dir()))
}

/// A named file, or why it is not checked.
fn named_file(config: &Config, relative: &str) -> Result<Vec<String>, String> {
    if crate::state::is_state_file(relative) {
        return Err("it is qg's own state, never checked".to_string());
    }
    match config.project_scope.excluded_by(relative).first() {
        Some(glob) => Err(format!("excluded by project_scope.exclude_globs `{glob}`")),
        None => Ok(vec![relative.to_string()]),
    }
}

/// The project files under a named directory, or which filter left none.
fn directory_files(
    ws: &Workspace,
    config: &Config,
    candidates: &[String],
    relative: &str,
) -> Result<Vec<String>, String> {
    let prefix = match relative.is_empty() {
        true => String::new(),
        false => format!("{relative}/"),
    };
    let under: Vec<&String> = candidates
        .iter()
        .filter(|p| p.starts_with(&prefix))
        .collect();
    if under.is_empty() {
        let ignored = ws.repo.is_some() && holds_a_file(&file_name::join(&ws.root, relative));
        return Err(match ignored {
            true => "git ignores every file under it".to_string(),
            false => "it holds no file".to_string(),
        });
    }
    let filter = &config.project_scope;
    let included: Vec<&String> = under
        .iter()
        .copied()
        .filter(|p| filter.is_included(p))
        .collect();
    if included.is_empty() {
        let globs = filter.include_patterns().join(", ");
        return Err(match under.len() {
            1 => format!(
                "the one file under it does not match project_scope.include_globs ({globs})"
            ),
            n => format!(
                "none of the {n} files under it matches project_scope.include_globs ({globs})"
            ),
        });
    }
    let kept: Vec<String> = included
        .iter()
        .filter(|p| !filter.is_excluded(p) && !crate::state::is_state_file(p))
        .map(|p| p.to_string())
        .collect();
    if kept.is_empty() {
        let mut globs: Vec<&str> = included
            .iter()
            .flat_map(|p| filter.excluded_by(p))
            .collect();
        globs.sort_unstable();
        globs.dedup();
        let globs: Vec<String> = globs.iter().map(|g| format!("`{g}`")).collect();
        return Err(format!(
            "every matching file under it is excluded by project_scope.exclude_globs ({})",
            globs.join(", ")
        ));
    }
    Ok(kept)
}

/// Whether a directory holds a regular file anywhere below it.
fn holds_a_file(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| match entry.file_type() {
            Ok(t) if t.is_file() => true,
            Ok(t) if t.is_dir() => holds_a_file(&entry.path()),
            _ => false,
        })
}

/// Every regular file of the project: in git, tracked (and still present)
/// plus untracked-not-ignored; outside git, a walk of the root. Names that
/// are not UTF-8 are kept, losslessly (see [`crate::file_name`]).
pub fn candidate_files(ws: &Workspace) -> Result<Vec<String>, QgError> {
    let mut files = match &ws.repo {
        Some(repo) => git_files(repo)?,
        None => walk_files(&ws.root)?,
    };
    files.retain(|p| is_regular_file(&file_name::join(&ws.root, p)));
    files.sort();
    files.dedup();
    Ok(files)
}

fn git_files(repo: &Repository) -> Result<Vec<String>, QgError> {
    let git_err = |e: git2::Error| QgError::Git(format!("cannot list files: {}", e.message()));
    let index = repo.index().map_err(git_err)?;
    const GITLINK: u32 = 0o160000;
    let mut files: BTreeSet<String> = index
        .iter()
        .filter(|entry| entry.mode != GITLINK)
        .map(|entry| file_name::from_bytes(&entry.path))
        .collect();
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options)).map_err(git_err)?;
    for entry in statuses.iter() {
        let status = entry.status();
        let path = file_name::from_bytes(entry.path_bytes());
        if status.contains(Status::WT_NEW) {
            files.insert(path);
        } else if status.intersects(Status::WT_DELETED | Status::INDEX_DELETED) {
            files.remove(&path);
        }
    }
    Ok(files.into_iter().collect())
}

fn walk_files(root: &Path) -> Result<Vec<String>, QgError> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let dir = root.join(&relative);
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| QgError::io(format!("cannot list {}", dir.display()), e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let child = relative.join(&name);
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(child),
                Ok(t) if t.is_file() => out.push(crate::paths::to_slash(&child)),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Regular files only: symlinks are skipped (their target, if inside the
/// project, is checked under its own name).
fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}
