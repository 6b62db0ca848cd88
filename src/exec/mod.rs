//! The executor: runs the planned gates' tools concurrently, at most `jobs`
//! at once, and hands each finished run to a [`Judge`] — it knows processes,
//! not verdicts (those are the outcome stage's). Results come back in plan
//! (config) order.

pub(crate) mod artifacts;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::{ArtifactLogging, Gate};
use crate::file_name;
use crate::plan::GatePlan;
use crate::process::{self, batch};
use crate::tools::resolve::{ResolveError, ResolvedTool};
use crate::tools::Toolbox;
use crate::violation::Violation;
use crate::warm::{self, WarmAnswer, WarmFindings, WarmPlan};

/// What every gate run shares.
pub(crate) struct ExecContext<'a> {
    /// Where tools are found and how they run.
    pub(crate) tools: Toolbox<'a>,
    /// Artifact-log settings.
    pub(crate) logging: &'a ArtifactLogging,
    /// The gates a live daemon may answer, and what to ask it.
    pub(crate) warm: Option<WarmRequests>,
}

/// What a run asks the gates' daemons.
pub(crate) struct WarmRequests {
    /// Gate id → what to check and report.
    pub(crate) plans: BTreeMap<String, WarmPlan>,
    /// The run compares each warm answer with a cold run's (`--verify`).
    pub(crate) verify: bool,
}

impl ExecContext<'_> {
    /// Runs with a run's `tools` (their cancel stops every tool it starts).
    pub(crate) fn new<'a>(tools: Toolbox<'a>, logging: &'a ArtifactLogging) -> ExecContext<'a> {
        ExecContext {
            tools,
            logging,
            warm: None,
        }
    }

    /// Captures the environment qg itself was started with; `cancel`
    /// stops every tool the run starts.
    pub(crate) fn from_env<'a>(
        root: &'a Path,
        logging: &'a ArtifactLogging,
        cancel: &process::Cancel,
    ) -> ExecContext<'a> {
        ExecContext {
            tools: Toolbox::from_env(root).cancelled_by(cancel),
            logging,
            warm: None,
        }
    }
}

/// Why a gate's tool did not run.
#[derive(Debug)]
pub(crate) enum NotRun {
    /// Nothing in scope for it (the planner says why).
    Skipped(String),
    /// Its program is not where qg looked.
    NotFound {
        /// Where qg looked.
        searched: Vec<PathBuf>,
        /// The gate's install command, expanded for this project.
        install: Option<String>,
    },
    /// Its program exists but cannot be executed.
    NotExecutable(PathBuf),
    /// Its files do not fit one command line, and it must see them all at once.
    TooLong {
        /// Files it would get.
        files: usize,
        /// Bytes they need.
        needed: usize,
        /// Bytes this OS allows.
        budget: usize,
    },
}

/// One run of a gate's tool (the whole gate, or one batch of its files).
pub(crate) struct UnitRun<'a> {
    /// The files it was given (or, for a tool's own whole-project run, the
    /// files it is expected to check).
    pub(crate) files: &'a [&'a str],
    /// The program that ran.
    pub(crate) program: &'a Path,
    /// Where it ran.
    pub(crate) cwd: &'a Path,
    /// What it did, or why it could not start.
    pub(crate) finished: std::io::Result<process::Finished>,
    /// The artifact log written for it, if logging is on.
    pub(crate) log: std::io::Result<Option<String>>,
}

/// A unit's judged result with its wall-clock span.
pub(crate) struct Timed<R> {
    /// What the judge made of it.
    pub(crate) result: R,
    /// When it started.
    pub(crate) started: Instant,
    /// When it ended.
    pub(crate) ended: Instant,
}

/// What a gate's live daemon answered.
pub(crate) enum WarmRun<'a> {
    /// A language server's findings in the reported files, and the
    /// artifact log that holds them as it answered.
    Diagnostics {
        /// The findings.
        violations: Vec<Violation>,
        /// The artifact log written for them, if logging is on.
        log: std::io::Result<Option<String>>,
    },
    /// The daemon's check command, as a unit that ran.
    Output(UnitRun<'a>),
}

