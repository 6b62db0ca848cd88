//! What a run leaves behind: the branch's state (only an `auto` run of
//! every gate moves it; one answered warm holds it until a cold run has
//! confirmed the answers, see [`crate::state::pending`]), the record of
//! findings (cold and confirmed answers only) and a line of history.

use std::collections::{BTreeMap, BTreeSet};

use super::{ResolvedScope, RunOptions};
use crate::baseline::progress;
use crate::config::Config;
use crate::error::QgError;
use crate::git::{self, Head};
use crate::outcome::{GateResult, GateStatus, Progress};
use crate::report::RunReport;
use crate::scope::settings::{self, SettingsDigests};
use crate::scope::{Reason, Scope, ScopeMode};
use crate::state::findings::{self, BranchFindings};
use crate::state::history::{self, GateRecord, RunRecord};
use crate::state::pending::{self, Awaited, Pending};
use crate::state::{transition, RunFacts, StateStore, Worktree};
use crate::workspace::Workspace;

/// Whether this run moves the state, and the uncommitted content of its
/// files as it was before the tools ran.
pub(super) struct StatePlan {
    dirty_blobs: Option<BTreeMap<String, String>>,
    /// The gates' settings digests that differ from HEAD's.
    tool_settings: SettingsDigests,
}

impl StatePlan {
    /// Whether the run moves the branch's state.
    pub(super) fn moves(&self) -> bool {
        self.dirty_blobs.is_some()
    }
}

/// Decides whether the run writes state and, if so, takes the blob ids of
/// its dirty files now.
pub(super) fn plan(
    options: &RunOptions,
    config: &Config,
    workspace: &Workspace,
    resolved: &ResolvedScope,
) -> Result<StatePlan, QgError> {
    if !writes_state(options, config, resolved) {
        return Ok(StatePlan {
            dirty_blobs: None,
            tool_settings: SettingsDigests::new(),
        });
    }
    let head = resolved.head.as_ref().and_then(|h| h.commit.as_deref());
    let tool_settings = match (&workspace.repo, head) {
        (Some(repo), Some(head)) => {
            settings::uncommitted(repo, config, head, &resolved.scope.settings_now)
        }
        _ => SettingsDigests::new(),
    };
    Ok(StatePlan {
        dirty_blobs: Some(dirty_blobs(workspace, &resolved.scope)?),
        tool_settings,
    })
}

/// Records the run: the state when it moves (held, when an answer awaits
/// its confirmation), a history line when the run `records` (not
/// `--no-state`, not a shard); what cannot be saved becomes a warning of
/// the report. Returns the branch whose state it held, if it did.
pub(super) fn record(
    workspace: &Workspace,
    config: &Config,
    resolved: &ResolvedScope,
    report: &mut RunReport,
    covered: &crate::plan::Covered<'_>,
    plan: StatePlan,
    records: bool,
) -> Option<String> {
    let mut held = None;
    if let Some(dirty_blobs) = plan.dirty_blobs {
        let found = Found { report, covered };
        match record_state(
            workspace,
            config,
            resolved,
            found,
            dirty_blobs,
            plan.tool_settings,
        ) {
            Ok((warnings, branch)) => {
                report.warnings.extend(warnings);
                held = branch;
            }
            Err(e) => report.warnings.push(format!(
                "state not saved, the next run will check more than needed: {e}"
            )),
        }
    } else if records && !report.contradicted.is_empty() {
        forget_contradicted(workspace, resolved);
    }
    if records {
        let branch = resolved.head.as_ref().map(|h| h.branch.clone());
        let record = history_record(config, branch, report);
        if let Err(e) = history::append(&workspace.root, &record) {
            report
                .warnings
                .push(format!("run not added to {}: {e}", history::HISTORY_FILE));
        }
    }
    held
}

/// Drops the held state this run said was contradicted (it never moves,
/// and has been told): a run that moves no state of its own.
fn forget_contradicted(workspace: &Workspace, resolved: &ResolvedScope) {
    let (Some(head), Some(told)) = (&resolved.head, &resolved.held) else {
        return;
    };
    let _ = StateStore::new(&workspace.root).update_branch(&head.branch, |entry| {
        let mut entry = entry?;
        if entry.pending.as_ref().is_some_and(|p| p.run == told.run) {
            entry.pending = None;
        }
        Some(entry)
    });
}

/// Adds a run that is not this process's own — the shards of a run put
/// back together (`qg merge --record`) — to the history of the project at
/// `workspace`, so the next shards weigh their split by its durations.
pub(crate) fn record_merged(
    workspace: &Workspace,
    config: &Config,
    report: &RunReport,
) -> Result<(), QgError> {
    let branch = match &workspace.repo {
        Some(repo) => Some(repo.head()?.branch),
        None => None,
    };
    let record = history_record(config, branch, report);
    history::append(&workspace.root, &record).map_err(|e| {
        QgError::io(
            format!("cannot add the run to {}", history::HISTORY_FILE),
            e,
        )
    })
}

