//! `qg files`: the resolved scope, without running any tool.

use clap::Args;
use serde::Serialize;

use super::{current_dir, print_stdout, ScopeArgs};
use crate::error::QgError;
use crate::run;
use crate::scope::{ScopeFile, ScopeMode, Unmatched};

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

#[derive(Serialize)]
struct FilesJson<'a> {
    mode: ScopeMode,
    requested: ScopeMode,
    baseline_sha: Option<&'a str>,
    fallback_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    importers_unknown: Option<&'a str>,
    files: &'a [ScopeFile],
    #[serde(skip_serializing_if = "<[Unmatched]>::is_empty")]
    unmatched: &'a [Unmatched],
}

pub(super) fn command(args: FilesArgs) -> Result<i32, QgError> {
    let (workspace, config) = run::prepare(&current_dir()?, args.scope.config.as_deref())?;
    let gates = crate::plan::select_gates(&config, &[])?;
    let resolved = run::resolve_scope(
        &workspace,
        &config,
        &args.scope.request(),
        &gates,
        true,
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
            for unmatched in &scope.unmatched {
                warn_user!("{}", unmatched.describe());
            }
            scope
                .paths()
                .map(|p| format!("{}\n", crate::file_name::display(p)))
                .collect()
        }
        FilesFormat::Json => {
            let json = FilesJson {
                mode: scope.mode,
                requested: scope.requested,
                baseline_sha: scope.baseline_sha.as_deref(),
                fallback_reason: scope.fallback_reason.as_deref(),
                importers_unknown: scope.importers_unknown.as_deref(),
                files: &scope.files,
                unmatched: &scope.unmatched,
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
