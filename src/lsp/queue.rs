//! The queue between the client's reader thread and the run worker: jobs
//! asked for while a run is under way wait for it — or, when the run is a
//! check a new save makes stale, cancel it — and queued jobs are merged,
//! so the last save always wins.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::process::Cancel;

/// Something to do on the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Job {
    /// Check what changed (the `auto` scope, importers included).
    Auto,
    /// Check a file just opened whose findings are not known.
    Open(String),
    /// Check the whole project (`qg.runProject`).
    Project,
    /// Write the baseline, then check the project against it.
    BaselineWrite,
    /// Start the warm gates' daemons.
    StartDaemons,
}

/// Waiting work, merged.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Check what changed.
    pub(crate) auto: bool,
    /// Files just opened whose findings are not known.
    pub(crate) open: BTreeSet<String>,
    /// Check the whole project.
    pub(crate) project: bool,
    /// Write the baseline.
    pub(crate) baseline_write: bool,
    /// Start the daemons.
    pub(crate) start_daemons: bool,
    closed: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        !(self.auto
            || self.project
            || self.baseline_write
            || self.start_daemons
            || !self.open.is_empty())
    }
}

/// The queue between the reader thread and the worker.
#[derive(Default)]
pub(crate) struct Queue {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// The run under way, and whether a new request makes it stale.
    current: Mutex<Option<(Cancel, bool)>>,
}

impl Queue {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn current(&self) -> MutexGuard<'_, Option<(Cancel, bool)>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the run under way (`None` when it ended), with whether a
    /// save makes it stale.
    pub(crate) fn set_current(&self, run: Option<(Cancel, bool)>) {
        *self.current() = run;
    }

    /// Queues a job; a save or a change cancels a check under way that it
    /// makes stale (the merged run that follows covers both).
    pub(crate) fn push(&self, job: Job) {
        let stales = matches!(job, Job::Auto);
        {
            let mut pending = self.pending();
            match job {
                Job::Auto => pending.auto = true,
                Job::Open(file) => {
                    pending.open.insert(file);
                }
                Job::Project => pending.project = true,
                Job::BaselineWrite => pending.baseline_write = true,
                Job::StartDaemons => pending.start_daemons = true,
            }
        }
        if stales {
            if let Some((cancel, true)) = self.current().as_ref() {
                cancel.cancel();
            }
        }
        self.wake.notify_all();
    }

    /// Whether no work waits.
    pub(crate) fn is_idle(&self) -> bool {
        self.pending().is_empty()
    }

    /// Cancels the run under way, whatever it is.
    pub(crate) fn cancel_current(&self) {
        if let Some((cancel, _)) = self.current().as_ref() {
            cancel.cancel();
        }
    }

    /// Stops the worker (after cancelling its run).
    pub(crate) fn close(&self) {
        self.pending().closed = true;
        self.cancel_current();
        self.wake.notify_all();
    }

    /// The next merged batch of work, after a short quiet spell (an
    /// editor's save and its file-change notice arrive together); `None`
    /// once closed.
    pub(crate) fn next(&self) -> Option<Pending> {
        let mut pending = self.pending();
        loop {
            if pending.closed {
                return None;
            }
            if !pending.is_empty() {
                break;
            }
            pending = self.wake.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
        drop(pending);
        std::thread::sleep(Duration::from_millis(30));
        let mut pending = self.pending();
        if pending.closed {
            return None;
        }
        Some(std::mem::take(&mut *pending))
    }
}
