//! A run as a library call: options in, a [`RunReport`] value out — the
//! pipeline in order: config, scope (with the importers of what changed),
//! plan, exec, outcome, then the report and what the state remembers.
//! Reports render the value; the CLI only parses flags and picks a renderer.

mod bases;
mod body_only;
mod cache_check;
#[cfg(all(test, unix))]
mod cache_truth;
mod cached;
mod compare;
mod confirm;
mod full_walk;
mod gates;
mod installed;
mod left_out;
#[cfg(all(test, unix))]
mod lies;
mod new_baseline;
mod project;
mod record;
mod resolve;
#[cfg(all(test, unix))]
mod sequences;
mod settle;
mod tool_caches;
mod vouched;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::baseline::{self, BaselineSummary, BaselineUse};
use crate::config::Config;
use crate::error::QgError;
use crate::exec::Observer;
use crate::outcome::{GateResult, GateStatus};
use crate::plan;
use crate::process::Cancel;
use crate::report::{ReportScope, RunReport};
use crate::scope::{ScopeMode, ScopeRequest};
use crate::shard::{BaselineShare, Shard, ShardInfo};
use crate::tools::Toolbox;
use crate::workspace::Workspace;
pub(crate) use confirm::{awaited, confirm_job, landed};
pub(crate) use left_out::judge_sample;
pub(crate) use new_baseline::write_baseline;
pub(crate) use record::record_merged;
pub(crate) use resolve::{resolve_scope, ResolvedScope};

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
    /// `--locked` / `--no-baseline`: how the committed baseline is used.
    pub baseline: BaselineUse,
    /// `--shard I/N`: run only this share of the work. A shard run records
    /// nothing (state, history, findings) and never writes the baseline:
    /// its verdict covers a part of the run.
    pub shard: Option<Shard>,
    /// Stops the run's tools from outside (an MCP client's cancel); a
    /// cancelled run returns [`QgError::Cancelled`] and records nothing.
    pub cancel: Cancel,
    /// Whether live daemons answer the gates they keep warm.
    pub daemons: DaemonUse,
    /// Where the result cache is looked up and stored (`--no-cache`: off;
    /// a confirmation of a warm answer runs its tool).
    pub cache: CacheUse,
    /// `--confirm`: a warm answer is confirmed by a cold run before the
    /// run reports (else it is shown at once, confirmed in the background).
    pub confirm: bool,
    /// Whether the report lists the files each gate covered
    /// ([`RunReport::covered`]): an editor clears the ones that passed.
    pub report_covered: bool,
    /// Runs nothing of a repository the user has not trusted as it is now
    /// (`qg lsp`, `qg mcp`, `qg watch`: nobody typed the command). Checked
    /// on the very config the run loads, so a pull between an earlier
    /// check and the run cannot slip a new command through.
    pub require_trust: bool,
}

pub use cache_check::{allow_background_checks, check_sample};

/// Where a run's gates' results are looked up and stored (the `cache`
/// module).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CacheUse {
    /// The user's store (`QG_CACHE_DIR`, else the user cache directory),
    /// unless `QG_NO_CACHE` says no.
    #[default]
    Default,
    /// None: every tool runs.
    Off,
    /// This store, whatever the environment says.
    At(PathBuf),
}

/// How a run uses the gates' live daemons (`qg daemon`, `qg watch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DaemonUse {
    /// A gate with a live daemon for its key is answered warm.
    #[default]
    Use,
    /// Every gate runs cold (`--no-daemon`).
    Ignore,
    /// Warm gates are answered both ways and must agree (`--verify`).
    Verify,
}

impl RunOptions {
    /// A run that checks and leaves nothing behind: no state, no baseline,
    /// no daemon asked (the background check of the cache's hits, and the
    /// reference runs of its property test).
    pub(crate) fn checking_only(
        cwd: PathBuf,
        scope: ScopeRequest,
        gates: Vec<String>,
        cache: CacheUse,
    ) -> RunOptions {
        RunOptions {
            cwd,
            config: None,
            scope,
            gates,
            jobs: 2,
            no_state: true,
            baseline: BaselineUse::Ignore,
            shard: None,
            cancel: Default::default(),
            daemons: DaemonUse::Ignore,
            report_covered: false,
            require_trust: false,
            cache,
            confirm: false,
        }
    }

    /// Whether the run may leave anything behind: state, history, the
    /// findings of the last run, caches.
    pub(crate) fn records(&self) -> bool {
        !self.no_state && self.shard.is_none()
    }

