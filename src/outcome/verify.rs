//! Comparing a warm answer with a cold run's: it stands only if both report
//! the same findings (`--verify`, and every comparison a daemon asks for).

use std::collections::{BTreeMap, BTreeSet};

use super::result::{short_for, ErrorKind, GateError, GateResult, GateStatus};
use crate::config::Gate;
use crate::violation::Violation;

/// How many findings of each side an error lists.
const SHOWN: usize = 5;

/// The findings only one side of a comparison has, each counted as often
/// as it occurs; none on either side: the answers agree.
#[derive(Debug)]
pub(crate) struct Difference<'a> {
    /// Reported warm, not cold.
    pub(crate) only_warm: Vec<&'a Violation>,
    /// Reported cold, not warm.
    pub(crate) only_cold: Vec<&'a Violation>,
}

impl Difference<'_> {
    /// Whether the two sides agree.
    pub(crate) fn is_empty(&self) -> bool {
        self.only_warm.is_empty() && self.only_cold.is_empty()
    }

    /// The first finding only one side has, in words (`only cold:
    /// src/a.py:3:5 reportReturnType …`).
    pub(crate) fn first(&self) -> String {
        match (self.only_warm.first(), self.only_cold.first()) {
            (Some(v), _) => format!("only warm: {}", describe(v)),
            (None, Some(v)) => format!("only cold: {}", describe(v)),
            (None, None) => "none".into(),
        }
    }
}

/// What each side of `warm` and `cold` reports that the other does not.
pub(crate) fn difference<'a>(warm: &'a GateResult, cold: &'a GateResult) -> Difference<'a> {
    // A finding is what it says and where, not the advice attached: dmypy
    // leaves out a line of mypy's hint (`or run "mypy --install-types"`)
    // that its command line prints, and the finding is the same.
    let identity = |v: &Violation| {
        let mut finding = v.clone();
        finding.hint = None;
        serde_json::to_string(&finding).unwrap_or_default()
    };
    let mut counts: BTreeMap<String, (Vec<&Violation>, Vec<&Violation>)> = BTreeMap::new();
    for v in &warm.violations {
        counts.entry(identity(v)).or_default().0.push(v);
    }
    for v in &cold.violations {
        counts.entry(identity(v)).or_default().1.push(v);
    }
    let (mut only_warm, mut only_cold) = (Vec::new(), Vec::new());
    for (_, (w, c)) in counts {
        let common = w.len().min(c.len());
        only_warm.extend(&w[common..]);
        only_cold.extend(&c[common..]);
    }
    Difference {
        only_warm,
        only_cold,
    }
}

/// `warm` when it reports exactly `cold`'s findings; otherwise a gate
/// error naming what only one side found (and, when written, the file that
/// holds both sides), with the cold side's findings (the tool's own
/// answer) and both counts as evidence.
pub(crate) fn verified(
    gate: &Gate,
    warm: &GateResult,
    cold: GateResult,
    both_sides: Option<&str>,
) -> GateResult {
    if cold.status == GateStatus::Error {
        // No cold answer to compare with: the cold error is the verdict.
        return cold;
    }
    let difference = difference(warm, &cold);
    if difference.is_empty() {
        return warm.clone();
    }
    let log = both_sides
        .map(|log| format!("; both sides: {log}"))
        .unwrap_or_default();
    let message = format!(
        "the warm answer differs from a cold run of the tool: {} findings warm, {} cold; only warm: {}; only cold: {}{log}",
        warm.violations.len(),
        cold.violations.len(),
        listed(&difference.only_warm),
        listed(&difference.only_cold),
    );
    let mut result = cold.into_error(comparison_error(ErrorKind::WarmDrift, gate, message));
    result.warm = true;
    result
}

/// `aware` when it fails on exactly the findings `full` fails on — `full`
/// being the same run with every importer of a body-only edit checked
/// (`--verify` with `interface_aware_importers`); otherwise a gate error
/// naming what only one side fails on, with the full walk's findings.
/// Findings the baseline holds are not compared: an importer left out
/// reports its known ones only in the full walk.
pub(crate) fn full_walk(gate: &Gate, aware: &GateResult, full: GateResult) -> GateResult {
    let failing_only = |result: &GateResult| GateResult {
        violations: failing(result).cloned().collect(),
        ..result.clone()
    };
    let (aware_failing, full_failing) = (failing_only(aware), failing_only(&full));
    let difference = difference(&aware_failing, &full_failing);
    if difference.is_empty() {
        return aware.clone();
    }
    let message = format!(
        "the importers interface_aware_importers left out change the verdict: the full walk fails on {} findings, this run on {}; only the full walk: {}; only this run: {} (the full walk's findings are shown; set interface_aware_importers = false until this is fixed, and report it)",
        full_failing.violations.len(),
        aware_failing.violations.len(),
        listed(&difference.only_cold),
        listed(&difference.only_warm),
    );
    full.into_error(comparison_error(ErrorKind::SkippedImporters, gate, message))
}

