//! What an `auto` run answered warm leaves behind until a cold run has
//! confirmed it: the branch's next state and the findings to remember, held
//! in the branch's entry ([`super::BranchState::pending`]) instead of
//! applied. A warm answer is shown at once; the baseline commit, the
//! failed files, the clean blobs and the record of findings move only when
//! every gate it waits for has agreed with its cold run. Until then the
//! next run checks the same files again (the state has not moved), and a
//! newer run's state or pending replaces this one: it covers them too.
//!
//! Pure functions over the entry; the [`super::StateStore`] lock makes each
//! read-modify-write whole.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::findings::BranchFindings;
use super::transition::{transition, RunFacts, Worktree};
use super::BranchState;

/// A run's state, held until its warm answers are confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pending {
    /// The run that held it (its id).
    pub(crate) run: String,
    /// When (RFC 3339, UTC).
    pub(crate) at: String,
    /// Gate id → the confirmation it waits for.
    pub(crate) gates: BTreeMap<String, Awaited>,
    /// The transition the run would have made.
    pub(crate) facts: RunFacts,
    /// Gate id → root-relative file → the short fingerprints to remember
    /// for it once confirmed (`""`: none), as in [`BranchFindings`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) findings: BTreeMap<String, BTreeMap<String, String>>,
}

/// The confirmation of one gate's warm answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Awaited {
    /// The confirmation's id (see `run::confirm::Job`): the same answer for
    /// the same files on the same tree has the same id, so a later run
    /// asking again waits for the confirmation already under way.
    pub(crate) job: String,
    /// How many files its cold run checks.
    pub(crate) files: usize,
    /// How it came out, so far.
    #[serde(default)]
    pub(crate) outcome: Outcome,
}

/// How a confirmation came out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// Not yet known.
    #[default]
    Waiting,
    /// The cold run found what the warm answer said.
    Agreed,
    /// It did not: what the warm answer got wrong, in words.
    Differed {
        /// The first difference and where both sides are.
        said: String,
    },
    /// Nothing to conclude (the files changed meanwhile, the cold run
    /// erred): the state stays where it is, and the next run asks again.
    Inconclusive {
        /// Why.
        why: String,
    },
}

/// What applying a settled pending state asks of the findings record.
pub(crate) type FindingsUpdate = BTreeMap<String, BTreeMap<String, String>>;

/// Records `outcome` for the confirmation `job` in `entry`'s pending
/// state; returns whether that state waited for it. A difference, or a
/// confirmation that could not conclude, drops nothing yet: the next run
/// reads it (and says what the answer got wrong), then replaces it.
pub(crate) fn record_outcome(entry: &mut BranchState, job: &str, outcome: &Outcome) -> bool {
    let Some(pending) = entry.pending.as_mut() else {
        return false;
    };
    let mut matched = false;
    for awaited in pending.gates.values_mut().filter(|a| a.job == job) {
        if awaited.outcome == Outcome::Waiting {
            awaited.outcome = outcome.clone();
        }
        matched = true;
    }
    matched
}

/// Applies `entry`'s pending state once every gate it waits for agreed:
/// the transition the run would have made (to the entry as it is now, as
/// a run's own transition applies to the entry re-read under the lock),
/// and the findings to remember. `None` while any gate waits or differed.
pub(crate) fn settle(entry: &mut BranchState, tree: &Worktree<'_>) -> Option<FindingsUpdate> {
    let pending = entry.pending.as_ref()?;
    if !pending.gates.values().all(|a| a.outcome == Outcome::Agreed) {
        return None;
    }
    let pending = entry.pending.take()?;
    let previous = std::mem::take(entry);
    *entry = transition(Some(previous), &pending.facts, tree);
    Some(pending.findings)
}

/// `record` with `update` applied: each file's findings replaced (a file
/// without findings leaves the record).
pub(crate) fn remember(record: &mut BranchFindings, update: &FindingsUpdate) {
    for (gate, files) in update {
        let findings = record.entry(gate.clone()).or_default();
        for (file, fingerprints) in files {
            match fingerprints.is_empty() {
                true => findings.remove(file),
                false => findings.insert(file.clone(), fingerprints.clone()),
            };
        }
        if findings.is_empty() {
            record.remove(gate);
        }
    }
}

