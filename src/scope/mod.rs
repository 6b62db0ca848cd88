//! The scope resolver: which files need checking, and why. The model is
//! here; `auto`/`branch` resolve in [`git_scope`], the project's files in
//! [`files`], named paths in [`named`].

mod files;
mod git_scope;
mod named;
pub(crate) mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::QgError;
use crate::file_name;
use crate::git;
use crate::state::{BranchState, ToolStamp};
use crate::workspace::Workspace;
pub(crate) use files::{candidate_files, project_files};

/// The scope modes of `--scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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
    pub(crate) fn as_str(self) -> &'static str {
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
pub(crate) enum Reason {
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
pub(crate) struct ScopeFile {
    /// Root-relative, `/`-separated (quoted in JSON when not UTF-8).
    #[serde(serialize_with = "crate::file_name::serialize")]
    pub(crate) path: String,
    /// Every reason it is in scope.
    pub(crate) reasons: Vec<Reason>,
    /// For `imports_changed`: the changed files it depends on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) depends_on: Vec<String>,
}

impl ScopeFile {
    /// A file in scope for one reason.
    pub(crate) fn new(path: String, reason: Reason) -> ScopeFile {
        ScopeFile {
            path,
            reasons: vec![reason],
            depends_on: Vec::new(),
        }
    }

    /// In scope only because it imports a changed file: only the gates that
    /// check importers check it.
    pub(crate) fn only_imports_changed(&self) -> bool {
        self.reasons.iter().all(|r| *r == Reason::ImportsChanged)
    }
}

/// The resolved scope. Serialized, it is the `qg files --format json`
/// document (schema: `schemas/files.json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Scope {
    /// The mode actually used.
    pub(crate) mode: ScopeMode,
    /// The mode asked for (differs after a fallback).
    pub(crate) requested: ScopeMode,
    /// Files to check, sorted by path.
    pub(crate) files: Vec<ScopeFile>,
    /// Baseline commit the diff was taken from, if any.
    pub(crate) baseline_sha: Option<String>,
    /// Why the requested mode could not be used as is.
    pub(crate) fallback_reason: Option<String>,
    /// Named paths that yielded no file, and the filter that removed them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) unmatched: Vec<Unmatched>,
    /// Why the importers of the changed files are unknown, when they are:
    /// the gates that check importers then check the whole project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) importers_unknown: Option<String>,
    /// Changed files whose interface equals their version in the scope's
    /// base (`import_graph.interface_aware`): an edit no importer can see,
    /// so their importers are not checked for them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) body_only: Vec<String>,
    /// The other changed files compared so, and which parts of their
    /// interface changed (`def f`, `class A`, `module level`): why their
    /// importers are checked.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) interface_changed: BTreeMap<String, Vec<String>>,
    /// Gates that check their whole project scope on this partial scope,
    /// and why: their tool, or its settings, changed since the scope's base.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) whole_project: BTreeMap<String, String>,
    /// Of those, the gates whose tool's own cache cannot be trusted for
    /// the change: code its plugin imports changed (a settings module),
    /// which the tool's cache does not key on. They check from scratch.
    #[serde(skip)]
    pub(crate) uncached: BTreeSet<String>,
    /// The gates' settings files the comparison looked at, as they are
    /// now: what a green run records of the uncommitted ones.
    #[serde(skip)]
    pub(crate) settings_now: settings::SettingsDigests,
    /// What the diff behind this scope saw: the files whose content may
    /// differ from the index, and the deleted ones. `None` when no diff was
    /// taken (`project`, named paths).
    #[serde(skip)]
    pub(crate) diff: Option<git::Changes>,
}

/// A path named on the command line that yielded no file to check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Unmatched {
    /// The path as given (quoted in JSON when not UTF-8).
    #[serde(
        serialize_with = "crate::file_name::serialize",
        deserialize_with = "crate::file_name::deserialize"
    )]
    pub(crate) path: String,
    /// Which filter removed it.
    pub(crate) reason: String,
}

impl Unmatched {
    /// `path: reason`, as the summary line and warnings print it.
    pub(crate) fn describe(&self) -> String {
        format!("{}: {}", file_name::display(&self.path), self.reason)
    }
}

impl Scope {
    /// The paths alone, in order.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
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
    pub(crate) fn effective_mode(&self) -> Result<ScopeMode, QgError> {
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
pub(crate) struct Baseline<'a> {
    /// The branch's state entry, if any.
    pub(crate) state: Option<&'a BranchState>,
    /// The resolved tool of each active gate now.
    pub(crate) tools: BTreeMap<String, ToolStamp>,
}

/// Resolves the request against the workspace.
pub(crate) fn resolve(
    ws: &Workspace,
    config: &Config,
    request: &ScopeRequest,
    baseline: &Baseline<'_>,
) -> Result<Scope, QgError> {
    let requested = request.effective_mode()?;
    match requested {
        ScopeMode::Files => named::explicit_scope(ws, config, &request.paths),
        ScopeMode::Project => files::project_scope(ws, config, ScopeMode::Project, None),
        ScopeMode::Auto | ScopeMode::Branch => {
            let Some(repo) = &ws.repo else {
                return Err(QgError::Git(format!(
                    "--scope {} needs a git repository and {} is not in one; use --scope project or name paths",
                    requested.as_str(),
                    ws.root.display()
                )));
            };
            let context = git_scope::GitScope {
                ws,
                repo,
                config,
                request,
                head: repo.head()?,
            };
            if requested == ScopeMode::Auto {
                context.auto(baseline)
            } else {
                context.branch(ScopeMode::Branch, None)
            }
        }
    }
}

impl Scope {
    /// A scope of exactly `files` (root-relative, project files already):
    /// what a confirmation's cold run checks, no importer added.
    pub(crate) fn of_files(files: impl IntoIterator<Item = String>) -> Scope {
        let files: BTreeSet<String> = files.into_iter().collect();
        Scope {
            mode: ScopeMode::Files,
            requested: ScopeMode::Files,
            files: files
                .into_iter()
                .map(|path| ScopeFile::new(path, Reason::Explicit))
                .collect(),
            baseline_sha: None,
            fallback_reason: None,
            unmatched: Vec::new(),
            importers_unknown: None,
            body_only: Vec::new(),
            interface_changed: BTreeMap::new(),
            whole_project: BTreeMap::new(),
            uncached: Default::default(),
            settings_now: Default::default(),
            diff: None,
        }
    }
}

/// Adds the files that import a changed one (`importer → the changed file
/// it depends on`); a file already in scope is checked by every gate anyway.
pub(crate) fn add_importers(scope: &mut Scope, importers: BTreeMap<String, String>) {
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
