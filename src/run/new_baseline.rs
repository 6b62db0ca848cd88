//! `qg baseline write`: a whole-project run whose violations become the
//! committed baseline.

use std::collections::BTreeMap;

use super::{run, RunOptions};
use crate::baseline::{self, file::Baseline, BaselineUse};
use crate::error::QgError;
use crate::exec::Observer;
use crate::outcome::{GateResult, GateStatus};
use crate::report::RunReport;

/// What `qg baseline write` recorded.
pub(crate) struct Written {
    /// The run it recorded.
    pub(crate) report: RunReport,
    /// Entries in the file now.
    pub(crate) entries: usize,
    /// Gates whose findings it holds now.
    pub(crate) gates: usize,
}

/// Runs the gates on the whole project, ignoring any baseline, and writes
/// their violations as the new baseline. Gates left out with `--gate` keep
/// their entries; an errored gate writes nothing (its findings are unknown).
pub(crate) fn write_baseline(
    options: &RunOptions,
    observer: &dyn Observer<GateResult>,
) -> Result<Written, QgError> {
    let options = RunOptions {
        baseline: BaselineUse::Ignore,
        ..options.clone()
    };
    let report = run(&options, observer)?;
    let errored: Vec<&str> = report
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::Error)
        .map(|g| g.id.as_str())
        .collect();
    if !errored.is_empty() {
        return Err(QgError::Usage(format!(
            "baseline not written: {} errored (fix it, or leave it out with --gate)",
            errored.join(", ")
        )));
    }
    let (workspace, config) = super::prepare(&options.cwd, options.config.as_deref())?;
    let previous = baseline::file::read(&workspace.root)?.unwrap_or_default();
    let ran: Vec<&GateResult> = report
        .gates
        .iter()
        .filter(|g| g.status != GateStatus::Skipped)
        .collect();
    // An entry is replaced by the run of the gate that owns its file: a
    // member's run of `mypy` replaces the `mypy` entries in its member only.
    let replaced = |e: &baseline::matcher::Entry| {
        ran.iter()
            .filter_map(|r| config.gates.get(&r.id))
            .any(|gate| crate::config::baseline_gate(&gate.id) == e.gate && gate.owns(&e.path))
    };
    let mut entries: Vec<_> = previous
        .entries
        .into_iter()
        .filter(|e| !replaced(e))
        .collect();
    let mut tools: BTreeMap<String, String> = previous.header.tools;
    for gate in &ran {
        entries.extend(
            gate.violations
                .iter()
                .map(|v| baseline::entry_of(crate::config::baseline_gate(&gate.id), v)),
        );
        match &gate.tool_version {
            Some(version) => tools.insert(gate.id.clone(), version.clone()),
            None => tools.remove(&gate.id),
        };
    }
    let commit = match &workspace.repo {
        Some(repo) => repo.head()?.commit,
        None => None,
    };
    // Entries kept from the file come sorted by path, their gates
    // interleaved: count distinct ids, not runs of equal ones.
    let gates = entries
        .iter()
        .map(|e| e.gate.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let file = Baseline::new(baseline::file::header(commit, tools), entries);
    baseline::file::write(&workspace.root, &file)?;
    Ok(Written {
        report,
        entries: file.entries.len(),
        gates,
    })
}
