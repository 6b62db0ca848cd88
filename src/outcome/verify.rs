//! `--verify`: a warm answer stands only if it equals a cold run's.

use std::collections::BTreeMap;

use super::result::{short_for, ErrorKind, GateError, GateResult, GateStatus};
use crate::config::Gate;
use crate::violation::Violation;

/// How many findings of each side an error lists.
const SHOWN: usize = 5;

/// `warm` when it reports exactly `cold`'s findings; otherwise a gate
/// error naming what only one side found, with the cold side's findings
/// (the tool's own answer) and both counts as evidence.
pub(crate) fn verified(gate: &Gate, warm: &GateResult, cold: GateResult) -> GateResult {
    if cold.status == GateStatus::Error {
        // No cold answer to compare with: the cold error is the verdict.
        return cold;
    }
    let (only_warm, only_cold) = difference(&warm.violations, &cold.violations);
    if only_warm.is_empty() && only_cold.is_empty() {
        return warm.clone();
    }
    let message = format!(
        "the warm answer differs from a cold run of the tool: {} findings warm, {} cold; only warm: {}; only cold: {}",
        warm.violations.len(),
        cold.violations.len(),
        listed(&only_warm),
        listed(&only_cold)
    );
    let mut result = cold;
    result.warm = true;
    result.status = GateStatus::Error;
    result.error = Some(GateError {
        kind: ErrorKind::WarmDrift,
        short: short_for(ErrorKind::WarmDrift, None, gate),
        message,
        exit_code: None,
        stderr_tail: String::new(),
    });
    result
}

/// The findings only `warm` has and those only `cold` has, each counted
/// as often as it occurs.
fn difference<'a>(
    warm: &'a [Violation],
    cold: &'a [Violation],
) -> (Vec<&'a Violation>, Vec<&'a Violation>) {
    let identity = |v: &Violation| serde_json::to_string(v).unwrap_or_default();
    let mut counts: BTreeMap<String, (Vec<&Violation>, Vec<&Violation>)> = BTreeMap::new();
    for v in warm {
        counts.entry(identity(v)).or_default().0.push(v);
    }
    for v in cold {
        counts.entry(identity(v)).or_default().1.push(v);
    }
    let (mut only_warm, mut only_cold) = (Vec::new(), Vec::new());
    for (_, (w, c)) in counts {
        let common = w.len().min(c.len());
        only_warm.extend(&w[common..]);
        only_cold.extend(&c[common..]);
    }
    (only_warm, only_cold)
}

fn listed(violations: &[&Violation]) -> String {
    if violations.is_empty() {
        return "none".into();
    }
    let mut shown: Vec<String> = violations
        .iter()
        .take(SHOWN)
        .map(|v| {
            format!(
                "{}:{}:{} {} {}",
                v.file.as_deref().unwrap_or("-"),
                v.line.unwrap_or(0),
                v.column.unwrap_or(0),
                v.code.as_deref().unwrap_or("-"),
                v.message.lines().next().unwrap_or("")
            )
        })
        .collect();
    if violations.len() > SHOWN {
        shown.push(format!("and {} more", violations.len() - SHOWN));
    }
    shown.join(" | ")
}
