//! Holding the line on legacy code: every violation gets a stable
//! fingerprint, a committed baseline remembers the ones a project lives
//! with, and a run fails only on new ones — matched one-to-one, in tiers
//! (exact; reworded by a tool upgrade; moved by an edit of its own line,
//! carried through the git diff), never as a set.

mod apply;
pub(crate) mod file;
pub(crate) mod fingerprint;
pub(crate) mod matcher;
pub(crate) mod progress;

pub(crate) use apply::{apply, entry_of, Applied, BaselineSummary};

/// How a run treats the committed baseline, when the project has one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BaselineUse {
    /// Only new violations fail; entries found fixed in the files checked
    /// are dropped from the file (it only ever shrinks).
    #[default]
    Ratchet,
    /// As `Ratchet`, but the file is never written (`--locked`, for CI).
    Locked,
    /// Every violation counts (`--no-baseline`, `qg baseline write`).
    Ignore,
}
