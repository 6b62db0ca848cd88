//! The baseline state machine as one pure function: the previous entry (as
//! re-read under the lock) plus what this run found gives the next entry.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{BranchState, ToolStamp};

/// What a finished `auto` run established (kept whole in a pending state
/// until its warm answers are confirmed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunFacts {
    /// HEAD when the run started.
    pub(crate) head_sha: String,
    /// Every file the run had in scope (each was checked or vacuously passed).
    pub(crate) checked: BTreeSet<String>,
    /// Files with a violation at or above its gate's `fail_on`.
    pub(crate) failing: BTreeSet<String>,
    /// Whether any gate errored (its files were not really checked).
    pub(crate) any_error: bool,
    /// Whether the run checked the whole project (a `project` fallback), so
    /// that every file outside `failing` is known to pass.
    pub(crate) full_check: bool,
    /// Whether `auto` fell back (no usable baseline): what earlier runs knew
    /// was under another baseline, config or tool, so it is forgotten.
    pub(crate) fell_back: bool,
    /// Clean keys (blob id and mode) of checked files whose content or mode
    /// differs from HEAD.
    pub(crate) dirty_blobs: BTreeMap<String, String>,
    /// Hash of the config in force.
    pub(crate) config_hash: String,
    /// Resolved tools in force.
    pub(crate) tools: BTreeMap<String, ToolStamp>,
    /// The gates' settings digests that differ from HEAD's, as they were
    /// when the run started.
    pub(crate) tool_settings: BTreeMap<String, BTreeMap<String, String>>,
    /// Timestamp for `updated_at`.
    pub(crate) now: String,
}

/// What the transition may ask about the files on disk and in HEAD.
pub(crate) struct Worktree<'a> {
    /// Whether a root-relative path is still a file of the project: one
    /// that was deleted, or that the config no longer selects, leaves
    /// `failed_files` and `clean_blobs`.
    pub(crate) in_project: &'a dyn Fn(&str) -> bool,
    /// Whether HEAD holds exactly this clean key at this path: an entry that
    /// HEAD holds is vouched for by the baseline itself and can go.
    pub(crate) committed: &'a dyn Fn(&str, &str) -> bool,
}

/// The next state of a branch. A run that changes nothing returns the
/// previous entry untouched (`updated_at` included), so the state file need
/// not be rewritten.
pub(crate) fn transition(
    previous: Option<BranchState>,
    facts: &RunFacts,
    tree: &Worktree<'_>,
) -> BranchState {
    let existed = previous.is_some();
    let before = previous.unwrap_or_default();
    let mut next = advance(before.clone(), facts, tree);
    // A run's own state replaces one an earlier run held for its
    // confirmations: this run checked what that one did (the state had
    // not moved past it) as it is now.
    next.pending = None;
    if !existed || next != before {
        next.updated_at = Some(facts.now.clone());
    }
    next
}

fn advance(previous: BranchState, facts: &RunFacts, tree: &Worktree<'_>) -> BranchState {
    let exists = tree.in_project;
    // Every clean entry was recorded when the baseline became the HEAD of
    // that time, with content HEAD did not hold (or kept then because HEAD
    // did not hold it). With HEAD still there, none can be committed: no
    // need to look each one up in HEAD's tree, run after no-op run.
    let head_unchanged = previous.baseline_sha.as_deref() == Some(facts.head_sha.as_str());
    let mut next = previous.clone();
    let still_failing_elsewhere = previous
        .failed_files
        .iter()
        .filter(|f| !facts.checked.contains(*f));
    if facts.any_error {
        // An errored gate proves nothing: keep the baseline and every failure.
        next.failed_files = union(previous.failed_files.iter(), facts.failing.iter(), exists);
        next.clean_blobs.retain(|f, _| !facts.failing.contains(f));
        return next;
    }
    next.failed_files = union(still_failing_elsewhere, facts.failing.iter(), exists);
    let all_green = facts.failing.is_empty();
    if all_green || facts.full_check {
        // Green, or red after checking everything: HEAD is the new baseline and
        // only the failing files (kept above) need checking again.
        next.baseline_sha = Some(facts.head_sha.clone());
        next.config_hash = Some(facts.config_hash.clone());
        next.tools = facts.tools.clone();
        next.tool_settings = facts.tool_settings.clone();
        // Files this run did not check keep what earlier runs learned about
        // them (unless that knowledge predates a fallback).
        let mut clean = match facts.fell_back {
            true => BTreeMap::new(),
            false => previous.clean_blobs,
        };
        clean.retain(|f, blob| {
            !facts.checked.contains(f)
                && exists(f)
                && (head_unchanged || !(tree.committed)(f, blob))
        });
        clean.extend(
            facts
                .dirty_blobs
                .iter()
                .filter(|(f, _)| !facts.failing.contains(*f))
                .map(|(f, b)| (f.clone(), b.clone())),
        );
        next.clean_blobs = clean;
    } else {
        next.clean_blobs.retain(|f, _| !facts.failing.contains(f));
    }
    next
}