/// Turns runs into results: the outcome stage's side of the executor.
pub(crate) trait Judge<R>: Sync {
    /// A gate whose tool did not run.
    fn not_run(&self, plan: &GatePlan<'_>, why: NotRun) -> R;
    /// One finished unit (in the worker that ran it).
    fn unit(&self, plan: &GatePlan<'_>, run: UnitRun<'_>) -> R;
    /// A gate's result from its units, once the last is in.
    fn gate(&self, plan: &GatePlan<'_>, units: Vec<Timed<R>>) -> R;
    /// A gate its live daemon answered, reporting what `request` says;
    /// `Err` says why the answer cannot stand (the gate then runs cold).
    fn warm(
        &self,
        plan: &GatePlan<'_>,
        run: WarmRun<'_>,
        request: &WarmPlan,
        took: Duration,
    ) -> Result<R, String>;
    /// A gate that could have been answered warm and was answered cold,
    /// with why; `warn`: a daemon that failed, which the run warns about
    /// (else it is said on the gate's line: one absent, warming up or busy).
    fn cold_instead(&self, result: R, why: Option<(String, bool)>) -> R;
    /// A result with what a daemon found wrong in its earlier answers.
    fn noted(&self, result: R, note: String) -> R;
}

/// Hears about gates as they start and finish (progress display).
pub trait Observer<R>: Sync {
    /// A gate's tool is about to start with this argv (program first).
    fn gate_started(&self, _gate: &Gate, _files: usize, _argv: &[String]) {}
    /// A gate has its result.
    fn gate_finished(&self, _result: &R) {}
}

/// An observer that does nothing.
pub struct Silent;
impl<R> Observer<R> for Silent {}

/// One process to run: a gate's files, or a batch of them.
struct Unit<'a> {
    plan: usize,
    files: Vec<&'a str>,
}

/// How a gate is launched (resolved once, shared by its units).
struct Launch {
    tool: ResolvedTool,
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
}

/// What runs gates: the plans, the environment, and the judge of results.
struct Runner<'a, R> {
    plans: &'a [GatePlan<'a>],
    ctx: &'a ExecContext<'a>,
    judge: &'a dyn Judge<R>,
    observer: &'a dyn Observer<R>,
}

/// Runs every plan with at most `jobs` tools at once. Batchable gates are
/// split to fit the OS command-line limit and over cores that would idle.
/// Results come back in plan (config) order.
pub(crate) fn run_all<'a, R: Send>(
    plans: &'a [GatePlan<'a>],
    ctx: &'a ExecContext<'a>,
    jobs: usize,
    judge: &'a dyn Judge<R>,
    observer: &'a dyn Observer<R>,
) -> Vec<R> {
    let runner = Runner {
        plans,
        ctx,
        judge,
        observer,
    };
    let runnable = plans.iter().filter(|p| p.skip_reason.is_none()).count();
    let mut early: Vec<Option<R>> = plans.iter().map(|_| None).collect();
    let mut launches: Vec<Option<Launch>> = plans.iter().map(|_| None).collect();
    let mut units = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        match prepare(plan, ctx, jobs, runnable) {
            Ok((launch, batches)) => {
                launches[index] = Some(launch);
                units.extend(batches.into_iter().map(|files| Unit { plan: index, files }));
            }
            Err(why) => early[index] = Some(judge.not_run(plan, why)),
        }
    }
    let started = artifacts::run_started();
    let mut combined = std::thread::scope(|threads| {
        // Beside the tools, not after them: a run waits for its slowest tool anyway.
        if !units.is_empty() && ctx.logging.enabled {
            threads.spawn(|| {
                artifacts::rotate_logs(ctx.tools.root, ctx.logging, &started, units.len())
            });
        }
        runner.run_units(&units, &launches, jobs)
    });
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
fn prepare<'a>(
    plan: &GatePlan<'a>,
    ctx: &ExecContext<'_>,
    jobs: usize,
    runnable: usize,
) -> Result<(Launch, Vec<Vec<&'a str>>), NotRun> {
    let gate = plan.gate;
    if let Some(reason) = &plan.skip_reason {
        return Err(NotRun::Skipped(reason.clone()));
    }
    let tool = ctx.tools.resolve(gate).map_err(|e| match e {
        ResolveError::NotFound { searched } => NotRun::NotFound {
            searched,
            install: ctx.tools.install_hint(gate),
        },
        ResolveError::NotExecutable(path) => NotRun::NotExecutable(path),
    })?;
    let cwd = process::working_dir(ctx.tools.root, gate.working_dir.as_deref());
    let mut env = environment(gate, &tool, ctx);
    env.extend(plan.env.iter().map(|(k, v)| (k.into(), v.clone())));
    let batches = if gate.pass_files && plan.native_args.is_none() {
        batches(plan, &tool, &env, ctx.tools.root, jobs, runnable)?
    } else {
        vec![plan.files.clone()]
    };
    Ok((Launch { tool, cwd, env }, batches))
}

