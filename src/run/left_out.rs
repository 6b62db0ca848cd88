//! When leaving out the importers of a body-only edit
//! (`interface_aware_importers`) is proved wrong — a daemon's sample of
//! the run, or `--verify`, checked them and found what the run did not
//! report — qg stops leaving importers out in this project
//! ([`state::importers_off`]) and marks those files failed on this branch,
//! so the next `auto` run checks them: the green the run gave does not
//! stand past the next run.

use std::collections::BTreeSet;
use std::path::Path;

use crate::report::RunReport;
use crate::state::{importers_off, StateStore};
use crate::workspace::Workspace;

/// Judges a daemon's sample of a run that left out importers: `report` is
/// the sample's run over the run's files and `left_out`, measured against
/// the baseline. Returns what it found, when the run was wrong.
pub(crate) fn judge_sample(report: &RunReport, gate: &str, left_out: &[String]) -> Option<String> {
    let result = report.gates.iter().find(|g| g.id == gate)?;
    let (found, files) = crate::outcome::failing_in(result, left_out)?;
    proved_wrong(&report.root, &found, &files);
    Some(found)
}

/// Keeps the proof (`found`): importers are left out no more here. Not
/// the verdict's: a run that cannot write it still reports what it found.
pub(super) fn keep_proof(root: &Path, found: &str) {
    let _ = importers_off::record(root, found);
}

/// Keeps the proof (`found`), and `files` as failed on this branch: the
/// run it proves wrong was green, and may have moved the baseline past
/// them.
fn proved_wrong(root: &Path, found: &str, files: &BTreeSet<String>) {
    keep_proof(root, found);
    let Ok(workspace) = Workspace::discover(root) else {
        return;
    };
    let Some(head) = workspace.repo.as_ref().and_then(|r| r.head().ok()) else {
        return;
    };
    let _ = StateStore::new(root).update_branch(&head.branch, |state| {
        let mut state = state?;
        let mut failed: BTreeSet<String> = state.failed_files.drain(..).collect();
        failed.extend(files.iter().cloned());
        state.failed_files = failed.into_iter().collect();
        Some(state)
    });
}
