//! Starting a comparison of the daemon's answers with a cold run: the
//! self-check of the whole program after a first full pass, a sampled
//! run's files, or a run's answer confirmed (see [`crate::warm::checker`]).

use std::time::Instant;

use super::shared::{lock, Shared};
use crate::warm::checker::{CheckLaunch, Compare, Started};
use crate::warm::record::Background;

/// Starts a comparison unless one is under way; says so in the log.
/// Returns what the checker did.
pub(super) fn compare(shared: &Shared, what: Compare<'_>) -> Result<Started, String> {
    // (`report::plural` is a layer above this one.)
    let count = |n: usize, noun: &str| match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    };
    let described = match &what {
        Compare::Whole => "the whole program".to_string(),
        Compare::Sample(sample) if sample.left_out.is_empty() => {
            format!("a run's {}", count(sample.files.len(), "file"))
        }
        Compare::Sample(sample) => format!(
            "a run's {} and the {} it left out",
            count(sample.files.len(), "file"),
            count(sample.left_out.len(), "importer")
        ),
        Compare::Confirm { job, .. } => format!("a run's answer (confirmation {job})"),
    };
    let launch = CheckLaunch {
        qg: &shared.qg,
        root: &shared.root,
        slot: &shared.slot,
        config: shared.options.config.as_deref(),
        compare: what,
    };
    let started = lock(&shared.checker).start(&launch);
    match &started {
        Ok(Started::Now) => {
            lock(&shared.live).comparing_since = Some(Instant::now());
            shared.log(&format!(
                "comparing its answers for {described} with a cold run (at low priority)"
            ));
            let since_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            shared.note_background(Some(Background {
                what: described,
                since_ms,
            }));
        }
        Ok(Started::Queued) => shared.log(&format!(
            "comparing {described} after the confirmation under way"
        )),
        Ok(Started::Joined | Started::Busy) => {}
        Err(why) => shared.log(&format!("no comparison with a cold run: {why}")),
    }
    started
}

/// Starts the sample that waited for a confirmation, once none runs.
pub(super) fn start_queued(shared: &Shared) {
    let queued = lock(&shared.checker).take_queued();
    if let Some(sample) = queued {
        let _ = compare(shared, Compare::Sample(&sample));
    }
}

/// Pauses the comparison under way while a run the user waits for is
/// under way (announced in `.st3/foreground/`, or being answered here),
/// and lets it go on once none is: background work never takes the cores
/// from the foreground.
pub(super) fn yield_to_runs(shared: &Shared) {
    let busy = lock(&shared.live).answering > 0 || crate::warm::foreground::running(&shared.root);
    let mut checker = lock(&shared.checker);
    match busy {
        true => checker.pause(),
        false => {
            checker.resume();
        }
    }
}
