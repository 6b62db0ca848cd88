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
    /// A warm answer a cold run has not confirmed yet (it is, in the
    /// background; the editor is told again when it lands).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) unconfirmed: bool,
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

    /// Marks `gate`'s findings confirmed in every file; returns the files
    /// whose findings it marked.
    pub(crate) fn confirmed(&mut self, gate: &str) -> Vec<String> {
        self.files
            .iter_mut()
            .filter_map(|(file, found)| {
                let findings = found.gates.get_mut(gate).filter(|g| g.unconfirmed)?;
                findings.unconfirmed = false;
                Some(file.clone())
            })
            .collect()
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
                        unconfirmed: gate.unconfirmed.is_some(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use serde_json::json;

    use crate::outcome::GateResult;

    fn gate(id: &str, status: &str, violations: serde_json::Value) -> GateResult {
        serde_json::from_value(json!({
            "id": id, "name": id, "status": status, "duration_ms": 1,
            "files_checked": 1, "violations": violations, "fail_on": "warning",
        }))
        .unwrap()
    }

    fn finding(file: &str) -> serde_json::Value {
        json!({"file": file, "line": 1, "message": "m", "severity": "error"})
    }

    fn report(root: &Path, gates: Vec<GateResult>, covered: &[(&str, &[&str])]) -> RunReport {
        let scope = json!({"mode": "files", "requested": "files", "files_checked": 1});
        RunReport {
            root: root.to_path_buf(),
            cwd: String::new(),
            config_origin: String::new(),
            scope: serde_json::from_value(scope).unwrap(),
            gates,
            warnings: Vec::new(),
            total_ms: 1,
            baseline: None,
            since_last_run: None,
            shard: None,
            contradicted: Vec::new(),
            background: Vec::new(),
            covered: covered
                .iter()
                .map(|(gate, files)| {
                    (
                        gate.to_string(),
                        files.iter().map(|f| f.to_string()).collect(),
                    )
                })
                .collect(),
        }
    }

    fn project() -> (tempfile::TempDir, Config) {
        let tmp = tempfile::tempdir().unwrap();
        for file in ["a.py", "b.py", "c.py"] {
            std::fs::write(tmp.path().join(file), "x = 1\n").unwrap();
        }
        let config = crate::config::load(tmp.path(), None).unwrap();
        (tmp, config)
    }

    #[test]
    fn a_verdict_replaces_the_files_it_covered_and_an_error_keeps_what_was_found() {
        let (tmp, config) = project();
        let root = tmp.path();
        let mut store = Store::default();
        let started = started_after_the_writes();
        let first = report(
            root,
            vec![
                gate("mypy", "failed", json!([finding("a.py"), finding("b.py")])),
                gate("pyright", "failed", json!([finding("c.py")])),
            ],
            &[("mypy", &["a.py", "b.py"]), ("pyright", &["c.py"])],
        );
        let touched = store.apply(root, &config, &first, started);
        assert_eq!(touched, ["a.py", "b.py", "c.py"].map(String::from).into());
        // mypy passes on a.py (covered, nothing found); pyright errors.
        let second = report(
            root,
            vec![
                gate("mypy", "passed", json!([])),
                gate("pyright", "error", json!([])),
            ],
            &[("mypy", &["a.py"]), ("pyright", &["c.py"])],
        );
        let touched = store.apply(root, &config, &second, started);
        assert_eq!(touched, ["a.py".to_string()].into());
        let count = |file: &str, gate: &str| store.get(file).unwrap().gates[gate].violations.len();
        assert_eq!(count("a.py", "mypy"), 0, "a clean file is cleared");
        assert_eq!(
            count("b.py", "mypy"),
            1,
            "a file the run did not cover keeps its findings"
        );
        assert_eq!(
            count("c.py", "pyright"),
            1,
            "an errored gate's silence is no all-clear"
        );
    }

    /// A run whose mypy found one finding in each of a.py and b.py.
    fn mypy_found_in_a_and_b(root: &Path) -> RunReport {
        let found = json!([finding("a.py"), finding("b.py")]);
        report(
            root,
            vec![gate("mypy", "failed", found)],
            &[("mypy", &["a.py", "b.py"])],
        )
    }

    /// A run's start after every file was written: they are unchanged since.
    fn started_after_the_writes() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    #[test]
    fn findings_are_current_only_for_the_content_they_were_found_in() {
        let (tmp, config) = project();
        let root = tmp.path();
        let mut store = Store::default();
        let run = mypy_found_in_a_and_b(root);
        // a.py, b.py unchanged since the run began: current.
        store.apply(root, &config, &run, started_after_the_writes());
        assert!(store.current(root, "a.py").is_some());
        std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
        assert!(store.current(root, "a.py").is_none(), "edited since");
        assert!(store.current(root, "b.py").is_some());
        // Changed while the run ran (it began before the file's time):
        // the findings may be of either content, so none is current.
        store.apply(root, &config, &run, SystemTime::UNIX_EPOCH);
        assert!(store.current(root, "b.py").is_none());
        assert!(store.get("b.py").is_some());
        assert!(store.current(root, "never.py").is_none());
    }

    #[test]
    fn deleted_files_are_pruned_and_the_store_survives_a_new_session() {
        let (tmp, config) = project();
        let root = tmp.path();
        let mut store = Store::default();
        let run = mypy_found_in_a_and_b(root);
        store.apply(root, &config, &run, started_after_the_writes());
        std::fs::remove_file(root.join("b.py")).unwrap();
        assert_eq!(store.prune(root), ["b.py"]);
        assert!(store.get("b.py").is_none());
        assert!(store.prune(root).is_empty());
        store.save(root).unwrap();
        let loaded = Store::load(root);
        assert!(loaded.current(root, "a.py").is_some());
        assert!(loaded.get("b.py").is_none());
    }
}
