//! `qg doctor`.

use std::path::PathBuf;

use clap::Args;

use super::{current_dir, print_stdout};
use crate::doctor::{self, Health};
use crate::error::QgError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum DoctorFormat {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub(super) struct DoctorArgs {
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: DoctorFormat,
}

pub(super) fn command(args: DoctorArgs) -> Result<i32, QgError> {
    let diagnosis = doctor::diagnose(&current_dir()?, args.config.as_deref());
    let text = match args.format {
        DoctorFormat::Json => {
            format!(
                "{}\n",
                serde_json::to_string(&diagnosis).expect("diagnosis serializes")
            )
        }
        DoctorFormat::Human => {
            // "All good" only when it is: a warning is something to read.
            let warnings = diagnosis
                .checks
                .iter()
                .filter(|c| c.status == Health::Warning)
                .count();
            let verdict = match (diagnosis.ok, warnings) {
                (false, _) => "❌ problems found".to_string(),
                (true, 0) => "✅ all good".to_string(),
                (true, 1) => "✅ no problems, 1 warning".to_string(),
                (true, n) => format!("✅ no problems, {n} warnings"),
            };
            let mut text = format!("qg doctor — {}: {verdict}\n", diagnosis.root);
            let width = diagnosis
                .checks
                .iter()
                .map(|c| c.name.len())
                .max()
                .unwrap_or(0);
            for check in &diagnosis.checks {
                let mark = match check.status {
                    Health::Ok => "✓",
                    Health::Warning => "!",
                    Health::Error => "✗",
                };
                text.push_str(&format!(
                    "  {mark} {:<width$}  {}\n",
                    check.name, check.detail
                ));
                if let Some(fix) = &check.fix {
                    text.push_str(&format!("    {:<width$}  fix: {fix}\n", ""));
                }
            }
            text
        }
    };
    print_stdout(&text);
    Ok(if diagnosis.ok { 0 } else { 1 })
}
