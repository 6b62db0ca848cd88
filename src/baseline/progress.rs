//! What changed since the last run: per gate, the findings fixed, new and
//! still there, comparing fingerprints file by file with what the last run
//! that checked each file found (a multiset: one more copy is one new).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::outcome::{GateResult, GateStatus, Progress};
use crate::state::findings::BranchFindings;

/// Enough of a fingerprint to tell findings of one file apart.
const KEPT_HEX: usize = 16;

/// Sets each gate's `since_last_run` from `previous` (absent on a branch's
/// first run: nothing to compare with) and returns the branch's findings
/// updated with this run's files, and the totals.
pub(crate) fn compare(
    previous: Option<&BranchFindings>,
    gates: &mut [GateResult],
    covered: &BTreeMap<String, BTreeSet<String>>,
) -> (BranchFindings, Option<Progress>) {
    let mut updated = previous.cloned().unwrap_or_default();
    let mut total = Progress::default();
    for gate in gates.iter_mut() {
        if !matches!(gate.status, GateStatus::Passed | GateStatus::Failed) {
            continue;
        }
        let now = by_file(gate);
        let record = updated.entry(gate.id.clone()).or_default();
        let empty = BTreeSet::new();
        let files = covered.get(&gate.id).unwrap_or(&empty);
        let mut progress = Progress::default();
        let elsewhere = now.keys().copied().filter(|f| !files.contains(*f));
        for file in files.iter().map(String::as_str).chain(elsewhere) {
            let found = now.get(file).cloned().unwrap_or_default();
            let before = match found.is_empty() {
                true => record.remove(file),
                false => record.insert(file.to_string(), found.clone()),
            };
            progress.add(difference(before.as_deref().unwrap_or_default(), &found));
        }
        if previous.is_some() {
            gate.since_last_run = Some(progress);
            total.add(progress);
        }
        if record.is_empty() {
            updated.remove(&gate.id);
        }
    }
    (updated, previous.map(|_| total))
}

/// This run's fingerprints of `gate`, per file (`""` for none), sorted.
fn by_file(gate: &GateResult) -> FxHashMap<&str, Vec<String>> {
    let mut files: FxHashMap<&str, Vec<String>> = FxHashMap::default();
    for v in &gate.violations {
        let fingerprint = v.tracking.fingerprint.as_deref().unwrap_or("");
        files
            .entry(v.file.as_deref().unwrap_or(""))
            .or_default()
            .push(fingerprint[..fingerprint.len().min(KEPT_HEX)].to_string());
    }
    for list in files.values_mut() {
        list.sort_unstable();
    }
    files
}

/// Multiset difference of two sorted lists.
fn difference(before: &[String], now: &[String]) -> Progress {
    let (mut i, mut j, mut still) = (0, 0, 0);
    while i < before.len() && j < now.len() {
        match before[i].cmp(&now[j]) {
            std::cmp::Ordering::Equal => {
                still += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    Progress {
        fixed: before.len() - still,
        new: now.len() - still,
        still,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_multiset_difference_counts_repeats() {
        let p = difference(&list(&["a", "a", "b"]), &list(&["a", "c", "c"]));
        assert_eq!(
            p,
            Progress {
                fixed: 2,
                new: 2,
                still: 1
            }
        );
        let p = difference(&list(&[]), &list(&["x"]));
        assert_eq!(
            p,
            Progress {
                fixed: 0,
                new: 1,
                still: 0
            }
        );
    }
}
