//! What the editor was last told about each file: per file, the blob of
//! the content the gates checked and each gate's findings in it. Kept in
//! `.st3/lsp-findings.json` so a file opened in a new editor session shows
//! its findings at once while its content is unchanged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::config::{Config, PositionEncoding};
use crate::outcome::GateStatus;
use crate::report::RunReport;
use crate::violation::Violation;

/// Where the store lives, relative to the root (local state, ignored).
pub(crate) const STORE_FILE: &str = ".st3/lsp-findings.json";

/// Every checked file's findings.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Store {
    /// Root-relative file → what was found in it.
    #[serde(default)]
    files: BTreeMap<String, FileFindings>,
}

/// One file's findings, gate by gate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct FileFindings {
    /// The blob id of the content the gates checked; `None` when the file
    /// changed while they ran (the findings may be for either content).
    pub(crate) blob: Option<String>,
    /// Gate id → its findings in the file.
    pub(crate) gates: BTreeMap<String, GateFindings>,
}

/// One gate's findings in one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GateFindings {
    /// What a column of the gate's tool counts.
    pub(crate) columns: PositionEncoding,
    /// The findings.
    pub(crate) violations: Vec<Violation>,
}

impl Store {
    /// The project's store; missing or unreadable, an empty one (it only
    /// saves a check).
    pub(crate) fn load(root: &Path) -> Store {
        std::fs::read(root.join(STORE_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Writes the store atomically (a cache: not synced).
    pub(crate) fn save(&self, root: &Path) -> std::io::Result<()> {
        let path = root.join(STORE_FILE);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
            crate::state::ignore_state_files(dir);
        }
        let bytes = serde_json::to_vec(self).map_err(std::io::Error::from)?;
        crate::atomic_file::write_cache(&path, &bytes)
    }

    /// A file's findings, if its content is the one they were found in.
    pub(crate) fn current(&self, root: &Path, file: &str) -> Option<&FileFindings> {
        let entry = self.files.get(file)?;
        let now = crate::git::blob_id(&crate::file_name::join(root, file));
        (entry.blob.is_some() && entry.blob == now).then_some(entry)
    }

    /// A file's findings, whatever content they were found in.
    pub(crate) fn get(&self, file: &str) -> Option<&FileFindings> {
        self.files.get(file)
    }

    /// Takes in a run's findings: for each gate that gave a verdict, the
    /// files it covered and those it reported are replaced with what it
    /// found now (a gate that errored keeps what it found before — its
    /// silence is no all-clear). Returns the files whose findings were
    /// replaced. `started`: when the run began; a file changed since then
    /// keeps no blob.
    pub(crate) fn apply(
        &mut self,
        root: &Path,
        config: &Config,
        report: &RunReport,
        started: SystemTime,
    ) -> BTreeSet<String> {
        let mut touched = BTreeSet::new();
        for gate in &report.gates {
            if !matches!(gate.status, GateStatus::Passed | GateStatus::Failed) {
                continue;
            }
            let columns = config
                .gates
                .get(&gate.id)
                .map_or(PositionEncoding::Utf32, |g| g.column_units());
            let mut by_file: BTreeMap<&str, Vec<Violation>> = BTreeMap::new();
            for covered in report.covered.get(&gate.id).into_iter().flatten() {
                by_file.entry(covered).or_default();
            }
            for violation in &gate.violations {
                if let Some(file) = &violation.file {
                    by_file.entry(file).or_default().push(violation.clone());
                }
            }
            for (file, violations) in by_file {
                let entry = self.files.entry(file.to_string()).or_default();
                entry.gates.insert(
                    gate.id.clone(),
                    GateFindings {
                        columns,
                        violations,
                    },
                );
                touched.insert(file.to_string());
            }
        }
        for file in &touched {
            let path = crate::file_name::join(root, file);
            let unchanged = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified < started);
            match (unchanged, self.files.get_mut(file)) {
                (_, None) => {}
                (true, Some(entry)) => entry.blob = crate::git::blob_id(&path),
                (false, Some(entry)) => entry.blob = None,
            }
        }
        touched
    }

    /// Forgets files that no longer exist; returns them.
    pub(crate) fn prune(&mut self, root: &Path) -> Vec<String> {
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|f| !crate::file_name::join(root, f).exists())
            .cloned()
            .collect();
        for file in &gone {
            self.files.remove(file);
        }
        gone
    }
}
