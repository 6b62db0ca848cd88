//! Planning and running the gates on a resolved scope: the tools' own file
//! selections, the plans, the executor with the outcome stage's judge, and
//! what runs beside it (tool versions, the import graph on a whole-project
//! run).

use std::collections::{BTreeMap, BTreeSet};

use super::cached::{self, RunCache};
use super::compare::{Comparison, TreeStamp};
use super::confirm::{self, Job};
use super::installed::{installed_roots, under_any};
use super::project::tool_selections;
pub(super) use super::project::Project;
use super::{DaemonUse, RunOptions};
use crate::config::{self, Config};
use crate::error::QgError;
use crate::exec::{self, ExecContext, Observer, WarmRequests};
use crate::graph;
use crate::outcome::{GateResult, GateStatus, Verdicts};
use crate::plan::{self, GatePlan};
use crate::scope::{self, Scope, ScopeMode};
use crate::selection::ToolSelection;
use crate::shard;
use crate::state;
use crate::tools::version;
use crate::tools::Toolbox;
use crate::warm::{self, WarmPlan};
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
    /// The confirmations of its warm answers, for their daemons once the
    /// run's held state is written.
    pub(super) jobs: Vec<Job>,
    /// What the run says about the result cache's stores.
    pub(super) warnings: Vec<String>,
}

/// What the confirmation of a run's warm answers needs to know of the run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Vouching<'b> {
    /// The branch whose findings record the answers are compared with.
    pub(super) branch: &'b str,
    /// Whether the run moves the branch's state on its answers' word (an
    /// `auto` run that records): then every file they covered is
    /// confirmed, not only those whose findings changed.
    pub(super) state_moves: bool,
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
    gates.iter().any(|g| {
        g.project_wide
            || (g.importers && scope.importers_unknown.is_some())
            || scope.whole_project.contains_key(&g.id)
    })
}

/// Plans every gate against the scope and runs them, in config order.
/// `listing` is [`project_listing`]'s.
pub(super) fn run_gates<'a>(
    project: Project<'_>,
    gates: &[&'a config::Gate],
    scope: &'a Scope,
    listing: Option<&'a [String]>,
    options: &RunOptions,
    vouching: Vouching<'_>,
    observer: &dyn Observer<GateResult>,
) -> Result<GateRuns<'a>, QgError> {
    let Project {
        workspace,
        config,
        tools,
    } = project;
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
    super::bases::hand_package_bases(workspace, config, &mut plans, &selections, scope, listing)?;
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
    let mut ctx = ExecContext::new(tools.clone(), &config.artifact_logging);
    let verifying = options.daemons == DaemonUse::Verify;
    let mut unasked = Vec::new();
    if options.daemons != DaemonUse::Ignore {
        (ctx.warm, unasked) = warm_requests(workspace, config, &plans, verifying, scope, tools);
    }
    let running: Vec<&config::Gate> = plans
        .iter()
        .filter(|p| p.skip_reason.is_none())
        .map(|p| p.gate)
        .collect();
    let cache = cached::store(&options.cache).and_then(|store| {
        if cached::wants_graph(&plans, ctx.warm.as_ref()) {
            cached::refresh_import_graph(workspace.cwd.clone(), config, &running, tools);
        }
        let asking = cached::Asking {
            warm: ctx.warm.as_ref(),
            verify: verifying,
            remember: options.records(),
            config: options.config.as_deref(),
            sample: true,
        };
        RunCache::look_up(project, store, &mut plans, &asking)
    });
    // A gate the cache answers whole asks no daemon: its answer is cold.
    if let (Some(cache), Some(warm)) = (&cache, ctx.warm.as_mut()) {
        cache.cut_warm_requests(warm);
    }
    if ctx.warm.as_ref().is_some_and(|w| w.plans.is_empty()) {
        ctx.warm = None;
    }
    // A comparison is of one tree: the files as the warm answers saw them.
    let before = ctx
        .warm
        .is_some()
        .then(|| TreeStamp::take(workspace, config));
    let deferring = cached::Deferring::new(observer, cache.as_ref());
    // Versions come from a cache; a new binary is asked while the gates run,
    // and a whole-project run brings the import graph up to date meanwhile.
    let (mut results, versions, jobs) = std::thread::scope(|threads| {
        // Threads only for work there is: one costs a run a few hundred
        // microseconds to start and stop on a slow machine.
        let asks_versions = running.iter().any(|g| g.version_args.is_some());
        let versions = asks_versions.then(|| {
            threads.spawn(|| version::tool_versions(&running, &ctx.tools, options.records()))
        });
        let graph_wanted = config.import_graph.is_some() && running.iter().any(|g| g.importers);
        if scope.mode == ScopeMode::Project && options.records() && graph_wanted {
            let cwd = workspace.cwd.clone();
            threads.spawn(|| cached::refresh_import_graph(cwd, config, &running, &ctx.tools));
        }
        let verdicts = Verdicts { tools: &ctx.tools };
        let answered_warm = |id: &str| ctx.warm.as_ref().is_some_and(|w| w.plans.contains_key(id));
        let every_file = || match listing {
            Some(listing) => listing.to_vec(),
            None => scope::project_files(workspace, config).unwrap_or_default(),
        };
        super::settle::after_last_write(&workspace.root, &plans, every_file, answered_warm);
        let mut results = exec::run_all(&plans, &ctx, options.jobs, &verdicts, &deferring);
        if let Some(cache) = &cache {
            cache.fold_into_warm_answers(&mut results, &plans);
        }
        let mut jobs = Vec::new();
        if let (Some(warm), Some(before)) = (&ctx.warm, &before) {
            let project = Project {
                workspace,
                config,
                tools,
            };
            let checking = Checking {
                project,
                plans: &plans,
                selections: &selections,
                warm,
                options,
                before,
            };
            jobs = checking.check(&mut results, scope, vouching)?;
        }
        let versions = versions
            .map(|v| v.join().unwrap_or_default())
            .unwrap_or_default();
        Ok::<_, QgError>((results, versions, jobs))
    })?;
    let cache_warnings = match cache {
        Some(cache) => cache.fold_in(&mut results, &mut plans, project),
        None => Vec::new(),
    };
    deferring.finish(&results);
    for result in &mut results {
        let ran = !matches!(result.status, GateStatus::Skipped);
        result.tool_version = versions.get(&result.id).filter(|_| ran).cloned();
        result
            .warnings
            .extend(selection_warnings.get(&result.id).cloned());
    }
    for (result, plan) in results.iter_mut().zip(&plans) {
        result.warnings.extend(plan.note.clone());
        result.warnings.extend(too_old(plan.gate, result, tools));
    }
    if options.daemons != DaemonUse::Ignore {
        for (gate, why) in unasked {
            if let Some(result) = results.iter_mut().find(|r| r.id == gate && !r.warm) {
                result.cold_because.get_or_insert(why);
            }
        }
        for (gate, why) in cold_standings(workspace, config, &plans, tools, &results) {
            if let Some(result) = results.iter_mut().find(|r| r.id == gate) {
                result.warn_answered_cold(&why);
            }
        }
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
        jobs,
        warnings: cache_warnings,
    })
}

