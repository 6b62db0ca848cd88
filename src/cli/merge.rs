//! `qg merge`: the shards' JSON reports of one run, as one report.

use std::path::PathBuf;

use clap::Args;

use super::output::{self, OutputArgs};
use crate::error::QgError;

#[derive(Debug, Args)]
pub(super) struct MergeArgs {
    /// The JSON report of every shard (`qg run --shard I/N --format json`).
    #[arg(value_name = "REPORT.json", required = true)]
    shard_reports: Vec<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

pub(super) fn command(args: MergeArgs) -> Result<i32, QgError> {
    let report = crate::merge::merge(&args.shard_reports)?;
    output::emit(&report, &args.output)
}
