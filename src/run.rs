//! A run as a library call: options in, a [`RunReport`] value out. Reports
//! render that value; the CLI only parses flags and picks a renderer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::{self, Config};
use crate::error::QgError;
use crate::exec::{self, ExecContext, Observer};
use crate::git::{self, Head};
use crate::graph;
use crate::outcome::{GateResult, GateStatus, Verdicts};
use crate::plan;
use crate::report::RunReport;
use crate::scope::{self, Baseline, Reason, Scope, ScopeMode, ScopeRequest};
use crate::selection::{self, ToolSelection};
use crate::state::history::{self, GateRecord, RunRecord};
use crate::state::{transition, BranchState, RunFacts, StateStore, ToolStamp, Worktree};
use crate::tools::{resolve, version, Toolbox};
use crate::workspace::Workspace;

/// What `qg run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Directory qg was started in.
    pub cwd: PathBuf,
    /// `--config`.
    pub config: Option<PathBuf>,
    /// `--scope` and positional paths.
    pub scope: ScopeRequest,
    /// `--gate` ids (empty = `active_gates`).
    pub gates: Vec<String>,
    /// Maximum tools running at once.
    pub jobs: usize,
    /// `--no-state`.
    pub no_state: bool,
}

/// Loads the workspace and config for a command.
pub fn prepare(cwd: &Path, config: Option<&Path>) -> Result<(Workspace, Config), QgError> {
    let workspace = Workspace::discover(cwd)?;
    let config = config::load(&workspace.root, config)?;
    Ok((workspace, config))
}

/// A resolved scope with the git and state facts it was resolved from.
pub struct ResolvedScope {
    /// The scope.
    pub scope: Scope,
    /// HEAD, when in a repository.
    pub head: Option<Head>,
    /// This branch's state entry, when `auto` read one.
    pub state: Option<BranchState>,
    /// The tool each active gate resolves to now.
    pub tools: BTreeMap<String, ToolStamp>,
}

/// Resolves the scope, reading this branch's state for `auto`; on a
/// partial scope, adds the importers of what changed when one of `gates`
/// checks importers. `remember`: whether caches may be written.
pub fn resolve_scope(
    workspace: &Workspace,
    config: &Config,
    request: &ScopeRequest,
    gates: &[&config::Gate],
    remember: bool,
) -> Result<ResolvedScope, QgError> {
    let auto = request.effective_mode()? == ScopeMode::Auto;
    let head = workspace.repo.as_ref().map(|r| r.head()).transpose()?;
    let state = match (&head, auto) {
        (Some(head), true) => StateStore::new(&workspace.root).load_branch(&head.branch)?,
        _ => None,
    };
    let tools = if auto {
        tool_stamps(workspace, config)
    } else {
        BTreeMap::new()
    };
    let baseline = Baseline {
        state: state.as_ref(),
        tools: tools.clone(),
    };
    let mut scope = scope::resolve(workspace, config, request, &baseline)?;
    if scope.mode != ScopeMode::Project && gates.iter().any(|g| g.importers) {
        add_importers(workspace, config, &mut scope, remember);
    }
    Ok(ResolvedScope {
        scope,
        head,
        state,
        tools,
    })
}

/// Adds every project file that imports a changed or deleted file (reason
/// `imports_changed`), or records why they cannot be known.
fn add_importers(workspace: &Workspace, config: &Config, scope: &mut Scope, remember: bool) {
    let Some(spec) = &config.import_graph else {
        return;
    };
    let seeds: BTreeSet<String> = scope
        .files
        .iter()
        .filter(|f| {
            f.reasons
                .iter()
                .any(|r| matches!(r, Reason::Changed | Reason::Untracked | Reason::Explicit))
        })
        .map(|f| f.path.clone())
        .collect();
    let deleted = scope
        .diff
        .as_ref()
        .map(|d| d.deleted.clone())
        .unwrap_or_default();
    if seeds.is_empty() && deleted.is_empty() {
        return;
    }
    let request = graph::Request {
        ws: workspace,
        config,
        spec,
        seeds,
        deleted,
        in_scope: scope.paths().map(str::to_string).collect(),
        diff: scope.diff.as_ref(),
        remember,
    };
    match graph::importers(&request) {
        Ok(found) => scope::add_importers(scope, found),
        Err(reason) => scope.importers_unknown = Some(reason),
    }
}

/// What each active gate's `command[0]` resolves to now.
fn tool_stamps(workspace: &Workspace, config: &Config) -> BTreeMap<String, ToolStamp> {
    let tools = Toolbox::from_env(&workspace.root);
    config
        .active_gates
        .iter()
        .map(|id| {
            (
                id.clone(),
                resolve::stamp(&tools.resolve(&config.gates[id])),
            )
        })
        .collect()
}

