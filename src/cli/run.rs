//! `qg run`: run the gates, print the chosen format, write `--report`s.

use clap::Args;

use super::output::{self, OutputArgs};
use super::progress::TerminalObserver;
use super::{current_dir, ScopeArgs};
use crate::baseline::BaselineUse;
use crate::error::QgError;
use crate::run::{self, DaemonUse, RunOptions};
use crate::shard::Shard;

#[derive(Debug, Args)]
pub(super) struct RunArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Run only this gate (repeatable; any gate defined in the config).
    #[arg(long = "gate", value_name = "ID")]
    gates: Vec<String>,
    /// Maximum number of tools running at once (default: number of CPUs).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Run only share I of N of the work, for a CI matrix (files of the
    /// per-file gates, whole-program gates whole); `qg merge` combines the
    /// shards' JSON reports. A shard records no state.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<Shard>,
    /// Do not move the baseline in .st3/state.json.
    #[arg(long)]
    no_state: bool,
    /// Never write .st3/baseline.jsonl, not even to drop fixed entries (CI).
    #[arg(long, conflicts_with = "no_baseline")]
    locked: bool,
    /// Ignore .st3/baseline.jsonl: every violation counts.
    #[arg(long)]
    no_baseline: bool,
    /// Print each command as it is run (on stderr).
    #[arg(long, short = 'v', conflicts_with = "quiet")]
    verbose: bool,
    /// No live progress display.
    #[arg(long)]
    no_progress: bool,
    /// Run every tool cold, even where a live daemon could answer.
    #[arg(long, conflicts_with = "verify")]
    no_daemon: bool,
    /// Answer each warm gate both warm and cold, and run a check that left
    /// out importers (`interface_aware_importers`) again with every
    /// importer; a difference is a gate error showing both (and the daemon
    /// starts its tool again).
    #[arg(long)]
    verify: bool,
    /// Wait until a cold run has confirmed each warm answer before
    /// reporting (a commit hook, an agent about to commit); without it a
    /// warm answer is shown at once, marked unconfirmed, and confirmed in
    /// the background, and nothing moves until it is.
    #[arg(long, conflicts_with_all = ["verify", "no_daemon"])]
    confirm: bool,
    /// Run every tool on every file in scope, without the findings the
    /// result cache holds for the same inputs (`QG_NO_CACHE=1` says so too;
    /// `--verify` runs them and checks the cache's answers).
    #[arg(long)]
    no_cache: bool,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

pub(super) fn command(args: RunArgs) -> Result<i32, QgError> {
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(crate::process::cores);
    let options = RunOptions {
        cwd: current_dir()?,
        config: args.scope.config.clone(),
        scope: args.scope.request(),
        gates: args.gates.clone(),
        jobs,
        no_state: args.no_state,
        baseline: match (args.locked, args.no_baseline) {
            (_, true) => BaselineUse::Ignore,
            (true, false) => BaselineUse::Locked,
            (false, false) => BaselineUse::Ratchet,
        },
        shard: args.shard,
        cancel: Default::default(),
        report_covered: false,
        require_trust: false,
        cache: match args.no_cache {
            true => run::CacheUse::Off,
            false => run::CacheUse::Default,
        },
        confirm: args.confirm,
        daemons: match (args.no_daemon, args.verify) {
            (true, _) => DaemonUse::Ignore,
            (false, true) => DaemonUse::Verify,
            (false, false) => DaemonUse::Use,
        },
    };
    super::interrupt::install();
    let observer = TerminalObserver::new(!args.no_progress && !args.output.quiet, args.verbose);
    let report = run::run(&options, &observer)?;
    drop(observer);
    output::emit(&report, &args.output)
}
