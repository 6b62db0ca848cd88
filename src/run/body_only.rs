//! Which changed files changed no importer's view of them
//! (`interface_aware_importers`): their interface ([`graph::interface`])
//! equals the one of the content the scope's base vouches for, so their
//! importers keep the verdict they had there and need no check.
//!
//! The content vouched for is the base commit's — or, in `auto`, the
//! uncommitted content the last green run checked (`clean_blobs` names it
//! by blob id; its interface was cached when that run read it). A file that
//! failed last time has no such content (its importers were judged against
//! a version qg never kept): it always adds its importers, as does a file
//! that is new, untracked, named, or does not parse.

use std::collections::{BTreeMap, BTreeSet};

use crate::graph::interface::Interfaces;
use crate::scope::{Reason, Scope};
use crate::state::BranchState;
use crate::workspace::Workspace;

/// What comparing the changed files' interfaces found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// The seeds whose interface equals the vouched-for content's.
    pub(super) body_only: Vec<String>,
    /// The others compared, and which parts of their interface changed.
    pub(super) interface_changed: BTreeMap<String, Vec<String>>,
}

/// Compares each changed seed's interface with the vouched-for content's.
/// Caches the interfaces it read when `remember`.
pub(super) fn find(
    workspace: &Workspace,
    scope: &Scope,
    seeds: &BTreeSet<String>,
    state: Option<&BranchState>,
    remember: bool,
) -> Found {
    let (Some(repo), Some(base)) = (&workspace.repo, &scope.baseline_sha) else {
        return Found::default();
    };
    let mut interfaces = Interfaces::load(&workspace.root);
    let failing: BTreeSet<&String> = state
        .map(|s| s.failed_files.iter().collect())
        .unwrap_or_default();
    let mut found = Found::default();
    for file in scope
        .files
        .iter()
        .filter(|f| seeds.contains(&f.path) && is_python(&f.path))
    {
        let path = file.path.as_str();
        let Ok(now) = std::fs::read(crate::file_name::join(&workspace.root, path)) else {
            continue;
        };
        // Every seed's interface is kept: a new file's, once it passes
        // uncommitted, is what its next edit compares with.
        let now = interfaces.of(&crate::git::hash_blob(&now), || Some(now));
        if file.reasons != [Reason::Changed] || failing.contains(&file.path) {
            continue;
        }
        let then = match state.and_then(|s| s.clean_blobs.get(path)) {
            // The content the last green run checked: known only by its blob.
            Some(clean_key) => interfaces.known(clean_key.trim_end_matches("+x")),
            None => {
                let content = repo.file_at(base, path);
                let blob = content.as_deref().map(crate::git::hash_blob);
                blob.and_then(|blob| interfaces.of(&blob, || content))
            }
        };
        match (now, then) {
            (Some(now), Some(then)) if now.digest == then.digest => {
                found.body_only.push(path.to_string());
            }
            (Some(now), Some(then)) => {
                let parts = now.changed_since(&then);
                found.interface_changed.insert(path.to_string(), parts);
            }
            _ => {}
        }
    }
    if remember {
        // The contents the last green run checked uncommitted: the next
        // edit of each compares with it, whether or not this run asked.
        let clean: BTreeSet<&str> = state
            .map(|s| {
                s.clean_blobs
                    .values()
                    .map(|k| k.trim_end_matches("+x"))
                    .collect()
            })
            .unwrap_or_default();
        interfaces.save(&workspace.root, &|blob| clean.contains(blob));
    }
    found
}

/// The files whose interface qg reads: Python modules and stubs.
fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}
