//! What differs between a commit and the working tree, computed in parallel:
//! on the fast path from one read of the index (see [`super::worktree`] and
//! [`super::staged`]), else with libgit2's diffs.

use std::collections::BTreeSet;
use std::path::Path;

use git2::{Delta, DiffOptions, Oid, Repository};

use super::git_error;
use super::index::Index;
use super::survey::Survey;
use super::worktree;
use super::{staged, unstaged};
use crate::error::QgError;
use crate::file_name;

/// How the working tree differs from a commit's tree.
#[derive(Debug, Clone, Default)]
pub(crate) struct Changes {
    /// Added, modified, renamed-to or type-changed (staged or not).
    pub(crate) changed: BTreeSet<String>,
    /// Untracked and not ignored.
    pub(crate) untracked: BTreeSet<String>,
    /// Deleted (a rename's old path too): nothing to check, but whatever
    /// imported it may now be broken.
    pub(crate) deleted: BTreeSet<String>,
}

impl Changes {
    fn absorb(&mut self, other: Changes) {
        self.changed.extend(other.changed);
        self.untracked.extend(other.untracked);
        self.deleted.extend(other.deleted);
    }
}

/// Everything that differs between the tree `tree_id` (or an empty tree) and the working
/// tree, through the index: committed, staged and unstaged edits, plus
/// untracked files. A rename shows as its new path added (the old one is
/// gone, so nothing to check), which is exactly what scope needs, so no
/// similarity search is run.
pub(super) fn changes_since(
    repo: &Repository,
    workdir: &Path,
    tree_id: Option<Oid>,
    surveyed: Option<Survey>,
) -> Result<Changes, QgError> {
    match fast_changes(repo, workdir, tree_id, surveyed)? {
        Some(changes) => Ok(changes),
        None => libgit2_changes(repo, tree_id),
    }
}

/// [`changes_since`] on the fast path; `None` when this repository needs
/// libgit2 (see [`Index::read`] and [`worktree::ignores`]). `surveyed`: the
/// working tree's survey when this command has just made it (finding the
/// members' configs): only the tree is compared with its index then; else
/// the walk and both comparisons are made here, side by side.
pub(super) fn fast_changes(
    repo: &Repository,
    workdir: &Path,
    tree_id: Option<Oid>,
    surveyed: Option<Survey>,
) -> Result<Option<Changes>, QgError> {
    let Some(ignores) = worktree::ignores(repo) else {
        return Ok(None);
    };
    if let Some(Survey {
        index,
        walked,
        unstaged: Some(unstaged),
    }) = surveyed
    {
        let staged =
            staged::staged(repo, tree_id, &index).map_err(git_error("cannot compare the index"))?;
        let untracked = worktree::untracked(&index, walked, ignores.ignore_case);
        return changes(repo, staged, unstaged, untracked).map(Some);
    }
    let index = Index::read(repo.path());
    let settings = index.as_ref().and_then(|i| unstaged::settings(repo, i));
    let (Some(index), Some(settings)) = (index, settings) else {
        return Ok(None);
    };
    let threads = worktree::workers(&index, crate::process::cores());
    // The walk for untracked files beside the two comparisons.
    let (walked, (staged, unstaged)) = std::thread::scope(|scope| {
        let walked = scope.spawn(|| worktree::walk(workdir, &ignores, &index, threads));
        let compared = compare(repo, workdir, tree_id, &index, &settings, threads);
        (walked.join().expect("the walk never panics"), compared)
    });
    let untracked = worktree::untracked(&index, walked, ignores.ignore_case);
    changes(repo, staged?, unstaged, untracked).map(Some)
}

/// The tree against the index (on a repository handle of its own) and the
/// index against the working tree, side by side.
fn compare(
    repo: &Repository,
    workdir: &Path,
    tree_id: Option<Oid>,
    index: &Index,
    settings: &unstaged::Settings,
    threads: usize,
) -> (Result<staged::Staged, QgError>, unstaged::Unstaged) {
    let git_dir = repo.path();
    std::thread::scope(|scope| {
        let staged = scope.spawn(|| {
            staged::staged(&open(git_dir)?, tree_id, index)
                .map_err(git_error("cannot compare the index"))
        });
        let unstaged = unstaged::unstaged(workdir, index, settings, threads);
        let staged = staged.join().expect("the tree comparison never panics");
        (staged, unstaged)
    })
}

/// The fast path's findings as [`Changes`]; libgit2 decides the files
/// whose bytes differ where git's filters may apply.
fn changes(
    repo: &Repository,
    staged: staged::Staged,
    unstaged: unstaged::Unstaged,
    untracked: Vec<Vec<u8>>,
) -> Result<Changes, QgError> {
    let mut changes = Changes::default();
    let name = |path: &Vec<u8>| file_name::from_bytes(path);
    changes
        .changed
        .extend(staged.changed.iter().chain(&unstaged.changed).map(name));
    changes
        .deleted
        .extend(staged.deleted.iter().chain(&unstaged.deleted).map(name));
    if !unstaged.undecided.is_empty() {
        // git's conversions may make these bytes the blob: libgit2's diff
        // of just these files applies them.
        let undecided: Vec<&[u8]> = unstaged.undecided.iter().map(Vec::as_slice).collect();
        changes.absorb(unstaged_changes(repo, Some(&undecided))?);
    }
    changes.untracked.extend(untracked.iter().map(name));
    Ok(changes)
}

/// The same with libgit2: its `diff_tree_to_workdir_with_index` — a
/// tree→index diff merged with an index→workdir diff — run in parallel:
/// one thread reads objects for the tree→index half while two stat one
/// half of the working tree each. For an index the fast path does not read.
pub(super) fn libgit2_changes(repo: &Repository, tree_id: Option<Oid>) -> Result<Changes, QgError> {
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
    let cores = crate::process::cores();
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
fn unstaged_changes<P: AsRef<[u8]>>(
    repo: &Repository,
    within: Option<&[P]>,
) -> Result<Changes, QgError> {
    let mut options = diff_options();
    if let Some(entries) = within {
        // Literal names: the iterator then skips every other directory
        // instead of walking it and filtering.
        options.disable_pathspec_match(true);
        for entry in entries {
            options.pathspec(entry.as_ref());
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
