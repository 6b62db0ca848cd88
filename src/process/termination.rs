//! Requests to stop a detached qg process (a daemon, a guard): SIGTERM,
//! SIGHUP and SIGINT raise a flag its loop reads. Windows sends a detached
//! process no console events, so there is nothing to listen for: a daemon
//! there is stopped through its socket, and a guard and its tool die with
//! the Job Object of the daemon that holds them (see [`super::tree`]).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Raises `flag` when this process is asked to stop.
pub(crate) fn raise_on_request(flag: &Arc<AtomicBool>) {
    #[cfg(unix)]
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let _ = signal_hook::flag::register(signal, Arc::clone(flag));
    }
    #[cfg(windows)]
    let _ = flag;
}
