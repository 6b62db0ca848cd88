//! `.st3/baseline.jsonl`: the violations a project has agreed to live with,
//! committed with the code. One JSON object per line — a header, then the
//! entries sorted — so a diff shows exactly which findings came and went.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::matcher::Entry;
use crate::error::QgError;

/// Where the baseline lives, relative to the root (committed, unlike the
/// rest of `.st3/`).
pub(crate) const BASELINE_FILE: &str = ".st3/baseline.jsonl";

/// The format version this qg reads and writes.
const FORMAT: u32 = 1;

/// The first line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Header {
    /// Format version.
    pub(crate) qg_baseline: u32,
    /// HEAD when it was written: remembered lines are carried from this
    /// commit's version of each file to the working tree's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    /// Each gate's tool version then (a reworded message after an upgrade
    /// is explained with it).
    #[serde(default)]
    pub(crate) tools: BTreeMap<String, String>,
}

/// The baseline: a header and its entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Baseline {
    /// Where it was written from, and with which tools.
    pub(crate) header: Header,
    /// The remembered violations, sorted.
    pub(crate) entries: Vec<Entry>,
}

impl Baseline {
    /// A baseline of `entries`, sorted for a stable file.
    pub(crate) fn new(header: Header, mut entries: Vec<Entry>) -> Baseline {
        entries.sort();
        Baseline { header, entries }
    }

    /// The file's text.
    fn to_text(&self) -> String {
        let mut text = serde_json::to_string(&self.header).expect("a header serializes");
        text.push('\n');
        for entry in &self.entries {
            text.push_str(&serde_json::to_string(entry).expect("an entry serializes"));
            text.push('\n');
        }
        text
    }
}

/// Reads the baseline: `Ok(None)` when there is none; an error naming the
/// line when it cannot be read (a bad merge, a hand edit).
pub(crate) fn read(root: &Path) -> Result<Option<Baseline>, QgError> {
    let path = root.join(BASELINE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(QgError::io(format!("cannot read {BASELINE_FILE}"), e)),
    };
    parse(&text).map(Some)
}

fn parse(text: &str) -> Result<Baseline, QgError> {
    let bad = |line: usize, why: String| {
        QgError::Usage(format!(
            "{BASELINE_FILE}:{line}: {why}; fix the line or rewrite the file with `qg baseline write`"
        ))
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, first)) = lines.next() else {
        return Ok(Baseline::default());
    };
    let header: Header =
        serde_json::from_str(first).map_err(|e| bad(1, format!("not a baseline header ({e})")))?;
    if header.qg_baseline != FORMAT {
        return Err(bad(
            1,
            format!(
                "format {} is not the one this qg reads ({FORMAT})",
                header.qg_baseline
            ),
        ));
    }
    let lines: Vec<(usize, &str)> = lines.collect();
    // A large baseline (100,000 entries) is parsed on every core.
    let threads = crate::process::cores();
    let chunk = lines.len().div_ceil(threads).max(1);
    let parsed: Vec<Result<Vec<Entry>, QgError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = lines
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(n, line)| {
                            serde_json::from_str(line).map_err(|e| bad(n + 1, e.to_string()))
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a parsing thread does not panic"))
            .collect()
    });
    let mut entries = Vec::with_capacity(lines.len());
    for part in parsed {
        entries.extend(part?);
    }
    // Written sorted; sorting again only costs when it was edited by hand.
    if !entries.is_sorted() {
        entries.sort();
    }
    Ok(Baseline { header, entries })
}

/// Writes the baseline atomically (a reader never sees half a file).
pub(crate) fn write(root: &Path, baseline: &Baseline) -> Result<(), QgError> {
    let path = root.join(BASELINE_FILE);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| QgError::io(format!("cannot create {}", dir.display()), e))?;
    }
    crate::atomic_file::write(&path, baseline.to_text().as_bytes())
        .map_err(|e| QgError::io(format!("cannot write {BASELINE_FILE}"), e))
}

/// The format version for a new header.
pub(crate) fn header(commit: Option<String>, tools: BTreeMap<String, String>) -> Header {
    Header {
        qg_baseline: FORMAT,
        commit,
        tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_names_a_bad_line() {
        let entry = Entry {
            path: "a.py".into(),
            gate: "lint".into(),
            code: "F401".into(),
            message: "`os` imported but unused".into(),
            line_hash: "abc".into(),
            line: Some(3),
        };
        let baseline = Baseline::new(header(Some("c0ffee".into()), BTreeMap::new()), vec![entry]);
        assert_eq!(parse(&baseline.to_text()).unwrap(), baseline);
        let broken = baseline.to_text() + "{not json\n";
        let message = parse(&broken).unwrap_err().to_string();
        assert!(message.starts_with(".st3/baseline.jsonl:3:"), "{message}");
    }
}
