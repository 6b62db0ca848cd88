//! `qg fix`: fix what the gates can fix in the scope, then check again.

use clap::Args;

use super::progress::TerminalObserver;
use super::{current_dir, print_stdout, ScopeArgs};
use crate::baseline::BaselineUse;
use crate::error::QgError;
use crate::fix::{self, FixOptions, FixReport};
use crate::report::summary::plural;
use crate::report::{self, Format, RunReport};
use crate::run::RunOptions;
use crate::scope::ScopeMode;

#[derive(Debug, Args)]
pub(super) struct FixArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Fix only this gate's findings (repeatable).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// Also apply the fixes the tools call unsafe (each gate's `fix.unsafe_args`).
    #[arg(long = "unsafe")]
    unsafe_fixes: bool,
    /// Print the changes the fixers would make; write nothing.
    #[arg(long)]
    diff: bool,
    /// Output format: human, or json for agents and scripts.
    #[arg(long, value_enum, default_value = "human")]
    format: FixFormat,
    /// No live progress display.
    #[arg(long)]
    no_progress: bool,
    /// Print only what was fixed and the check's summary line.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FixFormat {
    Human,
    Json,
}

pub(super) fn command(args: FixArgs) -> Result<i32, QgError> {
    let options = FixOptions {
        run: RunOptions {
            cwd: current_dir()?,
            config: args.scope.config.clone(),
            scope: args.scope.request(),
            gates: args.gates.clone(),
            jobs: crate::process::cores(),
            no_state: false,
            baseline: BaselineUse::Ratchet,
            shard: None,
            cancel: Default::default(),
            report_covered: false,
            require_trust: false,
            cache: Default::default(),
            confirm: false,
            daemons: Default::default(),
        },
        unsafe_fixes: args.unsafe_fixes,
        diff: args.diff,
    };
    // Ctrl-C cancels: the fixers are killed and every file they touched is
    // put back before qg exits (a fixer killed mid-write must not leave a
    // half-written file).
    super::interrupt::install_cancelling(&options.run.cancel);
    let observer = TerminalObserver::new(!args.no_progress, false);
    let fixed = fix::fix(&options, &observer);
    drop(observer);
    let report = match (fixed, super::interrupt::cancelled_by()) {
        (Err(QgError::Cancelled), Some((signal, code))) => {
            eprintln!(
                "qg: interrupted by {signal}; stopped the fixers and put every file back; state not updated"
            );
            return Ok(code);
        }
        (fixed, _) => fixed?,
    };
    let text = match args.format {
        FixFormat::Human => human(&report, args.quiet),
        FixFormat::Json => json(&report),
    };
    print_stdout(&text);
    Ok(report.exit_code())
}

/// `🔧 fixed 12 violations in 3 files (a.py, b.py, c.py); ❌ …` then the
/// check after fixing, as `qg run` prints it.
fn human(report: &FixReport, quiet: bool) -> String {
    let mut out = String::new();
    for error in &report.errors {
        out.push_str(&format!("qg: fix failed: {error}\n"));
    }
    let Some(after) = &report.after else {
        for (gate, diff) in &report.diffs {
            out.push_str(&format!("── {gate} ──\n{diff}"));
        }
        out.push_str("(--diff: nothing was written)\n");
        return out;
    };
    let files = match report.changed.len() {
        0 => format!(", no file changed{}", narrow_scope(after)),
        n => format!(" in {} ({})", plural(n, "file"), report.changed.join(", ")),
    };
    let fixed = plural(report.fixed(), "violation");
    out.push_str(&format!("🔧 fixed {fixed}{files}\n"));
    match quiet {
        true => out.push_str(&format!("{}\n", report::summary::summary_line(after))),
        false => out.push_str(&report::render(after, Format::Human, false)),
    }
    out
}

/// When nothing changed in a scope narrower than the project, which scope
/// it was and why: right after `qg baseline write`, `auto` holds no file,
/// and the known fixable findings elsewhere are not what it fixes.
fn narrow_scope(after: &RunReport) -> String {
    let scope = &after.scope;
    let why = match scope.mode {
        ScopeMode::Project => return String::new(),
        ScopeMode::Auto => " (what changed since the last green run, and what failed)",
        ScopeMode::Branch => " (what differs from the parent branch)",
        _ => "",
    };
    let held = match scope.files_checked {
        0 => "no file".to_string(),
        n => plural(n, "file"),
    };
    format!(
        " — the {} scope held {held}{why}; `qg fix --scope project` fixes every file",
        scope.mode.as_str()
    )
}

fn json(report: &FixReport) -> String {
    serde_json::to_string(&report.document()).expect("a fix report serializes") + "\n"
}
