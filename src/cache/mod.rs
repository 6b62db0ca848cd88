//! Results kept by content: a gate's findings in one file, stored under a
//! key of everything that can change them (see [`key`]), so a run on the
//! same inputs — in another clone, worktree or CI job on this machine —
//! takes them instead of running the tool. A hit is only as good as its
//! key: an entry that cannot be read or does not match its key is a miss
//! with a warning, never a finding or a pass; `qg run --verify` checks
//! every hit against the tool.
//!
//! Only cold answers are stored, and only of a gate whose tool qg can name
//! by version: a warm answer is not yet confirmed, and a tool without a
//! version could be any program.

pub(crate) mod key;
pub(crate) mod shared;
pub(crate) mod store;
pub(crate) mod tool_cache;

pub(crate) use crate::user_cache as location;
pub(crate) use store::{Lookup, Store};
