//! A commit's tree against the index: what is staged. The index keeps the
//! tree id of each directory it has not changed since git last wrote a tree
//! (the TREE extension); a directory whose cached id equals the commit's
//! subtree is identical, entry for entry, and is skipped without reading
//! it — so comparing HEAD with an untouched index reads one tree, not one
//! per directory. Only directories the index changed are compared entry by
//! entry.

use git2::{ObjectType, Oid, Repository, Tree};
use gix_index::entry::{Mode, Stage};
use gix_index::extension::Tree as CachedTree;

use super::index::Index;

/// What differs between a tree and the index, by path (bytes).
#[derive(Debug, Default)]
pub(crate) struct Staged {
    /// Added, modified, type-changed or conflicted in the index.
    pub(crate) changed: Vec<Vec<u8>>,
    /// In the tree, not in the index.
    pub(crate) deleted: Vec<Vec<u8>>,
}

/// Compares the tree `tree` (none: an empty tree) with `index`.
pub(crate) fn staged(
    repo: &Repository,
    tree: Option<Oid>,
    index: &Index,
) -> Result<Staged, git2::Error> {
    let mut walk = Walk {
        repo,
        index,
        seen: vec![false; index.entries().len()],
        out: Staged::default(),
    };
    if let Some(id) = tree {
        let tree = repo.find_tree(id)?;
        walk.directory(&tree, &mut Vec::new(), index.cache_tree())?;
    }
    let Walk { seen, mut out, .. } = walk;
    for (entry, seen) in index.entries().iter().zip(seen) {
        // In the index, not (identically) in the tree: added — or a
        // conflict; submodules are not files of the project.
        if !seen && entry.mode != Mode::COMMIT {
            out.changed.push(index.path(entry).to_vec());
        }
    }
    out.changed.dedup();
    Ok(out)
}

/// The comparison under way.
struct Walk<'a> {
    repo: &'a Repository,
    index: &'a Index,
    /// Index entries matched by the tree (or inside an identical directory).
    seen: Vec<bool>,
    out: Staged,
}

impl Walk<'_> {
    /// Compares `tree`, the directory at `prefix` (`pkg/sub/`, or empty for
    /// the root), with the index entries under it.
    fn directory(
        &mut self,
        tree: &Tree<'_>,
        prefix: &mut Vec<u8>,
        cached: Option<&CachedTree>,
    ) -> Result<(), git2::Error> {
        let range = self.index.under(prefix);
        if cached.is_some_and(|c| is_identical(c, tree.id(), range.len())) {
            self.seen[range].fill(true);
            return Ok(());
        }
        for item in tree.iter() {
            let depth = prefix.len();
            prefix.extend_from_slice(item.name_bytes());
            match item.kind() {
                Some(ObjectType::Tree) => {
                    let subtree = self.repo.find_tree(item.id())?;
                    let child = cached.and_then(|c| {
                        c.children
                            .iter()
                            .find(|t| t.name.as_slice() == item.name_bytes())
                    });
                    prefix.push(b'/');
                    self.directory(&subtree, prefix, child)?;
                }
                Some(ObjectType::Blob) => self.file(prefix, item.id(), item.filemode()),
                // A submodule's commit: not a file of the project.
                _ => {}
            }
            prefix.truncate(depth);
        }
        Ok(())
    }

    /// Compares the tree's file at `path` with the index's.
    fn file(&mut self, path: &[u8], id: Oid, mode: i32) {
        let at = self.index.entries().binary_search_by(|e| {
            self.index
                .path(e)
                .cmp(path)
                .then(e.stage_raw().cmp(&(Stage::Unconflicted as u32)))
        });
        match at {
            Ok(i) => {
                self.seen[i] = true;
                let entry = &self.index.entries()[i];
                if entry.id.as_slice() != id.as_bytes() || entry.mode.bits() != mode as u32 {
                    self.out.changed.push(path.to_vec());
                }
            }
            // Conflicted (its stages are left unseen: changed) or gone.
            Err(_) if self.index.contains(path) => {}
            Err(_) => self.out.deleted.push(path.to_vec()),
        }
    }
}

/// A directory the index's cache says it holds exactly as `tree` does: its
/// cached id is valid and equal, and it covers every entry under it (the
/// count guards against a cache that is out of step).
fn is_identical(cached: &CachedTree, tree: Oid, entries: usize) -> bool {
    cached.num_entries.is_some_and(|n| n as usize == entries)
        && cached.id.as_slice() == tree.as_bytes()
}
