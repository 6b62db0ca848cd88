//! `.st3/importers-off.json`: leaving out the importers of a body-only edit
//! (`interface_aware_importers`) was once found to change a verdict — by a
//! daemon's sampled comparison or by `--verify`. It is the one optimisation
//! that can make qg wrong, so one proof against it turns it off in this
//! project for good (until qg itself changes): every run checks every
//! importer again, and says why. Deleting the file tries it again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where it lives, relative to the root.
pub(crate) const IMPORTERS_OFF_FILE: &str = ".st3/importers-off.json";

/// What was found, when, and by which qg.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ImportersOff {
    /// The qg that found it (a newer one tries again).
    pub(crate) qg: String,
    /// When (RFC 3339, UTC).
    pub(crate) at: String,
    /// What the full walk found that the run left out, in a line.
    pub(crate) found: String,
}

impl ImportersOff {
    /// One line for a run's warnings: why every importer is checked.
    pub(crate) fn describe(&self) -> String {
        format!(
            "interface_aware_importers is off here: on {} a run that left out the importers of a body-only edit was proved wrong ({}); every importer is checked until qg is upgraded (please report it; delete {IMPORTERS_OFF_FILE} to try again)",
            self.at, self.found
        )
    }
}

fn file(root: &Path) -> PathBuf {
    root.join(IMPORTERS_OFF_FILE)
}

/// The finding that holds for this qg, if one was made.
pub(crate) fn read(root: &Path) -> Option<ImportersOff> {
    let bytes = std::fs::read(file(root)).ok()?;
    let off: ImportersOff = serde_json::from_slice(&bytes).ok()?;
    (off.qg == env!("CARGO_PKG_VERSION")).then_some(off)
}

/// Records that leaving importers out was proved wrong (`found` says how).
pub(crate) fn record(root: &Path, found: &str) -> std::io::Result<()> {
    let off = ImportersOff {
        qg: env!("CARGO_PKG_VERSION").to_string(),
        at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        found: found.to_string(),
    };
    let path = file(root);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec_pretty(&off).map_err(std::io::Error::other)?;
    crate::atomic_file::write(&path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_holds_for_this_qg_only() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None);
        record(dir.path(), "b.py:1 T1").unwrap();
        let off = read(dir.path()).expect("recorded");
        assert_eq!(off.found, "b.py:1 T1");
        assert!(off.describe().contains("b.py:1 T1"), "{}", off.describe());
        let older = ImportersOff {
            qg: "0.0.1".into(),
            ..off
        };
        std::fs::write(file(dir.path()), serde_json::to_vec(&older).unwrap()).unwrap();
        assert_eq!(read(dir.path()), None, "a finding of another qg");
    }
}
