//! `qg merge`: the shards' JSON reports of one run, as one report.

use std::path::PathBuf;

use clap::Args;

use super::current_dir;
use super::output::{self, OutputArgs};
use crate::error::QgError;

#[derive(Debug, Args)]
pub(super) struct MergeArgs {
    /// The JSON report of every shard (`qg run --shard I/N --format json`).
    #[arg(value_name = "REPORT.json", required = true)]
    shard_reports: Vec<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
    /// Add the merged run to this project's .st3/history.jsonl, so the next
    /// shards weigh their split by its durations.
    #[arg(long)]
    record: bool,
    /// Config file, for --record (default: .st3/quality.yaml at the root, else
    /// [tool.qg] in pyproject.toml, else the built-in default).
    #[arg(long, value_name = "FILE", requires = "record")]
    config: Option<PathBuf>,
}

pub(super) fn command(args: MergeArgs) -> Result<i32, QgError> {
    let report = crate::merge::merge(&args.shard_reports)?;
    if args.record {
        let (workspace, config) = crate::run::prepare(&current_dir()?, args.config.as_deref())?;
        crate::run::record_merged(&workspace, &config, &report)?;
    }
    output::emit(&report, &args.output)
}
