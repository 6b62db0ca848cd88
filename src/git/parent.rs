//! Which branch the current one left from: for `--scope branch`.

use git2::Repository;

use super::DETACHED_KEY;
use crate::error::QgError;

/// A resolved parent branch.
#[derive(Debug, Clone)]
pub(crate) struct Parent {
    /// The name that resolved (`main`, `origin/main`, …).
    pub(crate) name: String,
    /// Its commit.
    pub(crate) commit: String,
}

/// Finds the parent branch: `explicit` (must resolve), then `configured`,
/// then `origin/HEAD`'s target, then `main` and `master`; each name is tried
/// as a local branch, then as `origin/<name>`. A candidate that is
/// `head_branch` itself or its upstream is skipped: comparing a branch with
/// itself would find nothing to check (a shallow single-branch clone, as CI
/// makes, has no `main`, and its origin/HEAD may name the branch). `Ok(Err)`
/// says what was tried when nothing is left.
pub(super) fn resolve_parent(
    repo: &Repository,
    explicit: Option<&str>,
    configured: Option<&str>,
    head_branch: &str,
) -> Result<Result<Parent, String>, QgError> {
    if let Some(name) = explicit {
        return match lookup(repo, name) {
            Some((parent, _)) => Ok(Ok(parent)),
            None => Err(QgError::Usage(format!(
                "--parent {name}: no such branch or commit (tried {name} and origin/{name})"
            ))),
        };
    }
    let origin_head = repo
        .find_reference("refs/remotes/origin/HEAD")
        .ok()
        .and_then(|r| r.symbolic_target().map(str::to_string))
        .and_then(|t| t.strip_prefix("refs/remotes/").map(str::to_string));
    let mut candidates: Vec<(String, String)> = Vec::new();
    let mut push = |label: String, name: String| {
        if !candidates.iter().any(|(_, n)| *n == name) {
            candidates.push((label, name));
        }
    };
    if let Some(name) = configured {
        push(name.to_string(), name.to_string());
    }
    if let Some(target) = origin_head {
        push(format!("origin/HEAD → {target}"), target);
    }
    for name in ["main", "master"] {
        push(name.to_string(), name.to_string());
    }
    let own = own_refs(repo, head_branch);
    let mut tried = Vec::new();
    for (label, name) in candidates {
        match lookup(repo, &name) {
            Some((_, Some(reference))) if own.contains(&reference) => {
                let whose = match reference.starts_with("refs/heads/") {
                    true => "which is this branch",
                    false => "which is this branch's own upstream",
                };
                tried.push(format!("{label}, {whose}"));
            }
            Some((parent, _)) => return Ok(Ok(parent)),
            None => tried.push(label),
        }
    }
    Ok(Err(format!(
        "no parent branch found (tried {})",
        tried.join(", ")
    )))
}

/// The references that are `branch` itself: its local ref, its configured
/// upstream, and any remote's branch of the same name.
fn own_refs(repo: &Repository, branch: &str) -> Vec<String> {
    if branch == DETACHED_KEY || branch.is_empty() {
        return Vec::new();
    }
    let mut own = vec![format!("refs/heads/{branch}")];
    if let Ok(upstream) = repo.branch_upstream_name(&format!("refs/heads/{branch}")) {
        own.extend(upstream.as_str().map(str::to_string));
    }
    if let Ok(remotes) = repo.remotes() {
        own.extend(
            remotes
                .iter()
                .flatten()
                .map(|remote| format!("refs/remotes/{remote}/{branch}")),
        );
    }
    own
}

/// The commit `name` names, with the reference it resolved through (none
/// for a commit id or other revision).
fn lookup(repo: &Repository, name: &str) -> Option<(Parent, Option<String>)> {
    let refs = [
        format!("refs/heads/{name}"),
        format!("refs/remotes/origin/{name}"),
        format!("refs/remotes/{name}"),
    ];
    let by_ref = refs.into_iter().find_map(|r| {
        let commit = repo.find_reference(&r).ok()?.peel_to_commit().ok()?;
        Some((commit.id(), Some(r)))
    });
    let (commit, reference) = by_ref.or_else(|| {
        Some((
            repo.revparse_single(name).ok()?.peel_to_commit().ok()?.id(),
            None,
        ))
    })?;
    Some((
        Parent {
            name: name.to_string(),
            commit: commit.to_string(),
        },
        reference,
    ))
}
