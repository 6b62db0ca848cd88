//! `qg files`: the resolved scope, without running any tool.

use super::{current_dir, print_stdout, ScopeArgs};
use crate::error::QgError;
use crate::run;
use clap::Args;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum FilesFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub(super) struct FilesArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FilesFormat,
}

pub(super) fn command(args: FilesArgs) -> Result<i32, QgError> {
    let resolved = run::scope_of(
        &current_dir()?,
        args.scope.config.as_deref(),
        &args.scope.request(),
        &Default::default(),
    )?;
    for warning in &resolved.warnings {
        warn_user!("{warning}");
    }
    let scope = resolved.scope;
    let text = match args.format {
        FilesFormat::Text => {
            if let Some(reason) = &scope.fallback_reason {
                eprintln!(
                    "qg: {} → {}: {reason}",
                    scope.requested.as_str(),
                    scope.mode.as_str()
                );
            }
            if let Some(why) = &scope.importers_unknown {
                eprintln!("qg: importers unknown: {why}; the gates that check importers check the whole project");
            }
            for file in &scope.body_only {
                eprintln!(
                    "qg: {}: body only: its interface is unchanged, importers not needed",
                    crate::file_name::display(file)
                );
            }
            for (file, parts) in &scope.interface_changed {
                eprintln!(
                    "qg: {}: its interface changed ({}): importers checked",
                    crate::file_name::display(file),
                    parts.join(", ")
                );
            }
            for (gate, why) in &scope.whole_project {
                eprintln!("qg: gate {gate} checks its whole project scope: {why}");
            }
            for unmatched in &scope.unmatched {
                warn_user!("{}", unmatched.describe());
            }
            scope
                .paths()
                .map(|p| format!("{}\n", crate::file_name::display(p)))
                .collect()
        }
        FilesFormat::Json => {
            format!(
                "{}\n",
                serde_json::to_string(&scope).expect("scope serializes")
            )
        }
    };
    print_stdout(&text);
    Ok(0)
}
