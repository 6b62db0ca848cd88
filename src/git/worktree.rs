//! The working tree as `git status` finds it: tracked files are compared
//! with the index by stat data in [`super::unstaged`]. Untracked files come
//! from one walk of the tree that honours git's ignore rules (the `ignore`
//! crate, ripgrep's walker) and never descends into ignored directories.
//!
//! This is the fast path of [`super::diff`]; a case it does not handle the
//! way git does is never guessed at: `settings` answers `None` and libgit2
//! does the work, or, for a file whose content differs only by bytes
//! (git's filters may normalize it), libgit2 decides that one file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use gix_index::entry::Mode;

use super::index::Index;

/// Entries handed to a worker at a time.
const CHUNK: usize = 512;

/// The ignore files git reads besides each directory's `.gitignore`.
#[derive(Debug, Clone)]
pub(crate) struct Ignores {
    /// `core.excludesFile`, resolved: ignore rules of this user.
    excludes_file: Option<PathBuf>,
    /// `<common git dir>/info/exclude`: this repository's own.
    info_exclude: PathBuf,
    /// `core.ignoreCase` (set by git on Windows and macOS file systems):
    /// ignore patterns and tracked paths match whatever the case.
    pub(crate) ignore_case: bool,
}

/// Reads where the ignore files are; `None` when the fast path would not
/// compare paths as git does here (a file system that precomposes
/// Unicode: macOS's names).
pub(crate) fn ignores(repo: &git2::Repository) -> Option<Ignores> {
    let config = repo.config().ok()?.snapshot().ok()?;
    let flag = |key: &str| config.get_bool(key).unwrap_or(false);
    if flag("core.precomposeunicode") {
        return None;
    }
    Some(Ignores {
        excludes_file: excludes_file(&config),
        info_exclude: repo.commondir().join("info/exclude"),
        ignore_case: flag("core.ignorecase"),
    })
}

/// `core.excludesFile`, or git's default `$XDG_CONFIG_HOME/git/ignore`
/// (`~/.config/git/ignore`).
fn excludes_file(config: &git2::Config) -> Option<PathBuf> {
    if let Ok(path) = config.get_path("core.excludesfile") {
        return Some(path);
    }
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(xdg.join("git/ignore"))
}

/// A git path's bytes as a relative path.
#[cfg(unix)]
pub(crate) fn bytes_path(path: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(path))
}

/// A git path's bytes as a relative path: git for Windows writes paths in
/// UTF-8. Bytes that are not (which no Windows file name can have) name
/// a path that cannot exist, so the file counts as missing.
#[cfg(not(unix))]
pub(crate) fn bytes_path(path: &[u8]) -> &Path {
    Path::new(std::str::from_utf8(path).unwrap_or("\0not-utf-8"))
}

/// Every regular file of the project, by path (bytes, sorted): each tracked
/// entry that is a regular file now, and each untracked file the ignore
/// rules leave in — `git ls-files --cached --others --exclude-standard`
/// without deleted files, symlinks and submodules. The walk says what
/// exists; only a tracked file it did not see (deleted, or in an ignored
/// directory) costs a stat of its own.
pub(crate) fn regular_files(root: &Path, index: &Index, walked: Vec<Walked>) -> Vec<Vec<u8>> {
    let mut files = Vec::with_capacity(walked.len());
    let mut walked = walked.into_iter().peekable();
    for path in tracked_paths(index) {
        // Both lists are sorted by bytes: whatever the walk found before
        // this entry is untracked.
        while let Some(found) = walked.next_if(|found| found.path.as_slice() < path) {
            if found.regular {
                files.push(found.path);
            }
        }
        let regular = match walked.next_if(|found| found.path == path) {
            Some(found) => found.regular,
            // Not seen by the walk: deleted, or in an ignored directory.
            None => {
                std::fs::symlink_metadata(root.join(bytes_path(path))).is_ok_and(|m| m.is_file())
            }
        };
        if regular {
            files.push(path.to_vec());
        }
    }
    files.extend(walked.filter(|found| found.regular).map(|found| found.path));
    files
}

/// Each path of the index once (a conflict's stages share one), submodules
/// left out, in the index's order (bytes).
fn tracked_paths(index: &Index) -> impl Iterator<Item = &[u8]> {
    let mut previous: &[u8] = &[];
    index.entries().iter().filter_map(move |entry| {
        let path = index.path(entry);
        let repeated = std::mem::replace(&mut previous, path) == path;
        (!repeated && entry.mode != Mode::COMMIT).then_some(path)
    })
}

/// What the walk found that the index does not hold: the untracked files
/// (and links), in order.
pub(crate) fn untracked(index: &Index, walked: Vec<Walked>, ignore_case: bool) -> Vec<Vec<u8>> {
    if ignore_case {
        return untracked_ignoring_case(index, walked);
    }
    let mut untracked = Vec::new();
    let mut walked = walked.into_iter().peekable();
    for path in tracked_paths(index) {
        while let Some(found) = walked.next_if(|found| found.path.as_slice() < path) {
            untracked.push(found.path);
        }
        walked.next_if(|found| found.path == path);
    }
    untracked.extend(walked.map(|found| found.path));
    untracked
}

/// [`untracked`] where `A.py` on disk is the tracked `a.py`, as git with
/// `core.ignoreCase` takes it.
fn untracked_ignoring_case(index: &Index, walked: Vec<Walked>) -> Vec<Vec<u8>> {
    let folded = |path: &[u8]| String::from_utf8_lossy(path).to_lowercase();
    let tracked: std::collections::HashSet<String> = tracked_paths(index).map(folded).collect();
    walked
        .into_iter()
        .map(|found| found.path)
        .filter(|path| !tracked.contains(&folded(path)))
        .collect()
}

