//! The executor: runs planned gates concurrently and turns each tool's run
//! into a [`GateResult`]. Results come back in plan (config) order.

pub mod artifacts;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::config::{ArtifactLogging, Gate};
use crate::file_name;
use crate::outcome::{self, ErrorKind, GateResult};
use crate::paths::PathContext;
use crate::plan::GatePlan;
use crate::process::{self, batch};
use crate::tools::resolve::{ResolveError, ResolvedTool};
use crate::tools::Toolbox;

/// What every gate run shares.
pub struct ExecContext<'a> {
    /// Where tools are found and how they run.
    pub tools: Toolbox<'a>,
    /// Artifact-log settings.
    pub logging: &'a ArtifactLogging,
}

impl ExecContext<'_> {
    /// Captures the environment qg itself was started with.
    pub fn from_env<'a>(root: &'a Path, logging: &'a ArtifactLogging) -> ExecContext<'a> {
        ExecContext {
            tools: Toolbox::from_env(root),
            logging,
        }
    }
}

/// Hears about gates as they start and finish (progress display).
pub trait Observer: Sync {
    /// A gate's tool is about to start with this argv (program first).
    fn gate_started(&self, _gate: &Gate, _files: usize, _argv: &[String]) {}
    /// A gate has its result.
    fn gate_finished(&self, _result: &GateResult) {}
}

/// An observer that does nothing.
pub struct Silent;
impl Observer for Silent {}

/// One process to run: a gate's files, or a batch of them.
struct Unit {
    plan: usize,
    files: Vec<String>,
}

/// How a gate is launched (resolved once, shared by its units).
struct Launch {
    tool: ResolvedTool,
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
}

/// A unit's result with its wall-clock span.
struct Done {
    result: GateResult,
    started: Instant,
    ended: Instant,
}

/// Runs every plan with at most `jobs` tools at once. Batchable gates are
/// split to fit the OS command-line limit and over cores that would idle.
/// Results come back in plan (config) order.
pub fn run_all(
    plans: &[GatePlan<'_>],
    ctx: &ExecContext<'_>,
    jobs: usize,
    observer: &dyn Observer,
) -> Vec<GateResult> {
    let runnable = plans.iter().filter(|p| p.skip_reason.is_none()).count();
    let mut early: Vec<Option<GateResult>> = plans.iter().map(|_| None).collect();
    let mut launches: Vec<Option<Launch>> = plans.iter().map(|_| None).collect();
    let mut units = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        match prepare(plan, ctx, jobs, runnable) {
            Ok((launch, batches)) => {
                launches[index] = Some(launch);
                units.extend(batches.into_iter().map(|files| Unit { plan: index, files }));
            }
            Err(result) => early[index] = Some(*result),
        }
    }
    let mut combined = run_units(&units, plans, &launches, ctx, jobs, observer);
    early
        .into_iter()
        .enumerate()
        .map(|(index, early)| match early {
            Some(result) => {
                observer.gate_finished(&result);
                result
            }
            None => combined[index]
                .take()
                .expect("every launched gate is combined"),
        })
        .collect()
}

/// Resolves the tool and splits the files, or says why the gate cannot run.
fn prepare(
    plan: &GatePlan<'_>,
    ctx: &ExecContext<'_>,
    jobs: usize,
    runnable: usize,
) -> Result<(Launch, Vec<Vec<String>>), Box<GateResult>> {
    let gate = plan.gate;
    if let Some(reason) = &plan.skip_reason {
        return Err(Box::new(GateResult::skipped(gate, reason.clone())));
    }
    let tool = ctx.tools.resolve(gate).map_err(|e| {
        let mut result = unresolved(gate, e, ctx);
        result.files_checked = plan.files.len();
        Box::new(result)
    })?;
    let cwd = process::working_dir(ctx.tools.root, gate.working_dir.as_deref());
    let env = environment(gate, &tool, ctx);
    let batches = if gate.pass_files && plan.native_args.is_none() {
        batches(plan, &tool, &env, ctx.tools.root, jobs, runnable)?
    } else {
        vec![plan.files.clone()]
    };
    Ok((Launch { tool, cwd, env }, batches))
}