    /// How the committed baseline is used: a shard never writes it (the
    /// other shards are still measuring against it).
    fn baseline_use(&self) -> BaselineUse {
        match (self.baseline, self.shard) {
            (BaselineUse::Ratchet, Some(_)) => BaselineUse::Locked,
            (usage, _) => usage,
        }
    }
}

/// Loads the workspace and config for a command.
pub(crate) fn prepare(cwd: &Path, config: Option<&Path>) -> Result<(Workspace, Config), QgError> {
    load(cwd, config, false)
}

/// [`prepare`] for a command resolving `request`: one that asks git what
/// changed says so first, so the look at the working tree that finding the
/// members' configs makes serves the scope too.
fn prepare_for(
    cwd: &Path,
    config: Option<&Path>,
    request: &ScopeRequest,
) -> Result<(Workspace, Config), QgError> {
    let asks_changes = matches!(
        request.effective_mode(),
        Ok(ScopeMode::Auto | ScopeMode::Branch)
    );
    load(cwd, config, asks_changes)
}

/// The workspace at `cwd` and its config (members found).
fn load(
    cwd: &Path,
    config: Option<&Path>,
    asks_changes: bool,
) -> Result<(Workspace, Config), QgError> {
    let workspace = Workspace::discover(cwd)?;
    if let (true, Some(repo)) = (asks_changes, &workspace.repo) {
        repo.expect_changes();
    }
    let config = crate::members::load_config(&workspace, config)?;
    Ok((workspace, config))
}

/// An error naming `qg trust` when the repository, under `config`, is not
/// trusted as it is now (see [`crate::trust`]).
pub(crate) fn require_trust(
    workspace: &Workspace,
    config: &Config,
    tools: &Toolbox<'_>,
) -> Result<(), QgError> {
    match crate::trust::standing(workspace, config, tools) {
        crate::trust::Standing::Untrusted { why } => Err(QgError::Untrusted(why)),
        _ => Ok(()),
    }
}

/// The scope a plain run from `cwd` would check (the active gates decide
/// whether importers are added), without running anything: `qg files`
/// and the MCP `list_scope` tool.
pub(crate) fn scope_of(
    cwd: &Path,
    config: Option<&Path>,
    request: &ScopeRequest,
    cancel: &Cancel,
) -> Result<ResolvedScope, QgError> {
    let (workspace, mut config) = prepare_for(cwd, config, request)?;
    let tools = Toolbox::from_env(&workspace.root).cancelled_by(cancel);
    // The import graph as the run would build it, for the analyzer installed.
    crate::tools::version::adapt_to_versions(&mut config, &tools, true, &[]);
    let gates = config.select_gates(&[])?;
    resolve_scope(&workspace, &config, request, &gates, true, &tools)
}

