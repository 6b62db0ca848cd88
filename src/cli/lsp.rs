//! `qg lsp`: the project's gates in the editor, over the Language Server
//! Protocol (stdio).

use std::path::PathBuf;

use clap::Args;

use super::current_dir;
use crate::error::QgError;
use crate::lsp::{self, KnownSeverity, ServeOptions, Settings};

#[derive(Debug, Args)]
pub(super) struct LspArgs {
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// How findings the baseline knows are shown.
    #[arg(long, value_enum, default_value_t = KnownSeverity::Hint)]
    known: KnownSeverity,
    /// Start the warm gates' daemons (stopped when the editor goes).
    #[arg(long, conflicts_with = "no_daemon")]
    start_daemons: bool,
    /// Run every tool cold, even where a live daemon could answer.
    #[arg(long)]
    no_daemon: bool,
    /// Accepted for editors that always pass it: stdio is the only transport.
    #[arg(long, hide = true)]
    stdio: bool,
}

pub(super) fn command(args: LspArgs) -> Result<i32, QgError> {
    // No Ctrl-C handler of qg's own: the editor ends the server with
    // `exit` or by closing stdin; a run's tools are killed on the way out.
    lsp::serve(
        Box::new(std::io::stdin()),
        Box::new(std::io::stdout()),
        ServeOptions {
            cwd: current_dir()?,
            config: args.config,
            settings: Settings {
                known: args.known,
                start_daemons: args.start_daemons,
                no_daemon: args.no_daemon,
            },
        },
    )
}
