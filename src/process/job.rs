//! Windows has no process groups to signal: a tool's whole tree is held in
//! a Job Object instead. Each tool gets a job that kills whatever is still
//! in it when the job is closed (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`); a
//! timeout, a cancel or Ctrl-C terminates the job, and so every process the
//! tool started after it was assigned (nested jobs: Windows 8 and later).

use std::sync::Mutex;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

/// Each running tool's job: (its process id, the job's handle as an
/// address, since a raw handle is not `Send`).
static JOBS: Mutex<Vec<(u32, usize)>> = Mutex::new(Vec::new());

/// Puts the tool `pid` (just started) in a job of its own.
pub(super) fn adopt(pid: u32) {
    // SAFETY: plain Win32 calls on handles this function owns; every
    // pointer passed is to a live local or null where the API allows it.
    unsafe {
        let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
        if job.is_null() {
            return;
        }
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        SetInformationJobObject(
            job,
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        );
        let process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid);
        if !process.is_null() {
            AssignProcessToJobObject(job, process);
            CloseHandle(process);
        }
        lock().push((pid, job as usize));
    }
}

/// Kills every process of the tool `pid`'s job.
pub(super) fn kill(pid: u32) {
    if let Some(job) = find(pid) {
        // SAFETY: the handle stays open until `release`.
        unsafe {
            TerminateJobObject(job, 1);
        }
    }
}

/// Closes the tool `pid`'s job, killing whatever is left in it.
pub(super) fn release(pid: u32) {
    let mut jobs = lock();
    if let Some(at) = jobs.iter().position(|(p, _)| *p == pid) {
        let (_, job) = jobs.swap_remove(at);
        // SAFETY: the handle was opened by `adopt` and is closed once.
        unsafe {
            CloseHandle(job as HANDLE);
        }
    }
}

fn find(pid: u32) -> Option<HANDLE> {
    lock()
        .iter()
        .find(|(p, _)| *p == pid)
        .map(|(_, job)| *job as HANDLE)
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(u32, usize)>> {
    JOBS.lock().unwrap_or_else(|e| e.into_inner())
}
