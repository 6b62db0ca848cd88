//! What a file looked like at an earlier commit, and how its lines moved
//! since: the baseline carries old findings through renames and edits.

use std::collections::BTreeMap;

use git2::{DiffFindOptions, DiffOptions, Oid};

use super::{git_error, Repo};
use crate::error::QgError;
use crate::file_name;

/// One hunk of a line diff: `old_lines` lines from `old_start` became
/// `new_lines` lines from `new_start` (1-based; a count of 0 means the
/// hunk only inserts or only deletes, and its start is the line before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hunk {
    old_start: u64,
    old_lines: u64,
    new_start: u64,
    new_lines: u64,
}

/// Where each line of an old version of a file is in the new one.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineMap {
    hunks: Vec<Hunk>,
}

impl LineMap {
    /// The new lines old line `line` corresponds to: exactly one when it is
    /// unchanged context, the replacing hunk's lines when it was edited
    /// (`(start, end)` inclusive, possibly empty when deleted: then both
    /// are the line the deletion sits at).
    pub(crate) fn map(&self, line: u64) -> (u64, u64) {
        let mut shift: i64 = 0;
        for hunk in &self.hunks {
            let old_end = hunk.old_start + hunk.old_lines; // exclusive
            if hunk.old_lines > 0 && line >= hunk.old_start && line < old_end {
                let end = hunk.new_start + hunk.new_lines.saturating_sub(1);
                return (hunk.new_start, end.max(hunk.new_start));
            }
            // A pure insertion sits after `old_start`; everything else
            // starts at it.
            let first_after = if hunk.old_lines == 0 {
                hunk.old_start + 1
            } else {
                old_end
            };
            if line < first_after {
                break;
            }
            shift += hunk.new_lines as i64 - hunk.old_lines as i64;
        }
        let moved = (line as i64 + shift).max(1) as u64;
        (moved, moved)
    }
}

/// The line map from `old` to `new` (a Myers diff, as git shows it).
pub(crate) fn line_map(old: &[u8], new: &[u8]) -> LineMap {
    let mut options = DiffOptions::new();
    options.context_lines(0);
    let Ok(patch) = git2::Patch::from_buffers(old, None, new, None, Some(&mut options)) else {
        return LineMap::default();
    };
    let hunks = (0..patch.num_hunks())
        .filter_map(|i| patch.hunk(i).ok())
        .map(|(hunk, _)| Hunk {
            old_start: u64::from(hunk.old_start()),
            old_lines: u64::from(hunk.old_lines()),
            new_start: u64::from(hunk.new_start()),
            new_lines: u64::from(hunk.new_lines()),
        })
        .collect();
    LineMap { hunks }
}

impl Repo {
    /// The content `commit` holds at `path`, if it holds a file there.
    pub(crate) fn file_at(&self, commit: &str, path: &str) -> Option<Vec<u8>> {
        let commit = self.repo.find_commit(Oid::from_str(commit).ok()?).ok()?;
        let entry = commit
            .tree()
            .ok()?
            .get_path(&file_name::to_path(path))
            .ok()?;
        let blob = self.repo.find_blob(entry.id()).ok()?;
        Some(blob.content().to_vec())
    }

    /// Files renamed (or moved) between `commit` and the working tree,
    /// staged or not, untracked destinations included: old path → new path.
    pub(crate) fn renames_since(&self, commit: &str) -> Result<BTreeMap<String, String>, QgError> {
        let git_err = git_error("cannot look for renames");
        let oid = Oid::from_str(commit).map_err(&git_err)?;
        let tree = self
            .repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(&git_err)?;
        let mut options = DiffOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true);
        let mut diff = self
            .repo
            .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut options))
            .map_err(&git_err)?;
        let mut find = DiffFindOptions::new();
        find.renames(true).for_untracked(true);
        diff.find_similar(Some(&mut find)).map_err(&git_err)?;
        Ok(diff
            .deltas()
            .filter(|d| d.status() == git2::Delta::Renamed)
            .filter_map(|d| {
                let old = d.old_file().path_bytes()?;
                let new = d.new_file().path_bytes()?;
                Some((file_name::from_bytes(old), file_name::from_bytes(new)))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_shift_past_insertions_and_edits_map_to_their_hunk() {
        let old = b"a\nb\nc\nd\ne\n";
        let new = b"x\ny\na\nb\nC\nd\ne\n";
        let map = line_map(old, new);
        assert_eq!(map.map(1), (3, 3));
        assert_eq!(map.map(2), (4, 4));
        assert_eq!(map.map(3), (5, 5), "edited line maps to its replacement");
        assert_eq!(map.map(5), (7, 7));
    }

    #[test]
    fn deleted_lines_map_to_where_they_were() {
        let map = line_map(b"a\nb\nc\nd\n", b"a\nd\n");
        assert_eq!(map.map(1), (1, 1));
        assert_eq!(map.map(4), (2, 2));
        let (start, end) = map.map(2);
        assert!(start <= 2 && end <= 2, "{start} {end}");
    }
}