/// What compares or confirms a run's warm answers.
struct Checking<'c, 'p> {
    project: Project<'c>,
    plans: &'c [GatePlan<'p>],
    selections: &'c BTreeMap<String, ToolSelection>,
    warm: &'c WarmRequests,
    options: &'c RunOptions,
    before: &'c TreeStamp,
}

impl Checking<'_, '_> {
    /// `--verify`: every warm answer compared with a cold run now. Else
    /// each answer a cold run must confirm is confirmed now (`--confirm`)
    /// or marked unconfirmed, its job returned for its daemon.
    fn check(
        &self,
        results: &mut [GateResult],
        scope: &Scope,
        vouching: Vouching<'_>,
    ) -> Result<Vec<Job>, QgError> {
        let Project {
            workspace, config, ..
        } = self.project;
        if self.options.daemons == DaemonUse::Verify {
            let answered = (0..results.len()).filter(|i| results[*i].warm).collect();
            let comparison = Comparison {
                workspace,
                config,
                plans: self.plans,
                selections: self.selections,
                warm: self.warm,
                options: self.options,
                tools: self.project.tools,
                before: self.before,
                whole: scope.mode == ScopeMode::Project,
            };
            comparison.compare(results, answered);
            return Ok(Vec::new());
        }
        // `--confirm` vouches for every file, whatever the scope: it is
        // what a commit is made on.
        let wanted = confirm::wanted(
            workspace,
            results,
            self.plans,
            vouching.branch,
            vouching.state_moves || self.options.confirm,
        );
        let wanted = confirm::already_confirmed(
            &workspace.root,
            results,
            wanted,
            self.warm,
            self.before.snapshot(),
        );
        let foreground = confirm::Foreground {
            project: self.project,
            plans: self.plans,
            selections: self.selections,
            warm: self.warm,
            jobs: self.options.jobs,
            before: self.before,
        };
        if self.options.confirm {
            foreground.confirm(results, wanted)?;
            return Ok(Vec::new());
        }
        // A daemon whose answers have gone unconfirmed too long (files
        // kept changing during each cold run) has this one confirmed now.
        let (now, later) = confirm::unsettled(&workspace.root, results, wanted, self.warm);
        foreground.confirm(results, now)?;
        Ok(confirm::hold(
            results,
            later,
            self.warm,
            self.before.snapshot(),
        ))
    }
}

/// A tool older than its gate's command needs (`min_version`), and how to
/// upgrade it: its error (mypy 1.10's "unrecognized arguments:
/// --output=json") then explains itself.
fn too_old(gate: &config::Gate, result: &GateResult, tools: &Toolbox<'_>) -> Option<String> {
    let (line, min) = (
        result.tool_version.as_deref()?,
        gate.min_version.as_deref()?,
    );
    let why = version::too_old(line, min)?;
    Some(format!(
        "{why}: upgrade it ({})",
        tools.upgrade_hint(gate, min)
    ))
}

