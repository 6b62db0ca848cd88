//! Warm engines: a gate's tool kept running between runs, so a run asks a
//! checker that already holds the whole program instead of starting one.
//!
//! A gate's `daemon` section says how (no tool is named here): a language
//! server ([`lsp`], one generic client) or a daemon with a command-line
//! client of its own ([`command`]). Each warm gate gets one daemon process
//! of qg's ([`daemon`]) per [key](key::DaemonKey) — root, gate, tool,
//! config, virtualenv — living in `.st3/daemons/<gate>/` ([`slot`]): it owns
//! the tool's process tree through a [`guard`], answers runs over a local
//! socket ([`wire`], [`transport`]), and stops itself when idle, when its owner dies, or
//! when the repository disappears. [`client`] is what a run uses to ask it;
//! [`control`] starts, stops and lists daemons.
//!
//! A warm answer is a different way of obtaining a gate's findings, never a
//! different verdict: it becomes the same violation records as a cold run,
//! and whatever goes wrong with a daemon makes the run answer cold.

mod ahead;
pub(crate) mod checker;
pub(crate) mod client;
mod command;
mod context;
pub(crate) mod control;
pub(crate) mod daemon;
mod engine;
pub(crate) mod foreground;
pub(crate) mod guard;
pub(crate) mod key;
pub(crate) mod log;
pub(crate) mod lsp;
pub(crate) mod procfs;
pub(crate) mod program;
pub(crate) mod record;
pub(crate) mod slot;
pub(crate) mod snapshot;
pub(crate) mod standing;
pub(crate) mod transport;
mod tree;
pub(crate) mod wire;

use crate::process::Finished;
use crate::violation::Violation;

/// What a live daemon answered for a gate.
#[derive(Debug)]
pub(crate) struct WarmAnswer {
    /// The findings, one way or the other.
    pub(crate) findings: WarmFindings,
    /// A warm answer given earlier was found wrong since: the run says so.
    pub(crate) notice: Option<String>,
}

/// The findings of a [`WarmAnswer`].
#[derive(Debug)]
pub(crate) enum WarmFindings {
    /// A language server's diagnostics, already violation records.
    Diagnostics(Vec<Violation>),
    /// The output of the daemon's own check command, for the gate's parser.
    Output {
        /// What it did.
        finished: Finished,
        /// The argv it ran (program resolved), for the artifact log.
        argv: Vec<String>,
    },
}

/// A gate's warm request as a run resolved it: whose findings to report,
/// as a cold run of the gate's plan reports them.
#[derive(Debug, Clone)]
pub(crate) struct WarmPlan {
    /// The gate's files (the plan's, importers included) and, for a tool
    /// whose cold run also reports the modules they import, those too. A
    /// language server is asked for exactly these.
    pub(crate) report: std::collections::BTreeSet<String>,
    /// The plan is the tool's own whole-project run, which reports every
    /// file the tool checks: nothing is left out for not being in `report`.
    pub(crate) whole: bool,
    /// The importers of the run's body-only edits it does not check
    /// (`interface_aware_importers`): a sampled comparison checks them
    /// too, and a finding there that the baseline does not hold proves the
    /// run wrong to leave them out.
    pub(crate) left_out: std::collections::BTreeSet<String>,
    /// The digest of the daemon key the run computed: a daemon answers only
    /// for its own, and a confirmation only on the same.
    pub(crate) key: String,
}

impl WarmPlan {
    /// Whether a finding in `file` is reported.
    pub(crate) fn reports(&self, file: &str) -> bool {
        self.whole || self.report.contains(file)
    }
}
