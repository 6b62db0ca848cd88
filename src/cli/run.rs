//! `qg run`: run the gates, print the chosen format, write `--report`s.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use std::io::Write;

use super::progress::TerminalObserver;
use super::{current_dir, ScopeArgs};
use crate::baseline::BaselineUse;
use crate::error::QgError;
use crate::report::RunReport;
use crate::report::{self, step_summary, summary::summary_line, Format};
use crate::run::{self, RunOptions};

#[derive(Debug, Args)]
pub(super) struct RunArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Also write a report: FORMAT=PATH (repeatable), e.g. sarif=qg.sarif.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = parse_report)]
    reports: Vec<(Format, PathBuf)>,
    /// Run only this gate (repeatable; any gate defined in the config).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// Maximum number of tools running at once (default: number of CPUs).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Do not move the baseline in .st3/state.json.
    #[arg(long)]
    no_state: bool,
    /// Never write .st3/baseline.jsonl, not even to drop fixed entries (CI).
    #[arg(long, conflicts_with = "no_baseline")]
    locked: bool,
    /// Ignore .st3/baseline.jsonl: every violation counts.
    #[arg(long)]
    no_baseline: bool,
    /// Write the report to FILE; stdout gets only the summary line.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print only the summary line.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    quiet: bool,
    /// Print each command as it is run (on stderr).
    #[arg(long, short = 'v')]
    verbose: bool,
    /// No live progress display.
    #[arg(long)]
    no_progress: bool,
    /// Colour human output: auto (terminal and no NO_COLOR), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// `auto`: only on a terminal, and never when NO_COLOR is set (no-color.org).
    fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

fn parse_report(text: &str) -> Result<(Format, PathBuf), String> {
    let (format, path) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not FORMAT=PATH (e.g. sarif=qg.sarif)"))?;
    let format = <Format as clap::ValueEnum>::from_str(format, true).map_err(|_| {
        format!(
            "unknown format `{format}`; use human, json, concise, github, sarif, gitlab or junit"
        )
    })?;
    if path.is_empty() {
        return Err(format!("`{text}` names no file"));
    }
    Ok((format, PathBuf::from(path)))
}

pub(super) fn command(args: RunArgs) -> Result<i32, QgError> {
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let options = RunOptions {
        cwd: current_dir()?,
        config: args.scope.config.clone(),
        scope: args.scope.request(),
        gates: args.gates.clone(),
        jobs,
        no_state: args.no_state,
        baseline: match (args.locked, args.no_baseline) {
            (_, true) => BaselineUse::Ignore,
            (true, false) => BaselineUse::Locked,
            (false, false) => BaselineUse::Ratchet,
        },
        cancel: Default::default(),
    };
    super::interrupt::install();
    let observer = TerminalObserver::new(!args.no_progress && !args.quiet, args.verbose);
    let report = run::run(&options, &observer)?;
    drop(observer);
    for (format, path) in &args.reports {
        write_file(path, |out| report::write(&report, *format, false, out))?;
    }
    if let Some(path) = &args.output {
        write_file(path, |out| report::write(&report, args.format, false, out))?;
    }
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`qg run | head`) is not an error worth reporting.
    let _ = if args.quiet || args.output.is_some() {
        writeln!(stdout, "{}", summary_line(&report))
    } else {
        let color = args.format == Format::Human && args.color.enabled();
        report::write(&report, args.format, color, &mut stdout).and_then(|()| stdout.flush())
    };
    drop(stdout);
    let github =
        args.format == Format::Github || args.reports.iter().any(|r| r.0 == Format::Github);
    if github {
        append_step_summary(&report);
    }
    Ok(report.exit_code())
}

fn write_file(
    path: &PathBuf,
    render: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), QgError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| QgError::io(format!("cannot create {}", dir.display()), e))?;
    }
    let written = std::fs::File::create(path).and_then(|file| {
        let mut out = std::io::BufWriter::new(file);
        render(&mut out)?;
        std::io::Write::flush(&mut out)
    });
    written.map_err(|e| QgError::io(format!("cannot write {}", path.display()), e))
}

/// Appends the markdown job summary when GitHub Actions asks for one.
fn append_step_summary(report: &RunReport) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let used = std::fs::metadata(&path).map_or(0, |m| m.len() as usize);
    let budget = step_summary::LIMIT_BYTES.saturating_sub(used);
    if budget < 1024 {
        warn_user!("the job summary is full ({used} bytes); not adding qg's");
        return;
    }
    let markdown = step_summary::render(report, budget);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, markdown.as_bytes()));
    if let Err(e) = written {
        warn_user!("cannot append the job summary: {e}");
    }
}
