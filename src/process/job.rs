//! Windows has no process groups to signal: each running tool's tree is
//! held in a [`Job`] of its own, registered by the tool's process id. A
//! timeout, a cancel or Ctrl-C terminates the job, and so every process
//! the tool started after it was assigned; releasing it kills what is left.

use std::sync::Mutex;

use super::tree::Job;

/// Each running tool's job, by its process id.
static JOBS: Mutex<Vec<(u32, Job)>> = Mutex::new(Vec::new());

/// Puts the tool `pid` (just started) in a job of its own.
pub(super) fn adopt(pid: u32) {
    if let Some(job) = Job::holding(pid) {
        lock().push((pid, job));
    }
}

/// Kills every process of the tool `pid`'s job.
pub(super) fn kill(pid: u32) {
    if let Some((_, job)) = lock().iter().find(|(p, _)| *p == pid) {
        job.terminate();
    }
}

/// Closes the tool `pid`'s job, killing whatever is left in it.
pub(super) fn release(pid: u32) {
    lock().retain(|(p, _)| *p != pid);
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(u32, Job)>> {
    JOBS.lock().unwrap_or_else(|e| e.into_inner())
}