/// Only an `auto` run of every active gate moves state (`--no-state` and
/// `--shard` turn it off; a `--gate` subset, or a shard's share, proves
/// nothing about the rest).
fn writes_state(options: &RunOptions, config: &Config, resolved: &ResolvedScope) -> bool {
    let all_gates = options.gates.is_empty()
        || config
            .active_gates
            .iter()
            .all(|id| options.gates.contains(id));
    options.records()
        && resolved.scope.requested == ScopeMode::Auto
        && all_gates
        && resolved.head.as_ref().is_some_and(|h| h.commit.is_some())
}

/// Blob ids of in-scope files whose content differs from HEAD, taken before
/// the tools run so an edit made during the run is never marked clean.
fn dirty_blobs(workspace: &Workspace, scope: &Scope) -> Result<BTreeMap<String, String>, QgError> {
    let Some(repo) = &workspace.repo else {
        return Ok(BTreeMap::new());
    };
    if scope.files.is_empty() {
        return Ok(BTreeMap::new());
    }
    let head_blobs = repo.head_blobs();
    let head_sha = repo.head()?.commit;
    let candidates: BTreeSet<&str> =
        if scope.mode == ScopeMode::Auto && scope.baseline_sha == head_sha {
            // The scope's own diff was taken against HEAD: reuse it.
            scope
                .files
                .iter()
                .filter(|f| {
                    f.reasons
                        .iter()
                        .any(|r| matches!(r, Reason::Changed | Reason::Untracked))
                })
                .map(|f| f.path.as_str())
                .collect()
        } else {
            let changes = repo.changes_since(head_sha.as_deref())?;
            scope
                .paths()
                .filter(|p| changes.changed.contains(*p) || changes.untracked.contains(*p))
                .collect()
        };
    // A file brought back to HEAD's content and mode (a stash, a checkout)
    // is not dirty; one whose only change is its mode is, like any other.
    Ok(candidates
        .into_iter()
        .filter_map(|p| {
            let file = git::worktree_file(&crate::file_name::join(&workspace.root, p))?;
            (head_blobs.file(p).as_ref() != Some(&file)).then(|| (p.to_string(), file.clean_key()))
        })
        .collect())
}

/// What a run found: its report, and the files each gate covered.
#[derive(Clone, Copy)]
struct Found<'r, 'c> {
    report: &'r RunReport,
    covered: &'r crate::plan::Covered<'c>,
}

/// Moves the branch's state, or holds it until the run's unconfirmed
/// answers are confirmed; returns the store's warnings, and the branch
/// when it held the state.
fn record_state(
    workspace: &Workspace,
    config: &Config,
    resolved: &ResolvedScope,
    found: Found<'_, '_>,
    dirty_blobs: BTreeMap<String, String>,
    tool_settings: SettingsDigests,
) -> Result<(Vec<String>, Option<String>), QgError> {
    let Some(Head {
        branch,
        commit: Some(head),
    }) = &resolved.head
    else {
        return Ok((Vec::new(), None));
    };
    let report = found.report;
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let facts = RunFacts {
        head_sha: head.to_string(),
        checked: resolved.scope.paths().map(str::to_string).collect(),
        failing: failing_files(report),
        any_error: report.gates.iter().any(|g| g.status == GateStatus::Error),
        full_check: report.scope.mode == ScopeMode::Project,
        fell_back: report.scope.fallback_reason.is_some(),
        dirty_blobs,
        config_hash: config.hash.clone(),
        tools: resolved.tools.clone(),
        tool_settings,
        now: now.clone(),
    };
    let store = StateStore::new(&workspace.root);
    let held = held_state(found, facts.clone(), now);
    let holds = held.is_some();
    match held {
        Some(pending) => store.update_branch(branch, |previous| {
            let mut entry = previous.unwrap_or_default();
            entry.pending = Some(pending);
            Some(entry)
        })?,
        None => with_worktree(workspace, config, |tree| {
            store.update_branch(branch, |previous| Some(transition(previous, &facts, tree)))
        })?,
    }
    Ok((store.take_warnings(), holds.then(|| branch.clone())))
}