fn union<'a>(
    a: impl Iterator<Item = &'a String>,
    b: impl Iterator<Item = &'a String>,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let set: BTreeSet<&String> = a.chain(b).filter(|f| exists(f)).collect();
    set.into_iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(checked: &[&str], failing: &[&str]) -> RunFacts {
        RunFacts {
            head_sha: "head".into(),
            checked: checked.iter().map(|s| s.to_string()).collect(),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            any_error: false,
            full_check: false,
            fell_back: false,
            dirty_blobs: BTreeMap::new(),
            config_hash: "cfg".into(),
            tools: BTreeMap::new(),
            tool_settings: BTreeMap::new(),
            now: "now".into(),
        }
    }

    const ALL_EXIST: Worktree<'static> = Worktree {
        in_project: &|_| true,
        committed: &|_, _| false,
    };

    fn previous(baseline: &str, failed: &[&str]) -> Option<BranchState> {
        Some(BranchState {
            baseline_sha: Some(baseline.into()),
            failed_files: failed.iter().map(|s| s.to_string()).collect(),
            config_hash: Some("old".into()),
            ..BranchState::default()
        })
    }

    #[test]
    fn green_moves_baseline_and_clears_checked_failures() {
        let mut f = facts(&["a.py", "b.py"], &[]);
        f.dirty_blobs.insert("a.py".into(), "blob-a".into());
        let next = transition(previous("old", &["a.py"]), &f, &ALL_EXIST);
        assert_eq!(next.baseline_sha.as_deref(), Some("head"));
        assert!(next.failed_files.is_empty());
        assert_eq!(next.clean_blobs["a.py"], "blob-a");
        assert_eq!(next.config_hash.as_deref(), Some("cfg"));
    }

    #[test]
    fn green_run_keeps_what_it_did_not_check_unless_it_fell_back() {
        let mut prev = previous("old", &[]).unwrap();
        prev.clean_blobs.insert("kept.py".into(), "k".into());
        prev.clean_blobs
            .insert("rechecked.py".into(), "old-blob".into());
        let mut f = facts(&["rechecked.py"], &[]);
        f.dirty_blobs
            .insert("rechecked.py".into(), "new-blob".into());
        let next = transition(Some(prev.clone()), &f, &ALL_EXIST);
        assert_eq!(next.clean_blobs.len(), 2);
        assert_eq!(next.clean_blobs["kept.py"], "k");
        assert_eq!(next.clean_blobs["rechecked.py"], "new-blob");
        f.fell_back = true;
        let next = transition(Some(prev), &f, &ALL_EXIST);
        assert_eq!(
            next.clean_blobs.keys().collect::<Vec<_>>(),
            ["rechecked.py"]
        );
    }

    #[test]
    fn green_run_prunes_clean_entries_that_were_checked_deleted_or_committed() {
        let mut prev = previous("old", &[]).unwrap();
        for f in ["checked.py", "deleted.py", "committed.py", "kept.py"] {
            prev.clean_blobs.insert(f.into(), format!("blob-{f}"));
        }
        let tree = Worktree {
            in_project: &|f| f != "deleted.py",
            committed: &|f, blob| f == "committed.py" && blob == "blob-committed.py",
        };
        let next = transition(Some(prev), &facts(&["checked.py"], &[]), &tree);
        assert_eq!(next.clean_blobs.keys().collect::<Vec<_>>(), ["kept.py"]);
    }

    #[test]
    fn with_head_still_the_baseline_clean_entries_are_not_looked_up_in_head() {
        let mut prev = previous("head", &[]).unwrap();
        prev.clean_blobs.insert("kept.py".into(), "blob".into());
        let tree = Worktree {
            in_project: &|_| true,
            committed: &|f, _| panic!("{f} looked up in HEAD"),
        };
        let next = transition(Some(prev), &facts(&[], &[]), &tree);
        assert_eq!(next.clean_blobs.keys().collect::<Vec<_>>(), ["kept.py"]);
    }

    #[test]
    fn red_keeps_baseline_and_merges_failures() {
        let next = transition(
            previous("old", &["x.py", "a.py"]),
            &facts(&["a.py", "b.py"], &["b.py"]),
            &ALL_EXIST,
        );
        assert_eq!(next.baseline_sha.as_deref(), Some("old"));
        // a.py was re-checked and passed; x.py was not re-checked, so it stays.
        assert_eq!(next.failed_files, ["b.py", "x.py"]);
        assert_eq!(next.config_hash.as_deref(), Some("old"));
    }

    #[test]
    fn red_full_check_takes_head_as_baseline() {
        let mut f = facts(&["a.py", "b.py"], &["b.py"]);
        f.full_check = true;
        let next = transition(None, &f, &ALL_EXIST);
        assert_eq!(next.baseline_sha.as_deref(), Some("head"));
        assert_eq!(next.failed_files, ["b.py"]);
    }

    #[test]
    fn error_never_advances_and_forgets_nothing() {
        let mut f = facts(&["a.py"], &[]);
        f.any_error = true;
        f.full_check = true;
        let next = transition(previous("old", &["a.py"]), &f, &ALL_EXIST);
        assert_eq!(next.baseline_sha.as_deref(), Some("old"));
        assert_eq!(next.failed_files, ["a.py"]);
        assert_eq!(transition(None, &f, &ALL_EXIST).baseline_sha, None);
    }

    #[test]
    fn an_errored_run_forgets_only_the_clean_blobs_of_failing_files() {
        let mut prev = previous("old", &[]).unwrap();
        prev.clean_blobs.insert("failing.py".into(), "f".into());
        prev.clean_blobs.insert("fine.py".into(), "g".into());
        let mut f = facts(&["failing.py"], &["failing.py"]);
        f.any_error = true;
        let next = transition(Some(prev), &f, &ALL_EXIST);
        assert_eq!(next.clean_blobs.keys().collect::<Vec<_>>(), ["fine.py"]);
    }

    #[test]
    fn a_changed_entry_gets_a_new_timestamp() {
        let mut prev = previous("old", &[]).unwrap();
        prev.updated_at = Some("earlier".into());
        let next = transition(Some(prev), &facts(&["a.py"], &["a.py"]), &ALL_EXIST);
        assert_eq!(next.updated_at.as_deref(), Some("now"));
    }

    #[test]
    fn a_run_that_changes_nothing_leaves_the_entry_untouched() {
        let mut f = facts(&[], &[]);
        let first = transition(None, &f, &ALL_EXIST);
        assert_eq!(first.updated_at.as_deref(), Some("now"));
        f.now = "later".into();
        assert_eq!(transition(Some(first.clone()), &f, &ALL_EXIST), first);
    }

    #[test]
    fn deleted_failed_files_are_pruned() {
        let next = transition(
            previous("old", &["gone.py"]),
            &facts(&["a.py"], &["a.py"]),
            &Worktree {
                in_project: &|f| f != "gone.py",
                committed: &|_, _| false,
            },
        );
        assert_eq!(next.failed_files, ["a.py"]);
    }
}
