//! The executor: runs planned gates concurrently and turns each tool's run
//! into a [`GateResult`]. Results come back in plan (config) order.

pub mod artifacts;
pub mod process;
pub mod resolve;

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::config::{ArtifactLogging, Gate};
use crate::outcome::{self, ErrorKind, GateResult};
use crate::parse::PathContext;
use crate::plan::GatePlan;
use resolve::{ResolveError, ResolvedTool};

/// What every gate run shares.
pub struct ExecContext<'a> {
    /// Project root (canonical).
    pub root: &'a Path,
    /// Artifact-log settings.
    pub logging: &'a ArtifactLogging,
    /// `$VIRTUAL_ENV` at start.
    pub virtual_env: Option<OsString>,
    /// `$PATH` at start.
    pub path_var: Option<OsString>,
}

impl ExecContext<'_> {
    /// Captures the environment qg itself was started with.
    pub fn from_env<'a>(root: &'a Path, logging: &'a ArtifactLogging) -> ExecContext<'a> {
        ExecContext {
            root,
            logging,
            virtual_env: std::env::var_os("VIRTUAL_ENV"),
            path_var: std::env::var_os("PATH"),
        }
    }
}

impl ExecContext<'_> {
    /// Where this gate's `command[0]` resolves.
    pub fn resolve(&self, gate: &Gate) -> Result<ResolvedTool, ResolveError> {
        resolve::resolve(
            &gate.command[0],
            self.root,
            self.virtual_env.clone(),
            self.path_var.clone(),
        )
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

/// Runs every plan with at most `jobs` tools at once.
pub fn run_all(
    plans: &[GatePlan<'_>],
    ctx: &ExecContext<'_>,
    jobs: usize,
    observer: &dyn Observer,
) -> Vec<GateResult> {
    let slots: Vec<Mutex<Option<GateResult>>> = plans.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = jobs.clamp(1, plans.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(plan) = plans.get(index) else { break };
                let result = run_one(plan, ctx, observer);
                observer.gate_finished(&result);
                *slots[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every planned gate produces a result")
        })
        .collect()
}

/// Runs one planned gate.
pub fn run_one(plan: &GatePlan<'_>, ctx: &ExecContext<'_>, observer: &dyn Observer) -> GateResult {
    let gate = plan.gate;
    if let Some(reason) = &plan.skip_reason {
        return GateResult::skipped(gate, reason.clone());
    }
    let mut result = launch(plan, ctx, observer);
    result.files_checked = plan.files.len();
    result
}

fn launch(plan: &GatePlan<'_>, ctx: &ExecContext<'_>, observer: &dyn Observer) -> GateResult {
    let gate = plan.gate;
    let tool = match ctx.resolve(gate) {
        Ok(tool) => tool,
        Err(e) => return unresolved(gate, e),
    };
    let cwd = process::working_dir(ctx.root, gate.working_dir.as_deref());
    let args = arguments(gate, &plan.files, ctx.root);
    let argv = display_argv(&tool, &args);
    observer.gate_started(gate, plan.files.len(), &argv);
    let env = environment(gate, &tool, ctx);
    let invocation = process::Invocation {
        program: &tool.path,
        args: &args,
        cwd: &cwd,
        env: &env,
        timeout: gate.timeout,
    };
    let finished = match process::run(&invocation) {
        Ok(finished) => finished,
        Err(e) => {
            let message = format!("could not start {}: {e}", tool.path.display());
            return GateResult::launch_error(gate, ErrorKind::SpawnFailed, message);
        }
    };
    let paths = PathContext::new(ctx.root, &cwd);
    let mut result = outcome::judge(gate, &plan.files, &finished, &paths);
    result.log = write_log(gate, &argv, &tool, &cwd, &finished, ctx);
    result
}

/// The argv as text, program resolved (for `--verbose` and the log).
fn display_argv(tool: &ResolvedTool, args: &[OsString]) -> Vec<String> {
    std::iter::once(tool.path.display().to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect()
}

fn unresolved(gate: &Gate, error: ResolveError) -> GateResult {
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
    if let Some(install) = &gate.install_hint {
        message.push_str(&format!("; install: {install}"));
    }
    GateResult::launch_error(gate, kind, message)
}

/// `command[1..]` then the files. A file whose name starts with `-` gets a
/// `./` prefix so no tool can read it as an option; with a `working_dir`, files
/// are passed as absolute paths.
fn arguments(gate: &Gate, files: &[String], root: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = gate.command[1..].iter().map(OsString::from).collect();
    if gate.pass_files {
        args.extend(files.iter().map(|file| {
            if gate.working_dir.is_some() {
                root.join(file).into_os_string()
            } else if file.starts_with('-') {
                OsString::from(format!("./{file}"))
            } else {
                OsString::from(file)
            }
        }));
    }
    args
}

fn environment(
    gate: &Gate,
    tool: &ResolvedTool,
    ctx: &ExecContext<'_>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if let Some(bin) = &tool.venv_bin {
        // The tool's own virtualenv comes first on its PATH, as if activated.
        let mut dirs = vec![bin.clone()];
        if let Some(path) = &ctx.path_var {
            dirs.extend(std::env::split_paths(path));
        }
        if let Ok(joined) = std::env::join_paths(dirs) {
            env.push(("PATH".into(), joined));
        }
        if let Some(venv) = bin.parent() {
            env.push(("VIRTUAL_ENV".into(), venv.as_os_str().to_owned()));
        }
    }
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
) -> Option<String> {
    if !ctx.logging.enabled {
        return None;
    }
    let entry = artifacts::LogEntry {
        gate_id: &gate.id,
        gate_name: &gate.name,
        argv,
        program: &tool.path,
        cwd,
        finished,
    };
    match artifacts::write(ctx.root, ctx.logging, &entry) {
        Ok(path) => Some(path),
        Err(e) => {
            eprintln!(
                "qg: warning: could not write the artifact log for {}: {e}",
                gate.id
            );
            None
        }
    }
}
