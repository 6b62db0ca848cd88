//! The guard: a small qg process between a daemon and its tool, so that
//! nothing the tool starts can outlive the daemon — not even a daemon
//! killed with `kill -9`, which runs no code of its own on the way out.
//!
//! The daemon starts `qg daemon guard -- PROGRAM ARGS…` as the leader of a
//! new process group; the guard starts the tool in that group (a tool's
//! own children stay there too) with the daemon's pipes as its stdio, and
//! kills the whole group when the daemon is gone (it is re-parented), when
//! it is asked to stop (SIGTERM, SIGHUP, SIGINT), or when the tool exits
//! (so no grandchild lingers). On Windows the groups are Job Objects: the
//! daemon's holds the guard and the tool, the guard's own holds the tool.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::log::Log;
use crate::process::tree::Tree;

/// How often the guard looks at its parent and its tool.
const POLL: Duration = Duration::from_millis(100);

/// Runs the guard for `argv` (program first), saying what it does on
/// `log` (the daemon's); returns only if the tool could not be started
/// (exit status 127, as a shell would).
pub(crate) fn main(argv: &[OsString], log: &Log) -> i32 {
    let Some((program, args)) = argv.split_first() else {
        log.line("no program given");
        return 2;
    };
    let Some(parent) = Parent::now(log) else {
        return 2;
    };
    let stop = Arc::new(AtomicBool::new(false));
    crate::process::termination::raise_on_request(&stop);
    let mut child = match std::process::Command::new(program).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            log.line(&format!("cannot start {}: {e}", program.to_string_lossy()));
            return 127;
        }
    };
    let tree = tool_tree(&child);
    loop {
        let orphaned = parent.is_gone();
        if orphaned || stop.load(Ordering::SeqCst) {
            let why = match orphaned {
                true => "the daemon is gone",
                false => "asked to stop",
            };
            log.line(&format!("{why}; killing the tool's process tree"));
            break;
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                log.line(&format!("{} ended ({status})", program.to_string_lossy()));
                break;
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(_) => break,
        }
    }
    // The whole tree (on Unix this process included): nothing is left behind.
    tree.kill();
    1
}

/// The tree the tool's processes are in: on Unix the guard's own group,
/// which the tool stays in; on Windows a job of the tool's own.
fn tool_tree(tool: &std::process::Child) -> Tree {
    #[cfg(unix)]
    let _ = tool;
    #[cfg(unix)]
    return Tree::own_group();
    #[cfg(windows)]
    return Tree::of(tool);
}

/// The daemon that started the guard, watched for its death.
struct Parent {
    #[cfg(unix)]
    pid: libc::pid_t,
}

impl Parent {
    /// The parent as the guard starts; none (said on `log`) if the guard
    /// does not lead its own process group — killing "its" group would
    /// kill whoever started it.
    #[cfg(unix)]
    fn now(log: &Log) -> Option<Parent> {
        // SAFETY: getppid and getpgrp have no preconditions.
        let (pid, group) = unsafe { (libc::getppid(), libc::getpgrp()) };
        if group as u32 != std::process::id() {
            log.line("must lead its own process group");
            return None;
        }
        Some(Parent { pid })
    }

    /// On Windows the daemon holds the guard in a Job Object that kills
    /// it, and its tool, when the daemon's handles close — at its death,
    /// even a forced one — so there is nothing to watch.
    #[cfg(windows)]
    fn now(_log: &Log) -> Option<Parent> {
        Some(Parent {})
    }

    /// Whether the daemon is gone (the guard was re-parented).
    fn is_gone(&self) -> bool {
        #[cfg(unix)]
        // SAFETY: getppid has no preconditions.
        return unsafe { libc::getppid() } != self.pid;
        #[cfg(windows)]
        return false;
    }
}
