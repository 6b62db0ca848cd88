//! Paths named on the command line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::files::candidate_files;
use super::{Reason, Scope, ScopeFile, ScopeMode, Unmatched};
use crate::config::Config;
use crate::error::QgError;
use crate::file_name;
use crate::workspace::Workspace;

/// The paths named on the command line. One rule: a file you name is
/// checked (by every gate of its type) unless an exclude glob removes it; a
/// directory you name stands for the project files under it (tracked and
/// untracked-not-ignored, passing the `project_scope` globs). A named path
/// that yields nothing is recorded in [`Scope::unmatched`] with the reason.
pub(super) fn explicit_scope(
    ws: &Workspace,
    config: &Config,
    paths: &[PathBuf],
) -> Result<Scope, QgError> {
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
        body_only: Vec::new(),
        interface_changed: BTreeMap::new(),
        whole_project: BTreeMap::new(),
        uncached: Default::default(),
        settings_now: Default::default(),
        diff: None,
    })
}

/// The root-relative form of a named path, and whether it is a directory.
fn resolve_named(ws: &Workspace, raw: &Path) -> Result<(String, bool), QgError> {
    let canonical = dunce::canonicalize(ws.cwd.join(raw))
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
