//! The project's files: what git knows (or a walk of the root outside
//! git), through the `project_scope` globs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Reason, Scope, ScopeFile, ScopeMode};
use crate::config::Config;
use crate::error::QgError;
use crate::file_name;
use crate::workspace::Workspace;

/// Every file `project` scope covers: tracked and untracked-not-ignored
/// files that pass the `project_scope` globs.
pub(crate) fn project_files(ws: &Workspace, config: &Config) -> Result<Vec<String>, QgError> {
    Ok(candidate_files(ws)?
        .into_iter()
        .filter(|path| config.project_scope.matches(path) && !crate::state::is_state_file(path))
        .collect())
}

pub(super) fn project_scope(
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
        body_only: Vec::new(),
        interface_changed: BTreeMap::new(),
        whole_project: BTreeMap::new(),
        uncached: Default::default(),
        settings_now: Default::default(),
        diff: None,
    })
}

/// Every regular file of the project: in git, tracked (and still present)
/// plus untracked-not-ignored; outside git, a walk of the root. Names that
/// are not UTF-8 are kept, losslessly (see [`crate::file_name`]).
pub(crate) fn candidate_files(ws: &Workspace) -> Result<Vec<String>, QgError> {
    let Some(repo) = &ws.repo else {
        let mut files = walk_files(&ws.root)?;
        files.retain(|p| is_regular_file(&file_name::join(&ws.root, p)));
        files.sort();
        return Ok(files);
    };
    let mut files = repo.files()?;
    // Sorted as bytes by git: as strings too, unless a name is not UTF-8.
    if !files.is_sorted() {
        files.sort();
    }
    files.dedup();
    Ok(files)
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
pub(super) fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}
