//! `qg daemon start|stop|status`: warm type checkers, kept running between
//! runs (and the hidden `serve` and `guard` the daemons themselves run).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::{current_dir, print_stdout};
use crate::error::QgError;
use crate::outcome::GateStatus;
use crate::warm::control::{self, DaemonState, Outcome, StartRequest, Started};
use crate::warm::daemon::{self, ServeOptions};
use crate::warm::log::Log;

#[derive(Debug, Subcommand)]
pub(super) enum DaemonAction {
    /// Start a daemon for every active gate with a `daemon` section (or the
    /// `--gate`s named) and return once each has made its first full pass.
    Start(StartArgs),
    /// Stop the project's daemons (or the `--gate`s named).
    Stop(StopArgs),
    /// What each warm gate's daemon is doing.
    Status(StatusArgs),
    /// Run one gate's daemon in the foreground (what `start` launches).
    #[command(hide = true)]
    Serve(ServeArgs),
    /// Compare a daemon's answers with a cold run (what a daemon starts,
    /// at low priority, after its first full pass and now and then after).
    #[command(hide = true)]
    SelfCheck(SelfCheckArgs),
    /// Confirm a run's warm answer with a cold run of the files it vouches
    /// for (what a daemon starts, at low priority, when a run hands it one).
    #[command(hide = true)]
    Confirm(ConfirmArgs),
    /// Run a daemon's tool in a process group that dies with the daemon.
    #[command(hide = true)]
    Guard {
        /// The program and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
        argv: Vec<OsString>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum DaemonFormat {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub(super) struct StartArgs {
    /// Only this gate (repeatable).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Stop a daemon after this long without a run (default: the gate's
    /// `idle_timeout_minutes`, 30 minutes), e.g. 10m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    /// Start at most this many daemons (the gates after them, in config
    /// order, are answered cold): a workspace has a gate per member, and
    /// each pyright server holds its program in memory.
    #[arg(long = "max", value_name = "N", default_value_t = control::DEFAULT_AT_MOST,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    at_most: usize,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: DaemonFormat,
}

#[derive(Debug, Args)]
pub(super) struct StopArgs {
    /// Only this gate's daemon (repeatable).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
}

#[derive(Debug, Args)]
pub(super) struct StatusArgs {
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: DaemonFormat,
}

#[derive(Debug, Args)]
pub(super) struct ServeArgs {
    #[arg(long)]
    gate: String,
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long, value_name = "PID")]
    owner: Option<u32>,
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    #[arg(long, value_name = "N")]
    verify_every: Option<usize>,
}

#[derive(Debug, Args)]
pub(super) struct SelfCheckArgs {
    #[arg(long)]
    gate: String,
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The daemon: the comparison stops when it is gone.
    #[arg(long, value_name = "PID")]
    owner: Option<u32>,
    /// A sampled run's files (a JSON list); default: the whole program.
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(super) struct ConfirmArgs {
    #[arg(long)]
    gate: String,
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The daemon: the confirmation stops when it is gone.
    #[arg(long, value_name = "PID")]
    owner: Option<u32>,
    /// The confirmation the run wrote.
    #[arg(long, value_name = "FILE")]
    job: PathBuf,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("must be longer than zero".into()),
        Err(e) => Err(format!("{e} (write it as 30m, 2h, 90s)")),
    }
}

pub(super) fn command(action: DaemonAction) -> Result<i32, QgError> {
    match action {
        DaemonAction::Start(args) => start(args),
        DaemonAction::Stop(args) => stop(args),
        DaemonAction::Status(args) => status(args),
        DaemonAction::Serve(args) => {
            // Its stderr is the slot's daemon.log (`qg daemon start` opens it).
            let log = Log::new(
                Box::new(std::io::stderr()),
                &format!("qg daemon {}", args.gate),
            );
            let options = ServeOptions {
                cwd: current_dir()?,
                config: args.config,
                gate: args.gate,
                owner: args.owner,
                idle_timeout: args.idle_timeout,
                verify_every: args.verify_every,
                log,
            };
            daemon::serve(options).map_err(QgError::Usage)?;
            Ok(0)
        }
        DaemonAction::SelfCheck(args) => self_check(args),
        DaemonAction::Confirm(args) => confirm(args),
        DaemonAction::Guard { argv } => {
            let log = Log::new(Box::new(std::io::stderr()), "qg daemon guard");
            Ok(crate::warm::guard::main(&argv, &log))
        }
    }
}

fn start(args: StartArgs) -> Result<i32, QgError> {
    let request = StartRequest {
        cwd: current_dir()?,
        config: args.config,
        gates: args.gates,
        owner: None,
        idle_timeout: args.idle_timeout,
        verify_every: None,
        at_most: args.at_most,
    };
    let clock = std::time::Instant::now();
    let started = control::start(&request)?;
    let wall_ms = clock.elapsed().as_millis() as u64;
    let failed = started.iter().filter(|s| failed(s)).count();
    let text = match args.format {
        DaemonFormat::Json => format!("{}\n", start_json(&started)),
        DaemonFormat::Human => start_human(&started, wall_ms),
    };
    print_stdout(&text);
    Ok(if failed > 0 { 2 } else { 0 })
}

/// `wall_ms`: how long the start took, first passes and self-checks
/// included (the headline's time: a user waited that long).
fn start_human(started: &[Started], wall_ms: u64) -> String {
    let failed = started.iter().filter(|s| failed(s)).count();
    let held_back = started
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::HeldBack(_)))
        .count();
    let cold = started
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Cold(_)))
        .count();
    let ready = started.len() - failed - held_back - cold;
    let mut out = match (ready, failed) {
        (0, 0) if cold > 0 => format!(
            "⏭️ no warm gates: {cold} gate{} {} cold with the tools installed\n",
            plural(cold),
            if cold == 1 { "answers" } else { "answer" }
        ),
        (0, 0) => "⏭️ no warm gates: no active gate has a `daemon` section\n".to_string(),
        (n, 0) => format!(
            "✅ {n} daemon{} ready in {} — whole program checked, answers compared with a cold run\n",
            plural(n),
            seconds(wall_ms)
        ),
        (_, failed) => format!(
            "⚠️ {failed}/{} daemon{} could not start\n",
            failed + ready,
            plural(failed + ready)
        ),
    };
    if held_back > 0 {
        out.push_str(&format!(
            "   {held_back} more not started: at most {} run at once (--max); their runs are cold\n",
            ready + failed
        ));
    }
    let width = started.iter().map(|s| s.gate.len()).max().unwrap_or(0);
    for s in started {
        let line = match &s.outcome {
            Outcome::Ready(ready) if ready.already => {
                format!("already running (pid {})", ready.pid)
            }
            Outcome::Ready(ready) => format!(
                "ready: first full pass in {}{} (pid {})",
                seconds(ready.first_pass_ms),
                ready
                    .checked_ms
                    .map(|ms| format!(
                        ", its answers equal a cold run's (compared in {})",
                        seconds(ms)
                    ))
                    .unwrap_or_default(),
                ready.pid
            ),
            Outcome::HeldBack(at_most) => {
                format!("not started: at most {at_most} daemons run at once")
            }
            Outcome::Failed(why) => format!("failed: {why}"),
            Outcome::Cold(why) => format!("not started, its runs are cold: {why}"),
        };
        out.push_str(&format!("  {:width$}  {line}\n", s.gate));
    }
    out
}

