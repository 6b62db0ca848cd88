//! `.st3/history.jsonl`: one line per run (time, branch, scope, and per
//! gate its status and counts), newest last, bounded. What qg learned from
//! earlier runs — `qg doctor` reads the last one.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where the history lives, relative to the root.
pub(crate) const HISTORY_FILE: &str = ".st3/history.jsonl";

/// Past this many runs in the file, each branch is trimmed to its newest
/// [`KEEP_PER_BRANCH`] (a busy branch never pushes out a quiet one's).
const MAX_RUNS: usize = 1000;

/// How much the history grows between two counts of its records.
const CHECK_EVERY_BYTES: u64 = 64 * 1024;
/// Runs kept per branch when the history is trimmed.
const KEEP_PER_BRANCH: usize = 200;

/// One run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunRecord {
    /// When it ended (RFC 3339, UTC).
    pub(crate) at: String,
    /// The branch (`(detached HEAD)`), or none outside git.
    pub(crate) branch: Option<String>,
    /// The scope mode actually used.
    pub(crate) scope: String,
    /// The scope mode asked for.
    pub(crate) requested: String,
    /// Files in scope.
    pub(crate) files: usize,
    /// Wall time.
    pub(crate) duration_ms: u64,
    /// Every gate, in report order.
    pub(crate) gates: Vec<GateRecord>,
}

/// One gate of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GateRecord {
    /// Gate id.
    pub(crate) id: String,
    /// `passed`, `failed`, `error` or `skipped`.
    pub(crate) status: String,
    /// Findings reported.
    pub(crate) violations: usize,
    /// Of them, unresolved imports (see `unresolved_imports` in the config).
    #[serde(default)]
    pub(crate) unresolved_imports: usize,
    /// Wall time of the tool.
    #[serde(default)]
    pub(crate) duration_ms: u64,
    /// Files given to the tool: with the duration, what a file costs it
    /// (`qg run --shard` weighs its split by it).
    #[serde(default)]
    pub(crate) files: usize,
}

/// Appends `record` (one line, one `write`, so concurrent runs never
/// interleave), and trims the file when it holds more than [`MAX_RUNS`].
pub(crate) fn append(root: &Path, record: &RunRecord) -> std::io::Result<()> {
    let path = root.join(HISTORY_FILE);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
        super::store::ignore_state_files(dir);
    }
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::from)?;
    line.push(b'\n');
    let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
    let before = file.metadata()?.len();
    file.write_all(&line)?;
    // Counting the records means reading them all back: done only when
    // this line crosses a CHECK_EVERY_BYTES boundary (every hundred runs or
    // so), which keeps the file within MAX_RUNS and a few hundred more.
    let after = before + line.len() as u64;
    if before / CHECK_EVERY_BYTES == after / CHECK_EVERY_BYTES {
        return Ok(());
    }
    drop(file);
    let bytes = fs::read(&path)?;
    if bytes.iter().filter(|b| **b == b'\n').count() > MAX_RUNS {
        let text = String::from_utf8_lossy(&bytes);
        let runs: Vec<RunRecord> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let mut left: std::collections::HashMap<Option<&str>, usize> = Default::default();
        let mut kept: Vec<&RunRecord> = runs
            .iter()
            .rev()
            .filter(|run| {
                let left = left.entry(run.branch.as_deref()).or_insert(KEEP_PER_BRANCH);
                let keep = *left > 0;
                *left = left.saturating_sub(1);
                keep
            })
            .collect();
        kept.reverse();
        let mut out = Vec::new();
        for run in kept {
            out.extend(serde_json::to_vec(run).map_err(std::io::Error::from)?);
            out.push(b'\n');
        }
        crate::atomic_file::write(&path, &out)?;
    }
    Ok(())
}

/// The runs on record, oldest first; lines that cannot be read are skipped.
pub(crate) fn read(root: &Path) -> Vec<RunRecord> {
    fs::read_to_string(root.join(HISTORY_FILE))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: usize) -> RunRecord {
        RunRecord {
            at: format!("t{n}"),
            branch: Some("main".into()),
            scope: "auto".into(),
            requested: "auto".into(),
            files: n,
            duration_ms: 1,
            gates: vec![],
        }
    }

    #[test]
    fn appends_reads_back_and_stays_bounded_per_branch() {
        let tmp = tempfile::tempdir().unwrap();
        let mut quiet = record(0);
        quiet.branch = Some("quiet".into());
        append(tmp.path(), &quiet).unwrap();
        let line = serde_json::to_vec(&record(0)).unwrap().len() as u64 + 1;
        let mut most = 0;
        for n in 0..3 * MAX_RUNS {
            append(tmp.path(), &record(n)).unwrap();
            let text = fs::read(tmp.path().join(HISTORY_FILE)).unwrap();
            most = most.max(text.iter().filter(|b| **b == b'\n').count());
        }
        // Counted and trimmed (to the quiet run and 200 of main's) each time
        // the file grew past a boundary holding more than MAX_RUNS records.
        let slack = (CHECK_EVERY_BYTES / line) as usize + 1;
        assert!(
            most > MAX_RUNS && most <= MAX_RUNS + slack,
            "{most} runs at most"
        );
        let runs = read(tmp.path());
        assert!(runs.len() < MAX_RUNS, "{}", runs.len());
        assert_eq!(runs[0], quiet, "a quiet branch keeps its runs");
        assert_eq!(runs.last().unwrap(), &record(3 * MAX_RUNS - 1));
        fs::write(tmp.path().join(HISTORY_FILE), "garbage\n{\"at\":\"x\"}\n").unwrap();
        append(tmp.path(), &record(7)).unwrap();
        assert_eq!(read(tmp.path()), [record(7)]);
    }
}