fn batches<'a>(
    plan: &GatePlan<'a>,
    tool: &ResolvedTool,
    env: &[(OsString, OsString)],
    root: &Path,
    jobs: usize,
    runnable: usize,
) -> Result<Vec<Vec<&'a str>>, NotRun> {
    let gate = plan.gate;
    let fixed: usize = batch::cost(&tool.path.clone().into_os_string())
        + gate.command[1..]
            .iter()
            .chain(&plan.extra_args)
            .map(|a| batch::cost_for(&tool.path, &a.into()))
            .sum::<usize>();
    let budget = batch::argument_budget_for(&tool.path, env);
    let min_parts = match gate.batchable {
        true => batch::idle_parts(jobs, runnable, plan.files.len()),
        false => 1,
    };
    let cost_of = |file: &&str| batch::cost_for(&tool.path, &file_argument(gate, file, root));
    let too_long = |needed: usize| NotRun::TooLong {
        files: plan.files.len(),
        needed,
        budget,
    };
    let parts = batch::split(&plan.files, cost_of, fixed, budget, min_parts).map_err(too_long)?;
    if !gate.batchable && parts.len() > 1 {
        let needed = fixed + plan.files.iter().map(cost_of).sum::<usize>();
        return Err(too_long(needed));
    }
    Ok(parts)
}

