//! A run's side: asking a gate's live daemon for its answer. Anything but
//! an answer — no daemon, another key, a daemon still warming up, a crash,
//! a hang, a reply qg cannot read — is [`NotWarm`], and the run answers
//! that gate cold.

use std::time::{Duration, Instant};

use super::record::Comparison;
use super::slot::Slot;
use super::wire::{self, CommandOutput, Reply, Request};
use super::{WarmAnswer, WarmFindings, WarmPlan};
use crate::config::Gate;
use crate::process::{Capture, Finished, Termination};
use crate::tools::Toolbox;

/// Why a gate was not answered warm.
#[derive(Debug)]
pub(crate) struct NotWarm {
    /// In a few words.
    pub(crate) reason: String,
    /// Whether the run should say so: a daemon that failed (a crash, a
    /// hang, garbage), not one that is absent or warming up.
    pub(crate) warn: bool,
    /// A warm answer given earlier was found wrong since (told once).
    pub(crate) notice: Option<String>,
}

/// Time a daemon gets beyond the gate's own timeout (it enforces that one
/// itself, and replies).
const SLACK: Duration = Duration::from_secs(10);

/// Whether `gate` may have a daemon in the project at `root` (its socket
/// exists): the cheap test made before anything else.
pub(crate) fn may_have_daemon(root: &std::path::Path, gate: &Gate) -> bool {
    gate.daemon.is_some() && Slot::new(root, &gate.id).socket().exists()
}

/// Asks `gate`'s daemon for the answer to `plan`; returns it with the time
/// the whole exchange took. `verify`: the run compares the answer with a
/// cold run's (a daemon being checked answers such a run too).
pub(crate) fn ask(
    gate: &Gate,
    tools: &Toolbox<'_>,
    plan: &WarmPlan,
    verify: bool,
) -> Result<(WarmAnswer, Duration), NotWarm> {
    let started = Instant::now();
    let slot = Slot::new(tools.root, &gate.id);
    let request = Request::Check {
        key: plan.key.clone(),
        files: plan.report.iter().cloned().collect(),
        verify,
        left_out: plan.left_out.iter().cloned().collect(),
    };
    let failed = |reason: String| NotWarm {
        reason,
        warn: true,
        notice: None,
    };
    let reply =
        wire::ask(&slot.socket(), &request, gate.timeout + SLACK).map_err(|e| match e.kind() {
            // A socket nobody listens on: a daemon that is gone.
            std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound => NotWarm {
                reason: "its daemon is gone".into(),
                warn: false,
                notice: None,
            },
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => failed(format!(
                "its daemon did not answer within {}s",
                (gate.timeout + SLACK).as_secs()
            )),
            _ => failed(format!("its daemon could not be asked: {e}")),
        })?;
    let answer = match reply {
        Reply::Diagnostics {
            violations, notice, ..
        } => WarmAnswer {
            findings: WarmFindings::Diagnostics(violations),
            notice,
        },
        Reply::Output(mut output) => {
            let notice = output.notice.take();
            let argv = output.argv.clone();
            let finished = finished(*output).map_err(|e| failed(e.to_string()))?;
            WarmAnswer {
                findings: WarmFindings::Output { finished, argv },
                notice,
            }
        }
        Reply::Unavailable {
            reason,
            warn,
            notice,
        } => {
            return Err(NotWarm {
                reason,
                warn,
                notice,
            })
        }
        other => {
            return Err(failed(format!(
                "its daemon answered out of turn: {other:?}"
            )))
        }
    };
    Ok((answer, started.elapsed()))
}

/// What a daemon did with a confirmation it was handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Confirming {
    /// It confirms it in the background (or already was).
    Started,
    /// It confirmed the very same answer on the same tree before.
    Already,
}

/// Hands `gate`'s daemon the confirmation `job` (written at `path`) of an
/// answer it gave for `key`.
pub(crate) fn confirm(
    root: &std::path::Path,
    gate: &str,
    key: &str,
    job: &str,
    path: &std::path::Path,
) -> Result<Confirming, String> {
    let slot = Slot::new(root, gate);
    let request = Request::Confirm {
        key: key.to_string(),
        job: job.to_string(),
        path: path.to_string_lossy().into_owned(),
    };
    match wire::ask(&slot.socket(), &request, Duration::from_secs(5)) {
        Ok(Reply::Confirming) => Ok(Confirming::Started),
        Ok(Reply::Confirmed) => Ok(Confirming::Already),
        Ok(Reply::Unavailable { reason, .. }) => Err(reason),
        Ok(other) => Err(format!("its daemon answered out of turn: {other:?}")),
        Err(e) => Err(format!("its daemon could not be asked: {e}")),
    }
}

/// Tells `gate`'s daemon how a comparison of its answer with a cold run
/// came out (it trusts, distrusts, or tries again; see the record).
pub(crate) fn report(root: &std::path::Path, gate: &str, comparison: Comparison) {
    let slot = Slot::new(root, gate);
    let _ = wire::ask(
        &slot.socket(),
        &Request::Compared(comparison),
        Duration::from_secs(5),
    );
}

/// A command daemon's output as a finished tool's.
fn finished(output: CommandOutput) -> std::io::Result<Finished> {
    let termination = match (output.exit_code, output.signal, output.timed_out) {
        (_, _, true) => Termination::TimedOut,
        (Some(code), _, _) => Termination::Exited(code),
        (None, Some(signal), _) => Termination::Signaled(signal),
        (None, None, _) => Termination::Exited(-1),
    };
    Ok(Finished {
        termination,
        stdout: Capture::from_bytes(output.stdout.as_slice())?,
        stderr: Capture::from_bytes(output.stderr.as_slice())?,
        duration: Duration::from_millis(output.ms),
    })
}
