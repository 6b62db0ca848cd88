//! Starting a comparison of the daemon's answers with a cold run: the
//! self-check of the whole program after a first full pass, or a sampled
//! run's files (see [`crate::warm::checker`]).

use std::time::Instant;

use super::shared::{lock, Shared};
use crate::warm::checker::{CheckLaunch, Compare};

/// Starts a comparison unless one is under way; says so in the log.
pub(super) fn compare(shared: &Shared, what: Compare<'_>) {
    let described = match what {
        Compare::Whole => "the whole program".to_string(),
        Compare::Sample(sample) if sample.left_out.is_empty() => {
            format!("a run's {} files", sample.files.len())
        }
        Compare::Sample(sample) => format!(
            "a run's {} files and the {} importers it left out",
            sample.files.len(),
            sample.left_out.len()
        ),
    };
    let launch = CheckLaunch {
        qg: &shared.qg,
        root: &shared.root,
        slot: &shared.slot,
        config: shared.options.config.as_deref(),
        compare: what,
    };
    match lock(&shared.checker).start(&launch) {
        Ok(true) => {
            lock(&shared.live).comparing_since = Some(Instant::now());
            shared.log(&format!(
                "comparing its answers for {described} with a cold run (at low priority)"
            ));
        }
        Ok(false) => {}
        Err(why) => shared.log(&format!("no comparison with a cold run: {why}")),
    }
}
