//! Measuring a run against the baseline: each violation becomes `new` or
//! `unchanged`, only new ones fail a gate, and remembered findings that are
//! gone from the files a gate checked are reported as fixed.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::file::Baseline;
use super::matcher::{match_entries, Comparable, Entry, Matching, Parts, Rewording, Tier};
use crate::git::LineMap;
use crate::outcome::{GateResult, GateStatus};
use crate::violation::{BaselineState, Violation};
use crate::workspace::Workspace;

/// What the baseline did to a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct BaselineSummary {
    /// Violations the baseline does not hold: these fail gates.
    pub(crate) new: usize,
    /// Violations it holds: reported, never failing.
    pub(crate) known: usize,
    /// Remembered findings gone from the files the gates checked.
    pub(crate) fixed: usize,
    /// Known findings matched by line content after their message changed
    /// (a tool upgrade reworded them).
    pub(crate) reworded: usize,
    /// Whether the fixed entries were dropped from the file (a local run);
    /// a `--locked` run leaves it alone.
    pub(crate) updated: bool,
}

/// What measuring a run against the baseline found.
pub(crate) struct Applied {
    /// The counts.
    pub(crate) summary: BaselineSummary,
    /// The remembered entries (indices into the baseline) this run showed
    /// to be fixed, in order.
    pub(crate) fixed: Vec<usize>,
    /// Entries any shard of a run may match — of a deleted file, or of no
    /// file — that this run matched: (entry, the finding's fingerprint).
    pub(crate) shared_matches: Vec<(usize, String)>,
}

/// Measures every gate that ran against `baseline`. `covered` says, per
/// gate, the files whose findings it reported: only remembered entries of
/// those files (and of deleted files) can be called fixed, so a run of
/// three files never touches the rest of the baseline.
pub(crate) fn apply(
    ws: &Workspace,
    baseline: &Baseline,
    gates: &mut [GateResult],
    covered: &crate::plan::Covered<'_>,
    warnings: &mut Vec<String>,
) -> Applied {
    let mut lines = Lines::new(ws, baseline.header.commit.as_deref(), warnings);
    let mut summary = BaselineSummary::default();
    let mut fixed = Vec::new();
    let mut shared_matches = Vec::new();
    for gate in gates.iter_mut() {
        if !matches!(gate.status, GateStatus::Passed | GateStatus::Failed) {
            continue;
        }
        let empty = BTreeSet::new();
        let files = covered.get(&gate.id).unwrap_or(&empty);
        // A tool may report on files it was not given (mypy follows an
        // import into a module and reports what it finds there): their
        // entries can be matched too, but only a file the gate was given,
        // or one that is gone, can have entries found fixed — of any other,
        // the tool may have seen a part.
        let reported: rustc_hash::FxHashSet<&str> = gate
            .violations
            .iter()
            .filter_map(|v| v.file.as_deref())
            .collect();
        let can_be_fixed = |e: &Entry| {
            e.path.is_empty() || files.contains(e.path.as_str()) || !lines.exists(&e.path)
        };
        let mut indices = Vec::new();
        let mut remembered: Vec<Cow<'_, Entry>> = Vec::new();
        let mut fixable = Vec::new();
        for (i, entry) in baseline.entries.iter().enumerate() {
            if entry.gate != crate::config::baseline_gate(&gate.id) {
                continue;
            }
            let entry = without_line(lines.renamed(entry), gate.match_lines);
            let can_be_fixed = can_be_fixed(&entry);
            if can_be_fixed || reported.contains(entry.path.as_str()) {
                indices.push(i);
                remembered.push(entry);
                fixable.push(can_be_fixed);
            }
        }
        let current: Vec<Parts<'_>> = gate
            .violations
            .iter()
            .map(|v| {
                parts_of(
                    crate::config::baseline_gate(&gate.id),
                    v,
                    v.normalized_message(),
                )
            })
            .collect();
        let rewording = rewording(baseline, gate);
        let mut matching = match_entries(&remembered, &current, rewording, &mut |k| {
            lines.near(&baseline.entries[indices[k]].path, &remembered[k])
        });
        follow_moved_code(&mut matching, &remembered, &current, &lines, rewording);
        drop(current);
        for (v, m) in gate.violations.iter_mut().zip(&matching.matched) {
            v.tracking.baseline_state = Some(match m {
                Some(_) => BaselineState::Unchanged,
                None => BaselineState::New,
            });
            let shared = m.filter(|(k, _)| {
                let path = &remembered[*k].path;
                path.is_empty() || !lines.exists(path)
            });
            if let (Some((k, _)), Some(fingerprint)) = (shared, v.tracking.fingerprint) {
                shared_matches.push((indices[k], fingerprint.to_string()));
            }
        }
        let reworded = matching.count(Tier::Reworded);
        if reworded > 0 {
            warnings.push(reworded_warning(gate, baseline, reworded));
        }
        summary.reworded += reworded;
        summary.known += matching.matched.iter().filter(|m| m.is_some()).count();
        summary.new += matching.matched.iter().filter(|m| m.is_none()).count();
        let gone: Vec<usize> = matching
            .unmatched
            .iter()
            .copied()
            .filter(|k| fixable[*k])
            .collect();
        summary.fixed += gone.len();
        fixed.extend(gone.iter().map(|k| indices[*k]));
        settle(gate);
    }
    fixed.sort_unstable();
    Applied {
        summary,
        fixed,
        shared_matches,
    }
}