/// Runs the configured gates on the resolved scope, then moves the state.
pub fn run(
    options: &RunOptions,
    observer: &dyn Observer<GateResult>,
) -> Result<RunReport, QgError> {
    let started = Instant::now();
    let (workspace, mut config) =
        prepare_for(&options.cwd, options.config.as_deref(), &options.scope)?;
    // The daemons' background comparisons stand still while the user
    // waits (a comparison's own run, under --verify, is background work).
    let _foreground = (options.daemons != DaemonUse::Verify)
        .then(|| crate::warm::foreground::announce(&workspace.root));
    config.select_gates(&options.gates)?;
    // Found once: every stage resolves the same tools in the same environment.
    let tools = Toolbox::from_env(&workspace.root).cancelled_by(&options.cancel);
    if options.require_trust {
        require_trust(&workspace, &config, &tools)?;
    }
    // Trusted as configured; each gate then runs the way its tool's version takes.
    crate::tools::version::adapt_to_versions(
        &mut config,
        &tools,
        options.records(),
        &options.gates,
    );
    let gates = config.select_gates(&options.gates)?;
    let resolved = resolve_scope(
        &workspace,
        &config,
        &options.scope,
        &gates,
        options.records(),
        &tools,
    )?;
    // Taken before the tools run, so an edit made meanwhile is never marked clean.
    let state_plan = record::plan(options, &config, &workspace, &resolved)?;
    let listing = gates::project_listing(&workspace, &config, &gates, &resolved.scope)?;
    let branch = crate::state::findings::branch_key(resolved.head.as_ref());
    let vouching = gates::Vouching {
        branch: &branch,
        state_moves: state_plan.moves(),
    };
    let gates::GateRuns {
        mut results,
        covered,
        shard,
        jobs,
        warnings: cache_warnings,
    } = gates::run_gates(
        gates::Project {
            workspace: &workspace,
            config: &config,
            tools: &tools,
        },
        &gates,
        &resolved.scope,
        listing.as_deref(),
        options,
        vouching,
        observer,
    )?;
    // Killed tools prove nothing: nothing is judged, recorded or ratcheted.
    if options.cancel.is_cancelled() {
        return Err(QgError::Cancelled);
    }
    baseline::fingerprint::stamp(&workspace.root, &mut results);
    let mut warnings: Vec<String> = config
        .warnings
        .iter()
        .chain(&resolved.warnings)
        .chain(&cache_warnings)
        .cloned()
        .chain(resolved.scope.unmatched.iter().map(|u| u.describe()))
        .collect();
    let since_last_run = record::compare_with_last_run(
        &workspace,
        &resolved,
        &mut results,
        &covered,
        options.records(),
        &mut warnings,
    );
    let (baseline, baseline_share) = measure_against_baseline(
        &workspace,
        &config,
        options.baseline_use(),
        &mut results,
        &covered,
        &mut warnings,
    )?;
    if full_walk::wanted(options, &config, &resolved.scope) {
        let project = gates::Project {
            workspace: &workspace,
            config: &config,
            tools: &tools,
        };
        full_walk::compare(project, &gates, options, &mut results)?;
    }
    let mut scope = ReportScope::from(&resolved.scope);
    scope.files_checked = files_checked(&resolved.scope, &covered);
    let shard = shard.map(|share| {
        scope.files_checked = share.files_checked;
        ShardInfo {
            root: crate::paths::to_slash(&workspace.root),
            config: config.origin.clone(),
            baseline: baseline_share,
            ..share.info
        }
    });
    let contradicted = contradicted(&resolved, &results);
    let mut report = RunReport {
        root: workspace.root.clone(),
        cwd: workspace.relative(&workspace.cwd).unwrap_or_default(),
        config_origin: config.origin.clone(),
        scope,
        gates: results,
        warnings,
        baseline,
        since_last_run,
        shard,
        covered: match options.report_covered {
            true => covered
                .iter()
                .map(|(gate, files)| (gate.clone(), files.iter().map(|f| f.to_string()).collect()))
                .collect(),
            false => Default::default(),
        },
        contradicted,
        background: background_work(&workspace, &config),
        total_ms: started.elapsed().as_millis() as u64,
    };
    let held = record::record(
        &workspace,
        &config,
        &resolved,
        &mut report,
        &covered,
        state_plan,
        options.records(),
    );
    // Handed over once the held state is written: no confirmation can land
    // before the state that waits for it.
    confirm::hand_over(
        &workspace,
        &config,
        jobs,
        held.as_deref(),
        &mut report.gates,
    );
    Ok(report)
}

/// What the last warm answers got wrong, as the run opens with it: the
/// confirmations of the run that held the branch's state, and what each
/// gate's daemon told this run — one sentence per gate.
fn contradicted(resolved: &ResolvedScope, results: &[GateResult]) -> Vec<(String, String)> {
    let mut said = resolved.contradicted();
    for result in results {
        if let Some(notice) = &result.notice {
            if !said.iter().any(|(gate, _)| gate == &result.id) {
                said.push((result.id.clone(), notice.clone()));
            }
        }
    }
    said
}

/// What the daemons of the run's gates compare with a cold run in the
/// background now, read from their records (none without a daemon).
fn background_work(workspace: &Workspace, config: &Config) -> Vec<crate::report::BackgroundWork> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    crate::warm::slot::all(&workspace.root)
        .into_iter()
        .filter(|slot| config.gates.contains_key(&slot.gate))
        .filter_map(|slot| {
            let background = slot.record()?.background?;
            Some(crate::report::BackgroundWork {
                gate: slot.gate.clone(),
                what: background.what,
                running_ms: now_ms.saturating_sub(background.since_ms),
            })
        })
        .collect()
}

