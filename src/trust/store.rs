//! Where trust is recorded: `trust.json` in the user's own data directory
//! (`$XDG_DATA_HOME/qg`, else `~/.local/share/qg`; `%APPDATA%\qg` on
//! Windows), never in a repository — a repository cannot trust itself.
//! One record per repository root: the fingerprint digest it was trusted
//! with. Writers take a lock beside the file and write it atomically; a
//! file that cannot be read is an error naming it, and trusts nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The store's format version.
const VERSION: u32 = 1;

/// Every trusted repository.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Records {
    /// The format (1).
    pub(crate) version: u32,
    /// Repository root (as qg found it) → what was trusted there.
    #[serde(default)]
    pub(crate) trusted: BTreeMap<String, Record>,
}

/// What the user trusted in one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The fingerprint's digest.
    pub(crate) digest: String,
    /// When (RFC 3339, UTC).
    pub(crate) at: String,
    /// What would run, in words, as it was then.
    pub(crate) what: String,
}

/// The store's file: `QG_TRUST_FILE` when set (tests, and users who keep
/// it elsewhere), else the data directory's.
pub(crate) fn path() -> Result<PathBuf, String> {
    if let Some(file) = std::env::var_os("QG_TRUST_FILE").filter(|f| !f.is_empty()) {
        return Ok(PathBuf::from(file));
    }
    data_dir()
        .map(|dir| dir.join("qg").join("trust.json"))
        .ok_or_else(|| {
            "no data directory to keep trust in: set XDG_DATA_HOME or HOME (APPDATA on Windows)"
                .to_string()
        })
}

#[cfg(windows)]
fn data_dir() -> Option<PathBuf> {
    std::env::var_os("APPDATA")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

#[cfg(not(windows))]
fn data_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .filter(|d| d.is_absolute());
    xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| PathBuf::from(home).join(".local").join("share"))
    })
}

/// Every record; none when the file does not exist yet. An unreadable file
/// is an error that names it.
pub(crate) fn read() -> Result<Records, String> {
    let path = path()?;
    read_at(&path)
}

fn read_at(path: &std::path::Path) -> Result<Records, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Records::default()),
        Err(e) => {
            return Err(format!(
                "cannot read the trust store {}: {e}",
                path.display()
            ))
        }
    };
    let records: Records = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "the trust store {} is not readable ({e}): mend it or delete it (then trust again)",
            path.display()
        )
    })?;
    if records.version != VERSION {
        return Err(format!(
            "the trust store {} has format {} (this qg reads {VERSION}): delete it, then trust again",
            path.display(),
            records.version
        ));
    }
    Ok(records)
}

/// Changes the records under the store's lock and writes them back
/// atomically; returns what `change` returned.
pub(crate) fn update<T>(change: impl FnOnce(&mut Records) -> T) -> Result<T, String> {
    update_at(&path()?, change)
}

fn update_at<T>(
    path: &std::path::Path,
    change: impl FnOnce(&mut Records) -> T,
) -> Result<T, String> {
    let path = path.to_path_buf();
    let dir = path.parent().map(PathBuf::from).unwrap_or_default();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock_path = path.with_extension("json.lock");
    let _lock = crate::atomic_file::Lock::acquire(&lock_path)
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let mut records = read_at(&path)?;
    records.version = VERSION;
    let result = change(&mut records);
    let mut bytes = serde_json::to_vec_pretty(&records).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    crate::atomic_file::write(&path, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_store_trusts_nothing_and_names_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("trust.json");
        std::fs::write(&file, "{not json").unwrap();
        let why = read_at(&file).unwrap_err();
        assert!(
            why.starts_with(&format!(
                "the trust store {} is not readable",
                file.display()
            )),
            "{why}"
        );
        assert!(read_at(&tmp.path().join("absent.json"))
            .unwrap()
            .trusted
            .is_empty());
        let refused = update_at(&file, |records| records.trusted.len()).unwrap_err();
        assert!(refused.contains("is not readable"), "{refused}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{not json",
            "left as it was"
        );
    }

    #[test]
    fn concurrent_writers_lose_no_record() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("qg").join("trust.json");
        std::thread::scope(|scope| {
            for i in 0..20 {
                let file = &file;
                scope.spawn(move || {
                    update_at(file, |records| {
                        let record = Record {
                            digest: format!("d{i}"),
                            at: "t".into(),
                            what: "w".into(),
                        };
                        records.trusted.insert(format!("/repo/{i}"), record);
                    })
                    .unwrap();
                });
            }
        });
        assert_eq!(read_at(&file).unwrap().trusted.len(), 20);
    }
}
