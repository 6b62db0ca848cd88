//! What a daemon says about itself (`daemon.json`): its phase, its key,
//! its tool's process group, and why it does not answer when it does not.

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
}

impl Phase {
    /// The lowercase name used in every output.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Ready => "ready",
            Phase::Restarting => "restarting",
            Phase::Failed => "failed",
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
}

/// Now, as RFC 3339 (UTC, seconds).
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
