//! The directory store: one JSON file per entry, named by its key, under
//! the cache directory; written atomically (a reader sees a whole entry or
//! none, two runs writing one key write the same bytes), and read back
//! only when it names the key it was asked for.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::tool_cache::TOOL_CACHES;
use crate::violation::Violation;

/// Where the entries of this format live, under the cache directory: a
/// new format starts empty beside the old one, which `qg cache prune`
/// clears by age.
const RESULTS: &str = "results-v1";

/// One line per gate per run that used the store: what `qg cache stats`
/// sums.
const RUNS: &str = "runs.jsonl";

/// The entries a background check found wrong, until a run of their
/// project says so (one line each).
const DISTRUSTED: &str = "distrusted.jsonl";

/// Where runs leave the samples of their hits a background check takes.
pub(crate) const SAMPLES: &str = "samples";

/// A store of gate results in a directory.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    dir: PathBuf,
}

/// What the store holds for a key.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// The findings stored for it.
    Hit(Vec<Violation>),
    /// Nothing.
    Miss,
    /// An entry that cannot be used (cut short, unreadable, another key's):
    /// a miss, and why, for the run's warnings.
    Unusable(String),
}

/// One stored entry.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The key it was stored under: a file renamed or copied in by hand
    /// does not answer for another.
    key: String,
    /// The gate, and the root-relative file, for a reader of the store.
    gate: String,
    file: String,
    /// The tool's findings in the file.
    violations: Vec<Violation>,
}

/// One gate's use of the store in one run (a line of `runs.jsonl`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Use {
    /// Seconds since the epoch.
    #[serde(default)]
    pub(crate) at: u64,
    /// The gate id.
    pub(crate) gate: String,
    /// Files answered from the store.
    pub(crate) hits: usize,
    /// Files the tool checked.
    pub(crate) misses: usize,
    /// Entries written.
    pub(crate) stored: usize,
    /// Of the hits, those the shared store answered.
    #[serde(default)]
    pub(crate) shared: usize,
}

/// An entry a background check found wrong (and removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Distrusted {
    /// The project root whose run used it.
    pub(crate) root: String,
    /// The gate and the root-relative file.
    pub(crate) gate: String,
    pub(crate) file: String,
    /// The entry's key.
    pub(crate) key: String,
}

/// What `qg cache stats` shows.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Stats {
    /// The cache directory.
    pub(crate) dir: String,
    /// Entries held, and their size in bytes.
    pub(crate) entries: usize,
    pub(crate) bytes: u64,
    /// Archives of tools' own caches held (their bytes are in `bytes`).
    pub(crate) tool_caches: usize,
    /// Per gate: hits, misses and entries written, over every recorded run.
    pub(crate) gates: BTreeMap<String, Use>,
}

/// What `qg cache prune` removed and kept.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Pruned {
    pub(crate) removed: usize,
    pub(crate) freed: u64,
    pub(crate) kept: usize,
    pub(crate) bytes: u64,
}

impl Store {
    /// The store in `dir` (created on the first write).
    pub(crate) fn at(dir: PathBuf) -> Store {
        Store { dir }
    }

    /// The store a run uses: none when `QG_NO_CACHE` says so or no cache
    /// directory is known.
    pub(crate) fn for_run() -> Option<Store> {
        if super::location::off_by_environment() {
            return None;
        }
        super::location::dir().map(Store::at)
    }

