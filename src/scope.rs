//! The scope resolver: which files need checking, and why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use git2::{Repository, Status, StatusOptions};
use serde::Serialize;

use crate::config::Config;
use crate::error::QgError;
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
}

/// One file to check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopeFile {
    /// Root-relative, `/`-separated.
    pub path: String,
    /// Every reason it is in scope.
    pub reasons: Vec<Reason>,
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
}

impl Scope {
    /// The paths alone, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct ScopeRequest {
    /// `--scope`, if given.
    pub mode: Option<ScopeMode>,
    /// Positional paths (imply `files`).
    pub paths: Vec<PathBuf>,
}

/// Resolves the request against the workspace.
pub fn resolve(ws: &Workspace, config: &Config, request: &ScopeRequest) -> Result<Scope, QgError> {
    let requested = match (request.mode, request.paths.is_empty()) {
        (Some(ScopeMode::Files), true) => {
            return Err(QgError::Usage(
                "--scope files needs at least one path".to_string(),
            ))
        }
        (Some(mode), true) => mode,
        (None | Some(ScopeMode::Files), false) => ScopeMode::Files,
        (Some(mode), false) => {
            return Err(QgError::Usage(format!(
                "paths imply --scope files; drop --scope {} or the paths",
                mode.as_str()
            )))
        }
        (None, true) => ScopeMode::Auto,
    };
    match requested {
        ScopeMode::Files => explicit_scope(ws, config, &request.paths),
        ScopeMode::Project => project_scope(ws, config, ScopeMode::Project, None),
        ScopeMode::Auto | ScopeMode::Branch => {
            if ws.repo.is_none() {
                return Err(QgError::Git(format!(
                    "--scope {} needs a git repository and {} is not in one; use --scope project or name paths",
                    requested.as_str(),
                    ws.root.display()
                )));
            }
            let reason = format!(
                "no baseline for this branch yet; {} scope checked the whole project",
                requested.as_str()
            );
            project_scope(ws, config, requested, Some(reason))
        }
    }
}

fn project_scope(
    ws: &Workspace,
    config: &Config,
    requested: ScopeMode,
    fallback_reason: Option<String>,
) -> Result<Scope, QgError> {
    let files = candidate_files(ws)?
        .into_iter()
        .filter(|path| config.project_scope.matches(path))
        .map(|path| ScopeFile {
            path,
            reasons: vec![Reason::ProjectGlob],
        })
        .collect();
    Ok(Scope {
        mode: ScopeMode::Project,
        requested,
        files,
        baseline_sha: None,
        fallback_reason,
    })
}

fn explicit_scope(ws: &Workspace, config: &Config, paths: &[PathBuf]) -> Result<Scope, QgError> {
    let mut selected = BTreeSet::new();
    let mut candidates: Option<Vec<String>> = None;
    for raw in paths {
        let absolute = ws.cwd.join(raw);
        let canonical = absolute
            .canonicalize()
            .map_err(|_| QgError::Usage(format!("path does not exist: {}", raw.display())))?;
        let relative = ws.relative(&canonical).ok_or_else(|| {
            QgError::Usage(format!(
                "path is outside the project root {}: {}",
                ws.root.display(),
                raw.display()
            ))
        })?;
        if canonical.is_dir() {
            let all = match &candidates {
                Some(all) => all,
                None => candidates.insert(candidate_files(ws)?),
            };
            let prefix = if relative.is_empty() {
                String::new()
            } else {
                format!("{relative}/")
            };
            selected.extend(
                all.iter()
                    .filter(|p| p.starts_with(&prefix))
                    .filter(|p| config.project_scope.is_included(p))
                    .cloned(),
            );
        } else {
            selected.insert(relative);
        }
    }
    let files = selected
        .into_iter()
        .filter(|p| !config.project_scope.is_excluded(p))
        .map(|path| ScopeFile {
            path,
            reasons: vec![Reason::Explicit],
        })
        .collect();
    Ok(Scope {
        mode: ScopeMode::Files,
        requested: ScopeMode::Files,
        files,
        baseline_sha: None,
        fallback_reason: None,
    })
}

/// Every regular file of the project: in git, tracked (and still present)
/// plus untracked-not-ignored; outside git, a walk of the root.
pub fn candidate_files(ws: &Workspace) -> Result<Vec<String>, QgError> {
    let mut files = match &ws.repo {
        Some(repo) => git_files(repo)?,
        None => walk_files(&ws.root)?,
    };
    files.retain(|p| is_regular_file(&ws.root.join(p)));
    files.sort();
    files.dedup();
    Ok(files)
}

fn git_files(repo: &Repository) -> Result<Vec<String>, QgError> {
    let git_err = |e: git2::Error| QgError::Git(format!("cannot list files: {}", e.message()));
    let index = repo.index().map_err(git_err)?;
    const GITLINK: u32 = 0o160000;
    let mut files: BTreeMap<String, ()> = index
        .iter()
        .filter(|entry| entry.mode != GITLINK)
        .filter_map(|entry| String::from_utf8(entry.path).ok())
        .map(|p| (p, ()))
        .collect();
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options)).map_err(git_err)?;
    for entry in statuses.iter() {
        let Some(path) = entry.path() else { continue };
        let status = entry.status();
        if status.contains(Status::WT_NEW) {
            files.insert(path.to_string(), ());
        } else if status.intersects(Status::WT_DELETED | Status::INDEX_DELETED) {
            files.remove(path);
        }
    }
    Ok(files.into_keys().collect())
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
                Ok(t) if t.is_file() => out.push(crate::parse::paths::to_slash(&child)),
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
