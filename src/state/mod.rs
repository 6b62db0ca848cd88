//! `.st3/state.json`: the per-branch baseline that lets `auto` scope check
//! only what changed. qg owns only the `quality_gates` key; every other key is
//! kept byte for byte.

pub mod history;
mod store;
mod transition;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::tools::resolve::ToolStamp;
pub use store::StateStore;
pub use transition::{transition, RunFacts, Worktree};

/// Where the state file lives, relative to the root.
pub const STATE_FILE: &str = ".st3/state.json";

/// Whether a root-relative path is one of qg's own state files (the state,
/// its lock, temp files, corrupt copies, the `.gitignore` that hides them):
/// never source, never in scope.
pub fn is_state_file(path: &str) -> bool {
    let Some(name) = path.strip_prefix(".st3/") else {
        return false;
    };
    name == ".gitignore"
        || name.starts_with("state.json")
        || name == "tool-versions.json"
        || name == "history.jsonl"
        || (name.starts_with('.') && name.ends_with(".tmp"))
}

/// qg's part of the state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QgState {
    /// Format version (1).
    pub version: u32,
    /// One entry per branch name (`(detached HEAD)` for a detached HEAD).
    #[serde(default)]
    pub branches: BTreeMap<String, BranchState>,
}

/// What qg remembers for one branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchState {
    /// The commit of the last green run (or of a full red run).
    #[serde(default)]
    pub baseline_sha: Option<String>,
    /// Files with violations that must be re-checked until they pass.
    #[serde(default)]
    pub failed_files: Vec<String>,
    /// Hash of the config the baseline was taken under.
    #[serde(default)]
    pub config_hash: Option<String>,
    /// Uncommitted files that passed, with the blob id of the content that passed.
    #[serde(default)]
    pub clean_blobs: BTreeMap<String, String>,
    /// The executable each gate resolved to when the baseline was taken.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolStamp>,
    /// When qg last wrote this entry (RFC 3339, UTC).
    #[serde(default)]
    pub updated_at: Option<String>,
}