    /// The cache directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, key: &str) -> PathBuf {
        self.dir.join(stored_path(key))
    }

    /// The findings stored under `key`. A hit marks the entry used now, so
    /// pruning by age keeps what runs still read.
    pub(crate) fn get(&self, key: &str) -> Lookup {
        let path = self.path_of(key);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Unusable(format!("{} cannot be read: {e}", path.display())),
        };
        let found = read_entry(key, &bytes, &path.display().to_string());
        if matches!(found, Lookup::Hit(_)) {
            if let Ok(file) = std::fs::File::options().write(true).open(&path) {
                let _ = file.set_modified(SystemTime::now());
            }
        }
        found
    }

    /// The bytes stored at `path` (store-relative, `/`-separated: an
    /// archive of a tool's own cache), marked used now.
    pub(crate) fn blob(&self, path: &str) -> Option<Vec<u8>> {
        let path = self.dir.join(path);
        let bytes = std::fs::read(&path).ok()?;
        if let Ok(file) = std::fs::File::options().write(true).open(&path) {
            let _ = file.set_modified(SystemTime::now());
        }
        Some(bytes)
    }

    /// Whether the store holds `path`.
    pub(crate) fn holds(&self, path: &str) -> bool {
        self.dir.join(path).is_file()
    }

    /// Stores `bytes` at `path` (store-relative), atomically.
    pub(crate) fn put_blob(&self, path: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.dir.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::atomic_file::write_cache(&path, bytes)
    }

    /// The bytes of the entry of `key`, as stored.
    pub(crate) fn bytes(&self, key: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path_of(key)).ok()
    }

    /// An entry another store holds for `key` (`from` names it): checked
    /// as a local one is, and kept here when it holds.
    pub(crate) fn take(&self, key: &str, bytes: &[u8], from: &str) -> Lookup {
        let found = read_entry(key, bytes, from);
        if matches!(found, Lookup::Hit(_)) {
            let path = self.path_of(key);
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = crate::atomic_file::write_cache(&path, bytes);
        }
        found
    }

    /// Stores `violations` (the tool's findings in `file`) under `key`;
    /// the entry's bytes, for a shared store.
    pub(crate) fn put(
        &self,
        key: &str,
        gate: &str,
        file: &str,
        violations: &[Violation],
    ) -> std::io::Result<Vec<u8>> {
        let entry = Entry {
            key: key.to_string(),
            gate: gate.to_string(),
            file: file.to_string(),
            violations: violations.iter().map(untracked).collect(),
        };
        let path = self.path_of(key);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
        crate::atomic_file::write_cache(&path, &bytes)?;
        Ok(bytes)
    }

    /// Adds one run's use of the store per gate to `runs.jsonl` (a line
    /// each, appended whole: concurrent runs do not interleave).
    pub(crate) fn record(&self, uses: &[Use]) {
        if uses.is_empty() || std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut text = String::new();
        for used in uses {
            let line = Use { at, ..used.clone() };
            text.push_str(&serde_json::to_string(&line).unwrap_or_default());
            text.push('\n');
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(RUNS));
        if let Ok(mut file) = file {
            let _ = file.write_all(text.as_bytes());
        }
    }

    /// Removes the entry of `key`, and records why for the next run of its
    /// project (see [`Store::take_distrusted`]).
    pub(crate) fn distrust(&self, distrusted: &Distrusted) {
        let _ = std::fs::remove_file(self.path_of(&distrusted.key));
        let line = serde_json::to_string(distrusted).unwrap_or_default() + "\n";
        let _lock = crate::atomic_file::Lock::acquire(&self.dir.join(".distrusted.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(DISTRUSTED));
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }

    /// The entries of `root`'s runs a background check found wrong since
    /// its last run asked, forgotten once told.
    pub(crate) fn take_distrusted(&self, root: &Path) -> Vec<Distrusted> {
        let path = self.dir.join(DISTRUSTED);
        if !path.exists() {
            return Vec::new();
        }
        let Ok(_lock) = crate::atomic_file::Lock::acquire(&self.dir.join(".distrusted.lock"))
        else {
            return Vec::new();
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let root = root.display().to_string();
        let (ours, others): (Vec<Distrusted>, Vec<Distrusted>) = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Distrusted>(l).ok())
            .partition(|d| d.root == root);
        if !ours.is_empty() {
            let rest: String = others
                .iter()
                .map(|d| serde_json::to_string(d).unwrap_or_default() + "\n")
                .collect();
            let _ = crate::atomic_file::write_cache(&path, rest.as_bytes());
        }
        ours
    }

    /// Entries held, bytes, and every gate's recorded use.
    pub(crate) fn stats(&self) -> Stats {
        let mut stats = Stats {
            dir: self.dir.display().to_string(),
            ..Stats::default()
        };
        for (_, size, _) in self.files_under(RESULTS, ".json") {
            stats.entries += 1;
            stats.bytes += size;
        }
        for (_, size, _) in self.files_under(TOOL_CACHES, ".tar.gz") {
            stats.tool_caches += 1;
            stats.bytes += size;
        }
        let runs = std::fs::read_to_string(self.dir.join(RUNS)).unwrap_or_default();
        for used in runs
            .lines()
            .filter_map(|l| serde_json::from_str::<Use>(l).ok())
        {
            let total = stats.gates.entry(used.gate.clone()).or_default();
            total.gate = used.gate;
            total.hits += used.hits;
            total.misses += used.misses;
            total.stored += used.stored;
            total.shared += used.shared;
            total.at = total.at.max(used.at);
        }
        stats
    }

    /// Removes entries not used for `max_age`, then the least recently
    /// used until the rest fit in `max_bytes`.
    pub(crate) fn prune(&self, max_age: Option<Duration>, max_bytes: Option<u64>) -> Pruned {
        let mut entries = self.entries();
        // Least recently used first.
        entries.sort_by_key(|(_, _, used)| *used);
        let now = SystemTime::now();
        let mut total: u64 = entries.iter().map(|(_, size, _)| size).sum();
        let mut pruned = Pruned::default();
        for (path, size, used) in entries {
            let old = max_age.is_some_and(|age| now.duration_since(used).unwrap_or_default() > age);
            let over = max_bytes.is_some_and(|max| total > max);
            if (old || over) && std::fs::remove_file(&path).is_ok() {
                pruned.removed += 1;
                pruned.freed += size;
                total -= size;
            } else {
                pruned.kept += 1;
            }
        }
        pruned.bytes = total;
        pruned
    }

    /// Every entry file and tool cache archive: path, size, last use.
    fn entries(&self) -> Vec<(PathBuf, u64, SystemTime)> {
        let mut found = self.files_under(RESULTS, ".json");
        found.extend(self.files_under(TOOL_CACHES, ".tar.gz"));
        found
    }

    /// The files named `*{suffix}` in the fan-out directories of `kind`.
    fn files_under(&self, kind: &str, suffix: &str) -> Vec<(PathBuf, u64, SystemTime)> {
        let mut found = Vec::new();
        let fans = std::fs::read_dir(self.dir.join(kind)).into_iter().flatten();
        for fan in fans.flatten() {
            for entry in std::fs::read_dir(fan.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_file() && entry.file_name().to_string_lossy().ends_with(suffix) {
                    let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    found.push((entry.path(), meta.len(), used));
                }
            }
        }
        found
    }
}

/// Where the entry of `key` lives in a store, `/`-separated.
pub(crate) fn stored_path(key: &str) -> String {
    let fan = key.get(..2).unwrap_or("__");
    format!("{RESULTS}/{fan}/{key}.json")
}

/// The findings in `bytes` if they are a whole entry of `key` (`at` says
/// where they were read, for the warning when not).
fn read_entry(key: &str, bytes: &[u8], at: &str) -> Lookup {
    let entry: Entry = match serde_json::from_slice(bytes) {
        Ok(entry) => entry,
        Err(e) => return Lookup::Unusable(format!("{at} is not a whole entry: {e}")),
    };
    if entry.key != key {
        return Lookup::Unusable(format!(
            "{at} holds the entry of another key ({})",
            entry.key
        ));
    }
    Lookup::Hit(entry.violations)
}

/// Whether two lists of one file's findings say the same, in any order
/// (what qg adds after the tool is left out).
pub(crate) fn same_findings(a: &[Violation], b: &[Violation]) -> bool {
    let said = |list: &[Violation]| {
        let mut said: Vec<String> = list
            .iter()
            .map(|v| serde_json::to_string(&untracked(v)).unwrap_or_default())
            .collect();
        said.sort();
        said
    };
    said(a) == said(b)
}

/// A finding as the tool reported it, without what qg adds after (its
/// fingerprint and standing are the run's to compute).
pub(crate) fn untracked(violation: &Violation) -> Violation {
    Violation {
        tracking: Default::default(),
        ..violation.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(file: &str) -> Violation {
        serde_json::from_value(serde_json::json!({
            "file": file, "line": 3, "column": 1, "code": "E1",
            "message": "bad", "severity": "error"
        }))
        .unwrap()
    }

    #[test]
    fn an_entry_answers_its_own_key_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().to_path_buf());
        assert!(matches!(store.get("ab12"), Lookup::Miss));
        store
            .put("ab12", "lint", "a.py", &[finding("a.py")])
            .unwrap();
        match store.get("ab12") {
            Lookup::Hit(found) => assert_eq!(found, vec![finding("a.py")]),
            other => panic!("{other:?}"),
        }
        // An entry copied under another key's name is not that key's.
        std::fs::copy(store.path_of("ab12"), {
            let other = store.path_of("ab34");
            std::fs::create_dir_all(other.parent().unwrap()).unwrap();
            other
        })
        .unwrap();
        assert!(matches!(store.get("ab34"), Lookup::Unusable(why) if why.contains("another key")));
        // Cut short: unusable, not a pass.
        let path = store.path_of("ab12");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(
            matches!(store.get("ab12"), Lookup::Unusable(why) if why.contains("not a whole entry"))
        );
    }

    #[test]
    fn stats_sum_the_runs_and_prune_keeps_what_fits() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().to_path_buf());
        for key in ["aa01", "aa02", "bb03"] {
            store.put(key, "lint", "a.py", &[finding("a.py")]).unwrap();
        }
        let used = |hits, misses| Use {
            gate: "lint".into(),
            hits,
            misses,
            stored: misses,
            ..Use::default()
        };
        store.record(&[used(1, 2)]);
        store.record(&[used(3, 0)]);
        let stats = store.stats();
        assert_eq!(
            (
                stats.entries,
                stats.gates["lint"].hits,
                stats.gates["lint"].misses
            ),
            (3, 4, 2)
        );
        let one = stats.bytes / 3;
        let pruned = store.prune(None, Some(one + one / 2));
        assert_eq!((pruned.removed, pruned.kept), (2, 1));
        let pruned = store.prune(Some(Duration::ZERO), None);
        assert_eq!((pruned.removed, store.stats().entries), (1, 0));
    }
}