/// A file (or link) the walk found.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Walked {
    /// Root-relative, as bytes.
    pub(crate) path: Vec<u8>,
    /// A regular file (not a symbolic link).
    pub(crate) regular: bool,
}

/// The working tree's files that are not ignored, by path (bytes,
/// root-relative, sorted), with whether each is a regular file: a walk that
/// skips `.git`, nested repositories and ignored directories, as `git
/// ls-files --others --exclude-standard` does. The top-level entries are
/// split into `threads` groups of about equal weight by the index's counts,
/// each walked on a thread of its own (the walker's own pool costs more to
/// start and stop than it saves on a tree of this size).
pub(crate) fn walk(root: &Path, ignores: &Ignores, index: &Index, threads: usize) -> Vec<Walked> {
    let found = Mutex::new(Vec::new());
    let groups = top_level_groups(root, index, workers(index, threads));
    match groups.as_slice() {
        // A small tree: a thread would cost more than the whole walk.
        [group] => walk_group(root, ignores, group, &found),
        _ => std::thread::scope(|scope| {
            for group in &groups {
                let found = &found;
                scope.spawn(move || walk_group(root, ignores, group, found));
            }
        }),
    }
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    found.sort_unstable();
    found
}

/// Tracked files below which one more worker costs more (a thread, and
/// the walker's ignore matchers compiled once more) than it saves.
const FILES_PER_WORKER: usize = 1000;

/// How many of `threads` workers the index's size is worth.
pub(crate) fn workers(index: &Index, threads: usize) -> usize {
    threads.clamp(1, 1 + index.entries().len() / FILES_PER_WORKER)
}

/// The root's entries in `threads` groups, heaviest first onto the
/// lightest group; an entry weighs the tracked files under it (at least 1,
/// for what is untracked).
fn top_level_groups(
    root: &Path,
    index: &Index,
    threads: usize,
) -> Vec<std::collections::BTreeSet<Vec<u8>>> {
    let mut weights: std::collections::BTreeMap<Vec<u8>, usize> = Default::default();
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        weights.insert(entry.file_name().into_encoded_bytes(), 1);
    }
    for entry in index.entries() {
        let path = index.path(entry);
        let top = path.split(|b| *b == b'/').next().unwrap_or(path);
        if let Some(weight) = weights.get_mut(top) {
            *weight += 1;
        }
    }
    let mut by_weight: Vec<(Vec<u8>, usize)> = weights.into_iter().collect();
    by_weight.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut groups = vec![(std::collections::BTreeSet::new(), 0usize); threads];
    for (name, weight) in by_weight {
        let lightest = groups
            .iter_mut()
            .min_by_key(|(_, load)| *load)
            .expect("at least one group");
        lightest.0.insert(name);
        lightest.1 += weight;
    }
    groups
        .into_iter()
        .map(|(names, _)| names)
        .filter(|names| !names.is_empty())
        .collect()
}

/// Walks the root's entries named in `group`.
fn walk_group(
    root: &Path,
    ignores: &Ignores,
    group: &std::collections::BTreeSet<Vec<u8>>,
    found: &Mutex<Vec<Walked>>,
) {
    let mut builder = ignore::WalkBuilder::new(root);
    // The walker's filter must own what it reads.
    let group = group.clone();
    builder
        .standard_filters(false)
        .git_ignore(true)
        .require_git(false)
        .ignore_case_insensitive(ignores.ignore_case)
        .filter_entry(move |entry| {
            let mine = entry.depth() != 1 || group.contains(entry.file_name().as_encoded_bytes());
            mine && !is_repository(entry)
        });
    // The user's and the repository's own ignore files: patterns relative
    // to the root, below every .gitignore; the repository's wins over the
    // user's, as in git.
    for file in [ignores.excludes_file.as_ref(), Some(&ignores.info_exclude)]
        .into_iter()
        .flatten()
        .filter(|f| f.is_file())
    {
        builder.add_ignore(file);
    }
    let mut collector = Collector {
        mine: Vec::new(),
        found,
        skip: root.as_os_str().len() + 1,
    };
    for entry in builder.build().flatten() {
        collector.add(&entry);
    }
}

/// One walker thread's finds, handed over in chunks and when it ends.
struct Collector<'a> {
    mine: Vec<Walked>,
    found: &'a Mutex<Vec<Walked>>,
    /// Bytes of `<root>/` before each root-relative path.
    skip: usize,
}

impl Collector<'_> {
    fn add(&mut self, entry: &ignore::DirEntry) {
        let Some(file_type) = entry.file_type().filter(|t| !t.is_dir()) else {
            return;
        };
        // Every path the walk yields starts with `<root>/`.
        if let Some(relative) = entry.path().as_os_str().as_encoded_bytes().get(self.skip..) {
            let mut path = relative.to_vec();
            // git's paths are `/`-separated on every platform.
            if cfg!(windows) {
                path.iter_mut()
                    .filter(|b| **b == b'\\')
                    .for_each(|b| *b = b'/');
            }
            self.mine.push(Walked {
                path,
                regular: file_type.is_file(),
            });
        }
        if self.mine.len() >= CHUNK {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        found.append(&mut self.mine);
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// `.git` itself, or a directory holding a repository of its own (a nested
/// repository or a submodule): git lists neither's files.
fn is_repository(entry: &ignore::DirEntry) -> bool {
    entry.depth() > 0
        && (entry.file_name() == ".git"
            || (entry.file_type().is_some_and(|t| t.is_dir())
                && entry.path().join(".git").exists()))
}
