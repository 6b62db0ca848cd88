//! Gate results and the rules that decide a gate's status from what its tool
//! did. A broken tool is `error` — never `passed`, never an empty `failed`.

mod imports;
mod judge;
mod result;
mod verdicts;
mod verify;

pub(crate) use imports::{count_unresolved_imports, mostly_unresolved};
pub(crate) use judge::{render_hints, render_hints_from, settle};
pub(crate) use result::{
    CacheShare, ErrorKind, GateResult, GateStatus, Progress, ToolCacheUse, Unconfirmed,
};
pub(crate) use verdicts::Verdicts;
pub(crate) use verify::{both_sides, difference, failing_in, full_walk, verified};
