//! The daemon's answers to a run's requests: a check (only from a daemon
//! that is ready and trusted, or for a comparing run), the wait for the
//! first full pass and its self-check, and its status.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::checking;
use super::lifecycle::{self, Restart};
use super::shared::{lock, Shared};
use crate::warm::checker::{Compare, Sample};
use crate::warm::engine::Checked;
use crate::warm::record::Phase;
use crate::warm::wire::{Reply, Status};

/// What a run asks a daemon for: the files whose findings it reports, and
/// the importers it left out of its check (a sample checks those too).
pub(super) struct Asked<'a> {
    /// The files whose findings are reported.
    pub(super) report: &'a [String],
    /// The importers of the run's body-only edits it did not check.
    pub(super) left_out: &'a [String],
}

/// Checks with the engine, when it may answer a run started for `key`:
/// ready and trusted — or being checked, for a run that compares the
/// answer with a cold run (`verify`). A warm answer found wrong since the
/// last one is told with this reply, whatever it is.
pub(super) fn check(shared: &Arc<Shared>, key: &str, asked: &Asked<'_>, verify: bool) -> Reply {
    // For the user's runs: a comparing run (a self-check) does not show it.
    let notice = match verify {
        true => None,
        false => lock(&shared.live).notice.take(),
    };
    // A run the user waits for has the cores: the comparison under way
    // stands still until no run is (see `checking::yield_to_runs`).
    if !verify {
        lock(&shared.live).answering += 1;
        lock(&shared.checker).pause();
    }
    let reply = answer(shared, key, asked, verify);
    if !verify {
        lock(&shared.live).answering -= 1;
    }
    match notice {
        Some(notice) => with_notice(reply, notice),
        None => reply,
    }
}

fn answer(shared: &Arc<Shared>, key: &str, asked: &Asked<'_>, verify: bool) -> Reply {
    if let Some(refused) = refusal(shared, key, verify) {
        return refused;
    }
    let mut engine = lock(&shared.engine);
    let Some(held) = engine.as_mut() else {
        return unavailable("the daemon has no tool running".into(), true);
    };
    let timeout = patience(shared, held.config.gates[&shared.options.gate].timeout);
    let checked = held.with(shared, |engine, ctx| {
        engine.check(ctx, asked.report, Instant::now() + timeout)
    });
    drop(engine);
    lock(&shared.live).last_activity = Instant::now();
    match checked {
        Ok(Checked::Answer(reply)) => {
            if !verify {
                counted(shared, asked);
            }
            reply
        }
        // Never slower than cold: the run is answered cold now, the tool
        // starts again meanwhile.
        Ok(Checked::Restart(file)) => {
            lifecycle::restart(
                shared,
                &format!("{file} was added or removed"),
                Restart::Expected,
            );
            unavailable(
                format!("its tool starts again ({file} was added or removed)"),
                false,
            )
        }
        Err(why) => {
            lifecycle::restart(shared, &format!("a check failed: {why}"), Restart::Trouble);
            unavailable(why, true)
        }
    }
}

/// A warm answer a run waits for at most this many times the slowest
/// whole-program pass the daemon has made (its first full pass, or the
/// cold run of its last agreeing self-check)...
const PATIENCE_FACTOR: u32 = 4;
/// ...and never less than this.
const MIN_PATIENCE: Duration = Duration::from_secs(30);

/// How long an answer may take: never much longer than the cold run it
/// stands for. dmypy can spin for minutes on one edit a cold mypy checks in
/// seconds (a workspace trial: a changed return type in attrs' stubs held
/// two member daemons at 90% CPU past the gate's 600 s timeout): past this,
/// the run is answered cold and the tool starts again.
fn patience(shared: &Shared, timeout: Duration) -> Duration {
    let live = lock(&shared.live);
    let slowest = live
        .record
        .first_pass_ms
        .into_iter()
        .chain(live.checked_ms)
        .max();
    match slowest {
        Some(ms) => (Duration::from_millis(ms) * PATIENCE_FACTOR)
            .max(MIN_PATIENCE)
            .min(timeout),
        None => timeout,
    }
}

/// Why the daemon does not answer this run, if it does not.
fn refusal(shared: &Shared, key: &str, verify: bool) -> Option<Reply> {
    let live = lock(&shared.live);
    // Another key first: a daemon untrusted for the old settings starts
    // its tool again for the new ones (the untrust is not theirs).
    if live.record.digest != key && live.record.phase == Phase::Untrusted {
        return Some(unavailable(
            "the daemon was started for another config, tool or virtualenv; it is starting again"
                .into(),
            false,
        ));
    }
    let refused = match live.record.phase {
        Phase::Ready => None,
        Phase::Checking if verify => None,
        Phase::Checking => Some(unavailable(
            "its answers are being compared with a cold run's".into(),
            false,
        )),
        Phase::Untrusted => {
            let why = live
                .record
                .distrust
                .as_ref()
                .map(|d| d.describe())
                .unwrap_or_default();
            Some(unavailable(
                format!("its daemon is untrusted for this tool and config: {why}; the gate answers cold until its tool or settings change"),
                true,
            ))
        }
        Phase::Failed => {
            let why = live.record.error.clone().unwrap_or_default();
            Some(unavailable(
                format!("its daemon could not start: {why}"),
                true,
            ))
        }
        phase => Some(unavailable(
            format!("the daemon is {}", phase.as_str()),
            false,
        )),
    };
    refused.or_else(|| {
        (live.record.digest != key).then(|| unavailable("the daemon was started for another config, tool or virtualenv; it is starting again".into(), false))
    })
}