impl<R: Send> Runner<'_, R> {
    /// Runs the units on `jobs` workers; a gate's result is combined (and
    /// reported to the observer) as soon as its last unit finishes.
    fn run_units(
        &self,
        units: &[Unit],
        launches: &[Option<Launch>],
        jobs: usize,
    ) -> Vec<Option<R>> {
        let plans = self.plans;
        let expected: Vec<usize> = (0..plans.len())
            .map(|plan| units.iter().filter(|u| u.plan == plan).count())
            .collect();
        let parts: Vec<Mutex<Vec<Timed<R>>>> =
            plans.iter().map(|_| Mutex::new(Vec::new())).collect();
        let combined: Vec<Mutex<Option<R>>> = plans.iter().map(|_| Mutex::new(None)).collect();
        // A gate a live daemon answers waits on its socket, not on a core:
        // it is asked at once, beside the tools that run (a warm answer
        // that falls back to a cold run runs on its own thread then).
        let (warm, cold): (Vec<&Unit>, Vec<&Unit>) = units
            .iter()
            .partition(|u| self.answered_warm(&plans[u.plan]));
        let next = AtomicUsize::new(0);
        let workers = jobs.clamp(1, cold.len().max(1));
        let run = |unit: &Unit| {
            let plan = &plans[unit.plan];
            let launch = launches[unit.plan]
                .as_ref()
                .expect("units exist only for launchable gates");
            let started = Instant::now();
            let result = self.warm_or_cold(plan, launch, &unit.files);
            let timed = Timed {
                result,
                started,
                ended: Instant::now(),
            };
            let mut mine = lock(&parts[unit.plan]);
            mine.push(timed);
            if mine.len() == expected[unit.plan] {
                let mut all = std::mem::take(&mut *mine);
                // Batches finish in any order; logs are listed in file order.
                all.sort_by_key(|t| t.started);
                let result = self.judge.gate(plan, all);
                self.observer.gate_finished(&result);
                *lock(&combined[unit.plan]) = Some(result);
            }
        };
        std::thread::scope(|scope| {
            for unit in &warm {
                let run = &run;
                scope.spawn(move || run(unit));
            }
            let work = || loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(unit) = cold.get(index) else { break };
                run(unit);
            };
            // This thread is a worker too: one fewer to start and stop.
            for _ in 1..workers {
                scope.spawn(work);
            }
            work();
        });
        combined
            .into_iter()
            .map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }

    /// Whether a live daemon may answer `plan`'s gate.
    fn answered_warm(&self, plan: &GatePlan<'_>) -> bool {
        self.ctx
            .warm
            .as_ref()
            .is_some_and(|w| w.plans.contains_key(&plan.gate.id))
    }

    /// Asks the gate's live daemon, if it has one; runs its tool when
    /// there is no warm answer, or one that cannot stand.
    fn warm_or_cold(&self, plan: &GatePlan<'_>, launch: &Launch, files: &[&str]) -> R {
        let Some((warm, request)) = self
            .ctx
            .warm
            .as_ref()
            .and_then(|w| Some((w, w.plans.get(&plan.gate.id)?)))
        else {
            return self.run_unit(plan, launch, files);
        };
        let gate = plan.gate;
        self.observer
            .gate_started(gate, files.len(), &[format!("({} daemon)", gate.id)]);
        let asked = warm::client::ask(gate, &self.ctx.tools, request, warm.verify);
        let (why, notice) = match asked {
            Ok((answer, took)) => {
                let notice = answer.notice.clone();
                match self.judge_warm(plan, launch, files, answer, request, took) {
                    Ok(result) => return self.noted(result, notice),
                    Err(why) => (Some((why, true)), notice),
                }
            }
            Err(not_warm) => (Some((not_warm.reason, not_warm.warn)), not_warm.notice),
        };
        let cold = self.run_unit(plan, launch, files);
        let cold = self.judge.cold_instead(cold, why);
        self.noted(cold, notice)
    }

    /// `result` with the daemon's notice, if it gave one.
    fn noted(&self, result: R, notice: Option<String>) -> R {
        match notice {
            Some(notice) => self.judge.noted(result, notice),
            None => result,
        }
    }

    /// Hands a daemon's answer to the judge (a check command's output with
    /// its artifact log, as a unit's).
    fn judge_warm(
        &self,
        plan: &GatePlan<'_>,
        launch: &Launch,
        files: &[&str],
        answer: WarmAnswer,
        request: &WarmPlan,
        took: Duration,
    ) -> Result<R, String> {
        let (finished, argv) = match answer.findings {
            WarmFindings::Diagnostics(violations) => {
                let log = diagnostics_log(plan.gate, files, &violations, launch, took, self.ctx);
                let run = WarmRun::Diagnostics { violations, log };
                return self.judge.warm(plan, run, request, took);
            }
            WarmFindings::Output { finished, argv } => (finished, argv),
        };
        let program = PathBuf::from(argv.first().map(String::as_str).unwrap_or(""));
        let log = write_log(
            plan.gate,
            &argv,
            &[],
            &program,
            &launch.cwd,
            &finished,
            self.ctx,
        );
        let run = UnitRun {
            files,
            program: &program,
            cwd: &launch.cwd,
            finished: Ok(finished),
            log,
        };
        self.judge.warm(plan, WarmRun::Output(run), request, took)
    }

    fn run_unit(&self, plan: &GatePlan<'_>, launch: &Launch, files: &[&str]) -> R {
        let gate = plan.gate;
        let ctx = self.ctx;
        let own = gate.command[1..].iter().chain(&plan.extra_args);
        let args: Vec<OsString> = match &plan.native_args {
            Some(native) => own.chain(native).map(OsString::from).collect(),
            None => own
                .map(OsString::from)
                .chain(arguments(gate, files, ctx.tools.root))
                .collect(),
        };
        let argv = display_argv(&launch.tool, &args);
        self.observer.gate_started(gate, files.len(), &argv);
        let invocation = process::Invocation {
            label: &gate.id,
            program: &launch.tool.path,
            args: &args,
            cwd: &launch.cwd,
            env: &launch.env,
            timeout: gate.timeout,
            cancel: &ctx.tools.cancel,
        };
        let finished = process::run(&invocation);
        let log = match &finished {
            Ok(finished) => {
                let program = &launch.tool.path;
                write_log(gate, &argv, &plan.env, program, &launch.cwd, finished, ctx)
            }
            Err(_) => Ok(None),
        };
        let run = UnitRun {
            files,
            program: &launch.tool.path,
            cwd: &launch.cwd,
            finished,
            log,
        };
        self.judge.unit(plan, run)
    }
}

/// A poisoned lock only means another worker panicked; its data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The argv as text, program resolved (for `--verbose` and the log).
fn display_argv(tool: &ResolvedTool, args: &[OsString]) -> Vec<String> {
    std::iter::once(tool.path.display().to_string())
        .chain(args.iter().map(|a| file_name::from_os_str(a)))
        .collect()
}