/// Whether the daemon could not start (one held back by `--max` did not try).
fn failed(started: &Started) -> bool {
    matches!(started.outcome, Outcome::Failed(_))
}

fn start_json(started: &[Started]) -> serde_json::Value {
    let daemons: Vec<serde_json::Value> = started
        .iter()
        .map(|s| match &s.outcome {
            Outcome::Ready(ready) => serde_json::json!({
                "gate": s.gate, "state": "ready", "pid": ready.pid,
                "first_pass_ms": ready.first_pass_ms, "checked_ms": ready.checked_ms,
                "already_running": ready.already,
            }),
            Outcome::HeldBack(at_most) => {
                serde_json::json!({"gate": s.gate, "state": "not_started", "at_most": at_most})
            }
            Outcome::Failed(why) => {
                serde_json::json!({"gate": s.gate, "state": "failed", "error": why})
            }
            Outcome::Cold(why) => {
                serde_json::json!({"gate": s.gate, "state": "cold", "why": why})
            }
        })
        .collect();
    let ok = !started.iter().any(failed);
    serde_json::json!({"ok": ok, "daemons": daemons})
}

fn stop(args: StopArgs) -> Result<i32, QgError> {
    let ws = crate::workspace::Workspace::discover(&current_dir()?)?;
    let stopped = control::stop(&ws.root, &args.gates);
    let running: Vec<&str> = stopped
        .iter()
        .filter(|s| s.was_running)
        .map(|s| s.gate.as_str())
        .collect();
    let text = match running.is_empty() {
        true => "⏭️ no daemon was running\n".to_string(),
        false => format!(
            "⏹️ stopped {} daemon{}: {}\n",
            running.len(),
            plural(running.len()),
            running.join(", ")
        ),
    };
    print_stdout(&text);
    Ok(0)
}

