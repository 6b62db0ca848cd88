//! The index, read fast: gix-index decodes a 100,000-entry index in about
//! 14 ms where libgit2 takes 65 ms (it hashes every entry into a map), and
//! qg reads it once per run instead of once per diff thread. Only a plain
//! index is read this way; anything unusual (a split or sparse index,
//! SHA-256 objects) answers `None`, and the caller asks libgit2 instead.

use std::path::Path;

use gix_index::entry::{Flags, Mode, Stage};

/// A plain index, as the fast status and file listing read it.
pub(crate) struct Index {
    file: gix_index::File,
}

/// How one index entry matters to qg.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A file (regular or executable) git tracks at stage 0.
    File,
    /// A symbolic link git tracks at stage 0.
    Symlink,
    /// A submodule (gitlink): never a file of this project.
    Submodule,
    /// A merge conflict's entry (stage 1–3): the path is changed.
    Conflict,
    /// Outside the work tree by design (`skip-worktree`, sparse checkout)
    /// or declared unchanged (`assume-unchanged`): git does not look at it,
    /// and neither does qg.
    Untouched,
    /// Added with `git add -N`: in the index, with no content yet.
    IntentToAdd,
}

impl Index {
    /// Reads `<git_dir>/index`; `None` when it is not a plain index this
    /// reader handles (the caller falls back to libgit2), or when there is
    /// none (a repository with nothing staged yet is libgit2's case too).
    pub(crate) fn read(git_dir: &Path) -> Option<Index> {
        let path = git_dir.join("index");
        let file = gix_index::File::at(
            &path,
            gix_hash::Kind::Sha1,
            // git itself does not verify the trailing checksum on read.
            true,
            // The core count, given: asked by gix, it is the standard
            // library's cgroup reads again.
            gix_index::decode::Options {
                thread_limit: Some(crate::process::cores()),
                ..Default::default()
            },
        )
        .ok()?;
        let plain = file.link().is_none() && !file.is_sparse();
        plain.then_some(Index { file })
    }

    /// The entries, sorted by path (byte order, stages together).
    pub(crate) fn entries(&self) -> &[gix_index::Entry] {
        self.file.entries()
    }

    /// An entry's path, as git stores it (bytes, `/`-separated).
    pub(crate) fn path(&self, entry: &gix_index::Entry) -> &[u8] {
        entry.path(&self.file)
    }

    /// When the index was written: an entry whose file changed in that
    /// second or later may look unchanged by its stat data (racy git).
    pub(crate) fn timestamp(&self) -> filetime::FileTime {
        self.file.timestamp()
    }

    /// The cached tree ids of the index's directories (the TREE
    /// extension), when git kept them.
    pub(crate) fn cache_tree(&self) -> Option<&gix_index::extension::Tree> {
        self.file.tree()
    }

    /// Whether `path` (bytes) is an entry at any stage.
    pub(crate) fn contains(&self, path: &[u8]) -> bool {
        self.file.entry_index_by_path(path.into()).is_ok()
    }

    /// The range of entries under the directory `prefix` (`pkg/`), or
    /// every entry for the root (`""`).
    pub(crate) fn under(&self, prefix: &[u8]) -> std::ops::Range<usize> {
        if prefix.is_empty() {
            return 0..self.entries().len();
        }
        self.file
            .prefixed_entries_range(prefix.into())
            .unwrap_or(0..0)
    }
}

/// What an entry is to qg.
pub(crate) fn kind(entry: &gix_index::Entry) -> Kind {
    if entry.stage() != Stage::Unconflicted {
        Kind::Conflict
    } else if entry
        .flags
        .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
    {
        Kind::Untouched
    } else if entry.flags.contains(Flags::INTENT_TO_ADD) {
        Kind::IntentToAdd
    } else if entry.mode == Mode::COMMIT {
        Kind::Submodule
    } else if entry.mode == Mode::SYMLINK {
        Kind::Symlink
    } else {
        Kind::File
    }
}
