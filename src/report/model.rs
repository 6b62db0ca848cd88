//! The report model: everything a run found, as every renderer (and any
//! other consumer) reads it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::outcome::{GateResult, GateStatus};
use crate::scope::{Scope, ScopeMode, Unmatched};

/// The counts the summary line and JSON `summary` report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Gates in the run.
    pub(crate) gates: usize,
    /// Gates that passed.
    pub(crate) passed: usize,
    /// Gates that failed.
    pub(crate) failed: usize,
    /// Gates that errored.
    pub(crate) errored: usize,
    /// Gates that were skipped.
    pub(crate) skipped: usize,
    /// Every finding at or above its gate's `fail_on` (the baseline's
    /// known ones included): what the tool itself counts as its errors.
    pub(crate) total_violations: usize,
    /// Findings below their gate's `fail_on` (mypy's notes, as its
    /// "defined here" beside an error): shown, never counted as violations.
    #[serde(default)]
    pub(crate) notes: usize,
    /// Violations the tools can fix by themselves.
    pub(crate) auto_fixable: usize,
}

/// What a report says of the scope it checked (JSON `scope`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReportScope {
    /// The mode used (differs from `requested` after a fallback).
    pub(crate) mode: ScopeMode,
    /// The mode asked for.
    pub(crate) requested: ScopeMode,
    /// Files in scope (a shard's: the files its gates checked).
    pub(crate) files_checked: usize,
    /// The commit `auto` compared against.
    pub(crate) baseline_sha: Option<String>,
    /// Why the requested mode could not be used as is.
    pub(crate) fallback_reason: Option<String>,
    /// Why the importers of the changed files are unknown, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) importers_unknown: Option<String>,
    /// Gates that checked their whole project scope, and why (their tool,
    /// or its settings, changed).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(crate) whole_project: std::collections::BTreeMap<String, String>,
    /// Named paths that yielded no file, and the filter that removed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) unmatched: Vec<Unmatched>,
}

impl From<&Scope> for ReportScope {
    fn from(scope: &Scope) -> ReportScope {
        ReportScope {
            mode: scope.mode,
            requested: scope.requested,
            files_checked: scope.files.len(),
            baseline_sha: scope.baseline_sha.clone(),
            fallback_reason: scope.fallback_reason.clone(),
            importers_unknown: scope.importers_unknown.clone(),
            whole_project: scope.whole_project.clone(),
            unmatched: scope.unmatched.clone(),
        }
    }
}

/// A daemon's comparison with a cold run, under way in the background.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BackgroundWork {
    /// The gate whose daemon runs it.
    pub(crate) gate: String,
    /// What it compares.
    pub(crate) what: String,
    /// How long it has been under way.
    pub(crate) running_ms: u64,
}

/// Everything a run found.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The project root (canonical), for formats that need absolute URIs.
    pub root: PathBuf,
    /// The directory qg ran in, root-relative (`""` at the root): human
    /// and concise output print paths relative to it, as ruff and git do.
    pub(crate) cwd: String,
    /// The config file the run used, root-relative when inside the root.
    pub(crate) config_origin: String,
    /// The scope it checked.
    pub(crate) scope: ReportScope,
    /// One result per gate, in config order.
    pub gates: Vec<GateResult>,
    /// What the user should know about the run that belongs to no gate
    /// (state not saved, …). Gates carry their own in [`GateResult::warnings`].
    pub(crate) warnings: Vec<String>,
    /// Wall time of the whole run.
    pub total_ms: u64,
    /// What the committed baseline made of the violations, when in use.
    pub(crate) baseline: Option<crate::baseline::BaselineSummary>,
    /// Findings fixed, new and still there since the last run that checked
    /// the same files (none on a branch's first run).
    pub(crate) since_last_run: Option<crate::outcome::Progress>,
    /// This run's share of a sharded run (`--shard I/N`).
    pub(crate) shard: Option<crate::shard::ShardInfo>,
    /// What the last warm answers got wrong, found by their confirmation
    /// after they were shown: gate id → in words. Every format opens with
    /// it.
    pub(crate) contradicted: Vec<(String, String)>,
    /// The daemons' comparisons with a cold run under way in the
    /// background when the run ended (they stood still while it ran).
    pub(crate) background: Vec<BackgroundWork>,
    /// Gate id → the root-relative files it checked and reports on (what a
    /// baseline may call fixed; what an editor clears when they pass).
    pub(crate) covered: std::collections::BTreeMap<String, Vec<String>>,
}

impl RunReport {
    /// Counts by status.
    pub(crate) fn summary(&self) -> Summary {
        let count = |status| self.gates.iter().filter(|g| g.status == status).count();
        Summary {
            gates: self.gates.len(),
            passed: count(GateStatus::Passed),
            failed: count(GateStatus::Failed),
            errored: count(GateStatus::Error),
            skipped: count(GateStatus::Skipped),
            total_violations: self.gates.iter().map(GateResult::violation_count).sum(),
            notes: self.gates.iter().map(GateResult::note_count).sum(),
            auto_fixable: self.gates.iter().map(GateResult::fixable_count).sum(),
        }
    }

    /// Every violation with its gate, sorted by file, position, code, gate.
    pub fn findings(&self) -> Vec<(&GateResult, &crate::violation::Violation)> {
        let mut all: Vec<_> = self
            .gates
            .iter()
            .flat_map(|g| g.violations.iter().map(move |v| (g, v)))
            .collect();
        all.sort_by(|a, b| {
            a.1.sort_key()
                .cmp(&b.1.sort_key())
                .then(a.0.id.cmp(&b.0.id))
        });
        all
    }

    /// Every warning: each gate's (with its gate), then the run's own.
    pub(crate) fn all_warnings(&self) -> impl Iterator<Item = (Option<&GateResult>, &str)> {
        self.gates
            .iter()
            .flat_map(|g| g.warnings.iter().map(move |w| (Some(g), w.as_str())))
            .chain(self.warnings.iter().map(|w| (None, w.as_str())))
    }

    /// A root-relative path as seen from the directory qg ran in
    /// (`pkg/a.py` from `pkg/` is `a.py`, from `docs/` `../pkg/a.py`).
    pub(crate) fn relative_to_cwd<'a>(&self, path: &'a str) -> std::borrow::Cow<'a, str> {
        if self.cwd.is_empty() {
            return path.into();
        }
        let mut here: Vec<&str> = self.cwd.split('/').collect();
        let mut there: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let common = here.iter().zip(&there).take_while(|(a, b)| a == b).count();
        let ups = here.len() - common;
        here.clear();
        let mut parts = vec![".."; ups];
        parts.extend(there.drain(common..));
        parts.join("/").into()
    }

    /// The name of gate `id` (the id itself when the run has no such gate).
    pub(crate) fn gate_name<'a>(&'a self, id: &'a str) -> &'a str {
        self.gates
            .iter()
            .find(|g| g.id == id)
            .map_or(id, |g| g.name.as_str())
    }

    /// True when no gate failed or errored.
    pub(crate) fn overall_pass(&self) -> bool {
        let s = self.summary();
        s.failed == 0 && s.errored == 0
    }

    /// 0 all passed (or nothing to check), 1 failures only, 2 any error.
    pub(crate) fn exit_code(&self) -> i32 {
        let s = self.summary();
        if s.errored > 0 {
            2
        } else if s.failed > 0 {
            1
        } else {
            0
        }
    }
}
