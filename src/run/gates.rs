//! Planning and running the gates on a resolved scope: the tools' own file
//! selections, the plans, the executor with the outcome stage's judge, and
//! what runs beside it (tool versions, the import graph on a whole-project
//! run).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::RunOptions;
use crate::config::{self, Config};
use crate::error::QgError;
use crate::exec::{self, ExecContext, Observer};
use crate::graph;
use crate::outcome::{GateResult, GateStatus, Verdicts};
use crate::plan;
use crate::scope::{self, Scope, ScopeMode};
use crate::selection::{self, ToolSelection};
use crate::shard;
use crate::state;
use crate::tools::version;
use crate::workspace::Workspace;

/// The gates' results, in config order, and per gate the files whose
/// findings it reported (what a baseline may call fixed).
pub(super) struct GateRuns<'a> {
    /// One result per gate.
    pub(super) results: Vec<GateResult>,
    /// Gate id → root-relative files it covered.
    pub(super) covered: plan::Covered<'a>,
    /// This run's share, when it is a shard of a run.
    pub(super) shard: Option<shard::Share>,
}

/// Every file of the project, when a gate needs them besides a partial
/// scope's (`project_wide`, or importers that cannot be known); a project
/// scope already has them.
pub(super) fn project_listing(
    workspace: &Workspace,
    config: &Config,
    gates: &[&config::Gate],
    scope: &Scope,
) -> Result<Option<Vec<String>>, QgError> {
    match needs_project_files(gates, scope) && scope.mode != ScopeMode::Project {
        true => scope::project_files(workspace, config).map(Some),
        false => Ok(None),
    }
}

fn needs_project_files(gates: &[&config::Gate], scope: &Scope) -> bool {
    gates
        .iter()
        .any(|g| g.project_wide || (g.importers && scope.importers_unknown.is_some()))
}

/// Plans every gate against the scope and runs them, in config order.
/// `listing` is [`project_listing`]'s.
pub(super) fn run_gates<'a>(
    workspace: &Workspace,
    config: &Config,
    gates: &[&'a config::Gate],
    scope: &'a Scope,
    listing: Option<&'a [String]>,
    options: &RunOptions,
    observer: &dyn Observer<GateResult>,
) -> Result<GateRuns<'a>, QgError> {
    let project_files: Option<Vec<&str>> = match (needs_project_files(gates, scope), listing) {
        (false, _) => None,
        (true, Some(listing)) => Some(listing.iter().map(String::as_str).collect()),
        (true, None) => Some(scope.paths().collect()),
    };
    let (selections, selection_warnings) = tool_selections(workspace, gates);
    let context = plan::Context {
        root: &workspace.root,
        project_files: project_files.as_deref(),
        selections: &selections,
        project_scope: &config.project_scope,
        argument_budget: crate::process::batch::argument_budget(&[]),
    };
    let mut plans = plan::plan(gates, scope, &context);
    let share = options.shard.map(|s| {
        let history = state::history::read(&workspace.root);
        let files = scope.files.len();
        shard::split(
            &mut plans,
            s,
            &workspace.root,
            &history,
            files,
            &config.hash,
        )
    });
    let ctx = ExecContext::from_env(&workspace.root, &config.artifact_logging, &options.cancel);
    let running: Vec<&config::Gate> = plans
        .iter()
        .filter(|p| p.skip_reason.is_none())
        .map(|p| p.gate)
        .collect();
    // Versions come from a cache; a new binary is asked while the gates run,
    // and a whole-project run brings the import graph up to date meanwhile.
    let (mut results, versions) = std::thread::scope(|threads| {
        let versions =
            threads.spawn(|| version::tool_versions(&running, &ctx.tools, options.records()));
        if scope.mode == ScopeMode::Project && options.records() {
            let cwd = workspace.cwd.clone();
            threads.spawn(|| refresh_import_graph(cwd, config, &running, &options.cancel));
        }
        let verdicts = Verdicts { tools: &ctx.tools };
        let results = exec::run_all(&plans, &ctx, options.jobs, &verdicts, observer);
        (results, versions.join().unwrap_or_default())
    });
    for result in &mut results {
        let ran = !matches!(result.status, GateStatus::Skipped);
        result.tool_version = versions.get(&result.id).filter(|_| ran).cloned();
        result
            .warnings
            .extend(selection_warnings.get(&result.id).cloned());
    }
    for (result, plan) in results.iter_mut().zip(&plans) {
        result.warnings.extend(plan.note.clone());
    }
    let covered = plans
        .iter()
        .filter(|p| p.skip_reason.is_none())
        .map(|p| {
            let files = p.files.iter().copied().filter(|f| p.reports(f)).collect();
            (p.gate.id.clone(), files)
        })
        .collect();
    Ok(GateRuns {
        results,
        covered,
        shard: share,
    })
}

/// Each gate's tool's own choice of files, read from its config; a config
/// that cannot be read is a warning of its gate (the tool's defaults are
/// assumed; the tool itself will say more).
fn tool_selections(
    workspace: &Workspace,
    gates: &[&config::Gate],
) -> (BTreeMap<String, ToolSelection>, BTreeMap<String, String>) {
    let mut selections = BTreeMap::new();
    let mut warnings = BTreeMap::new();
    for gate in gates {
        let Some(spec) = &gate.selection else {
            continue;
        };
        let selection = match selection::read(&workspace.root, spec) {
            Ok(selection) => selection,
            Err((selection, why)) => {
                warnings.insert(gate.id.clone(), why);
                selection
            }
        };
        selections.insert(gate.id.clone(), selection);
    }
    (selections, warnings)
}

/// Builds or updates the cached import graph when a gate checks importers:
/// a whole-project run pays for it while the tools run, so the next partial
/// run finds it ready (and knows what a file deleted in between imported).
fn refresh_import_graph(
    cwd: PathBuf,
    config: &Config,
    gates: &[&config::Gate],
    cancel: &crate::process::Cancel,
) {
    let Some(spec) = &config.import_graph else {
        return;
    };
    if !gates.iter().any(|g| g.importers) {
        return;
    }
    // A repository handle of its own: one may not be shared between threads.
    let Ok(workspace) = Workspace::discover(&cwd) else {
        return;
    };
    let request = graph::Request {
        ws: &workspace,
        config,
        spec,
        seeds: BTreeSet::new(),
        deleted: BTreeSet::new(),
        in_scope: BTreeSet::new(),
        diff: None,
        remember: true,
        cancel,
    };
    // A graph that cannot be built now is built by the next partial run.
    let _ = graph::refresh(&request);
}