/// What `result` — a run with every importer checked — fails on in the
/// files `left_out` names: a line listing it, and those files; `None` when
/// nothing. A run that left those importers out of its check was wrong
/// to: it reported none of it. Findings the baseline holds do not count,
/// as in [`full_walk`]; nor does a result the baseline did not judge (an
/// error: a warm answer that drifted from the cold one, a tool that broke),
/// whose known findings would look new.
pub(crate) fn failing_in(
    result: &GateResult,
    left_out: &[String],
) -> Option<(String, BTreeSet<String>)> {
    if !matches!(result.status, GateStatus::Passed | GateStatus::Failed) {
        return None;
    }
    let failing: Vec<&Violation> = failing(result)
        .filter(|v| v.file.as_ref().is_some_and(|f| left_out.contains(f)))
        .collect();
    if failing.is_empty() {
        return None;
    }
    let said = format!(
        "{} fails on {} findings in importers it left out: {}",
        result.id,
        failing.len(),
        listed(&failing)
    );
    let files = failing.iter().filter_map(|v| v.file.clone()).collect();
    Some((said, files))
}

/// `result`'s findings that fail it (those the baseline holds do not).
fn failing(result: &GateResult) -> impl Iterator<Item = &Violation> {
    result
        .violations
        .iter()
        .filter(|v| v.fails_gate(result.fail_on))
}

/// The error of a comparison that found a difference: no exit code, no
/// stderr — the message holds the evidence.
fn comparison_error(kind: ErrorKind, gate: &Gate, message: String) -> GateError {
    GateError {
        kind,
        short: short_for(kind, None, gate),
        message,
        exit_code: None,
        stderr_tail: String::new(),
    }
}

/// Both sides of a comparison, whole: the findings only one side has,
/// then every finding of each (one JSON object a line) — what a user reads
/// to see where the warm answer went wrong.
pub(crate) fn both_sides(gate: &Gate, warm: &GateResult, cold: &GateResult) -> String {
    let difference = difference(warm, cold);
    let mut text = format!(
        "# qg: the warm answer of {} against a cold run of the tool\nwarm: {} findings; cold: {} findings\n",
        gate.id,
        warm.violations.len(),
        cold.violations.len()
    );
    let mut section = |title: &str, violations: &mut dyn Iterator<Item = &Violation>| {
        text.push_str(&format!("\n===== {title} =====\n"));
        for v in violations {
            text.push_str(&serde_json::to_string(v).unwrap_or_default());
            text.push('\n');
        }
    };
    section("only warm", &mut difference.only_warm.iter().copied());
    section("only cold", &mut difference.only_cold.iter().copied());
    section("warm", &mut warm.violations.iter());
    section("cold", &mut cold.violations.iter());
    text
}

fn describe(v: &Violation) -> String {
    format!(
        "{}:{}:{} {} {}",
        v.file.as_deref().unwrap_or("-"),
        v.line.unwrap_or(0),
        v.column.unwrap_or(0),
        v.code.as_deref().unwrap_or("-"),
        v.message.lines().next().unwrap_or("")
    )
}

fn listed(violations: &[&Violation]) -> String {
    if violations.is_empty() {
        return "none".into();
    }
    let mut shown: Vec<String> = violations.iter().take(SHOWN).map(|v| describe(v)).collect();
    if violations.len() > SHOWN {
        shown.push(format!("and {} more", violations.len() - SHOWN));
    }
    shown.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(hint: Option<&str>) -> GateResult {
        serde_json::from_value(serde_json::json!({
            "id": "mypy", "name": "Mypy", "status": "failed", "duration_ms": 1,
            "fail_on": "warning", "files_checked": 1, "warm": false,
            "violations": [{"file": "a.py", "line": 1, "column": 1, "code": "import-untyped",
                            "message": "Library stubs not installed for \"yaml\"",
                            "severity": "error", "hint": hint}],
        }))
        .unwrap()
    }

    /// A sample's run proves a left-out importer wrong only by what the
    /// baseline judged: an erred gate's findings (a warm answer that drifted
    /// in the sample itself) were never measured, so its known findings
    /// would look new. Found on httpx: dmypy forgot an unused-ignore in the
    /// sample, and the baseline's eight in the importers counted.
    #[test]
    fn only_a_judged_result_proves_a_left_out_importer_wrong() {
        let left_out = ["a.py".to_string()];
        let judged = result(None);
        let (said, files) = failing_in(&judged, &left_out).expect("a new finding there");
        assert!(said.contains("a.py:1:1 import-untyped"), "{said}");
        assert_eq!(files, BTreeSet::from(["a.py".to_string()]));
        assert_eq!(failing_in(&judged, &["b.py".to_string()]), None);
        let mut erred = result(None);
        erred.status = GateStatus::Error;
        assert_eq!(failing_in(&erred, &left_out), None);
    }

    #[test]
    fn a_finding_is_the_same_whatever_advice_comes_with_it() {
        let cold = result(Some("Hint: \"python3 -m pip install types-PyYAML\"\n(or run \"mypy --install-types\" to install all missing stub packages)"));
        let warm = result(Some("Hint: \"python3 -m pip install types-PyYAML\""));
        assert!(difference(&warm, &cold).is_empty());
        let mut moved = result(None);
        moved.violations[0].line = Some(2);
        assert!(!difference(&moved, &cold).is_empty());
    }
}
