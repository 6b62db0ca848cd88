//! Command-line interface: parses flags, calls the library, renders, exits.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use serde::Serialize;

use crate::error::QgError;
use crate::exec::{Observer, Silent};
use crate::progress::Progress;
use crate::report::{self, summary::summary_line, Format};
use crate::run::{self, RunOptions};
use crate::scope::{self, ScopeMode, ScopeRequest};
use crate::state::StateStore;

/// qg — fast, honest quality gates for Python projects.
#[derive(Debug, Parser)]
#[command(name = "qg", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the configured gates on the resolved scope.
    Run(RunArgs),
    /// Print the resolved scope without running any tool.
    Files(FilesArgs),
    /// Show or reset this branch's baseline state (.st3/state.json).
    State {
        #[command(subcommand)]
        action: StateAction,
    },
}

#[derive(Debug, Subcommand)]
enum StateAction {
    /// Print this branch's state as JSON.
    Show,
    /// Forget this branch's baseline (the next `auto` run checks from scratch).
    Reset {
        /// Forget every branch's baseline, not just this one's.
        #[arg(long)]
        all_branches: bool,
    },
}

#[derive(Debug, Args)]
struct ScopeArgs {
    /// Which files to check. Paths imply `files`.
    #[arg(long, value_enum)]
    scope: Option<ScopeMode>,
    /// Files or directories to check (directories expand recursively).
    paths: Vec<PathBuf>,
    /// Config file (default: <root>/.st3/quality.yaml, else the built-in default).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Parent branch for `branch` scope (default: config parent_branch,
    /// origin/HEAD, main, master).
    #[arg(long, value_name = "REF")]
    parent: Option<String>,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Run only this gate (repeatable; any gate defined in the config).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// Maximum number of tools running at once (default: number of CPUs).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Do not read or update .st3/state.json.
    #[arg(long)]
    no_state: bool,
    /// Write the report to FILE; the terminal gets only the summary line.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FilesFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
struct FilesArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FilesFormat,
}

/// Runs the CLI and returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run_command(args),
        Command::Files(args) => files_command(args),
        Command::State { action } => state_command(action),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("qg: error: {e}");
            2
        }
    }
}

fn current_dir() -> Result<PathBuf, QgError> {
    std::env::current_dir().map_err(|e| QgError::io("cannot read the current directory", e))
}

fn scope_request(args: &ScopeArgs) -> ScopeRequest {
    ScopeRequest {
        mode: args.scope,
        paths: args.paths.clone(),
        parent: args.parent.clone(),
    }
}

fn run_command(args: RunArgs) -> Result<i32, QgError> {
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let options = RunOptions {
        cwd: current_dir()?,
        config: args.scope.config.clone(),
        scope: scope_request(&args.scope),
        gates: args.gates,
        jobs,
        no_state: args.no_state,
    };
    let progress = Progress::for_terminal();
    let observer: &dyn Observer = match &progress {
        Some(p) => p,
        None => &Silent,
    };
    let report = run::run(&options, observer)?;
    drop(progress);
    match &args.output {
        Some(path) => {
            let text = report::render(&report, args.format, false);
            std::fs::write(path, text)
                .map_err(|e| QgError::io(format!("cannot write {}", path.display()), e))?;
            print_stdout(&format!("{}\n", summary_line(&report)));
        }
        None => {
            let color = args.format == Format::Human && wants_color();
            let mut text = report::render(&report, args.format, color);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            print_stdout(&text);
        }
    }
    Ok(report.exit_code())
}

/// Colour only for a terminal, and never when NO_COLOR is set (no-color.org).
fn wants_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Writes to stdout, ignoring a closed pipe (`qg run | head`).
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[derive(Serialize)]
struct FilesJson<'a> {
    mode: ScopeMode,
    requested: ScopeMode,
    baseline_sha: Option<&'a str>,
    fallback_reason: Option<&'a str>,
    files: &'a [scope::ScopeFile],
}

fn files_command(args: FilesArgs) -> Result<i32, QgError> {
    let (workspace, config) = run::prepare(&current_dir()?, args.scope.config.as_deref())?;
    let scope = run::resolve_scope(&workspace, &config, &scope_request(&args.scope))?.scope;
    let text = match args.format {
        FilesFormat::Text => {
            let mut text: String = scope.paths().map(|p| format!("{p}\n")).collect();
            if let Some(reason) = &scope.fallback_reason {
                eprintln!(
                    "qg: {} → {}: {reason}",
                    scope.requested.as_str(),
                    scope.mode.as_str()
                );
            }
            if text.is_empty() {
                text.clear();
            }
            text
        }
        FilesFormat::Json => {
            let json = FilesJson {
                mode: scope.mode,
                requested: scope.requested,
                baseline_sha: scope.baseline_sha.as_deref(),
                fallback_reason: scope.fallback_reason.as_deref(),
                files: &scope.files,
            };
            format!(
                "{}\n",
                serde_json::to_string(&json).expect("scope serializes")
            )
        }
    };
    print_stdout(&text);
    Ok(0)
}

fn state_command(action: StateAction) -> Result<i32, QgError> {
    let workspace = crate::workspace::Workspace::discover(&current_dir()?)?;
    let Some(repo) = &workspace.repo else {
        return Err(QgError::Git(format!(
            "qg keeps state per git branch and {} is not in a git repository",
            workspace.root.display()
        )));
    };
    let branch = crate::scope::git::head(repo)?.branch;
    let store = StateStore::new(&workspace.root);
    match action {
        StateAction::Show => {
            let entry = store.load_branch(&branch)?;
            let json = serde_json::json!({"branch": branch, "state": entry});
            let text = serde_json::to_string_pretty(&json).expect("state serializes");
            print_stdout(&format!("{text}\n"));
        }
        StateAction::Reset { all_branches: true } => {
            store.reset_all()?;
            eprintln!("qg: forgot the baseline of every branch");
        }
        StateAction::Reset {
            all_branches: false,
        } => {
            store.update_branch(&branch, |_| None)?;
            eprintln!("qg: forgot the baseline of branch {branch}");
        }
    }
    Ok(0)
}
