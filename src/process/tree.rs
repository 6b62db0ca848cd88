//! A process and everything it starts, killed as one: on Unix the process
//! group it leads; on Windows, which has no groups to signal, the Job
//! Object it is put in as soon as it starts (nested jobs: Windows 8 and
//! later), which kills what is left in it when its last handle closes — so
//! a killed owner takes the tree with it.

use std::process::{Child, Command};

/// Makes `command` lead a tree of its own; [`Tree::of`] holds it once it
/// is started. On Windows a new process group also keeps a console's
/// Ctrl-C away from it: its owner alone decides when it stops.
pub(crate) fn lead(command: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    #[cfg(windows)]
    std::os::windows::process::CommandExt::creation_flags(command, CREATE_NEW_PROCESS_GROUP);
}

/// [`lead`], at the lowest CPU priority, which everything the process
/// starts inherits: background work must not slow the user's runs.
pub(crate) fn lead_at_lowest_priority(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        // SAFETY: setpriority only changes this process's nice value.
        unsafe {
            command.pre_exec(|| {
                libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                Ok(())
            });
        }
    }
    #[cfg(windows)]
    std::os::windows::process::CommandExt::creation_flags(
        command,
        CREATE_NEW_PROCESS_GROUP | IDLE_PRIORITY_CLASS,
    );
}

#[cfg(windows)]
const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
#[cfg(windows)]
const IDLE_PRIORITY_CLASS: u32 = 0x0000_0040;

/// A started tree.
pub(crate) struct Tree {
    leader: u32,
    /// The job holding the tree (none if Windows refused to assign it:
    /// then only the leader can be killed).
    #[cfg(windows)]
    job: Option<Job>,
}

impl Tree {
    /// The tree of `child`, started from a command [`lead`] prepared.
    pub(crate) fn of(child: &Child) -> Tree {
        Tree {
            leader: child.id(),
            #[cfg(windows)]
            job: Job::holding(child.id()),
        }
    }

    /// The process group this process leads, which the processes it starts
    /// stay in (a guard and its tool).
    #[cfg(unix)]
    pub(crate) fn own_group() -> Tree {
        Tree {
            leader: std::process::id(),
        }
    }

    /// The leader's process id (on Unix, the group's id too).
    pub(crate) fn leader(&self) -> u32 {
        self.leader
    }

    /// Asks the leader to stop (SIGTERM): a qg leader then kills the tools
    /// it runs in process groups of their own, which a kill of its group
    /// would orphan. On Windows the job's kill takes nested jobs with it:
    /// nothing to ask.
    pub(crate) fn terminate(&self) {
        #[cfg(unix)]
        // SAFETY: kill only sends a signal.
        unsafe {
            libc::kill(self.leader as libc::pid_t, libc::SIGTERM);
        }
    }

    /// Stops every process the leader started, and what they started,
    /// where it stands (SIGSTOP) until [`Tree::resume`]: background work
    /// yielding the cores to a run the user waits for. The leader itself
    /// goes on: it is a qg process that only waits on its tools — and, for
    /// an instant at its end, holds the state's lock, which stopped there
    /// stopped every run of the project until the background work would
    /// have gone on, that is never. A tool the leader starts after this is
    /// stopped by the next call (the daemon asks on every tick while a run
    /// is under way). Where `/proc` is missing (not Linux) and on Windows
    /// nothing stops: the tree keeps running at the lowest priority it was
    /// started with.
    pub(crate) fn pause(&self) {
        #[cfg(unix)]
        signal_descendants(self.leader, libc::SIGSTOP);
    }

    /// Lets what [`Tree::pause`] stopped go on (SIGCONT).
    pub(crate) fn resume(&self) {
        #[cfg(unix)]
        signal_descendants(self.leader, libc::SIGCONT);
    }

    /// Kills every process of the tree.
    pub(crate) fn kill(&self) {
        #[cfg(unix)]
        kill_group(self.leader);
        #[cfg(windows)]
        match &self.job {
            Some(job) => job.terminate(),
            None => kill_process(self.leader),
        }
    }
}