/// Findings of a file that is gone (renamed beyond git's similarity
/// threshold, split, moved) may be in another file now: they match a new
/// finding anywhere with the same gate, rule, line content and message.
fn follow_moved_code<'a>(
    matching: &mut Matching,
    remembered: &'a [Cow<'a, Entry>],
    current: &[Parts<'a>],
    lines: &Lines<'_>,
    rewording: Rewording,
) {
    let gone: Vec<usize> = matching
        .unmatched
        .iter()
        .copied()
        .filter(|k| !remembered[*k].path.is_empty() && !lines.exists(&remembered[*k].path))
        .collect();
    let open: Vec<usize> = (0..current.len())
        .filter(|j| matching.matched[*j].is_none())
        .collect();
    if gone.is_empty() || open.is_empty() {
        return;
    }
    let anywhere = |e: Parts<'a>| Parts {
        path: "",
        line: None,
        ..e
    };
    let old: Vec<Parts<'_>> = gone
        .iter()
        .map(|k| anywhere(remembered[*k].parts()))
        .collect();
    let new: Vec<Parts<'_>> = open.iter().map(|j| anywhere(current[*j])).collect();
    let moved = match_entries(&old, &new, rewording, &mut |_| None);
    for (j, m) in open.iter().zip(moved.matched) {
        if let Some((i, tier)) = m {
            matching.matched[*j] = Some((gone[i], tier));
        }
    }
    let still_gone: std::collections::BTreeSet<usize> =
        moved.unmatched.iter().map(|i| gone[*i]).collect();
    matching
        .unmatched
        .retain(|k| !gone.contains(k) || still_gone.contains(k));
}

/// A current violation as the matcher compares it (fingerprinted first:
/// see `fingerprint::stamp`).
pub(crate) fn entry_of(gate: &str, v: &Violation) -> Entry {
    let parts = parts_of(gate, v, v.normalized_message());
    Entry {
        path: parts.path.to_string(),
        gate: gate.to_string(),
        code: parts.code.to_string(),
        line_hash: parts.line_hash.to_string(),
        line: parts.line,
        message: parts.message.to_string(),
    }
}

/// A violation's identity parts, borrowed.
fn parts_of<'a>(gate: &'a str, v: &'a Violation, message: &'a str) -> Parts<'a> {
    Parts {
        gate,
        path: v.file.as_deref().unwrap_or(""),
        code: v.code.as_deref().unwrap_or(""),
        line_hash: &v.tracking.line_hash,
        message,
        line: v.line,
    }
}

