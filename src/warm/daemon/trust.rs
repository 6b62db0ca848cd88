//! How a comparison of the daemon's answers with a cold run moves its
//! trust. Agreement after a first full pass: the daemon serves. A
//! difference then: it is untrusted — runs answer the gate cold and say
//! why — until its key changes or it is started again (a fresh tool that
//! disagrees is a difference of settings, which a restart does not mend).
//! A difference found later, after warm answers were given (a sampled
//! comparison, `--verify`): the next run is told those answers may have
//! been wrong, and the tool starts again (its incremental state went
//! stale), to serve once a new self-check agrees.

use std::sync::Arc;
use std::time::Duration;

use super::checking;
use super::lifecycle::{self, Restart};
use super::shared::{lock, Shared};
use crate::warm::checker::Compare;
use crate::warm::record::{Comparison, Distrust, Phase};

/// Comparisons in a row that could not conclude before the daemon stops
/// trying and calls itself failed (it answers cold until it is started
/// again). Few: the usual cause is the tool's own run failing (a path its
/// config names is missing), which no retry mends, and `qg daemon start`
/// waits for the outcome.
const MAX_INCONCLUSIVE: u32 = 3;

/// Takes in how a comparison came out.
pub(super) fn compared(shared: &Arc<Shared>, comparison: Comparison) {
    let since = lock(&shared.live).comparing_since.take();
    match comparison {
        Comparison::Agreed { compared } => agreed(shared, &compared, since),
        Comparison::Differed(distrust) => differed(shared, distrust),
        Comparison::Inconclusive { reason } => inconclusive(shared, &reason),
    }
}

fn agreed(shared: &Shared, compared: &str, since: Option<std::time::Instant>) {
    let phase = {
        let mut live = lock(&shared.live);
        live.inconclusive = 0;
        live.record.phase
    };
    shared.log(&format!("its answers for {compared} equal a cold run's"));
    if phase != Phase::Checking {
        return;
    }
    let took = since.map(|s| s.elapsed().as_millis() as u64);
    shared.set_phase(Phase::Ready, |live| {
        live.record.verified = Some(live.record.digest.clone());
        live.record.distrust = None;
        live.checked_ms = took.or(live.checked_ms);
    });
}

fn differed(shared: &Arc<Shared>, distrust: Distrust) {
    let phase = lock(&shared.live).record.phase;
    shared.log(&format!("untrusted: {}", distrust.describe()));
    let gate = shared.options.gate.clone();
    match phase {
        // Answers were given: the next run hears they may have been wrong,
        // and a fresh tool is checked again before it serves.
        Phase::Ready => {
            {
                let mut live = lock(&shared.live);
                live.record.verified = None;
                live.record.distrust = Some(distrust.clone());
                live.notice = Some(format!(
                    "the last warm answers of {gate} may have been wrong: {}; its tool starts again and is compared once more before it answers",
                    distrust.describe()
                ));
            }
            lifecycle::restart(
                shared,
                "its answer differed from a cold run",
                Restart::Trouble,
            );
        }
        _ => shared.set_phase(Phase::Untrusted, |live| {
            live.record.verified = None;
            live.record.distrust = Some(distrust);
        }),
    }
}

/// A comparison that could not conclude (files changed meanwhile, the cold
/// run erred): a self-check is tried again, later and later.
fn inconclusive(shared: &Arc<Shared>, reason: &str) {
    let (phase, tries) = {
        let mut live = lock(&shared.live);
        live.inconclusive += 1;
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
            checking::compare(&shared, Compare::Whole);
        }
    });
}