/// What each gate with a live daemon asks it: the files a cold run of the
/// gate's plan reports. A tool whose cold run also reports the modules its
/// files import needs the import graph to say which; without one, the gate
/// runs cold, and the second list says why for each such gate.
fn warm_requests(
    workspace: &Workspace,
    config: &Config,
    plans: &[GatePlan<'_>],
    verify: bool,
    scope: &Scope,
    tools: &Toolbox<'_>,
) -> (Option<WarmRequests>, Vec<(String, String)>) {
    let mut unasked = Vec::new();
    let project = scope.mode == ScopeMode::Project;
    let mut requests = std::collections::BTreeMap::new();
    let mut installed: Option<Vec<String>> = None;
    let mut left_out: Option<BTreeSet<String>> = None;
    for plan in plans.iter().filter(|p| p.skip_reason.is_none()) {
        let gate = plan.gate;
        let Some(spec) = &gate.daemon else { continue };
        if !warm::client::may_have_daemon(&workspace.root, gate) {
            continue;
        }
        // On a project scope, a gate around workspace members names every
        // file it owns instead of running the tool's own run: as complete,
        // the members' files being left out by the plan itself.
        let whole = plan.native_args.is_some() || (project && !gate.left_to_members.is_empty());
        let mut report: BTreeSet<String> = plan.files.iter().map(|f| f.to_string()).collect();
        if spec.reports_imported && !whole {
            let Some(imported) = graph::imported(workspace, plan.files.iter().copied()) else {
                unasked.push((gate.id.clone(), NO_GRAPH.to_string()));
                continue;
            };
            let installed = match spec.silences_installed {
                true => installed
                    .get_or_insert_with(|| installed_roots(workspace, tools))
                    .clone(),
                false => Vec::new(),
            };
            report.extend(imported.into_iter().filter(|f| !under_any(f, &installed)));
        }
        let left_out = match gate.importers && !whole {
            true => left_out
                .get_or_insert_with(|| left_out_importers(workspace, scope))
                .iter()
                .filter(|f| !report.contains(*f) && gate.scope.matches(f))
                .cloned()
                .collect(),
            false => BTreeSet::new(),
        };
        let key = warm::key::DaemonKey::now(&workspace.root, config, gate, tools).digest();
        requests.insert(
            gate.id.clone(),
            WarmPlan {
                report,
                whole,
                left_out,
                key,
            },
        );
    }
    let requests = (!requests.is_empty()).then_some(WarmRequests {
        plans: requests,
        verify,
    });
    (requests, unasked)
}

/// Why a gate whose daemon reports what its files import is not asked
/// without the import graph: its answer could not be matched with a cold
/// run of the same files.
const NO_GRAPH: &str =
    "the import graph is unknown, and a cold run of these files also reports the modules they import";

/// The importers of the scope's body-only edits it does not check
/// (`interface_aware_importers`), as the cached import graph knows them.
fn left_out_importers(workspace: &Workspace, scope: &Scope) -> BTreeSet<String> {
    if scope.body_only.is_empty() {
        return BTreeSet::new();
    }
    let in_scope: BTreeSet<&str> = scope.paths().collect();
    graph::importers_known(workspace, &scope.body_only)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !in_scope.contains(f.as_str()))
        .collect()
}

/// Why a warm gate without a live daemon answers cold, when qg remembers
/// why for the key a daemon would have now (a drift found earlier, a tool
/// that refused to start): every run says so, not only the first.
fn cold_standings(
    workspace: &Workspace,
    config: &Config,
    plans: &[GatePlan<'_>],
    tools: &Toolbox<'_>,
    results: &[GateResult],
) -> Vec<(String, String)> {
    // A gate answered cold that has not said why (no daemon, or one
    // restarting for this very key).
    let unexplained = |gate: &str| {
        results
            .iter()
            .any(|r| r.id == gate && !r.warm && r.answered_cold_warning().is_none())
    };
    // A daemon that could not start is worth a word while the project is
    // kept warm (another of its daemons runs): once the user has stopped
    // them all, every cold run saying so is noise (`qg doctor` still does).
    let kept_warm = std::cell::OnceCell::new();
    let kept_warm = || {
        *kept_warm.get_or_init(|| {
            warm::slot::all(&workspace.root)
                .iter()
                .any(warm::slot::Slot::is_alive)
        })
    };
    plans
        .iter()
        .filter(|p| p.skip_reason.is_none() && p.gate.daemon.is_some())
        .filter(|p| unexplained(&p.gate.id))
        .filter(|p| warm::standing::read(&workspace.root, &p.gate.id).is_some())
        .filter_map(|p| {
            let key = warm::key::DaemonKey::now(&workspace.root, config, p.gate, tools).digest();
            let standing = warm::standing::for_key(&workspace.root, &p.gate.id, &key)?;
            (standing.drifted() || kept_warm()).then(|| (p.gate.id.clone(), standing.describe()))
        })
        .collect()
}
