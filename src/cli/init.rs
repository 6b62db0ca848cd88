//! `qg init`.

use clap::Args;

use super::current_dir;
use crate::error::QgError;
use crate::init::Destination;
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// Overwrite an existing .st3/quality.yaml.
    #[arg(long)]
    force: bool,
    /// Append a `[tool.qg]` table to pyproject.toml instead (the project
    /// part only; the gates are the built-in ones). Without it, qg writes
    /// .st3/quality.yaml with every gate spelled out, and leaves the
    /// project's own files alone.
    #[arg(long, conflicts_with = "force")]
    pyproject: bool,
}

pub(super) fn command(args: InitArgs) -> Result<i32, QgError> {
    let workspace = Workspace::discover(&current_dir()?)?;
    let destination = match args.pyproject {
        true => Destination::PyProject,
        false => Destination::Yaml,
    };
    let outcome = crate::init::init(&workspace.root, args.force, destination)?;
    let shown = outcome
        .config_path
        .strip_prefix(&workspace.root)
        .unwrap_or(&outcome.config_path);
    eprintln!(
        "qg: wrote {} ({})",
        shown.display(),
        outcome.inspection.layout
    );
    for tool in &outcome.inspection.tools {
        let state = if tool.active() {
            "active"
        } else {
            "not active"
        };
        let why = match (&tool.installed, tool.configured_in.is_empty()) {
            (Some(_), true) => "installed".to_string(),
            (Some(_), false) => {
                format!("installed, configured in {}", tool.configured_in.join(", "))
            }
            (None, false) => format!(
                "configured in {}, not installed",
                tool.configured_in.join(", ")
            ),
            (None, true) => "not installed, not configured".to_string(),
        };
        eprintln!("  {}: {state} ({why})", tool.gate);
    }
    eprintln!("qg: next: `qg doctor` to check the tools, then `qg run`");
    Ok(0)
}
