//! Command-line interface: parses flags, calls the library, renders, exits.
//! One file per subcommand.

/// `qg: warning: …` on stderr: the one channel for what the CLI warns
/// about outside a report (the library puts its warnings in the report).
macro_rules! warn_user {
    ($($arg:tt)*) => {
        eprintln!("qg: warning: {}", format_args!($($arg)*))
    };
}

mod baseline;
mod cache;
mod daemon;
mod doctor;
mod explain;
mod files;
mod fix;
mod history;
mod init;
mod interrupt;
mod lsp;
mod mcp;
mod merge;
mod output;
mod progress;
mod run;
mod state;
mod trust;
mod watch;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::error::QgError;
use crate::scope::{ScopeMode, ScopeRequest};

/// qg — fast, honest quality gates for Python projects.
#[derive(Debug, Parser)]
#[command(name = "qg", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the configured gates on the resolved scope.
    Run(run::RunArgs),
    /// Combine the JSON reports of a sharded run's shards (`qg run --shard
    /// I/N`) into one report, in any format.
    Merge(merge::MergeArgs),
    /// Run each gate's `fix` command on the failing files in the scope, then
    /// check again: what was fixed, which files changed, what is left.
    Fix(fix::FixArgs),
    /// Print the resolved scope without running any tool.
    Files(files::FilesArgs),
    /// Show or reset this branch's baseline state (.st3/state.json).
    State {
        #[command(subcommand)]
        action: state::StateAction,
    },
    /// Record today's violations as known (.st3/baseline.jsonl), or check the record.
    Baseline {
        #[command(subcommand)]
        action: baseline::BaselineAction,
    },
    /// This branch's recent runs, and whether they are improving, stuck,
    /// degrading or oscillating; gates that fail most or error now and then.
    History(history::HistoryArgs),
    /// Write a config tailored to this project: .st3/quality.yaml, or a
    /// [tool.qg] table in pyproject.toml (`--pyproject`).
    Init(init::InitArgs),
    /// Check that every active gate's tool, the config, git and the state are in order.
    Doctor(doctor::DoctorArgs),
    /// What a gate runs: its command, the program and version it resolves
    /// to, where its files come from, how its findings are fixed.
    Explain(explain::ExplainArgs),
    /// Serve the gates to coding agents: a Model Context Protocol server on stdio.
    Mcp(mcp::McpArgs),
    /// Show every gate's findings in the editor as CI will judge them: a
    /// Language Server Protocol server on stdio.
    Lsp(lsp::LspArgs),
    /// Run the gates on every save: one screen redrawn per pass (or one
    /// JSON report per line), the type checkers kept warm meanwhile.
    Watch(watch::WatchArgs),
    /// Let `qg lsp`, `qg mcp` and `qg watch` run this repository's gate
    /// commands as they are now (recorded in your data directory, never in
    /// the repository); `--revoke` takes it back.
    Trust(trust::TrustArgs),
    /// Keep the type checkers warm between runs: `qg run` asks a live
    /// daemon instead of starting the tool.
    Daemon {
        #[command(subcommand)]
        action: daemon::DaemonAction,
    },
    /// The result cache: findings kept by content, shared by every clone and
    /// worktree on this machine (`dir`, `stats`, `prune`).
    Cache {
        #[command(subcommand)]
        action: cache::CacheAction,
    },
    /// Print a shell completion script (bash, zsh, fish, …) to stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Flags every scope-resolving command shares.
#[derive(Debug, Args)]
struct ScopeArgs {
    /// Which files to check. Paths imply `files`.
    #[arg(long, value_enum)]
    scope: Option<ScopeMode>,
    /// Files or directories to check (directories expand recursively).
    paths: Vec<PathBuf>,
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Parent branch for `branch` scope (default: config parent_branch,
    /// origin/HEAD, main, master).
    #[arg(long, value_name = "REF")]
    parent: Option<String>,
}

impl ScopeArgs {
    fn request(&self) -> ScopeRequest {
        ScopeRequest {
            mode: self.scope,
            paths: self.paths.clone(),
            parent: self.parent.clone(),
        }
    }
}

/// Runs the CLI and returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    crate::run::allow_background_checks();
    let result = match cli.command {
        Command::Run(args) => run::command(args),
        Command::Files(args) => files::command(args),
        Command::Merge(args) => merge::command(args),
        Command::Fix(args) => fix::command(args),
        Command::State { action } => state::command(action),
        Command::Baseline { action } => baseline::command(action),
        Command::History(args) => history::command(args),
        Command::Init(args) => init::command(args),
        Command::Doctor(args) => doctor::command(args),
        Command::Explain(args) => explain::command(args),
        Command::Mcp(args) => mcp::command(args),
        Command::Lsp(args) => lsp::command(args),
        Command::Daemon { action } => daemon::command(action),
        Command::Trust(args) => trust::command(args),
        Command::Watch(args) => watch::command(args),
        Command::Cache { action } => cache::command(action),
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a closed pipe
            // (`qg completions bash | head`), which print_stdout takes.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "qg", &mut script);
            print_stdout(&String::from_utf8_lossy(&script));
            Ok(0)
        }
    };
    interrupt::let_the_interrupt_exit();
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

/// Writes to stdout, ignoring a closed pipe (`qg run | head`).
/// Writes `text` to stdout; a reader that went away (`| head`) is no
/// error of qg's: the rest is dropped, quietly.
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
