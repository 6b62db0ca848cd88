//! Ctrl-C and SIGTERM: tools run in their own process groups (so a timeout
//! can kill a whole tree), which also means the terminal's SIGINT never
//! reaches them. qg therefore kills every running tree itself, says what it
//! interrupted, and exits 130 (SIGINT) or 143 (SIGTERM) without touching
//! the state file: an interrupted run proves nothing.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::process;

/// Starts the watcher thread. Call once, before any tool starts.
pub(crate) fn install() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        warn_user!("cannot watch for Ctrl-C; an interrupt may leave tools running");
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let stopped = process::kill_all_running();
            let name = if signal == SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            let what = if stopped.is_empty() {
                "no tool was running".to_string()
            } else {
                format!("stopped {}", stopped.join(", "))
            };
            eprintln!("qg: interrupted by {name}; {what}; state not updated");
            std::process::exit(128 + signal);
        }
    });
}
