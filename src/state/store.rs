//! Reading and writing the state file safely: an exclusive lock around every
//! read-modify-write, atomic replacement (temp file, fsync, rename, fsync of
//! the directory), foreign keys kept as raw JSON, corrupt files moved aside.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use indexmap::IndexMap;
use serde_json::value::RawValue;

use super::{BranchState, QgState, STATE_FILE};
use crate::error::QgError;

/// The key qg owns.
const OWN_KEY: &str = "quality_gates";

type Document = IndexMap<String, Box<RawValue>>;

/// The state file of one project.
#[derive(Debug)]
pub(crate) struct StateStore {
    path: PathBuf,
    /// What went wrong that the caller should report (a corrupt file moved aside).
    warnings: std::cell::RefCell<Vec<String>>,
}

impl StateStore {
    /// The store for the project at `root`.
    pub(crate) fn new(root: &Path) -> StateStore {
        StateStore {
            path: root.join(STATE_FILE),
            warnings: Default::default(),
        }
    }

    /// The warnings gathered so far (a corrupt file moved aside), for the
    /// report: qg's library never prints.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// This branch's entry, if any. A corrupt file is moved aside (with a
    /// warning) and reads as empty.
    pub(crate) fn load_branch(&self, branch: &str) -> Result<Option<BranchState>, QgError> {
        if !self.path.exists() {
            return Ok(None);
        }
        let _lock = self.lock()?;
        let (_, state) = self.read_locked()?;
        Ok(state.branches.get(branch).cloned())
    }

    /// Read-only check for `qg doctor`: `None` when there is no file, the
    /// branches with a baseline when it is sound, or what is wrong with it.
    pub(crate) fn health(&self) -> Result<Option<Vec<String>>, String> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        let document: Document =
            serde_json::from_slice(&bytes).map_err(|e| format!("not a JSON object ({e})"))?;
        let Some(raw) = document.get(OWN_KEY) else {
            return Ok(Some(Vec::new()));
        };
        let state: QgState = serde_json::from_str(raw.get())
            .map_err(|e| format!("its {OWN_KEY} key is malformed ({e})"))?;
        if state.version != 1 {
            return Err(format!("its {OWN_KEY} has version {}", state.version));
        }
        Ok(Some(state.branches.into_keys().collect()))
    }

    /// Applies `change` to this branch's entry under the lock and writes the
    /// result atomically — unless it changed nothing. `None` from `change`
    /// removes the entry.
    pub(crate) fn update_branch<F>(&self, branch: &str, change: F) -> Result<(), QgError>
    where
        F: FnOnce(Option<BranchState>) -> Option<BranchState>,
    {
        let _lock = self.lock()?;
        let (document, mut state) = self.read_locked()?;
        let before = state.branches.remove(branch);
        let after = change(before.clone());
        if after == before && self.path.exists() {
            return Ok(());
        }
        if let Some(entry) = after {
            state.branches.insert(branch.to_string(), entry);
        }
        self.write_locked(document, &state)
    }

    /// Removes every branch's entry (other keys stay).
    pub(crate) fn reset_all(&self) -> Result<(), QgError> {
        let _lock = self.lock()?;
        let (document, _) = self.read_locked()?;
        self.write_locked(document, &QgState::default())
    }

    fn lock(&self) -> Result<FileLock, QgError> {
        let dir = self.path.parent().expect("state file has a directory");
        fs::create_dir_all(dir)
            .map_err(|e| QgError::io(format!("cannot create {}", dir.display()), e))?;
        ignore_state_files(dir);
        FileLock::acquire(&self.path.with_extension("json.lock"))
    }

    /// Reads the document; must hold the lock (it may move a corrupt file).
    fn read_locked(&self) -> Result<(Document, QgState), QgError> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Document::new(), QgState::default()))
            }
            Err(e) => {
                return Err(QgError::io(
                    format!("cannot read {}", self.path.display()),
                    e,
                ))
            }
        };
        let document: Document = match serde_json::from_slice(&bytes) {
            Ok(document) => document,
            Err(e) => {
                self.move_aside(&format!("it is not a JSON object ({e})"))?;
                return Ok((Document::new(), QgState::default()));
            }
        };
        let state = match document.get(OWN_KEY) {
            None => QgState::default(),
            Some(raw) => match serde_json::from_str::<QgState>(raw.get()) {
                Ok(state) if state.version == 1 => state,
                Ok(state) => {
                    self.copy_aside(&format!("its {OWN_KEY} has version {}", state.version))?;
                    QgState::default()
                }
                Err(e) => {
                    self.copy_aside(&format!("its {OWN_KEY} key is malformed ({e})"))?;
                    QgState::default()
                }
            },
        };
        Ok((document, state))
    }

    fn write_locked(&self, mut document: Document, state: &QgState) -> Result<(), QgError> {
        let state = QgState {
            version: 1,
            branches: state.branches.clone(),
        };
        // Pretty, indented one level so it sits inside the pretty document.
        // (JSON strings hold no raw newlines, so indenting by line is safe.)
        let pretty = serde_json::to_string_pretty(&state).expect("state serializes");
        let indented = pretty.replace('\n', "\n  ");
        let own = RawValue::from_string(indented).expect("pretty JSON is valid JSON");
        document.insert(OWN_KEY.to_string(), own);
        let mut text = serde_json::to_string_pretty(&document).expect("document serializes");
        text.push('\n');
        crate::atomic_file::write(&self.path, text.as_bytes())
            .map_err(|e| QgError::io(format!("cannot write {}", self.path.display()), e))
    }

    fn aside_path(&self) -> PathBuf {
        let stamp = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .replace([':', '-'], "");
        let mut name = self.path.file_name().expect("file name").to_os_string();
        name.push(format!(".corrupt-{stamp}"));
        self.path.with_file_name(name)
    }

    /// The whole file is unusable: rename it so nothing is lost.
    fn move_aside(&self, why: &str) -> Result<(), QgError> {
        let aside = self.aside_path();
        fs::rename(&self.path, &aside)
            .map_err(|e| QgError::io(format!("cannot move {} aside", self.path.display()), e))?;
        self.warn_aside(why, &aside);
        Ok(())
    }

    fn warn_aside(&self, why: &str, aside: &Path) {
        self.warnings.borrow_mut().push(format!(
            "{} is unusable: {why}; saved as {} and starting from no baseline",
            self.path.display(),
            aside.display()
        ));
    }

    /// Only qg's key is unusable: keep a copy, then rewrite qg's key alone.
    fn copy_aside(&self, why: &str) -> Result<(), QgError> {
        let aside = self.aside_path();
        fs::copy(&self.path, &aside)
            .map_err(|e| QgError::io(format!("cannot copy {} aside", self.path.display()), e))?;
        self.warn_aside(why, &aside);
        Ok(())
    }
}

