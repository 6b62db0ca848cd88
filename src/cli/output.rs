//! Where a report goes: stdout in the chosen format, `--report
//! FORMAT=PATH` files, `--output`, and GitHub's job summary — the same for
//! a run (`qg run`) and a merged run (`qg merge`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use crate::error::QgError;
use crate::report::{self, step_summary, summary::summary_line, Format, RunReport};

/// The flags that say where a report goes and how it looks.
#[derive(Debug, Args)]
pub(super) struct OutputArgs {
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "human")]
    pub(super) format: Format,
    /// Also write a report: FORMAT=PATH (repeatable), e.g. sarif=qg.sarif.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = parse_report)]
    reports: Vec<(Format, PathBuf)>,
    /// Write the report to FILE; stdout gets only the summary line.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print only the summary line.
    #[arg(long, short = 'q')]
    pub(super) quiet: bool,
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

/// Writes `report` where `args` say, and returns its exit status.
pub(super) fn emit(report: &RunReport, args: &OutputArgs) -> Result<i32, QgError> {
    for (format, path) in &args.reports {
        write_file(path, |out| report::write(report, *format, false, out))?;
    }
    if let Some(path) = &args.output {
        write_file(path, |out| report::write(report, args.format, false, out))?;
    }
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`qg run | head`) is not an error worth reporting.
    let _ = if args.quiet || args.output.is_some() {
        writeln!(stdout, "{}", summary_line(report))
    } else {
        let color = args.format == Format::Human && args.color.enabled();
        report::write(report, args.format, color, &mut stdout).and_then(|()| stdout.flush())
    };
    drop(stdout);
    let github =
        args.format == Format::Github || args.reports.iter().any(|r| r.0 == Format::Github);
    if github {
        append_step_summary(report);
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
