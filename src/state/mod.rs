//! `.st3/state.json`: the per-branch baseline that lets `auto` scope check
//! only what changed. qg owns only the `quality_gates` key; every other key is
//! kept byte for byte.

pub(crate) mod findings;
pub(crate) mod history;
pub(crate) mod importers_off;
pub(crate) mod pending;
mod store;
mod transition;
pub(crate) mod trend;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) use crate::tools::resolve::ToolStamp;
pub(crate) use store::{ignore_state_files, StateStore};
pub(crate) use transition::{transition, RunFacts, Worktree};

/// Where the state file lives, relative to the root.
pub(crate) const STATE_FILE: &str = ".st3/state.json";

/// Whether a root-relative path is one of qg's own state files (the state,
/// its lock, temp files, corrupt copies, the `.gitignore` that hides them):
/// never source, never in scope.
pub(crate) fn is_state_file(path: &str) -> bool {
    let Some(name) = path.strip_prefix(".st3/") else {
        return false;
    };
    name == ".gitignore"
        || name.starts_with("state.json")
        || name == "tool-versions.json"
        || name == "history.jsonl"
        || name == "findings.json"
        || name == "import-graph.json"
        || name == "import-names.json"
        || name == "interfaces.json"
        || name == "importers-off.json"
        || name == "lsp-findings.json"
        || name == "environment.json"
        || name.starts_with("daemons/")
        || name.starts_with("warm-standing/")
        || name.starts_with("foreground/")
        || (name.starts_with('.') && name.ends_with(".tmp"))
}

/// qg's part of the state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QgState {
    /// Format version (1).
    pub(crate) version: u32,
    /// One entry per branch name (`(detached HEAD)` for a detached HEAD).
    #[serde(default)]
    pub(crate) branches: BTreeMap<String, BranchState>,
}

/// What qg remembers for one branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BranchState {
    /// The commit of the last green run (or of a full red run).
    #[serde(default)]
    pub(crate) baseline_sha: Option<String>,
    /// Files with violations that must be re-checked until they pass.
    #[serde(default)]
    pub(crate) failed_files: Vec<String>,
    /// Hash of the config the baseline was taken under.
    #[serde(default)]
    pub(crate) config_hash: Option<String>,
    /// Uncommitted files that passed, with the blob id of the content that
    /// passed (`+x` appended when it passed as an executable file).
    #[serde(default)]
    pub(crate) clean_blobs: BTreeMap<String, String>,
    /// The executable each gate resolved to when the baseline was taken.
    #[serde(default)]
    pub(crate) tools: BTreeMap<String, ToolStamp>,
    /// Gate id → settings file → the digest of the tool's settings in it,
    /// for the files whose settings differed from the baseline commit's
    /// when the baseline was taken (uncommitted edits that passed).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) tool_settings: BTreeMap<String, BTreeMap<String, String>>,
    /// When qg last wrote this entry (RFC 3339, UTC).
    #[serde(default)]
    pub(crate) updated_at: Option<String>,
    /// A run's next state, held until a cold run confirms its warm
    /// answers (see [`pending`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pending: Option<pending::Pending>,
}