/// What qg writes to `.st3/.gitignore`; the first line marks it as qg's.
const STATE_IGNORE: &str = "# Created by qg: local state, not source.\n.gitignore\nstate.json\nstate.json.*\n.*.tmp\ntool-versions.json\nhistory.jsonl\nfindings.json\nimport-graph.json\nimport-names.json\ninterfaces.json\nlsp-findings.json\nenvironment.json\ndaemons/\nwarm-standing/\nforeground/\nlogs/\n";

/// State is per machine, never source: a `.st3/.gitignore` keeps it (and
/// its lock, temp and corrupt copies, and itself) out of commits and out of
/// `git status`, so switching branches never trips over it. The default
/// log directory is named too, although it ignores itself: a walk then
/// skips it instead of matching each of its hundreds of logs. A file of
/// qg's own from an older version is brought up to date; a user's own file
/// is left alone.
pub(crate) fn ignore_state_files(dir: &Path) {
    let ignore = dir.join(".gitignore");
    let ours_or_missing = match fs::read_to_string(&ignore) {
        Ok(text) => text != STATE_IGNORE && text.starts_with("# Created by qg"),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if ours_or_missing {
        let _ = fs::write(ignore, STATE_IGNORE);
    }
}

/// An exclusive advisory lock, released when dropped (or when the process dies).
struct FileLock {
    _lock: crate::atomic_file::Lock,
}

impl FileLock {
    fn acquire(path: &Path) -> Result<FileLock, QgError> {
        crate::atomic_file::Lock::acquire(path)
            .map(|lock| FileLock { _lock: lock })
            .map_err(|e| QgError::io(format!("cannot lock {}", path.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_keys_survive_byte_for_byte() {
        let tmp = tempfile::tempdir().unwrap();
        let store = StateStore::new(tmp.path());
        fs::create_dir_all(tmp.path().join(".st3")).unwrap();
        let foreign =
            r#"{"other_tool": {"n": 1.50, "big": 123456789012345678901234567890}, "z": [1, 2]}"#;
        fs::write(store.path(), foreign).unwrap();
        store
            .update_branch("main", |_| Some(BranchState::default()))
            .unwrap();
        let text = fs::read_to_string(store.path()).unwrap();
        assert!(
            text.contains(r#"{"n": 1.50, "big": 123456789012345678901234567890}"#),
            "{text}"
        );
        assert!(text.find("other_tool").unwrap() < text.find("quality_gates").unwrap());
        assert!(store.load_branch("main").unwrap().is_some());
    }

    #[test]
    fn corrupt_file_is_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let store = StateStore::new(tmp.path());
        fs::create_dir_all(tmp.path().join(".st3")).unwrap();
        fs::write(store.path(), "{not json").unwrap();
        assert_eq!(store.load_branch("main").unwrap(), None);
        let aside: Vec<_> = fs::read_dir(tmp.path().join(".st3"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("state.json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1);
        let saved = fs::read_to_string(tmp.path().join(".st3").join(&aside[0])).unwrap();
        assert_eq!(saved, "{not json");
    }

    #[test]
    fn concurrent_updates_are_never_lost() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::thread::scope(|scope| {
            for i in 0..20 {
                let store = StateStore::new(root);
                scope.spawn(move || {
                    store
                        .update_branch("main", |entry| {
                            let mut entry = entry.unwrap_or_default();
                            entry.failed_files.push(format!("f{i}.py"));
                            Some(entry)
                        })
                        .unwrap();
                });
            }
        });
        let entry = StateStore::new(root).load_branch("main").unwrap().unwrap();
        assert_eq!(entry.failed_files.len(), 20);
    }
}