impl Pending {
    /// What the warm answers it holds got wrong, one line per gate whose
    /// confirmation differed.
    pub(crate) fn contradictions(&self) -> Vec<(String, String)> {
        self.gates
            .iter()
            .filter_map(|(gate, awaited)| match &awaited.outcome {
                Outcome::Differed { said } => Some((gate.clone(), said.clone())),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn facts(head: &str) -> RunFacts {
        RunFacts {
            head_sha: head.into(),
            checked: BTreeSet::from(["a.py".to_string()]),
            failing: BTreeSet::new(),
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

    const TREE: Worktree<'static> = Worktree {
        in_project: &|_| true,
        committed: &|_, _| false,
    };

    fn waiting(jobs: &[(&str, &str)]) -> BranchState {
        BranchState {
            baseline_sha: Some("old".into()),
            failed_files: vec!["a.py".into()],
            pending: Some(Pending {
                run: "r".into(),
                at: "t".into(),
                gates: jobs
                    .iter()
                    .map(|(gate, job)| {
                        let awaited = Awaited {
                            job: job.to_string(),
                            files: 1,
                            outcome: Outcome::Waiting,
                        };
                        (gate.to_string(), awaited)
                    })
                    .collect(),
                facts: facts("new"),
                findings: BTreeMap::from([(
                    "mypy".to_string(),
                    BTreeMap::from([("a.py".to_string(), String::new())]),
                )]),
            }),
            ..BranchState::default()
        }
    }

    #[test]
    fn the_state_moves_only_once_every_gate_agreed() {
        let mut entry = waiting(&[("mypy", "j1"), ("pyright", "j2")]);
        assert!(record_outcome(&mut entry, "j1", &Outcome::Agreed));
        assert_eq!(settle(&mut entry, &TREE), None);
        assert_eq!(entry.baseline_sha.as_deref(), Some("old"));
        assert!(record_outcome(&mut entry, "j2", &Outcome::Agreed));
        let update = settle(&mut entry, &TREE).expect("settled");
        assert_eq!(entry.baseline_sha.as_deref(), Some("new"));
        assert!(entry.failed_files.is_empty());
        assert_eq!(entry.pending, None);
        assert!(update["mypy"]["a.py"].is_empty());
    }

    #[test]
    fn a_difference_or_another_job_moves_nothing() {
        let mut entry = waiting(&[("mypy", "j1")]);
        assert!(!record_outcome(&mut entry, "other", &Outcome::Agreed));
        assert_eq!(settle(&mut entry, &TREE), None);
        let differed = Outcome::Differed {
            said: "only warm: a.py:1".into(),
        };
        assert!(record_outcome(&mut entry, "j1", &differed));
        assert_eq!(settle(&mut entry, &TREE), None);
        assert_eq!(entry.baseline_sha.as_deref(), Some("old"));
        let pending = entry.pending.as_ref().unwrap();
        assert_eq!(
            pending.contradictions(),
            [("mypy".to_string(), "only warm: a.py:1".to_string())]
        );
        // A later agreement of the same job does not overwrite what it said.
        record_outcome(&mut entry, "j1", &Outcome::Agreed);
        assert_eq!(settle(&mut entry, &TREE), None);
    }

    #[test]
    fn remembering_replaces_each_file_and_drops_the_empty() {
        let mut record = BranchFindings::new();
        record.insert(
            "mypy".into(),
            BTreeMap::from([
                ("a.py".to_string(), "00000000000000aa".to_string()),
                ("b.py".to_string(), "00000000000000bb".to_string()),
            ]),
        );
        let update = BTreeMap::from([(
            "mypy".to_string(),
            BTreeMap::from([
                ("a.py".to_string(), String::new()),
                ("c.py".to_string(), "00000000000000cc".to_string()),
            ]),
        )]);
        remember(&mut record, &update);
        assert_eq!(record["mypy"].keys().collect::<Vec<_>>(), ["b.py", "c.py"]);
    }
}