/// The files as arguments (when `pass_files`).
fn arguments(gate: &Gate, files: &[&str], root: &Path) -> Vec<OsString> {
    match gate.pass_files {
        true => files
            .iter()
            .map(|file| file_argument(gate, file, root))
            .collect(),
        false => Vec::new(),
    }
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
    env: &[(String, OsString)],
    program: &Path,
    cwd: &Path,
    finished: &process::Finished,
    ctx: &ExecContext<'_>,
) -> std::io::Result<Option<String>> {
    if !ctx.logging.enabled {
        return Ok(None);
    }
    let env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", file_name::from_os_str(v)))
        .collect();
    let entry = artifacts::LogEntry {
        gate_id: &gate.id,
        gate_name: &gate.name,
        argv,
        env: &env,
        program,
        cwd,
        finished,
    };
    artifacts::write(ctx.tools.root, ctx.logging, &entry).map(Some)
}

/// The artifact log of a language server's answer: no process ran for
/// this gate, so the log holds the findings it answered (as JSON, one per
/// line) under the request that asked for them, and a warm gate line has
/// its `log:` as a cold one does.
fn diagnostics_log(
    gate: &Gate,
    files: &[&str],
    violations: &[Violation],
    launch: &Launch,
    took: Duration,
    ctx: &ExecContext<'_>,
) -> std::io::Result<Option<String>> {
    if !ctx.logging.enabled {
        return Ok(None);
    }
    let mut stdout = Vec::new();
    for violation in violations {
        serde_json::to_writer(&mut stdout, violation).map_err(std::io::Error::from)?;
        stdout.push(b'\n');
    }
    let finished = process::Finished {
        termination: process::Termination::Exited(0),
        stdout: process::Capture::from_bytes(&stdout)?,
        stderr: process::Capture::from_bytes(b"")?,
        duration: took,
    };
    let argv: Vec<String> = [format!(
        "(the {} daemon's language server: its diagnostics of)",
        gate.id
    )]
    .into_iter()
    .chain(files.iter().map(|f| f.to_string()))
    .collect();
    write_log(
        gate,
        &argv,
        &[],
        &launch.tool.path,
        &launch.cwd,
        &finished,
        ctx,
    )
}

/// Runs `argv` — a gate's fixer, say — on `files` the way the gate's own
/// tool runs: resolved the same way, in the gate's working directory, with
/// its environment and file arguments, under its timeout. Files are passed
/// in groups that fit a command line.
pub(crate) fn run_on_files(
    ctx: &ExecContext<'_>,
    gate: &Gate,
    argv: &[String],
    files: &[String],
) -> Result<Vec<process::Finished>, String> {
    run_on_copies(ctx, gate, argv, files, ctx.tools.root)
}

/// [`run_on_files`] on the files under `tree`: the project's root, or a
/// temporary directory laid out as the project holding copies (an
/// editor's fix of unsaved text) — the tool is the project's, the files
/// and the working directory are the tree's.
pub(crate) fn run_on_copies(
    ctx: &ExecContext<'_>,
    gate: &Gate,
    argv: &[String],
    files: &[String],
    tree: &Path,
) -> Result<Vec<process::Finished>, String> {
    let tool = ctx.tools.resolve_for(gate, &argv[0]).map_err(|e| match e {
        ResolveError::NotFound { .. } => format!("`{}` is not installed", argv[0]),
        ResolveError::NotExecutable(path) => {
            format!("{} is not executable", path.display())
        }
    })?;
    let cwd = process::working_dir(tree, gate.working_dir.as_deref());
    let env = environment(gate, &tool, ctx);
    let mut runs = Vec::new();
    for group in files.chunks(FILES_PER_FIX_COMMAND) {
        let mut args: Vec<OsString> = argv[1..].iter().map(OsString::from).collect();
        args.extend(group.iter().map(|f| file_argument(gate, f, tree)));
        let invocation = process::Invocation {
            label: &gate.id,
            program: &tool.path,
            args: &args,
            cwd: &cwd,
            env: &env,
            timeout: gate.timeout,
            cancel: &ctx.tools.cancel,
        };
        runs.push(process::run(&invocation).map_err(|e| format!("`{}`: {e}", argv[0]))?);
    }
    Ok(runs)
}

/// Files per fixer command: far below any command-line limit.
const FILES_PER_FIX_COMMAND: usize = 500;