/// Sends `signal` to every process descended from `leader` (each tool
/// runs in a group of its own, so no group signal reaches them all):
/// parents first on a stop, children first on a continue, so nothing they
/// start meanwhile runs on unseen for long.
#[cfg(unix)]
fn signal_descendants(leader: u32, signal: i32) {
    let mut descendants = descendants(leader);
    if signal == libc::SIGCONT {
        descendants.reverse();
    }
    for pid in descendants {
        // SAFETY: kill only sends a signal.
        unsafe {
            libc::kill(pid as libc::pid_t, signal);
        }
    }
}

/// Every process descended from `leader`, children before grandchildren,
/// from `/proc` (Linux); elsewhere none.
#[cfg(unix)]
fn descendants(leader: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = vec![leader];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        next += 1;
    }
    found.remove(0);
    found
}

/// Kills the process group `group` (ESRCH, a group already gone, is fine).
#[cfg(unix)]
pub(crate) fn kill_group(group: u32) {
    // SAFETY: killpg only sends a signal.
    unsafe {
        libc::killpg(group as libc::pid_t, libc::SIGKILL);
    }
}

/// Kills the tree another qg process leads (a daemon's guard, found from
/// its record): its group on Unix; on Windows the leader, whose job then
/// closes and kills the rest.
pub(crate) fn kill_led_by(leader: u32) {
    #[cfg(unix)]
    kill_group(leader);
    #[cfg(windows)]
    kill_process(leader);
}

/// Kills process `pid` now.
pub(crate) fn kill_process(pid: u32) {
    #[cfg(unix)]
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
    #[cfg(windows)]
    // SAFETY: plain Win32 calls on a handle opened and closed here.
    unsafe {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::Threading::{
            OpenProcess, TerminateProcess, PROCESS_TERMINATE,
        };
        let process = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if !process.is_null() {
            TerminateProcess(process, 1);
            CloseHandle(process);
        }
    }
}

/// A Job Object that kills every process in it when it is closed
/// (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`); the handle is kept as an
/// address, since a raw handle is not `Send`.
#[cfg(windows)]
pub(crate) struct Job(usize);

#[cfg(windows)]
impl Job {
    /// A new job holding process `pid`, or none if Windows refused.
    pub(crate) fn holding(pid: u32) -> Option<Job> {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::JobObjects::{
            AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
            SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        };
        use windows_sys::Win32::System::Threading::{
            OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE,
        };
        // SAFETY: plain Win32 calls on handles this function owns; every
        // pointer passed is to a live local or null where the API allows it.
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                return None;
            }
            let job = Job(job as usize);
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            SetInformationJobObject(
                job.handle(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            );
            let process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid);
            if process.is_null() {
                return None;
            }
            let assigned = AssignProcessToJobObject(job.handle(), process) != 0;
            CloseHandle(process);
            assigned.then_some(job)
        }
    }

    /// Kills every process in the job.
    pub(crate) fn terminate(&self) {
        // SAFETY: the handle is open until drop.
        unsafe {
            windows_sys::Win32::System::JobObjects::TerminateJobObject(self.handle(), 1);
        }
    }

    fn handle(&self) -> windows_sys::Win32::Foundation::HANDLE {
        self.0 as windows_sys::Win32::Foundation::HANDLE
    }
}

#[cfg(windows)]
impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by `holding` and is closed once.
        unsafe {
            windows_sys::Win32::Foundation::CloseHandle(self.handle());
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The state letter of `pid` in `/proc` (`T` stopped, `S` sleeping…).
    fn state(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        after.trim_start().chars().next().unwrap()
    }

    fn until(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "never: {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A paused background comparison's qg process may hold the state's
    /// lock: stopping it stopped every run of the project for good (a
    /// foreground run waited on the lock, the daemon waited for the run).
    #[test]
    fn a_pause_stops_what_the_leader_started_and_not_the_leader() {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30 & wait"]);
        lead(&mut command);
        let mut leader = command.spawn().unwrap();
        let tree = Tree::of(&leader);
        until("the leader starts its child", || {
            !descendants(tree.leader()).is_empty()
        });
        let child = descendants(tree.leader())[0];

        tree.pause();
        until("the child stops", || state(child) == 'T');
        assert_ne!(state(tree.leader()), 'T', "the leader was stopped");

        tree.resume();
        until("the child goes on", || state(child) != 'T');
        tree.kill();
        let _ = leader.wait();
    }
}
