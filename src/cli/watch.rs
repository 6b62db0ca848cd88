//! `qg watch`: a pass on every save, one screen redrawn (or one JSON
//! report per line).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::{current_dir, print_stdout, ScopeArgs};
use crate::baseline::BaselineUse;
use crate::error::QgError;
use crate::process::Cancel;
use crate::report::{self, Format};
use crate::run::{DaemonUse, RunOptions};
use crate::watch::{self, Finding, Pass, Screen, WatchOptions};

#[derive(Debug, Args)]
pub(super) struct WatchArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Run only this gate (repeatable).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// `human` redraws one screen per pass; `json` prints one run report
    /// per line (JSON Lines).
    #[arg(long, value_enum, default_value = "human")]
    format: WatchFormat,
    /// Maximum number of tools running at once (default: number of CPUs).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Run every tool cold: start no daemon, ask none.
    #[arg(long)]
    no_daemon: bool,
    /// Quiet time after a change before a pass starts.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration)]
    debounce: Duration,
    /// The daemons this watch starts compare one warm answer in this many
    /// with a cold run, in the background (0: only the self-check after
    /// each start).
    #[arg(long, value_name = "N", default_value_t = 10)]
    verify_every: usize,
    /// Stop the daemons this watch starts after this long without a pass
    /// (they stop when it exits anyway).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    /// Do not move the baseline in .st3/state.json.
    #[arg(long)]
    no_state: bool,
    /// Colour: auto (terminal and no NO_COLOR), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum WatchFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{e} (write it as 100ms, 2s)"))
}

pub(super) fn command(args: WatchArgs) -> Result<i32, QgError> {
    let cancel = Cancel::default();
    let options = WatchOptions {
        run: RunOptions {
            cwd: current_dir()?,
            config: args.scope.config.clone(),
            scope: args.scope.request(),
            gates: args.gates.clone(),
            jobs: args
                .jobs
                .map(usize::from)
                .unwrap_or_else(crate::process::cores),
            no_state: args.no_state,
            baseline: BaselineUse::Ratchet,
            shard: None,
            cancel: cancel.clone(),
            report_covered: false,
            require_trust: true,
            cache: Default::default(),
            confirm: false,
            daemons: match args.no_daemon {
                true => DaemonUse::Ignore,
                false => DaemonUse::Use,
            },
        },
        debounce: args.debounce,
        verify_every: args.verify_every,
        idle_timeout: args.idle_timeout,
    };
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop, &cancel);
    let terminal = std::io::stdout().is_terminal();
    let mut screen: Box<dyn Screen> = match args.format {
        WatchFormat::Json => Box::new(JsonScreen),
        WatchFormat::Human => Box::new(HumanScreen {
            clear: terminal,
            color: match args.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => {
                    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                }
            },
        }),
    };
    watch::watch(&options, screen.as_mut(), &stop)?;
    Ok(0)
}

/// Ctrl-C or SIGTERM: the pass under way is cancelled (its tools killed),
/// the watch ends and stops the daemons it started. A second signal exits
/// at once, killing what still runs.
fn stop_on_signals(stop: &Arc<AtomicBool>, cancel: &Cancel) {
    let Ok(mut interrupts) = super::interrupt::watch() else {
        warn_user!("cannot watch for Ctrl-C; stop qg watch with `kill`");
        return;
    };
    let (stop, cancel) = (Arc::clone(stop), cancel.clone());
    std::thread::spawn(move || {
        if interrupts.next().is_some() {
            stop.store(true, Ordering::SeqCst);
            cancel.cancel();
        }
        if let Some(interrupt) = interrupts.next() {
            crate::process::kill_all_running();
            std::process::exit(interrupt.status);
        }
    });
}

/// One screen per pass: the summary line, what changed since the pass
/// before, then the findings and the gates.
struct HumanScreen {
    clear: bool,
    color: bool,
}

/// Findings listed under "fixed" and "new" before the rest is elided.
const LISTED: usize = 20;

impl Screen for HumanScreen {
    fn note(&mut self, message: &str) {
        eprintln!("qg watch: {message}");
    }

    fn pass(&mut self, pass: &Pass<'_>) {
        let mut out = String::new();
        if self.clear {
            out.push_str("\x1b[2J\x1b[H");
        }
        let text = report::render(pass.report, Format::Human, self.color);
        let (summary, rest) = text.split_once('\n').unwrap_or((&text, ""));
        out.push_str(summary);
        out.push('\n');
        out.push_str(&describe_pass(pass));
        if !pass.fixed.is_empty() || !pass.new.is_empty() {
            out.push_str(&format!(
                "since the previous pass: {} fixed, {} new\n",
                pass.fixed.len(),
                pass.new.len()
            ));
            list(&mut out, "+", &pass.new);
            list(&mut out, "-", &pass.fixed);
        }
        out.push_str(rest);
        out.push_str("\nwatching for changes (Ctrl-C to stop)\n");
        print_stdout(&out);
    }

    fn confirmed(&mut self, pass: &Pass<'_>) {
        self.pass(pass);
    }
}

/// `pass 3 · after pkg/a.py changed · 0.4 s · warm: mypy, pyright`.
fn describe_pass(pass: &Pass<'_>) -> String {
    let trigger = match pass.changed {
        [] => "first pass".to_string(),
        [one] => format!("after {one} changed"),
        many => format!("after {} files changed", many.len()),
    };
    let warm: Vec<&str> = pass
        .report
        .gates
        .iter()
        .filter(|g| g.warm)
        .map(|g| g.id.as_str())
        .collect();
    let mut line = format!(
        "pass {} · {trigger} · {:.1} s",
        pass.number,
        pass.report.total_ms as f64 / 1000.0
    );
    if !warm.is_empty() {
        line.push_str(&format!(" · warm: {}", warm.join(", ")));
    }
    line.push('\n');
    line
}

fn list(out: &mut String, mark: &str, findings: &[Finding]) {
    for finding in findings.iter().take(LISTED) {
        let v = &finding.violation;
        out.push_str(&format!(
            "  {mark} {}:{}:{} {} {} [{}]\n",
            v.file.as_deref().unwrap_or("-"),
            v.line.unwrap_or(0),
            v.column.unwrap_or(0),
            v.code.as_deref().unwrap_or(""),
            v.message.lines().next().unwrap_or(""),
            finding.gate
        ));
    }
    if findings.len() > LISTED {
        out.push_str(&format!("  {mark} and {} more\n", findings.len() - LISTED));
    }
}

/// One run report per pass, on a line of its own (JSON Lines).
struct JsonScreen;

impl Screen for JsonScreen {
    fn note(&mut self, message: &str) {
        eprintln!("qg watch: {message}");
    }

    fn pass(&mut self, pass: &Pass<'_>) {
        print_stdout(&report::render(pass.report, Format::Json, false));
    }
}