/// An entry of a gate that does not match lines, as that gate's findings
/// are stamped: with no line hash (a baseline written before the gate
/// stopped matching lines may hold one).
fn without_line(entry: Cow<'_, Entry>, match_lines: bool) -> Cow<'_, Entry> {
    if match_lines || entry.line_hash.is_empty() {
        return entry;
    }
    let mut entry = entry.into_owned();
    entry.line_hash.clear();
    Cow::Owned(entry)
}

/// A gate fails only on new violations at its threshold.
fn settle(gate: &mut GateResult) {
    let fails = gate.violations.iter().any(|v| v.fails_gate(gate.fail_on));
    if gate.status == GateStatus::Failed && !fails {
        gate.status = GateStatus::Passed;
    }
}

/// Whether `gate`'s findings whose message alone changed are its known
/// ones: only when its tool's version is not the one that wrote the
/// baseline (or either is unknown). With the same tool, a new message at
/// an unchanged line is a changed finding — a workspace trial's break in
/// attrs turned cattrs' `got "X"` into `got "int"` at the same line, and
/// it was counted known.
fn rewording(baseline: &Baseline, gate: &GateResult) -> Rewording {
    match (baseline.header.tools.get(&gate.id), &gate.tool_version) {
        (Some(then), Some(now)) if then == now => Rewording::New,
        _ => Rewording::Matched,
    }
}

fn reworded_warning(gate: &GateResult, baseline: &Baseline, count: usize) -> String {
    let then = baseline.header.tools.get(&gate.id);
    let upgrade = match (then, &gate.tool_version) {
        (Some(then), Some(now)) if then != now => format!(" ({then} → {now})"),
        _ => String::new(),
    };
    format!(
        "{}: {count} known findings matched by their line after the tool reworded them{upgrade}; \
         `qg baseline write` records the new wording",
        gate.id
    )
}

/// Where remembered lines went: renames since the baseline's commit, and
/// each file's line map from that commit's version to the working tree's.
struct Lines<'w> {
    ws: &'w Workspace,
    commit: Option<&'w str>,
    renames: BTreeMap<String, String>,
    /// On a checkout that ignores case, each remembered path as the file
    /// system spells it now (a case-only rename shows in no git diff).
    cased: Option<std::cell::RefCell<HashMap<String, Option<String>>>>,
    maps: HashMap<(String, String), Option<LineMap>>,
    /// Whether each path asked about is there: 100,000 findings lie in a
    /// few hundred files, and a stat per finding cost 200 ms.
    present: std::cell::RefCell<rustc_hash::FxHashMap<String, bool>>,
}

impl<'w> Lines<'w> {
    fn new(ws: &'w Workspace, commit: Option<&'w str>, warnings: &mut Vec<String>) -> Lines<'w> {
        let renames = match (&ws.repo, commit) {
            (Some(repo), Some(commit)) if repo.has_commit(commit) => {
                repo.renames_since(commit).unwrap_or_else(|e| {
                    warnings.push(format!("baseline: renamed files not followed: {e}"));
                    BTreeMap::new()
                })
            }
            _ => BTreeMap::new(),
        };
        let ignores_case = ws.repo.as_ref().is_some_and(|r| r.ignores_case());
        Lines {
            ws,
            commit,
            renames,
            cased: ignores_case.then(Default::default),
            maps: HashMap::new(),
            present: Default::default(),
        }
    }

    /// `entry` at its path today (a renamed file's new path).
    fn renamed<'e>(&self, entry: &'e Entry) -> Cow<'e, Entry> {
        let moved = |path: String| {
            Cow::Owned(Entry {
                path,
                ..entry.clone()
            })
        };
        if let Some(new) = self.renames.get(&entry.path) {
            return moved(new.clone());
        }
        match self.on_disk(&entry.path) {
            Some(cased) if cased != entry.path => moved(cased),
            _ => Cow::Borrowed(entry),
        }
    }

    /// `path` as the file system spells it, on a checkout that ignores case.
    fn on_disk(&self, path: &str) -> Option<String> {
        let cased = self.cased.as_ref()?;
        if path.is_empty() {
            return None;
        }
        cased
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| crate::file_name::on_disk_case(&self.ws.root, path))
            .clone()
    }

    fn exists(&self, path: &str) -> bool {
        if let Some(present) = self.present.borrow().get(path) {
            return *present;
        }
        let present = crate::file_name::join(&self.ws.root, path).exists();
        self.present.borrow_mut().insert(path.to_string(), present);
        present
    }

    /// The current lines a remembered entry's line went to: `original` is
    /// its path in the baseline, `entry` the entry at today's path.
    fn near(&mut self, original: &str, entry: &Entry) -> Option<(u64, u64)> {
        let line = entry.line?;
        let (ws, commit) = (self.ws, self.commit);
        let map = self
            .maps
            .entry((original.to_string(), entry.path.clone()))
            .or_insert_with(|| {
                let old = ws.repo.as_ref()?.file_at(commit?, original)?;
                let new = std::fs::read(crate::file_name::join(&ws.root, &entry.path)).ok()?;
                Some(crate::git::line_map(&old, &new))
            })
            .as_ref()?;
        Some(map.map(line))
    }
}