fn batches(
    plan: &GatePlan<'_>,
    tool: &ResolvedTool,
    env: &[(OsString, OsString)],
    root: &Path,
    jobs: usize,
    runnable: usize,
) -> Result<Vec<Vec<String>>, Box<GateResult>> {
    let gate = plan.gate;
    let fixed: usize = batch::cost(&tool.path.clone().into_os_string())
        + gate.command[1..]
            .iter()
            .map(|a| batch::cost(&a.into()))
            .sum::<usize>();
    let budget = batch::argument_budget(env);
    let min_parts = match gate.batchable {
        true => batch::idle_parts(jobs, runnable, plan.files.len()),
        false => 1,
    };
    let cost_of = |file: &String| batch::cost(&file_argument(gate, file, root));
    let too_long = |needed: usize| {
        let message = format!(
            "the command line for {} files needs {needed} bytes but this OS allows {budget}; set execution.batchable: true, or pass_files: false and let the tool find its files",
            plan.files.len()
        );
        let mut result = GateResult::launch_error(gate, ErrorKind::SpawnFailed, message);
        result.files_checked = plan.files.len();
        Box::new(result)
    };
    let parts = batch::split(&plan.files, cost_of, fixed, budget, min_parts).map_err(too_long)?;
    if !gate.batchable && parts.len() > 1 {
        let needed = fixed + plan.files.iter().map(cost_of).sum::<usize>();
        return Err(too_long(needed));
    }
    Ok(parts)
}

/// Runs the units on `jobs` workers; a gate's result is combined (and
/// reported to the observer) as soon as its last unit finishes.
fn run_units(
    units: &[Unit],
    plans: &[GatePlan<'_>],
    launches: &[Option<Launch>],
    ctx: &ExecContext<'_>,
    jobs: usize,
    observer: &dyn Observer,
) -> Vec<Option<GateResult>> {
    let expected: Vec<usize> = (0..plans.len())
        .map(|plan| units.iter().filter(|u| u.plan == plan).count())
        .collect();
    let parts: Vec<Mutex<Vec<Done>>> = plans.iter().map(|_| Mutex::new(Vec::new())).collect();
    let combined: Vec<Mutex<Option<GateResult>>> = plans.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = jobs.clamp(1, units.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(unit) = units.get(index) else { break };
                let plan = &plans[unit.plan];
                let launch = launches[unit.plan]
                    .as_ref()
                    .expect("units exist only for launchable gates");
                let started = Instant::now();
                let result = run_unit(
                    plan.gate,
                    &plan.native_args,
                    launch,
                    &unit.files,
                    ctx,
                    observer,
                );
                let done = Done {
                    result,
                    started,
                    ended: Instant::now(),
                };
                let mut mine = lock(&parts[unit.plan]);
                mine.push(done);
                if mine.len() == expected[unit.plan] {
                    let result = combine(plan, std::mem::take(&mut *mine), ctx);
                    observer.gate_finished(&result);
                    *lock(&combined[unit.plan]) = Some(result);
                }
            });
        }
    });
    combined
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// A poisoned lock only means another worker panicked; its data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One gate's result from its units, restricted to the scoped files when
/// the gate ran project-wide.
fn combine(plan: &GatePlan<'_>, mut parts: Vec<Done>, ctx: &ExecContext<'_>) -> GateResult {
    // Batches finish in any order; their violations are merged and sorted,
    // but logs are listed in file order.
    parts.sort_by_key(|d| d.started);
    let started = parts.iter().map(|d| d.started).min();
    let ended = parts.iter().map(|d| d.ended).max();
    let results: Vec<GateResult> = parts.into_iter().map(|d| d.result).collect();
    let mut result = outcome::merge(plan.gate, results);
    if let (Some(started), Some(ended)) = (started, ended) {
        result.duration_ms = ended.duration_since(started).as_millis() as u64;
    }
    if plan.report_only.is_some() || plan.project_scope.is_some() {
        outcome::restrict(plan.gate, &mut result, |f| plan.reports(f));
    }
    if let Some(unresolved) = &plan.gate.unresolved_imports {
        let advice = ctx.tools.expand_venv_bin(&unresolved.advice);
        outcome::advise_on_unresolved_imports(&mut result, &unresolved.codes, &advice);
    }
    result
}