/// Leaves out of the baseline every entry that records a tool stopping
/// before it checked anything (`success.stopped`): honoured, it would keep
/// the gate green while its tool checks nothing. Says so, per gate.
fn drop_stopping_entries(config: &Config, file: &mut baseline::file::Baseline) -> Vec<String> {
    let mut dropped: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    file.entries.retain(|e| {
        let gate = config.gates.get(&e.gate);
        let Some((gate, stopped)) = gate.and_then(|g| Some(g).zip(g.stopped.as_ref())) else {
            return true;
        };
        let code = Some(e.code.as_str()).filter(|c| !c.is_empty());
        if !stopped.marks(code, &e.message) {
            return true;
        }
        let place = match e.path.is_empty() {
            true => String::new(),
            false => format!("{}: ", crate::file_name::display(&e.path)),
        };
        dropped
            .entry(gate.name.as_str())
            .or_default()
            .push(format!("{place}{}", e.message));
        false
    });
    dropped
        .into_iter()
        .map(|(name, said)| {
            format!(
                "the baseline holds {} that {name} stopped before checking anything ({}): not honoured — fix the cause (`qg doctor` shows what stops a tool), then `qg baseline write`",
                match said.len() {
                    1 => "a finding saying".to_string(),
                    n => format!("{n} findings saying"),
                },
                said.join("; ")
            )
        })
        .collect()
}

/// The files the run checked: its scope's, and every file a gate that
/// checked its whole project scope covered.
fn files_checked(scope: &crate::scope::Scope, covered: &plan::Covered<'_>) -> usize {
    if scope.whole_project.is_empty() {
        return scope.files.len();
    }
    let mut files: BTreeSet<&str> = scope.paths().collect();
    for gate in scope.whole_project.keys() {
        files.extend(covered.get(gate).into_iter().flatten().copied());
    }
    files.len()
}

/// Marks each violation new or known when the project has a baseline (and
/// the run uses it), and drops entries found fixed when every gate passed
/// unless `--locked`; also
/// says which entries it found fixed or matched, for a shard's report.
fn measure_against_baseline(
    workspace: &Workspace,
    config: &Config,
    usage: BaselineUse,
    results: &mut [GateResult],
    covered: &plan::Covered<'_>,
    warnings: &mut Vec<String>,
) -> Result<(Option<BaselineSummary>, BaselineShare), QgError> {
    if usage == BaselineUse::Ignore {
        return Ok((None, BaselineShare::default()));
    }
    let Some(mut file) = baseline::file::read(&workspace.root)? else {
        return Ok((None, BaselineShare::default()));
    };
    warnings.extend(drop_stopping_entries(config, &mut file));
    let baseline::Applied {
        mut summary,
        fixed,
        shared_matches,
    } = baseline::apply(workspace, &file, results, covered, warnings);
    let share = BaselineShare {
        fixed: fixed.clone(),
        shared_matches,
    };
    // Hints name only the files whose findings still fail the gate.
    for result in results.iter_mut() {
        let judged = matches!(result.status, GateStatus::Passed | GateStatus::Failed);
        if let Some(gate) = config.gates.get(&result.id).filter(|_| judged) {
            crate::outcome::render_hints(gate, result);
        }
    }
    // A red run's missing findings may be masked, not fixed: a broken
    // signature turns its callers' types to Unknown and their findings
    // vanish until it is mended. Like the baseline SHA, the ratchet moves
    // only on a run where every gate passed.
    let all_passed = results
        .iter()
        .all(|r| matches!(r.status, GateStatus::Passed | GateStatus::Skipped));
    // Nor does it believe a daemon: an incremental checker can drop a
    // finding it should still report (dmypy forgets an `unused-ignore`
    // after an edit elsewhere, python/mypy#9655), and a dropped entry
    // would come back as new. A cold run drops what a warm one found fixed.
    let warm: BTreeSet<&str> = results
        .iter()
        .filter(|r| r.warm)
        .map(|r| r.id.as_str())
        .collect();
    let fixed: Vec<usize> = fixed
        .into_iter()
        .filter(|&i| {
            file.entries
                .get(i)
                .is_some_and(|e| !warm.contains(e.gate.as_str()))
        })
        .collect();
    if usage == BaselineUse::Ratchet && !fixed.is_empty() && all_passed {
        let fixed: BTreeSet<usize> = fixed.into_iter().collect();
        let mut index = 0..;
        file.entries
            .retain(|_| !fixed.contains(&index.next().unwrap_or_default()));
        match baseline::file::write(&workspace.root, &file) {
            Ok(()) => summary.updated = true,
            Err(e) => warnings.push(format!("fixed entries not dropped from the baseline: {e}")),
        }
    }
    Ok((Some(summary), share))
}
