//! What qg remembers of a warm gate across its daemons, per key (tool,
//! config, environment — see [`super::key`]): a drift found once — a warm
//! answer that differed from a cold run — makes the gate answer cold for
//! that key for good, because a daemon started again passes its self-check
//! and drifts again at the next edit of the same kind (dmypy with the
//! pydantic plugin did, upstream); and why its tool last refused to start,
//! so `qg daemon status`, `qg doctor` and every run can say why the gate
//! answers cold. A change of the key (the tool upgraded, its settings
//! edited) clears both. `.st3/warm-standing/<gate>.json`, one file per gate
//! (one writer: the gate's daemon).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::{now_rfc3339, Distrust};

/// Where the standings live, relative to the root.
pub(crate) const STANDING_DIR: &str = ".st3/warm-standing";

/// Why a gate answers cold for a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub(crate) enum Cause {
    /// A warm answer differed from a cold run: cold for good, for this key.
    Drifted {
        /// The comparison that differed.
        distrust: Distrust,
    },
    /// Its tool would not start (or not stay up) with this key: `qg
    /// daemon start` tries again; meanwhile runs say why they are cold.
    Refused {
        /// The tool's own words, when it gave any.
        reason: String,
    },
}

/// A gate's standing: the key it holds for, since when, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Standing {
    /// The digest of the key it holds for.
    pub(crate) key: String,
    /// When it was found (RFC 3339, UTC).
    pub(crate) at: String,
    /// Why.
    #[serde(flatten)]
    pub(crate) cause: Cause,
}

impl Standing {
    /// One line: why the gate answers cold.
    pub(crate) fn describe(&self) -> String {
        match &self.cause {
            Cause::Drifted { distrust } => format!(
                "its warm answers drifted from a cold run for this tool and config ({}); it answers cold until the tool or its settings change",
                distrust.describe()
            ),
            Cause::Refused { reason } => format!("its daemon could not start: {reason}"),
        }
    }

    /// Whether it holds a drift (cold for good for its key).
    pub(crate) fn drifted(&self) -> bool {
        matches!(self.cause, Cause::Drifted { .. })
    }
}

fn file(root: &Path, gate: &str) -> PathBuf {
    root.join(STANDING_DIR).join(format!("{gate}.json"))
}

/// `gate`'s standing, whatever key it holds for.
pub(crate) fn read(root: &Path, gate: &str) -> Option<Standing> {
    let bytes = std::fs::read(file(root, gate)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// `gate`'s standing when it holds for `key` (the key's digest).
pub(crate) fn for_key(root: &Path, gate: &str, key: &str) -> Option<Standing> {
    read(root, gate).filter(|s| s.key == key)
}

/// Records why `gate` answers cold for `key`. A drift is never replaced by
/// a refusal of the same key: it is the stronger word.
pub(crate) fn record(root: &Path, gate: &str, key: &str, cause: Cause) -> std::io::Result<()> {
    let kept = for_key(root, gate, key).filter(Standing::drifted);
    if kept.is_some() && !matches!(cause, Cause::Drifted { .. }) {
        return Ok(());
    }
    let standing = Standing {
        key: key.to_string(),
        at: now_rfc3339(),
        cause,
    };
    let path = file(root, gate);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec_pretty(&standing).map_err(std::io::Error::other)?;
    crate::atomic_file::write(&path, &bytes)
}

/// Forgets a refusal of `gate` (its tool started and its answers agree
/// with a cold run); a drift stays.
pub(crate) fn clear_refusal(root: &Path, gate: &str) {
    if read(root, gate).is_some_and(|s| !s.drifted()) {
        let _ = std::fs::remove_file(file(root, gate));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distrust() -> Distrust {
        Distrust {
            at: "t".into(),
            compared: "a run's 2 files".into(),
            first_difference: "only warm: a.py:1:1 X".into(),
            log: ".st3/logs/x.log".into(),
            withheld: false,
            told: false,
        }
    }

    #[test]
    fn a_drift_holds_for_its_key_only_and_outlives_a_refusal() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        record(
            root,
            "mypy",
            "k1",
            Cause::Drifted {
                distrust: distrust(),
            },
        )
        .unwrap();
        assert!(for_key(root, "mypy", "k1").unwrap().drifted());
        assert!(
            for_key(root, "mypy", "k2").is_none(),
            "another key earns trust again"
        );
        record(root, "mypy", "k1", Cause::Refused { reason: "x".into() }).unwrap();
        assert!(for_key(root, "mypy", "k1").unwrap().drifted());
        clear_refusal(root, "mypy");
        assert!(
            read(root, "mypy").is_some(),
            "a drift is never cleared by a start"
        );
        record(
            root,
            "mypy",
            "k2",
            Cause::Refused {
                reason: "bad".into(),
            },
        )
        .unwrap();
        assert!(!for_key(root, "mypy", "k2").unwrap().drifted());
        clear_refusal(root, "mypy");
        assert!(read(root, "mypy").is_none());
    }
}
