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
    /// Deleted (a rename's old path too): nothing to check, but whatever
    /// imported it may now be broken.
    pub deleted: BTreeSet<String>,
}

impl Changes {
    fn absorb(&mut self, other: Changes) {
        self.changed.extend(other.changed);
        self.untracked.extend(other.untracked);
        self.deleted.extend(other.deleted);
    }
}

/// Everything that differs between `tree` (or an empty tree) and the working
/// tree, through the index: committed, staged and unstaged edits, plus
/// untracked files. A rename shows as its new path added (the old one is
/// gone, so nothing to check), which is exactly what scope needs, so no
/// similarity search is run.
///
/// This is libgit2's `diff_tree_to_workdir_with_index`, which is a tree→index
/// diff merged with an index→workdir diff, but run in parallel: one thread
/// reads objects for the tree→index half while two stat one half of the
/// working tree each. On a large repository that is most of a no-op run.
pub fn changes_since(repo: &Repository, tree: Option<&Tree<'_>>) -> Result<Changes, QgError> {
    let tree_id = tree.map(|t| t.id());
    let git_dir = repo.path();
    let [near, far] = split_working_tree(repo)?;
    std::thread::scope(|threads| {
        let staged = threads.spawn(move || staged_changes(git_dir, tree_id));
        let far = (!far.is_empty())
            .then(|| threads.spawn(move || unstaged_changes(&open(git_dir)?, Some(&far))));
        let mut changes = unstaged_changes(repo, (!near.is_empty()).then_some(&near))?;
        for part in std::iter::once(staged).chain(far) {
            changes.absorb(part.join().expect("a diff thread never panics")?);
        }
        Ok(changes)
    })
}

/// The working tree's top-level entries in two groups of about equal
/// tracked-file counts, so two threads can stat one half each. The second
/// group is empty when there is nothing to split (or one core).
fn split_working_tree(repo: &Repository) -> Result<[Vec<Vec<u8>>; 2], QgError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let Some(workdir) = repo.workdir().filter(|_| cores > 1) else {
        return Ok([Vec::new(), Vec::new()]);
    };
    let index = repo.index().map_err(git_error("cannot read the index"))?;
    let mut weights: std::collections::BTreeMap<Vec<u8>, usize> = Default::default();
    for entry in index.iter() {
        let top = entry.path.split(|b| *b == b'/').next().unwrap_or_default();
        *weights.entry(top.to_vec()).or_default() += 1;
    }
    // Untracked top-level entries too, or the split would miss them.
    for entry in std::fs::read_dir(workdir).into_iter().flatten().flatten() {
        // The name's own bytes: libgit2 takes pathspecs as bytes.
        let name = entry.file_name().as_encoded_bytes().to_vec();
        if name != b".git" {
            weights.entry(name).or_insert(1);
        }
    }
    let mut by_weight: Vec<(Vec<u8>, usize)> = weights.into_iter().collect();
    by_weight.sort_by_key(|(_, weight)| std::cmp::Reverse(*weight));
    let mut groups: [(Vec<Vec<u8>>, usize); 2] = Default::default();
    for (name, weight) in by_weight {
        let lighter = usize::from(groups[1].1 < groups[0].1);
        groups[lighter].0.push(name);
        groups[lighter].1 += weight;
    }
    let [(near, _), (far, _)] = groups;
    Ok(match far.is_empty() {
        true => [Vec::new(), Vec::new()],
        false => [near, far],
    })
}

fn open(git_dir: &Path) -> Result<Repository, QgError> {
    Repository::open(git_dir).map_err(git_error("cannot open the repository"))
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
    let repo = open(git_dir)?;
    let tree = match tree {
        Some(id) => Some(
            repo.find_tree(id)
                .map_err(git_error("cannot read the baseline tree"))?,
        ),
        None => None,
    };
    let diff = repo
        .diff_tree_to_index(tree.as_ref(), None, Some(&mut diff_options()))
        .map_err(git_error("cannot compare the index"))?;
    Ok(collect(&diff))
}

/// The index against the working tree, untracked files included; only
/// under the top-level entries `within` when given.
fn unstaged_changes(repo: &Repository, within: Option<&Vec<Vec<u8>>>) -> Result<Changes, QgError> {
    let mut options = diff_options();
    if let Some(entries) = within {
        // Literal names: the iterator then skips every other directory
        // instead of walking it and filtering.
        options.disable_pathspec_match(true);
        for entry in entries {
            options.pathspec(entry.as_slice());
        }
    }
    let diff = repo
        .diff_index_to_workdir(None, Some(&mut options))
        .map_err(git_error("cannot compare the working tree"))?;
    Ok(collect(&diff))
}

fn collect(diff: &git2::Diff<'_>) -> Changes {
    let mut changes = Changes::default();
    for delta in diff.deltas() {
        let new_path = delta.new_file().path_bytes().map(file_name::from_bytes);
        match delta.status() {
            Delta::Untracked => changes.untracked.extend(new_path),
            Delta::Added
            | Delta::Modified
            | Delta::Renamed
            | Delta::Copied
            | Delta::Typechange
            | Delta::Conflicted => changes.changed.extend(new_path),
            // A deleted file is nothing to check; a failed one that is gone
            // leaves scope because it is no longer a regular file.
            Delta::Deleted => changes
                .deleted
                .extend(delta.old_file().path_bytes().map(file_name::from_bytes)),
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
/// as a local branch, then as `origin/<name>`. A candidate that is
/// `head_branch` itself or its upstream is skipped: comparing a branch with
/// itself would find nothing to check (a shallow single-branch clone, as CI
/// makes, has no `main`, and its origin/HEAD may name the branch). `Ok(Err)`
/// says what was tried when nothing is left.
pub fn resolve_parent(
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
            commit,
        },
        reference,
    ))
}

/// The blob ids of one commit's tree, looked up by root-relative path.
pub struct CommitBlobs<'r> {
    tree: Option<Tree<'r>>,
}

impl<'r> CommitBlobs<'r> {
    /// HEAD's blobs (none on an unborn branch).
    pub fn head(repo: &'r Repository) -> CommitBlobs<'r> {
        let tree = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .and_then(|c| c.tree().ok());
        CommitBlobs { tree }
    }

    /// The blob id the commit holds at `path`, if it holds a file there.
    pub fn get(&self, path: &str) -> Option<String> {
        let entry = self
            .tree
            .as_ref()?
            .get_path(&file_name::to_path(path))
            .ok()?;
        (entry.kind() == Some(git2::ObjectType::Blob)).then(|| entry.id().to_string())
    }
}

/// Every path in the index with its blob id (submodules left out). For a
/// file a diff shows unchanged, that is its content's id, read without
/// touching the file.
pub fn index_blobs(repo: &Repository) -> Result<Vec<(String, String)>, QgError> {
    const GITLINK: u32 = 0o160000;
    let index = repo.index().map_err(git_error("cannot read the index"))?;
    Ok(index
        .iter()
        .filter(|entry| entry.mode != GITLINK)
        .map(|entry| (file_name::from_bytes(&entry.path), entry.id.to_string()))
        .collect())
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
