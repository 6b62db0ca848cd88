//! `qg baseline write|check`: the committed list of known violations.

use clap::{Args, Subcommand};

use super::progress::TerminalObserver;
use super::{current_dir, ScopeArgs};
use crate::baseline::file::BASELINE_FILE;
use crate::baseline::BaselineUse;
use crate::error::QgError;
use crate::report::summary::{summary_line, thousands};
use crate::run::{self, RunOptions};
use crate::scope::ScopeMode;

#[derive(Debug, Subcommand)]
pub(super) enum BaselineAction {
    /// Run every gate on the whole project and record its violations in
    /// .st3/baseline.jsonl (commit it): from then on only new ones fail.
    Write(BaselineArgs),
    /// Fail when the baseline still holds findings that are fixed (run
    /// `qg baseline write`, or any local `qg run` over those files).
    Check(BaselineArgs),
}

#[derive(Debug, Args)]
pub(super) struct BaselineArgs {
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Only this gate (repeatable); the other gates' entries are kept.
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// No live progress display.
    #[arg(long)]
    no_progress: bool,
}

pub(super) fn command(action: BaselineAction) -> Result<i32, QgError> {
    match action {
        BaselineAction::Write(args) => write(args),
        BaselineAction::Check(args) => check(args),
    }
}

/// A whole-project run with the given baseline use.
fn options(args: &BaselineArgs, baseline: BaselineUse) -> Result<RunOptions, QgError> {
    let scope = ScopeArgs {
        scope: Some(ScopeMode::Project),
        paths: Vec::new(),
        config: args.config.clone(),
        parent: None,
    };
    Ok(RunOptions {
        cwd: current_dir()?,
        config: args.config.clone(),
        scope: scope.request(),
        gates: args.gates.clone(),
        jobs: crate::process::cores(),
        no_state: true,
        baseline,
        shard: None,
        cancel: Default::default(),
        report_covered: false,
        require_trust: false,
        cache: Default::default(),
        confirm: false,
        daemons: Default::default(),
    })
}

fn write(args: BaselineArgs) -> Result<i32, QgError> {
    let options = options(&args, BaselineUse::Ignore)?;
    super::interrupt::install();
    let observer = TerminalObserver::new(!args.no_progress, false);
    let written = run::write_baseline(&options, &observer)?;
    drop(observer);
    let violations = match written.entries {
        1 => "1 known violation".to_string(),
        n => format!("{} known violations", thousands(n)),
    };
    super::print_stdout(&format!(
        "qg: {BASELINE_FILE} holds {violations} of {} ({}); commit it\n",
        crate::report::plural(written.gates, "gate"),
        summary_line(&written.report)
    ));
    Ok(0)
}

fn check(args: BaselineArgs) -> Result<i32, QgError> {
    let options = options(&args, BaselineUse::Locked)?;
    super::interrupt::install();
    let observer = TerminalObserver::new(!args.no_progress, false);
    let report = run::run(&options, &observer)?;
    drop(observer);
    let Some(summary) = &report.baseline else {
        return Err(QgError::Usage(format!(
            "there is no {BASELINE_FILE}; `qg baseline write` creates one"
        )));
    };
    super::print_stdout(&format!("{}\n", summary_line(&report)));
    if summary.fixed > 0 {
        super::print_stdout(&format!(
            "qg: {BASELINE_FILE} is stale: {} of its entries are fixed; \
             `qg baseline write` (or a local `qg run` over those files) drops them\n",
            thousands(summary.fixed)
        ));
        return Ok(1);
    }
    super::print_stdout(&format!("qg: {BASELINE_FILE} is up to date\n"));
    Ok(0)
}
