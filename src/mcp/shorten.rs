//! Fitting a run report into an agent's context window, never silently:
//! the baseline's known violations can be left out (`new_only`), and at
//! most `max_violations` are listed — errors first, then by file and
//! position. The answer counts what it left out and names the file that
//! holds the whole report.

use serde_json::Value;

/// What [`shorten`] left out of the lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Omitted {
    /// Over the `max_violations` cap.
    pub(super) truncated: usize,
    /// Known to the committed baseline, with `new_only`.
    pub(super) known: usize,
}

/// How one violation ranks for listing: errors, then warnings, then info;
/// within a severity by file and position, then gate (config) order.
type Rank = (u8, String, u64, u64, usize);

fn rank(gate: usize, violation: &Value) -> Rank {
    let severity = match violation["severity"].as_str() {
        Some("error") => 0,
        Some("warning") => 1,
        _ => 2,
    };
    let file = violation["file"].as_str().unwrap_or_default().to_string();
    let number = |key: &str| violation[key].as_u64().unwrap_or(0);
    (severity, file, number("line"), number("column"), gate)
}

/// Whether [`shorten`] would leave anything out (then the whole report is
/// worth writing down first).
pub(super) fn would_shorten(report: &Value, new_only: bool, max: usize) -> bool {
    let violations = report["gates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|gate| gate["violations"].as_array())
        .flatten();
    let mut listed = 0;
    for violation in violations {
        if new_only && violation["baseline_state"].as_str() == Some("unchanged") {
            return true;
        }
        listed += 1;
    }
    listed > max
}

/// Leaves the known violations (with `new_only`, when a baseline is in
/// use) and all but the `max` first-ranked others out of `report`'s gates
/// (a `--format json` run report); counts and summary stay whole.
pub(super) fn shorten(report: &mut Value, new_only: bool, max: usize) -> Omitted {
    let mut omitted = Omitted::default();
    let Some(gates) = report.get_mut("gates").and_then(Value::as_array_mut) else {
        return omitted;
    };
    let listed = |gate: &Value| gate["violations"].as_array().cloned().unwrap_or_default();
    if new_only {
        for gate in gates.iter_mut() {
            let all = listed(gate);
            let new: Vec<Value> = all
                .iter()
                .filter(|v| v["baseline_state"].as_str() != Some("unchanged"))
                .cloned()
                .collect();
            omitted.known += all.len() - new.len();
            set_violations(gate, new);
        }
    }
    let mut ranked: Vec<(Rank, usize, usize)> = gates
        .iter()
        .enumerate()
        .flat_map(|(g, gate)| {
            listed(gate)
                .iter()
                .enumerate()
                .map(|(v, violation)| (rank(g, violation), g, v))
                .collect::<Vec<_>>()
        })
        .collect();
    if ranked.len() <= max {
        return omitted;
    }
    ranked.sort();
    omitted.truncated = ranked.len() - max;
    let mut keep = vec![Vec::new(); gates.len()];
    for (_, g, v) in ranked.into_iter().take(max) {
        keep[g].push(v);
    }
    for (gate, mut kept) in gates.iter_mut().zip(keep) {
        kept.sort_unstable();
        let all = listed(gate);
        set_violations(gate, kept.into_iter().map(|v| all[v].clone()).collect());
    }
    omitted
}

/// Sets a gate's list, leaving the key out when it is empty (as the run
/// report does).
fn set_violations(gate: &mut Value, violations: Vec<Value>) {
    let Some(object) = gate.as_object_mut() else {
        return;
    };
    if violations.is_empty() {
        object.remove("violations");
    } else {
        object.insert("violations".into(), Value::Array(violations));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn violation(file: &str, line: u64, severity: &str, state: Option<&str>) -> Value {
        let mut v =
            json!({"file": file, "line": line, "column": 1, "message": "m", "severity": severity});
        if let Some(state) = state {
            v["baseline_state"] = state.into();
        }
        v
    }

    fn listed(report: &Value) -> Vec<(String, u64)> {
        report["gates"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default())
            .map(|v| {
                (
                    v["file"].as_str().unwrap().to_string(),
                    v["line"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn the_cap_keeps_errors_first_then_file_order_and_counts_the_rest() {
        let mut report = json!({"gates": [
            {"id": "lint", "violations": [violation("a.py", 1, "warning", None), violation("b.py", 1, "error", None)]},
            {"id": "types", "violations": [violation("a.py", 9, "error", None), violation("c.py", 2, "info", None)]}
        ]});
        let omitted = shorten(&mut report, true, 2);
        assert_eq!(
            omitted,
            Omitted {
                truncated: 2,
                known: 0
            }
        );
        assert_eq!(
            listed(&report),
            [("b.py".to_string(), 1), ("a.py".to_string(), 9)]
        );
    }

    #[test]
    fn new_only_leaves_out_known_violations_and_counts_them() {
        let mut report = json!({"gates": [
            {"id": "lint", "violations": [violation("a.py", 1, "error", Some("unchanged")), violation("a.py", 2, "error", Some("new"))]},
            {"id": "types", "violations": [violation("b.py", 1, "error", Some("unchanged"))]}
        ]});
        assert!(would_shorten(&report, true, 10));
        assert!(!would_shorten(&report, false, 3));
        let omitted = shorten(&mut report, true, 10);
        assert_eq!(
            omitted,
            Omitted {
                truncated: 0,
                known: 2
            }
        );
        assert_eq!(listed(&report), [("a.py".to_string(), 2)]);
        assert!(report["gates"][1].get("violations").is_none());
    }

    #[test]
    fn within_the_cap_nothing_is_left_out() {
        let mut report = json!({"gates": [{"id": "lint", "violations": [violation("a.py", 1, "error", Some("unchanged"))]}]});
        let before = report.clone();
        assert!(!would_shorten(&report, false, 1));
        assert_eq!(shorten(&mut report, false, 1), Omitted::default());
        assert_eq!(report, before);
    }
}