/// Runs the configured gates on the resolved scope, then moves the state.
pub fn run(
    options: &RunOptions,
    observer: &dyn Observer<GateResult>,
) -> Result<RunReport, QgError> {
    let started = Instant::now();
    let (workspace, config) = prepare(&options.cwd, options.config.as_deref())?;
    let gates = plan::select_gates(&config, &options.gates)?;
    let resolved = resolve_scope(
        &workspace,
        &config,
        &options.scope,
        &gates,
        !options.no_state,
    )?;
    let writes_state = writes_state(options, &config, &resolved);
    let dirty_blobs = match writes_state {
        true => dirty_blobs(&workspace, &resolved.scope)?,
        false => BTreeMap::new(),
    };
    let whole_project = gates
        .iter()
        .any(|g| g.project_wide || (g.importers && resolved.scope.importers_unknown.is_some()));
    let project_files = match (whole_project, resolved.scope.mode) {
        (false, _) => None,
        (true, ScopeMode::Project) => Some(resolved.scope.paths().map(str::to_string).collect()),
        (true, _) => Some(scope::project_files(&workspace, &config)?),
    };
    let (selections, selection_warnings) = tool_selections(&workspace, &gates);
    let context = plan::Context {
        root: &workspace.root,
        project_files: project_files.as_deref(),
        selections: &selections,
        project_scope: &config.project_scope,
    };
    let plans = plan::plan(&gates, &resolved.scope, &context);
    let ctx = ExecContext::from_env(&workspace.root, &config.artifact_logging);
    let running: Vec<&config::Gate> = plans
        .iter()
        .filter(|p| p.skip_reason.is_none())
        .map(|p| p.gate)
        .collect();
    // Versions come from a cache; a new binary is asked while the gates run,
    // and a whole-project run brings the import graph up to date meanwhile.
    let (mut results, versions) = std::thread::scope(|threads| {
        let versions =
            threads.spawn(|| version::tool_versions(&running, &ctx.tools, !options.no_state));
        if resolved.scope.mode == ScopeMode::Project && !options.no_state {
            let cwd = workspace.cwd.clone();
            threads.spawn(|| refresh_import_graph(cwd, &config, &running));
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
    let mut report = RunReport {
        root: workspace.root.clone(),
        cwd: workspace.relative(&workspace.cwd).unwrap_or_default(),
        config_origin: config.origin.clone(),
        scope: resolved.scope.clone(),
        gates: results,
        warnings: resolved
            .scope
            .unmatched
            .iter()
            .map(|u| u.describe())
            .collect(),
        total_ms: started.elapsed().as_millis() as u64,
    };
    if writes_state {
        if let Err(e) = record_state(&workspace, &config, &resolved, &report, dirty_blobs) {
            report.warnings.push(format!(
                "state not saved, the next run will check more than needed: {e}"
            ));
        }
    }
    if !options.no_state {
        let record = history_record(&config, &resolved, &report);
        if let Err(e) = history::append(&workspace.root, &record) {
            report
                .warnings
                .push(format!("run not added to {}: {e}", history::HISTORY_FILE));
        }
    }
    Ok(report)
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
fn refresh_import_graph(cwd: PathBuf, config: &Config, gates: &[&config::Gate]) {
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
    };
    // A graph that cannot be built now is built by the next partial run.
    let _ = graph::refresh(&request);
}

/// Only an `auto` run of every active gate moves state (`--no-state` turns
/// it off; a `--gate` subset proves nothing about the other gates).
fn writes_state(options: &RunOptions, config: &Config, resolved: &ResolvedScope) -> bool {
    let all_gates = options.gates.is_empty()
        || config
            .active_gates
            .iter()
            .all(|id| options.gates.contains(id));
    !options.no_state
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
    // A file brought back to HEAD's content (a stash, a checkout) is not dirty.
    Ok(candidates
        .into_iter()
        .filter_map(|p| {
            let blob = git::blob_id(&crate::file_name::join(&workspace.root, p))?;
            (head_blobs.get(p).as_ref() != Some(&blob)).then(|| (p.to_string(), blob))
        })
        .collect())
}

fn record_state(
    workspace: &Workspace,
    config: &Config,
    resolved: &ResolvedScope,
    report: &RunReport,
    dirty_blobs: BTreeMap<String, String>,
) -> Result<(), QgError> {
    let Some(Head {
        branch,
        commit: Some(head),
    }) = &resolved.head
    else {
        return Ok(());
    };
    let facts = RunFacts {
        head_sha: head.to_string(),
        checked: report.scope.paths().map(str::to_string).collect(),
        failing: failing_files(config, report),
        any_error: report.gates.iter().any(|g| g.status == GateStatus::Error),
        full_check: report.scope.mode == ScopeMode::Project,
        fell_back: report.scope.fallback_reason.is_some(),
        dirty_blobs,
        config_hash: config.hash.clone(),
        tools: resolved.tools.clone(),
        now: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    let root = &workspace.root;
    let head_blobs = workspace.repo.as_ref().map(|r| r.head_blobs());
    let tree = Worktree {
        in_project: &|path: &str| {
            config.project_scope.matches(path) && crate::file_name::join(root, path).is_file()
        },
        committed: &|path: &str, blob: &str| {
            head_blobs
                .as_ref()
                .is_some_and(|h| h.get(path).as_deref() == Some(blob))
        },
    };
    StateStore::new(root)
        .update_branch(branch, |previous| Some(transition(previous, &facts, &tree)))
}

/// What the history keeps of a run.
fn history_record(config: &Config, resolved: &ResolvedScope, report: &RunReport) -> RunRecord {
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
        })
        .collect();
    RunRecord {
        at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        branch: resolved.head.as_ref().map(|h| h.branch.clone()),
        scope: report.scope.mode.as_str().to_string(),
        requested: report.scope.requested.as_str().to_string(),
        files: report.scope.files.len(),
        duration_ms: report.total_ms,
        gates,
    }
}

/// Root-relative files with a violation at or above their gate's `fail_on`.
fn failing_files(config: &Config, report: &RunReport) -> BTreeSet<String> {
    report
        .gates
        .iter()
        .filter_map(|g| Some((g, config.gates.get(&g.id)?)))
        .flat_map(|(result, gate)| {
            result
                .violations
                .iter()
                .filter(|v| v.fails_at(gate.fail_on))
                .filter_map(|v| v.file.clone())
        })
        .filter(|f| !f.starts_with('/'))
        .collect()
}
