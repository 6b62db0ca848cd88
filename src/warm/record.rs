//! What a daemon says about itself (`daemon.json`): its phase, its key,
//! its tool's process group, whether its answers are trusted, and why it
//! does not answer when it does not.
//!
//! Trust: a daemon answers runs only once a comparison of its answers with
//! a cold run of the tool agreed for its key (the self-check after its
//! first full pass, made by `qg daemon self-check` at low priority). A
//! difference — then, or in a sampled comparison later — is a
//! [`Distrust`]: runs answer the gate cold and say why, naming the first
//! differing finding and the log that holds both sides.

use serde::{Deserialize, Serialize};

use super::key::DaemonKey;

/// What a daemon is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    /// Its tool is starting or making its first full pass.
    Starting,
    /// It answers runs.
    Ready,
    /// Its tool is being started again (a crash, a new key, a drift).
    Restarting,
    /// Its tool could not be started; runs are answered cold.
    Failed,
    /// Its first full pass is made; its answers are being compared with a
    /// cold run's before it serves (runs are answered cold meanwhile).
    Checking,
    /// Its answers differed from a cold run's: runs are answered cold, and
    /// say why, until its key changes or it is started again.
    Untrusted,
}

impl Phase {
    /// The lowercase name used in every output.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Ready => "ready",
            Phase::Restarting => "restarting",
            Phase::Failed => "failed",
            Phase::Checking => "checking",
            Phase::Untrusted => "untrusted",
        }
    }
}

/// `daemon.json`: what a daemon says about itself, rewritten (atomically)
/// whenever its phase changes. Enough to find and stop it when its socket
/// no longer answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The gate.
    pub(crate) gate: String,
    /// The daemon's process id.
    pub(crate) pid: u32,
    /// What it was started for.
    pub(crate) key: DaemonKey,
    /// The key's digest, as runs compare it.
    pub(crate) digest: String,
    /// What it is doing.
    pub(crate) phase: Phase,
    /// When it started (RFC 3339, UTC).
    pub(crate) started_at: String,
    /// How long the tool's first full pass took, once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_pass_ms: Option<u64>,
    /// The process whose death stops it (`qg watch`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<u32>,
    /// Seconds without a request after which it stops itself.
    pub(crate) idle_timeout_s: u64,
    /// The process group of the tool it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) engine_group: Option<u32>,
    /// Why its tool failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The key digest for which a comparison with a cold run agreed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) verified: Option<String>,
    /// Why its answers are not used, when a comparison differed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) distrust: Option<Distrust>,
    /// The comparison with a cold run under way in the background, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) background: Option<Background>,
    /// Comparisons in a row, since the last that agreed, that could not
    /// conclude while it was answering (files kept changing during each):
    /// its answers have gone unconfirmed that long, and a run confirms its
    /// next answer before showing it once there are [`UNSETTLED_LIMIT`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) unsettled: u32,
}

/// Comparisons of a ready daemon's answers in a row that may end
/// inconclusive before a run confirms the next answer in the foreground: a
/// daemon whose answers are wrong (werkzeug's property setters after a
/// dmypy update) is otherwise never found out by a user who edits faster
/// than a cold run confirms.
pub(crate) const UNSETTLED_LIMIT: u32 = 3;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A comparison with a cold run under way: what a run's time line names
/// beside its own work (it stands still while the run is under way).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Background {
    /// What it compares (`the whole program`, `a run's answer …`).
    pub(crate) what: String,
    /// When it started (milliseconds since the epoch).
    pub(crate) since_ms: u64,
}

/// A comparison of a daemon's answer with a cold run's that differed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Distrust {
    /// When it was found (RFC 3339, UTC).
    pub(crate) at: String,
    /// What was compared (`the whole program`, `a run's 3 files`).
    pub(crate) compared: String,
    /// The first finding only one side has, in words.
    pub(crate) first_difference: String,
    /// The root-relative file holding both sides.
    pub(crate) log: String,
    /// The answer compared was never shown: a failing warm answer the run
    /// confirmed with a cold run, and reported cold.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) withheld: bool,
    /// The answer's confirmation found it, and the run's held state tells
    /// the next run: the daemon need not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) told: bool,
}

impl Distrust {
    /// One line: what differed, and where both sides are.
    pub(crate) fn describe(&self) -> String {
        format!(
            "its answer for {} differed from a cold run of the tool ({}; both sides: {})",
            self.compared, self.first_difference, self.log
        )
    }
}

/// How a comparison of a daemon's answer with a cold run came out, as the
/// comparing run tells the daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(crate) enum Comparison {
    /// The same findings.
    Agreed {
        /// What was compared.
        compared: String,
        /// The confirmation it was, if one (see `run::confirm::Job`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<String>,
    },
    /// Different findings.
    Differed(Distrust),
    /// Nothing to conclude (files changed meanwhile, the cold run erred).
    Inconclusive {
        /// Why.
        reason: String,
    },
}

/// Now, as RFC 3339 (UTC, seconds).
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
