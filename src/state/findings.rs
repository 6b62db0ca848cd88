//! `.st3/findings.json`: per branch, per gate, per file, the fingerprints of
//! what the last run that checked the file found — so every run can say
//! what it fixed and what is new since then.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where the findings live, relative to the root (local state, ignored).
pub(crate) const FINDINGS_FILE: &str = ".st3/findings.json";

/// The key of the branch at `head` (`None`: a project outside git, whose
/// key is `(no git)`).
pub(crate) fn branch_key(head: Option<&crate::git::Head>) -> String {
    head.map_or_else(|| "(no git)".to_string(), |head| head.branch.clone())
}

/// Gate id → root-relative file → the first 16 hex digits of each
/// finding's fingerprint, sorted, repeats kept, concatenated (one string
/// per file keeps a record of 100,000 findings quick to read and write).
pub(crate) type BranchFindings = BTreeMap<String, GateFindings>;

/// One gate's part of [`BranchFindings`]: root-relative file → its
/// findings' short fingerprints.
pub(crate) type GateFindings = BTreeMap<String, String>;

/// Every branch's last known findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KnownFindings {
    /// Branch name → its findings.
    #[serde(default)]
    pub(crate) branches: BTreeMap<String, BranchFindings>,
}

/// Reads the findings; a missing or unreadable file is an empty record (it
/// only ever informs, so losing it costs one run's comparison).
pub(crate) fn read(root: &Path) -> KnownFindings {
    std::fs::read(root.join(FINDINGS_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Writes the findings atomically (a cache: not synced).
pub(crate) fn write(root: &Path, findings: &KnownFindings) -> std::io::Result<()> {
    let path = root.join(FINDINGS_FILE);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
        super::store::ignore_state_files(dir);
    }
    let bytes = serde_json::to_vec(findings).map_err(std::io::Error::from)?;
    crate::atomic_file::write_cache(&path, &bytes)
}
