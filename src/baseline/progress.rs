//! What changed since the last run: per gate, the findings fixed, new and
//! still there, comparing fingerprints file by file with what the last run
//! that checked each file found (a multiset: one more copy is one new).

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use crate::outcome::{GateResult, GateStatus, Progress};
use crate::state::findings::{BranchFindings, GateFindings};

/// Sets each gate's `since_last_run` from `previous` (absent on a branch's
/// first run: nothing to compare with) and returns the totals.
pub(crate) fn compare(
    previous: Option<&BranchFindings>,
    gates: &mut [GateResult],
    covered: &crate::plan::Covered<'_>,
) -> Option<Progress> {
    let previous = previous?;
    let mut total = Progress::default();
    let empty = BTreeSet::new();
    for gate in gates.iter_mut() {
        if !matches!(gate.status, GateStatus::Passed | GateStatus::Failed) {
            continue;
        }
        let files = covered.get(&gate.id).unwrap_or(&empty);
        let progress = since(previous, gate, files);
        gate.since_last_run = Some(progress);
        total.add(progress);
    }
    Some(total)
}

/// `previous` updated with the findings of `gates` in the files each
/// covered (and every file it reports elsewhere); a gate without a
/// verdict (an error, a skip) leaves its part as it was.
pub(crate) fn remember_all<'g>(
    previous: Option<&BranchFindings>,
    gates: impl IntoIterator<Item = &'g GateResult>,
    covered: &crate::plan::Covered<'_>,
) -> BranchFindings {
    let mut updated = previous.cloned().unwrap_or_default();
    let empty = BTreeSet::new();
    for gate in gates {
        if !matches!(gate.status, GateStatus::Passed | GateStatus::Failed) {
            continue;
        }
        let files = covered.get(&gate.id).unwrap_or(&empty);
        let record = updated.entry(gate.id.clone()).or_default();
        remember(record, &by_file(gate), files);
        if record.is_empty() {
            updated.remove(&gate.id);
        }
    }
    updated
}

/// `gate`'s findings in `files` against what `previous` holds for them:
/// [`compare`]'s count for one gate, without updating anything.
pub(crate) fn since(
    previous: &BranchFindings,
    gate: &GateResult,
    files: &BTreeSet<&str>,
) -> Progress {
    let none = GateFindings::new();
    let record = previous.get(&gate.id).unwrap_or(&none);
    measure(record, &by_file(gate), files)
}

/// The files where `gate`'s findings differ from what `previous` holds
/// for them — one found or gone — over `files` and every file it reports
/// elsewhere: what a warm answer says that no cold run has confirmed.
pub(crate) fn differing(
    previous: &BranchFindings,
    gate: &GateResult,
    files: &BTreeSet<&str>,
) -> BTreeSet<String> {
    let none = GateFindings::new();
    let record = previous.get(&gate.id).unwrap_or(&none);
    let now = by_file(gate);
    files_and_elsewhere(&now, files)
        .filter(|file| {
            let found = now.get(file).map(Vec::as_slice).unwrap_or_default();
            let before = record.get(*file).map(|r| decode(r)).unwrap_or_default();
            let progress = difference(&before, found);
            progress.fixed + progress.new > 0
        })
        .map(str::to_string)
        .collect()
}

/// `gate`'s findings in `files` (and elsewhere) as the record keeps them:
/// file → short fingerprints (`""`: none) — what a confirmed answer adds
/// to the record.
pub(crate) fn remembered(gate: &GateResult, files: &BTreeSet<&str>) -> GateFindings {
    let now = by_file(gate);
    files_and_elsewhere(&now, files)
        .map(|file| {
            let found = now.get(file).map(Vec::as_slice).unwrap_or_default();
            (file.to_string(), encode(found))
        })
        .collect()
}

/// The findings `now` (per file) against `record`, over `files` and every
/// file `now` reports elsewhere.
fn measure(
    record: &GateFindings,
    now: &FxHashMap<&str, Vec<u64>>,
    files: &BTreeSet<&str>,
) -> Progress {
    let mut progress = Progress::default();
    for file in files_and_elsewhere(now, files) {
        let found = now.get(file).map(Vec::as_slice).unwrap_or_default();
        let before = record.get(file).map(|r| decode(r)).unwrap_or_default();
        progress.add(difference(&before, found));
    }
    progress
}

/// Makes `record` hold `now`'s findings for `files` (and every file `now`
/// reports elsewhere): a file without findings leaves it.
fn remember(record: &mut GateFindings, now: &FxHashMap<&str, Vec<u64>>, files: &BTreeSet<&str>) {
    for file in files_and_elsewhere(now, files) {
        match now.get(file).filter(|found| !found.is_empty()) {
            Some(found) => record.insert(file.to_string(), encode(found)),
            None => record.remove(file),
        };
    }
}

/// `files`, then the files `now` reports outside them.
fn files_and_elsewhere<'a>(
    now: &'a FxHashMap<&str, Vec<u64>>,
    files: &'a BTreeSet<&str>,
) -> impl Iterator<Item = &'a str> {
    let elsewhere = now.keys().copied().filter(|f| !files.contains(*f));
    files.iter().copied().chain(elsewhere)
}

/// This run's short fingerprints of `gate`, per file (`""` for none), sorted.
fn by_file(gate: &GateResult) -> FxHashMap<&str, Vec<u64>> {
    let mut files: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
    for v in &gate.violations {
        files
            .entry(v.file.as_deref().unwrap_or(""))
            .or_default()
            .push(v.tracking.fingerprint.map_or(0, |f| f.short()));
    }
    for list in files.values_mut() {
        list.sort_unstable();
    }
    files
}

/// The record of a file: 16 hex digits per finding.
fn encode(fingerprints: &[u64]) -> String {
    fingerprints.iter().map(|f| format!("{f:016x}")).collect()
}

/// The findings of a record (a damaged one reads as fewer findings).
fn decode(record: &str) -> Vec<u64> {
    let mut out: Vec<u64> = record
        .as_bytes()
        .chunks_exact(16)
        .filter_map(|c| u64::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect();
    out.sort_unstable();
    out
}

/// Multiset difference of two sorted lists.
fn difference(before: &[u64], now: &[u64]) -> Progress {
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

    #[test]
    fn a_multiset_difference_counts_repeats() {
        let p = difference(&[1, 1, 2], &[1, 3, 3]);
        assert_eq!((p.fixed, p.new, p.still), (2, 2, 1));
        // One copy before, two now: one still there, one new.
        let p = difference(&[1], &[1, 1]);
        assert_eq!((p.fixed, p.new, p.still), (0, 1, 1));
        let p = difference(&[], &[9]);
        assert_eq!((p.fixed, p.new, p.still), (0, 1, 0));
        assert_eq!(decode(&encode(&[3, u64::MAX, 1])), [1, 3, u64::MAX]);
    }
}
