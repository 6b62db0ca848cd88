//! The git facts the scope resolver needs, read with git2 (no `git` process).

use std::collections::BTreeSet;
use std::path::Path;

use git2::{Delta, DiffOptions, Oid, Repository, Tree};

use crate::error::QgError;
use crate::file_name;

/// The state key used for a detached HEAD.
pub const DETACHED_KEY: &str = "(detached HEAD)";

fn git_error(context: &str) -> impl Fn(git2::Error) -> QgError + '_ {
    move |e| QgError::Git(format!("{context}: {}", e.message()))
}

/// Where HEAD is.
#[derive(Debug, Clone)]
pub struct Head {
    /// Branch name (the state key); [`DETACHED_KEY`] when detached.
    pub branch: String,
    /// The commit, or `None` on an unborn branch (no commits yet).
    pub commit: Option<Oid>,
}

/// Reads HEAD.
pub fn head(repo: &Repository) -> Result<Head, QgError> {
    match repo.head() {
        Ok(reference) => {
            let commit = reference
                .peel_to_commit()
                .map_err(git_error("cannot read HEAD"))?
                .id();
            let branch = if reference.is_branch() {
                reference.shorthand().unwrap_or(DETACHED_KEY).to_string()
            } else {
                DETACHED_KEY.to_string()
            };
            Ok(Head {
                branch,
                commit: Some(commit),
            })
        }
        Err(e)
            if e.code() == git2::ErrorCode::UnbornBranch
                || e.code() == git2::ErrorCode::NotFound =>
        {
            let target = repo
                .find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target().map(str::to_string))
                .unwrap_or_default();
            let branch = target
                .strip_prefix("refs/heads/")
                .unwrap_or(&target)
                .to_string();
            Ok(Head {
                branch,
                commit: None,
            })
        }
        Err(e) => Err(git_error("cannot read HEAD")(e)),
    }
}

/// How the working tree differs from a commit's tree.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// Added, modified, renamed-to or type-changed (staged or not).
    pub changed: BTreeSet<String>,
    /// Untracked and not ignored.
    pub untracked: BTreeSet<String>,
    /// Gone from the working tree (renamed-from paths included).
    pub deleted: BTreeSet<String>,
}

/// Everything that differs between `tree` (or an empty tree) and the working
/// tree, through the index: committed, staged and unstaged edits, plus
/// untracked files. A rename shows as its old path deleted and its new path
/// added, which is exactly what scope needs, so no similarity search is run.
///
/// This is libgit2's `diff_tree_to_workdir_with_index`, which is a tree→index
/// diff merged with an index→workdir diff, with the two halves run at once:
/// the first reads objects, the second stats the working tree, and on a large
/// repository each takes a similar share of a no-op run.
pub fn changes_since(repo: &Repository, tree: Option<&Tree<'_>>) -> Result<Changes, QgError> {
    let tree_id = tree.map(|t| t.id());
    let git_dir = repo.path().to_path_buf();
    std::thread::scope(|threads| {
        let staged = threads.spawn(move || staged_changes(&git_dir, tree_id));
        let mut changes = unstaged_changes(repo)?;
        let staged = staged.join().expect("the tree-to-index diff never panics")?;
        changes.changed.extend(staged.changed);
        changes.deleted.extend(staged.deleted);
        Ok(changes)
    })
}

fn diff_options() -> DiffOptions {
    let mut options = DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_typechange(true)
        .ignore_submodules(true);
    options
}

/// `tree` against the index, on a repository handle of its own (a
/// `Repository` may move between threads but not be shared).
fn staged_changes(git_dir: &Path, tree: Option<Oid>) -> Result<Changes, QgError> {
    let repo = Repository::open(git_dir).map_err(git_error("cannot open the repository"))?;
    let tree = match tree {
        Some(id) => Some(repo.find_tree(id).map_err(git_error("cannot read the baseline tree"))?),
        None => None,
    };
    let diff = repo
        .diff_tree_to_index(tree.as_ref(), None, Some(&mut diff_options()))
        .map_err(git_error("cannot compare the index"))?;
    Ok(collect(&diff))
}

/// The index against the working tree, untracked files included.
fn unstaged_changes(repo: &Repository) -> Result<Changes, QgError> {
    let diff = repo
        .diff_index_to_workdir(None, Some(&mut diff_options()))
        .map_err(git_error("cannot compare the working tree"))?;
    Ok(collect(&diff))
}

fn collect(diff: &git2::Diff<'_>) -> Changes {
    let mut changes = Changes::default();
    for delta in diff.deltas() {
        let new_path = delta.new_file().path_bytes().map(file_name::from_bytes);
        let old_path = delta.old_file().path_bytes().map(file_name::from_bytes);
        match delta.status() {
            Delta::Deleted => changes.deleted.extend(old_path),
            Delta::Untracked => changes.untracked.extend(new_path),
            Delta::Added
            | Delta::Modified
            | Delta::Renamed
            | Delta::Copied
            | Delta::Typechange
            | Delta::Conflicted => changes.changed.extend(new_path),
            Delta::Unmodified | Delta::Ignored | Delta::Unreadable => {}
        }
    }
    changes
}

/// A resolved parent branch.
#[derive(Debug, Clone)]
pub struct Parent {
    /// The name that resolved (`main`, `origin/main`, …).
    pub name: String,
    /// Its commit.
    pub commit: Oid,
}

/// Finds the parent branch: `explicit` (must resolve), then `configured`,
/// then `origin/HEAD`'s target, then `main` and `master`; each name is tried
/// as a local branch, then as `origin/<name>`.
pub fn resolve_parent(
    repo: &Repository,
    explicit: Option<&str>,
    configured: Option<&str>,
) -> Result<Option<Parent>, QgError> {
    if let Some(name) = explicit {
        return match lookup(repo, name) {
            Some(parent) => Ok(Some(parent)),
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
    let candidates = configured
        .map(str::to_string)
        .into_iter()
        .chain(origin_head)
        .chain(["main".to_string(), "master".to_string()]);
    for name in candidates {
        if let Some(parent) = lookup(repo, &name) {
            return Ok(Some(parent));
        }
    }
    Ok(None)
}

fn lookup(repo: &Repository, name: &str) -> Option<Parent> {
    let local = format!("refs/heads/{name}");
    let remote = format!("refs/remotes/origin/{name}");
    let by_ref = [
        local.as_str(),
        remote.as_str(),
        &format!("refs/remotes/{name}"),
    ]
    .into_iter()
    .find_map(|r| repo.find_reference(r).ok()?.peel_to_commit().ok());
    let commit = by_ref.or_else(|| repo.revparse_single(name).ok()?.peel_to_commit().ok())?;
    Some(Parent {
        name: name.to_string(),
        commit: commit.id(),
    })
}

/// The blob id git would give the file's current content.
pub fn blob_id(path: &Path) -> Option<String> {
    Oid::hash_file(git2::ObjectType::Blob, path)
        .ok()
        .map(|oid| oid.to_string())
}

/// Short form of a commit id for messages.
pub fn short(oid: &str) -> &str {
    &oid[..oid.len().min(7)]
}
