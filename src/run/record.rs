//! What a run leaves behind: the branch's state (only an `auto` run of
//! every gate moves it) and a line of history.

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
use crate::state::findings;
use crate::state::history::{self, GateRecord, RunRecord};
use crate::state::{transition, RunFacts, StateStore, Worktree};
use crate::workspace::Workspace;

/// Whether this run moves the state, and the uncommitted content of its
/// files as it was before the tools ran.
pub(super) struct StatePlan {
    dirty_blobs: Option<BTreeMap<String, String>>,
    /// The gates' settings digests that differ from HEAD's.
    tool_settings: SettingsDigests,
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

/// Records the run: the state when it moves, a history line when the run
/// `records` (not `--no-state`, not a shard); what cannot be saved becomes
/// a warning of the report.
pub(super) fn record(
    workspace: &Workspace,
    config: &Config,
    resolved: &ResolvedScope,
    report: &mut RunReport,
    plan: StatePlan,
    records: bool,
) {
    if let Some(dirty_blobs) = plan.dirty_blobs {
        match record_state(
            workspace,
            config,
            resolved,
            report,
            dirty_blobs,
            plan.tool_settings,
        ) {
            Ok(warnings) => report.warnings.extend(warnings),
            Err(e) => report.warnings.push(format!(
                "state not saved, the next run will check more than needed: {e}"
            )),
        }
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

fn record_state(
    workspace: &Workspace,
    config: &Config,
    resolved: &ResolvedScope,
    report: &RunReport,
    dirty_blobs: BTreeMap<String, String>,
    tool_settings: SettingsDigests,
) -> Result<Vec<String>, QgError> {
    let Some(Head {
        branch,
        commit: Some(head),
    }) = &resolved.head
    else {
        return Ok(Vec::new());
    };
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
        now: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
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
    let store = StateStore::new(root);
    store.update_branch(branch, |previous| Some(transition(previous, &facts, &tree)))?;
    Ok(store.take_warnings())
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
/// same files found on this branch, and remembers this run's when it
/// `records`. A record that cannot be saved costs the next run's
/// comparison only, so it is a warning.
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
    let (updated, total) = progress::compare(known.branches.get(&branch), results, covered);
    if records && known.branches.get(&branch) != Some(&updated) {
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
