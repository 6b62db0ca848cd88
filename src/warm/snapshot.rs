//! What a language server last saw of the project's files, so a check can
//! tell it exactly what changed since: every file's size, times and inode,
//! taken before the server is told (an edit made after that differs next
//! time and is never lost), plus a content hash for files modified so
//! recently that a second edit could leave the same times (as git treats
//! "racy" index entries).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// One file's identity on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    inode: u64,
    /// Set when the file was modified too recently to trust the times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    racy_hash: Option<String>,
}

/// The files as last seen (kept in a confirmation's job: the tree its warm
/// answer was given on).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Snapshot {
    files: BTreeMap<String, Stamp>,
}

/// What differs between two snapshots.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    /// New files.
    pub(crate) created: BTreeSet<String>,
    /// Files whose content may differ.
    pub(crate) changed: BTreeSet<String>,
    /// Files that are gone.
    pub(crate) deleted: BTreeSet<String>,
}

impl Changes {
    /// Whether nothing changed.
    pub(crate) fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }
}

/// Times closer to now than this are not trusted to tell two edits apart.
const RACY: Duration = Duration::from_secs(2);

impl Snapshot {
    /// Stamps `files` (root-relative) as they are now; a file that cannot
    /// be read is left out (it counts as deleted). A file `previous` saw
    /// while it was racy is hashed again, so its content tells.
    pub(crate) fn take(root: &Path, files: &[String], previous: &Snapshot) -> Snapshot {
        let now = SystemTime::now();
        let files = files
            .iter()
            .filter_map(|file| {
                let was_racy = previous
                    .files
                    .get(file)
                    .is_some_and(|s| s.racy_hash.is_some());
                Some((file.clone(), stamp(root, file, now, was_racy)?))
            })
            .collect();
        Snapshot { files }
    }

    /// A digest of every file's name and identity on disk: equal for the
    /// same tree whenever it is taken (a racy file's content hash, which
    /// depends on when, is left out; its times and inode still tell).
    pub(crate) fn digest(&self) -> String {
        let mut hasher = sha1_smol::Sha1::new();
        for (file, stamp) in &self.files {
            hasher.update(file.as_bytes());
            hasher.update(&[0]);
            for part in [
                stamp.len as i128,
                stamp.mtime_ns,
                stamp.ctime_ns,
                stamp.inode as i128,
            ] {
                hasher.update(&part.to_le_bytes());
            }
        }
        hasher.digest().to_string()
    }

    /// What changed from `self` to `newer`.
    pub(crate) fn changes_to(&self, newer: &Snapshot) -> Changes {
        let mut changes = Changes::default();
        for (file, stamp) in &newer.files {
            match self.files.get(file) {
                None => {
                    changes.created.insert(file.clone());
                }
                Some(old) if old != stamp => {
                    changes.changed.insert(file.clone());
                }
                Some(_) => {}
            }
        }
        for file in self.files.keys() {
            if !newer.files.contains_key(file) {
                changes.deleted.insert(file.clone());
            }
        }
        changes
    }
}

/// A file's stamp; hashed when it is racy now or was (`hash`).
fn stamp(root: &Path, file: &str, now: SystemTime, hash: bool) -> Option<Stamp> {
    let path = crate::file_name::join(root, file);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let racy = meta
        .modified()
        .ok()
        .and_then(|m| now.duration_since(m).ok())
        .is_none_or(|age| age < RACY);
    let racy_hash = match racy || hash {
        true => std::fs::read(&path)
            .ok()
            .map(|bytes| crate::git::hash_blob(&bytes)),
        false => None,
    };
    let (ctime_ns, inode) = change_time_and_inode(&meta);
    Some(Stamp {
        len: meta.len(),
        mtime_ns: meta.modified().map_or(0, nanos_since_epoch),
        ctime_ns,
        inode,
        racy_hash,
    })
}

/// A time as nanoseconds since the epoch (negative before it).
fn nanos_since_epoch(time: SystemTime) -> i128 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

/// The inode's change time and number: a file replaced by a rename, or
/// written with its modification time put back, still differs.
#[cfg(unix)]
fn change_time_and_inode(meta: &std::fs::Metadata) -> (i128, u64) {
    use std::os::unix::fs::MetadataExt;
    let ctime = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
    (ctime, meta.ino())
}

/// Windows has neither: its creation time tells a file replaced by a
/// rename (a new file), and the content hash of racy files does the rest.
#[cfg(not(unix))]
fn change_time_and_inode(meta: &std::fs::Metadata) -> (i128, u64) {
    (meta.created().map_or(0, nanos_since_epoch), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(set: &BTreeSet<String>) -> Vec<&str> {
        set.iter().map(String::as_str).collect()
    }

    #[test]
    fn created_changed_and_deleted_files_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(root.join("a.py"), "a = 1\n").unwrap();
        std::fs::write(root.join("b.py"), "b = 1\n").unwrap();
        let all = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let before = Snapshot::take(root, &all(&["a.py", "b.py"]), &Snapshot::default());
        let again = Snapshot::take(root, &all(&["a.py", "b.py"]), &before);
        assert!(before.changes_to(&again).is_empty());
        // Same size, within the same instant as far as a coarse clock knows:
        // the content hash of a racy file still tells.
        std::fs::write(root.join("a.py"), "a = 2\n").unwrap();
        std::fs::write(root.join("c.py"), "c = 1\n").unwrap();
        std::fs::remove_file(root.join("b.py")).unwrap();
        let after = Snapshot::take(root, &all(&["a.py", "b.py", "c.py"]), &before);
        let changes = before.changes_to(&after);
        assert_eq!(names(&changes.changed), ["a.py"]);
        assert_eq!(names(&changes.created), ["c.py"]);
        assert_eq!(names(&changes.deleted), ["b.py"]);
    }

    #[test]
    fn a_racy_file_rewritten_with_the_same_times_is_still_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let files = vec!["a.py".to_string()];
        let before = Snapshot::take(tmp.path(), &files, &Snapshot::default());
        assert!(
            before.files["a.py"].racy_hash.is_some(),
            "just written: racy"
        );
        std::fs::write(&path, "x = 2\n").unwrap();
        let mut after = Snapshot::take(tmp.path(), &files, &before);
        // Were every time and the inode the same (a coarse clock), the
        // content hash still tells.
        let old = before.files["a.py"].clone();
        let new = after.files.get_mut("a.py").unwrap();
        (new.mtime_ns, new.ctime_ns, new.inode) = (old.mtime_ns, old.ctime_ns, old.inode);
        assert_eq!(names(&before.changes_to(&after).changed), ["a.py"]);
        // The same content, racy or not, is no change.
        let again = Snapshot::take(tmp.path(), &files, &after);
        assert_eq!(again.files["a.py"].racy_hash, after.files["a.py"].racy_hash);
    }
}