/// One more warm answer: compared with a cold run of its files (and of the
/// importers the run left out), in the background, when it is every
/// `verify_every`th, among the first `verify_first` since the tool
/// started, or the tool's config makes it weaker (then every one is).
fn counted(shared: &Shared, asked: &Asked<'_>) {
    let sample = {
        let mut live = lock(&shared.live);
        live.checks += 1;
        live.since_start += 1;
        let nth = live.verify_every > 0 && live.checks.is_multiple_of(live.verify_every as u64);
        let early = live.since_start <= live.verify_first as u64;
        nth || early || live.compare_all.is_some()
    };
    if sample {
        let sample = Sample {
            files: asked.report.to_vec(),
            left_out: asked.left_out.to_vec(),
        };
        let _ = checking::compare(shared, Compare::Sample(&sample));
    }
}

/// Confirms a run's answer in the background: only an answer this daemon
/// gave, ready and trusted, for the key it holds. The same answer on the
/// same tree (the same job) confirmed already, or being confirmed, is not
/// checked again.
pub(super) fn confirm(shared: &Shared, key: &str, job: &str, path: &str) -> Reply {
    {
        let live = lock(&shared.live);
        if live.record.digest != key || live.record.phase != Phase::Ready {
            return unavailable(
                format!(
                    "the daemon is {} for {} key",
                    live.record.phase.as_str(),
                    match live.record.digest == key {
                        true => "this",
                        false => "another",
                    }
                ),
                false,
            );
        }
        if live.last_confirmed.as_deref() == Some(job) {
            return Reply::Confirmed;
        }
    }
    let what = Compare::Confirm {
        job,
        path: std::path::Path::new(path),
    };
    match checking::compare(shared, what) {
        Ok(_) => Reply::Confirming,
        Err(why) => unavailable(why, true),
    }
}

fn unavailable(reason: String, warn: bool) -> Reply {
    Reply::Unavailable {
        reason,
        warn,
        notice: None,
    }
}

/// `reply` carrying `notice` (an answer), or saying it (no answer).
fn with_notice(reply: Reply, notice: String) -> Reply {
    match reply {
        Reply::Diagnostics { violations, ms, .. } => Reply::Diagnostics {
            violations,
            ms,
            notice: Some(notice),
        },
        Reply::Output(mut output) => {
            output.notice = Some(notice);
            Reply::Output(output)
        }
        Reply::Unavailable { reason, warn, .. } => Reply::Unavailable {
            reason,
            warn,
            notice: Some(notice),
        },
        other => other,
    }
}

/// Waits for the first full pass and its comparison with a cold run (or
/// their failure).
pub(super) fn wait_ready(shared: &Shared) -> Reply {
    let mut live = lock(&shared.live);
    while matches!(
        live.record.phase,
        Phase::Starting | Phase::Restarting | Phase::Checking
    ) && !shared.stopping.load(Ordering::SeqCst)
    {
        live = shared
            .phase_changed
            .wait_timeout(live, Duration::from_millis(200))
            .map(|(guard, _)| guard)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    match (live.record.phase, live.record.first_pass_ms) {
        (Phase::Ready, Some(ms)) => Reply::Ready {
            first_pass_ms: ms,
            checked_ms: live.checked_ms,
        },
        (Phase::Untrusted, _) => match &live.record.distrust {
            Some(distrust) => Reply::Untrusted {
                distrust: distrust.clone(),
            },
            None => failed("untrusted".into()),
        },
        _ => failed(
            live.record
                .error
                .clone()
                .unwrap_or_else(|| "the daemon stopped".into()),
        ),
    }
}

fn failed(reason: String) -> Reply {
    Reply::Failed { reason }
}

/// The record and the live figures.
pub(super) fn status(shared: &Shared) -> Status {
    let live = lock(&shared.live);
    let mut rss_kib = crate::warm::procfs::rss_kib(std::process::id());
    if let Some(group) = live.record.engine_group {
        rss_kib += crate::warm::procfs::group_members(group)
            .into_iter()
            .map(crate::warm::procfs::rss_kib)
            .sum::<u64>();
    }
    Status {
        record: live.record.clone(),
        checks: live.checks,
        idle_s: live.last_activity.elapsed().as_secs(),
        rss_kib,
        agreed: live.agreed,
        last_agreed: live.last_agreed.clone(),
    }
}