fn status(args: StatusArgs) -> Result<i32, QgError> {
    let cwd = current_dir()?;
    let ws = crate::workspace::Workspace::discover(&cwd)?;
    let config = crate::members::load_config(&ws, args.config.as_deref())?;
    let states = control::status(&ws.root, &config);
    let text = match args.format {
        DaemonFormat::Json => format!("{}\n", serde_json::json!({"daemons": states})),
        DaemonFormat::Human => status_human(&states),
    };
    print_stdout(&text);
    Ok(0)
}

fn status_human(states: &[DaemonState]) -> String {
    let warm = states.iter().filter(|s| s.answers_warm()).count();
    let mut out = match states.len() {
        0 => "⏭️ no warm gates: no active gate has a `daemon` section\n".to_string(),
        n => format!("{warm}/{n} warm gates answer warm\n"),
    };
    let width = states.iter().map(|s| s.gate.len()).max().unwrap_or(0);
    for state in states {
        let mut line = format!("  {:width$}  {}", state.gate, state.state);
        if let Some(status) = &state.status {
            let record = &status.record;
            line.push_str(&format!("  pid {}", record.pid));
            if let Some(ms) = record.first_pass_ms {
                line.push_str(&format!("  first pass {}", seconds(ms)));
            }
            line.push_str(&format!(
                "  {} check{}  idle {}s of {}s  {} MiB",
                status.checks,
                plural(status.checks as usize),
                status.idle_s,
                record.idle_timeout_s,
                status.rss_kib / 1024
            ));
            if !state.current {
                line.push_str("  (stale: a run would answer cold until it starts again)");
            }
            if let Some(error) = &record.error {
                line.push_str(&format!("  error: {error}"));
            }
            if let Some(distrust) = &record.distrust {
                line.push_str(&format!("  untrusted: {}", distrust.describe()));
            }
        }
        if let Some(why) = &state.cold {
            line.push_str(&format!("  its runs are cold: {why}"));
        }
        let said = state
            .status
            .as_ref()
            .is_some_and(|s| s.record.distrust.is_some() || s.record.error.is_some());
        if let Some(standing) = state.standing.as_ref().filter(|_| !said) {
            line.push_str(&format!("  answers cold: {}", standing.describe()));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// A cancel that fires when the daemon `owner` is gone (it stopped, or
/// was killed): a background comparison outlives no daemon.
fn cancelled_without(owner: Option<u32>) -> crate::process::Cancel {
    let cancel = crate::process::Cancel::default();
    if let Some(owner) = owner {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            while crate::warm::procfs::alive(owner) {
                std::thread::sleep(Duration::from_millis(250));
            }
            cancel.cancel();
        });
    }
    cancel
}

/// `qg daemon confirm`: one run's warm answer checked cold, at the lowest
/// CPU priority (the daemon starts it so); the outcome moves the run's
/// held state and the daemon's trust.
fn confirm(args: ConfirmArgs) -> Result<i32, QgError> {
    // Its tools run in process groups of their own: a daemon stopping it
    // (a newer answer supersedes this one) asks with SIGTERM, and this
    // kills them before exiting.
    super::interrupt::install();
    let cancel = cancelled_without(args.owner);
    let log = Log::new(
        Box::new(std::io::stderr()),
        &format!("qg daemon confirm {}", args.gate),
    );
    match crate::run::confirm_job(&current_dir()?, args.config.as_deref(), &args.job, &cancel) {
        Ok(()) | Err(QgError::Cancelled) => Ok(0),
        Err(e) => {
            log.line(&format!("could not confirm: {e}"));
            Ok(2)
        }
    }
}

/// The run pipeline with `--verify` for one gate, over the whole program
/// or a sampled run's files, at the lowest CPU priority (the daemon starts
/// it so): the comparison itself tells the daemon how it came out. A run
/// that could not compare (the daemon did not answer, the run failed)
/// tells it so here.
fn self_check(args: SelfCheckArgs) -> Result<i32, QgError> {
    use crate::run::{self, DaemonUse, RunOptions};
    use crate::scope::{ScopeMode, ScopeRequest};
    // Its tools run in process groups of their own: a daemon stopping it
    // asks with SIGTERM, and this kills them before exiting.
    super::interrupt::install();
    let cwd = current_dir()?;
    let cancel = cancelled_without(args.owner);
    let sample = match &args.files_from {
        Some(list) => Some(crate::warm::checker::read_sample(list).map_err(QgError::Usage)?),
        None => None,
    };
    let scope = match &sample {
        Some(sample) => {
            let root = crate::workspace::Workspace::discover(&cwd)?.root;
            ScopeRequest {
                mode: Some(ScopeMode::Files),
                paths: sample
                    .files
                    .iter()
                    .chain(&sample.left_out)
                    .map(|f| crate::file_name::join(&root, f))
                    .collect(),
                parent: None,
            }
        }
        None => ScopeRequest {
            mode: Some(ScopeMode::Project),
            ..ScopeRequest::default()
        },
    };
    // The importers a run left out are judged as that run's verdict
    // would be: against the baseline (never written here).
    let left_out = sample.map(|s| s.left_out).unwrap_or_default();
    let baseline = match left_out.is_empty() {
        true => crate::baseline::BaselineUse::Ignore,
        false => crate::baseline::BaselineUse::Locked,
    };
    let options = RunOptions {
        cwd: cwd.clone(),
        config: args.config,
        scope,
        gates: vec![args.gate.clone()],
        jobs: crate::process::cores(),
        no_state: true,
        baseline,
        shard: None,
        cancel,
        daemons: DaemonUse::Verify,
        report_covered: false,
        require_trust: false,
        // Its cold runs are kept in the result cache (a warm gate is never
        // answered from it under `--verify`).
        cache: crate::run::CacheUse::Default,
        confirm: false,
    };
    let log = Log::new(
        Box::new(std::io::stderr()),
        &format!("qg daemon self-check {}", args.gate),
    );
    let ran = run::run(&options, &crate::exec::Silent);
    if let Ok(report) = &ran {
        if let Some(found) = run::judge_sample(report, &args.gate, &left_out) {
            log.line(&format!(
                "leaving out the importers of a body-only edit was wrong: {found}; every importer is checked from now on"
            ));
        }
    }
    let unanswered = match ran {
        Ok(report) => report
            .gates
            .iter()
            // An erred gate was judged already: the comparison reported
            // the cold run's error (and a daemon that gave no answer
            // either is reported by the daemon itself).
            .find(|g| g.id == args.gate && !g.warm && g.status != GateStatus::Error)
            // Why it answered cold, not the gate's first warning: that can
            // be a note of the tool's, printed warm and cold alike.
            .map(|g| {
                let why = g.answered_cold_warning();
                match why {
                    Some(why) => format!("the daemon gave no answer ({why})"),
                    None => "the daemon gave no answer".to_string(),
                }
            }),
        Err(e) => Some(format!("the run failed: {e}")),
    };
    if let Some(reason) = unanswered {
        log.line(&reason);
        let root = crate::workspace::Workspace::discover(&cwd)?.root;
        crate::warm::client::report(
            &root,
            &args.gate,
            crate::warm::record::Comparison::Inconclusive { reason },
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A start where every asked daemon failed says so, not that no gate
    /// has a daemon (typing-inspection's pinned pyright: "no warm gates:
    /// no active gate has a `daemon` section" above its failure).
    #[test]
    fn a_start_whose_only_daemon_failed_says_it_could_not_start() {
        let failed = Started {
            gate: "pyright".into(),
            outcome: Outcome::Failed("the language server did not answer in time".into()),
        };
        let text = start_human(&[failed], 1_000);
        assert!(
            text.starts_with("⚠️ 1/1 daemon could not start\n"),
            "{text}"
        );
        assert!(text.contains("pyright"), "{text}");
        assert!(start_human(&[], 0).contains("no active gate has a `daemon` section"));
    }
}