/// The state a run holds for its unconfirmed answers, if it has any: the
/// transition it would make, each answer's confirmation, and the findings
/// to remember once confirmed.
fn held_state(found: Found<'_, '_>, facts: RunFacts, now: String) -> Option<Pending> {
    let report = found.report;
    let unconfirmed: Vec<_> = report
        .gates
        .iter()
        .filter_map(|g| Some((g, g.unconfirmed.as_ref()?)))
        .collect();
    if unconfirmed.is_empty() {
        return None;
    }
    let gates = unconfirmed
        .iter()
        .map(|(gate, unconfirmed)| {
            let awaited = Awaited {
                job: unconfirmed.job.clone(),
                files: unconfirmed.files,
                outcome: Default::default(),
            };
            (gate.id.clone(), awaited)
        })
        .collect();
    let findings = unconfirmed
        .iter()
        .map(|(gate, _)| {
            let none = BTreeSet::new();
            let files = found.covered.get(&gate.id).unwrap_or(&none);
            (gate.id.clone(), progress::remembered(gate, files))
        })
        .collect();
    Some(Pending {
        run: format!("{now}-{}", std::process::id()),
        at: now,
        gates,
        facts,
        findings,
    })
}

/// Calls `f` with what a transition may ask about the project's files: in
/// its scope and on disk; in HEAD with exactly this clean key.
pub(super) fn with_worktree<T>(
    workspace: &Workspace,
    config: &Config,
    f: impl FnOnce(&Worktree<'_>) -> T,
) -> T {
    let root = &workspace.root;
    let head_blobs = workspace.repo.as_ref().map(|r| r.head_blobs());
    let tree = Worktree {
        in_project: &|path: &str| {
            config.project_scope.matches(path) && crate::file_name::join(root, path).is_file()
        },
        // HEAD holds what passed only with the mode it passed with.
        committed: &|path: &str, key: &str| {
            head_blobs
                .as_ref()
                .and_then(|h| h.file(path))
                .is_some_and(|head| head.clean_key() == key)
        },
    };
    f(&tree)
}

/// What the history keeps of a run.
fn history_record(config: &Config, branch: Option<String>, report: &RunReport) -> RunRecord {
    let gates = report
        .gates
        .iter()
        .map(|g| GateRecord {
            id: g.id.clone(),
            status: g.status.as_str().to_string(),
            violations: g.violations.len(),
            unresolved_imports: config
                .gates
                .get(&g.id)
                .and_then(|gate| gate.unresolved_imports.as_ref())
                .map_or(0, |u| crate::outcome::count_unresolved_imports(g, &u.codes)),
            duration_ms: g.duration_ms,
            files: g.files_checked,
        })
        .collect();
    RunRecord {
        at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        branch,
        scope: report.scope.mode.as_str().to_string(),
        requested: report.scope.requested.as_str().to_string(),
        files: report.scope.files_checked,
        duration_ms: report.total_ms,
        gates,
    }
}

/// Root-relative files with a violation that fails its gate (the
/// baseline's known findings fail nothing: their files need no re-check).
fn failing_files(report: &RunReport) -> BTreeSet<String> {
    report
        .gates
        .iter()
        .flat_map(|gate| {
            gate.violations
                .iter()
                .filter(|v| v.fails_gate(gate.fail_on))
                .filter_map(|v| v.file.clone())
        })
        .filter(|f| !f.starts_with('/'))
        .collect()
}

/// Compares each gate's findings with what the last run that checked the
/// same files found on this branch — as it was shown: the confirmed record
/// with what a held state holds — and remembers this run's cold and
/// confirmed answers when it `records` (an unconfirmed one is remembered
/// by its held state, once confirmed). A record that cannot be saved costs
/// the next run's comparison only, so it is a warning.
pub(super) fn compare_with_last_run(
    workspace: &Workspace,
    resolved: &ResolvedScope,
    results: &mut [GateResult],
    covered: &crate::plan::Covered<'_>,
    records: bool,
    warnings: &mut Vec<String>,
) -> Option<Progress> {
    let branch = findings::branch_key(resolved.head.as_ref());
    let mut known = findings::read(&workspace.root);
    let confirmed = known.branches.get(&branch);
    let shown: Option<BranchFindings> = resolved.held.as_ref().map(|held| {
        let mut shown = confirmed.cloned().unwrap_or_default();
        pending::remember(&mut shown, &held.findings);
        shown
    });
    let total = progress::compare(shown.as_ref().or(confirmed), results, covered);
    let vouched = results.iter().filter(|r| r.unconfirmed.is_none());
    let updated = progress::remember_all(confirmed, vouched, covered);
    if records && confirmed != Some(&updated) {
        known.branches.insert(branch, updated);
        if let Err(e) = findings::write(&workspace.root, &known) {
            warnings.push(format!(
                "findings not saved to {}: {e}",
                findings::FINDINGS_FILE
            ));
        }
    }
    total
}
