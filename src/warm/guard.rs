//! The guard: a small qg process between a daemon and its tool, so that
//! nothing the tool starts can outlive the daemon — not even a daemon
//! killed with `kill -9`, which runs no code of its own on the way out.
//!
//! The daemon starts `qg daemon guard -- PROGRAM ARGS…` as the leader of a
//! new process group; the guard starts the tool in that group (a tool's
//! own children stay there too) with the daemon's pipes as its stdio, and
//! kills the whole group when the daemon is gone (it is re-parented), when
//! it is asked to stop (SIGTERM, SIGHUP, SIGINT), or when the tool exits
//! (so no grandchild lingers).

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::log::Log;

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
    // SAFETY: getppid and getpgrp have no preconditions.
    let parent = unsafe { libc::getppid() };
    let group = unsafe { libc::getpgrp() } as u32;
    if group != std::process::id() {
        // Killing "its" group would kill whoever started it.
        log.line("must lead its own process group");
        return 2;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&stop));
    }
    let mut child = match std::process::Command::new(program).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            log.line(&format!("cannot start {}: {e}", program.to_string_lossy()));
            return 127;
        }
    };
    loop {
        // SAFETY: as above.
        let orphaned = unsafe { libc::getppid() } != parent;
        if orphaned || stop.load(Ordering::SeqCst) {
            let why = match orphaned {
                true => "the daemon is gone",
                false => "asked to stop",
            };
            log.line(&format!("{why}; killing the tool's process group"));
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
    // The whole group, this process included: nothing is left behind.
    super::procfs::signal_group(group, libc::SIGKILL);
    1
}
