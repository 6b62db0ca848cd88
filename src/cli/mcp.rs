//! `qg mcp`: serve this project's gates to a coding agent over the Model
//! Context Protocol (stdio).

use std::path::PathBuf;

use clap::Args;

use super::current_dir;
use crate::error::QgError;
use crate::mcp::{self, Project};

#[derive(Debug, Args)]
pub(super) struct McpArgs {
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    directory: Option<PathBuf>,
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Maximum number of tools running at once in one call (default: number of CPUs).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
}

pub(super) fn command(args: McpArgs) -> Result<i32, QgError> {
    let cwd = match args.directory {
        Some(dir) => std::fs::canonicalize(&dir)
            .map_err(|e| QgError::Usage(format!("--directory {}: {e}", dir.display())))?,
        None => current_dir()?,
    };
    if !cwd.is_dir() {
        return Err(QgError::Usage(format!(
            "--directory {}: not a directory",
            cwd.display()
        )));
    }
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(crate::process::cores);
    // No Ctrl-C handler of qg's own: the client ends the server by closing
    // stdin, and each call's tools are killed when it is cancelled.
    mcp::serve(Project {
        cwd,
        config: args.config,
        jobs,
    })?;
    Ok(0)
}
