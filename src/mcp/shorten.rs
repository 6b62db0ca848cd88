//! Fitting a run report into an agent's context window, never silently:
//! the baseline's known violations can be left out (`new_only`), and at
//! most `max_violations` are listed — errors first, then by file and
//! position. The answer counts what it left out and names the file that
//! holds the whole report.

use crate::outcome::GateResult;
use crate::report::json::Omitted;
use crate::violation::{BaselineState, Severity, Violation};

fn known(v: &Violation) -> bool {
    v.tracking.baseline_state == Some(BaselineState::Unchanged)
}

/// Whether [`shorten`] would leave anything out (then the whole report is
/// worth writing down first).
pub(super) fn would_shorten(gates: &[GateResult], new_only: bool, max: usize) -> bool {
    let all = gates.iter().flat_map(|g| &g.violations);
    let listed = all.filter(|v| !(new_only && known(v))).count();
    let total: usize = gates.iter().map(|g| g.violations.len()).sum();
    listed > max || listed < total
}

/// How one violation ranks for listing: errors, then warnings, then info;
/// within a severity by file and position, then gate (config) order.
fn rank(gate: usize, v: &Violation) -> (std::cmp::Reverse<Severity>, &str, u64, u64, usize) {
    let file = v.file.as_deref().unwrap_or_default();
    let (line, column) = (v.line.unwrap_or(0), v.column.unwrap_or(0));
    (std::cmp::Reverse(v.severity), file, line, column, gate)
}

/// Leaves the known violations (with `new_only`) and all but the `max`
/// first-ranked others out of the gates' lists (a report's counts and
/// summary line are taken before, so they stay whole).
pub(super) fn shorten(gates: &mut [GateResult], new_only: bool, max: usize) -> Omitted {
    let mut omitted = Omitted::default();
    if new_only {
        for gate in gates.iter_mut() {
            let before = gate.violations.len();
            gate.violations.retain(|v| !known(v));
            omitted.known_not_listed += before - gate.violations.len();
        }
    }
    let mut ranked: Vec<(usize, usize)> = gates
        .iter()
        .enumerate()
        .flat_map(|(g, gate)| (0..gate.violations.len()).map(move |v| (g, v)))
        .collect();
    if ranked.len() <= max {
        return omitted;
    }
    ranked.sort_by(|a, b| {
        let of = |(g, v): &(usize, usize)| rank(*g, &gates[*g].violations[*v]);
        of(a).cmp(&of(b))
    });
    omitted.truncated = ranked.len() - max;
    let mut keep: Vec<Vec<bool>> = gates
        .iter()
        .map(|g| vec![false; g.violations.len()])
        .collect();
    for (g, v) in ranked.into_iter().take(max) {
        keep[g][v] = true;
    }
    for (gate, keep) in gates.iter_mut().zip(keep) {
        let mut index = 0..;
        gate.violations
            .retain(|_| keep[index.next().unwrap_or_default()]);
    }
    omitted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(
        file: &str,
        line: u64,
        severity: Severity,
        state: Option<BaselineState>,
    ) -> Violation {
        let mut v = Violation {
            file: Some(file.into()),
            line: Some(line),
            column: Some(1),
            end_line: None,
            end_column: None,
            code: None,
            message: "m".into(),
            severity,
            fixable: None,
            hint: None,
            url: None,
            cell: None,
            tracking: Default::default(),
        };
        v.tracking.baseline_state = state;
        v
    }

    /// Gates of the embedded default, holding these violations.
    fn gates(lists: Vec<Vec<Violation>>) -> Vec<GateResult> {
        let root = std::path::Path::new("/nonexistent");
        let config = crate::config::load(root, None).unwrap();
        let ids = &config.active_gates;
        lists
            .into_iter()
            .enumerate()
            .map(|(i, violations)| GateResult {
                violations,
                ..GateResult::skipped(&config.gates[&ids[i]], String::new())
            })
            .collect()
    }

    fn listed(gates: &[GateResult]) -> Vec<(String, u64)> {
        gates
            .iter()
            .flat_map(|g| &g.violations)
            .map(|v| (v.file.clone().unwrap(), v.line.unwrap()))
            .collect()
    }

    #[test]
    fn the_cap_keeps_errors_first_then_file_order_and_counts_the_rest() {
        let mut r = gates(vec![
            vec![
                violation("a.py", 1, Severity::Warning, None),
                violation("b.py", 1, Severity::Error, None),
            ],
            vec![
                violation("a.py", 9, Severity::Error, None),
                violation("c.py", 2, Severity::Info, None),
            ],
        ]);
        assert!(would_shorten(&r, true, 2));
        let omitted = shorten(&mut r, true, 2);
        assert_eq!((omitted.truncated, omitted.known_not_listed), (2, 0));
        assert_eq!(
            listed(&r),
            [("b.py".to_string(), 1), ("a.py".to_string(), 9)]
        );
    }

    #[test]
    fn new_only_leaves_out_known_violations_and_counts_them() {
        let known = Some(BaselineState::Unchanged);
        let mut r = gates(vec![
            vec![
                violation("a.py", 1, Severity::Error, known),
                violation("a.py", 2, Severity::Error, Some(BaselineState::New)),
            ],
            vec![violation("b.py", 1, Severity::Error, known)],
        ]);
        assert!(would_shorten(&r, true, 10));
        assert!(!would_shorten(&r, false, 3));
        let omitted = shorten(&mut r, true, 10);
        assert_eq!((omitted.truncated, omitted.known_not_listed), (0, 2));
        assert_eq!(listed(&r), [("a.py".to_string(), 2)]);
    }

    #[test]
    fn within_the_cap_nothing_is_left_out() {
        let mut r = gates(vec![vec![violation(
            "a.py",
            1,
            Severity::Error,
            Some(BaselineState::Unchanged),
        )]]);
        assert!(!would_shorten(&r, false, 1));
        assert_eq!(shorten(&mut r, false, 1), Omitted::default());
        assert_eq!(listed(&r).len(), 1);
    }
}
