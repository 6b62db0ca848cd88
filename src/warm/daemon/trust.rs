//! How a comparison of the daemon's answers with a cold run moves its
//! trust. Agreement after a first full pass: the daemon serves. A
//! difference, then or later (a sampled comparison, `--verify`, a failing
//! answer confirmed cold): it is untrusted for its key, for good — runs
//! answer the gate cold and say why, across daemons (see
//! [`crate::warm::standing`]), until the tool or its settings change. A
//! difference after warm answers were given also tells the next run those
//! answers may have been wrong.

use std::sync::Arc;
use std::time::Duration;

use super::checking;
use super::lifecycle;
use super::shared::{lock, Shared};
use crate::warm::checker::Compare;
use crate::warm::record::{Comparison, Distrust, Phase};
use crate::warm::standing;

/// Comparisons in a row that could not conclude before the daemon stops
/// trying and calls itself failed (it answers cold until it is started
/// again). Few: the usual cause is the tool's own run failing (a path its
/// config names is missing), which no retry mends, and `qg daemon start`
/// waits for the outcome.
const MAX_INCONCLUSIVE: u32 = 3;

/// Takes in how a comparison came out.
pub(super) fn compared(shared: &Arc<Shared>, comparison: Comparison) {
    let since = lock(&shared.live).comparing_since.take();
    shared.note_background(None);
    match comparison {
        Comparison::Agreed { compared, job } => agreed(shared, &compared, job, since),
        Comparison::Differed(distrust) => differed(shared, distrust),
        Comparison::Inconclusive { reason } => inconclusive(shared, &reason),
    }
}

fn agreed(shared: &Shared, compared: &str, job: Option<String>, since: Option<std::time::Instant>) {
    let phase = {
        let mut live = lock(&shared.live);
        live.inconclusive = 0;
        if live.record.unsettled > 0 {
            live.record.unsettled = 0;
            shared.write_record(&live.record);
        }
        live.agreed += 1;
        live.last_agreed = Some(crate::warm::record::now_rfc3339());
        // A run asking again for the same answer on the same tree is
        // told it is confirmed.
        if job.is_some() {
            live.last_confirmed = job;
        }
        live.record.phase
    };
    shared.log(&format!("its answers for {compared} equal a cold run's"));
    if phase != Phase::Checking {
        return;
    }
    standing::clear_refusal(&shared.root, &shared.options.gate);
    let took = since.map(|s| s.elapsed().as_millis() as u64);
    shared.set_phase(Phase::Ready, |live| {
        live.record.verified = Some(live.record.digest.clone());
        live.record.distrust = None;
        live.checked_ms = took.or(live.checked_ms);
    });
}

/// A difference is never forgiven for this key: a tool started again
/// passed its self-check and drifted again at the next edit of the same
/// kind (dmypy with the pydantic plugin). The gate answers cold until its
/// tool or settings change — remembered beyond this daemon — and the tool
/// stops, its memory freed. Answers already given: the next run hears
/// they may have been wrong.
fn differed(shared: &Arc<Shared>, distrust: Distrust) {
    let (phase, key, answered) = {
        let live = lock(&shared.live);
        (
            live.record.phase,
            live.record.digest.clone(),
            live.since_start,
        )
    };
    // Warm answers were shown since the tool started: the one compared
    // (unless the run withheld it, reporting the cold one), or others.
    let shown = phase == Phase::Ready && (answered > 1 || !distrust.withheld) && !distrust.told;
    shared.log(&format!(
        "untrusted for good for this key: {}",
        distrust.describe()
    ));
    let gate = shared.options.gate.clone();
    let drifted = standing::Cause::Drifted {
        distrust: distrust.clone(),
    };
    if let Err(e) = standing::record(&shared.root, &gate, &key, drifted) {
        shared.log(&format!("cannot remember the drift: {e}"));
    }
    shared.set_phase(Phase::Untrusted, |live| {
        live.record.verified = None;
        live.record.distrust = Some(distrust.clone());
        if shown {
            live.notice = Some(format!(
                "the last warm answers of {gate} may have been wrong: {}; it answers cold until its tool or settings change",
                distrust.describe()
            ));
        }
    });
    lifecycle::stop_engine(shared);
}

/// A comparison that could not conclude (files changed meanwhile, the cold
/// run erred): a self-check is tried again, later and later; a ready
/// daemon's answers have gone unconfirmed one comparison longer, which its
/// record tells runs (see [`crate::warm::record::UNSETTLED_LIMIT`]).
fn inconclusive(shared: &Arc<Shared>, reason: &str) {
    let (phase, tries) = {
        let mut live = lock(&shared.live);
        live.inconclusive += 1;
        if live.record.phase == Phase::Ready {
            live.record.unsettled = live.inconclusive;
            shared.write_record(&live.record);
        }
        (live.record.phase, live.inconclusive)
    };
    shared.log(&format!(
        "the comparison with a cold run was inconclusive: {reason}"
    ));
    if phase != Phase::Checking {
        return;
    }
    if tries >= MAX_INCONCLUSIVE {
        // Never checked, so never used: failed, which ends the wait of
        // `qg daemon start` and says why; runs go on answering cold.
        let error = format!(
            "its answers could not be compared with a cold run in {MAX_INCONCLUSIVE} tries (the last: {reason}); runs are answered cold until it starts again"
        );
        shared.log(&error);
        shared.set_phase(Phase::Failed, |live| live.record.error = Some(error));
        return;
    }
    let shared = Arc::clone(shared);
    let pause = Duration::from_secs(2 << tries.min(4));
    std::thread::spawn(move || {
        std::thread::sleep(pause);
        if lock(&shared.live).record.phase == Phase::Checking {
            let _ = checking::compare(&shared, Compare::Whole);
        }
    });
}