fn run_unit(
    gate: &Gate,
    plan_native_args: &Option<Vec<String>>,
    launch: &Launch,
    files: &[String],
    ctx: &ExecContext<'_>,
    observer: &dyn Observer,
) -> GateResult {
    let args = match &plan_native_args {
        Some(native) => gate.command[1..]
            .iter()
            .chain(native)
            .map(OsString::from)
            .collect(),
        None => arguments(gate, files, ctx.tools.root),
    };
    let argv = display_argv(&launch.tool, &args);
    observer.gate_started(gate, files.len(), &argv);
    let invocation = process::Invocation {
        label: &gate.id,
        program: &launch.tool.path,
        args: &args,
        cwd: &launch.cwd,
        env: &launch.env,
        timeout: gate.timeout,
    };
    let finished = match process::run(&invocation) {
        Ok(finished) => finished,
        Err(e) => {
            let message = format!("could not start {}: {e}", launch.tool.path.display());
            let mut result = GateResult::launch_error(gate, ErrorKind::SpawnFailed, message);
            result.files_checked = files.len();
            return result;
        }
    };
    let paths = PathContext::new(ctx.tools.root, &launch.cwd);
    let mut result = outcome::judge(gate, files, &finished, &paths);
    match write_log(gate, &argv, &launch.tool, &launch.cwd, &finished, ctx) {
        Ok(log) => result.log = log,
        Err(e) => result
            .warnings
            .push(format!("could not write the artifact log: {e}")),
    }
    result
}

/// The argv as text, program resolved (for `--verbose` and the log).
fn display_argv(tool: &ResolvedTool, args: &[OsString]) -> Vec<String> {
    std::iter::once(tool.path.display().to_string())
        .chain(args.iter().map(|a| file_name::from_os_str(a)))
        .collect()
}

fn unresolved(gate: &Gate, error: ResolveError, ctx: &ExecContext<'_>) -> GateResult {
    let program = &gate.command[0];
    let (kind, mut message) = match error {
        ResolveError::NotFound { searched } => {
            let places: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
            let searched = if places.is_empty() {
                "PATH is empty".into()
            } else {
                places.join(", ")
            };
            (
                ErrorKind::NotFound,
                format!("`{program}` not found (searched: {searched})"),
            )
        }
        ResolveError::NotExecutable(path) => (
            ErrorKind::NotExecutable,
            format!("{} is not executable (chmod +x it)", path.display()),
        ),
    };
    let install = ctx.tools.install_hint(gate);
    if let Some(install) = &install {
        message.push_str(&format!("; install: {install}"));
    }
    let mut result = GateResult::launch_error(gate, kind, message);
    if let (ErrorKind::NotFound, Some(install), Some(error)) = (kind, install, &mut result.error) {
        error.short = format!("not found (install: {install})");
    }
    result
}

/// `command[1..]` then the files (when `pass_files`).
fn arguments(gate: &Gate, files: &[String], root: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = gate.command[1..].iter().map(OsString::from).collect();
    if gate.pass_files {
        args.extend(files.iter().map(|file| file_argument(gate, file, root)));
    }
    args
}

/// A file as passed to the tool: `./`-prefixed when it starts with `-`, so
/// no tool can read it as an option; absolute with a `working_dir`.
fn file_argument(gate: &Gate, file: &str, root: &Path) -> OsString {
    // The name's exact bytes: it need not be UTF-8 (see `file_name`).
    let name = file_name::to_os_str(file);
    if gate.working_dir.is_some() {
        root.join(name).into_os_string()
    } else if file.starts_with('-') {
        let mut dotted = OsString::from("./");
        dotted.push(name);
        dotted
    } else {
        name.into_owned()
    }
}

fn environment(
    gate: &Gate,
    tool: &ResolvedTool,
    ctx: &ExecContext<'_>,
) -> Vec<(OsString, OsString)> {
    let mut env = ctx.tools.activated(tool);
    env.extend(gate.env.iter().map(|(k, v)| (k.into(), v.into())));
    env
}

fn write_log(
    gate: &Gate,
    argv: &[String],
    tool: &ResolvedTool,
    cwd: &Path,
    finished: &process::Finished,
    ctx: &ExecContext<'_>,
) -> std::io::Result<Option<String>> {
    if !ctx.logging.enabled {
        return Ok(None);
    }
    let entry = artifacts::LogEntry {
        gate_id: &gate.id,
        gate_name: &gate.name,
        argv,
        program: &tool.path,
        cwd,
        finished,
    };
    artifacts::write(ctx.tools.root, ctx.logging, &entry).map(Some)
}
