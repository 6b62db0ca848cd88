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

/// The signal that cancelled the command, once one has.
static CANCELLED_BY: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// For a command that must clean up after its tools (`qg fix` puts back
/// the files its fixers touched): the first Ctrl-C or SIGTERM cancels
/// `cancel` — the tools are killed and the command unwinds through its own
/// cleanup — and a second one exits at once. Call once, before any tool
/// starts.
pub(crate) fn install_cancelling(cancel: &process::Cancel) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        warn_user!("cannot watch for Ctrl-C; an interrupt may leave tools running");
        return;
    };
    let cancel = cancel.clone();
    std::thread::spawn(move || {
        let mut signals = signals.forever();
        if let Some(signal) = signals.next() {
            CANCELLED_BY.store(signal, std::sync::atomic::Ordering::SeqCst);
            cancel.cancel();
        }
        if let Some(signal) = signals.next() {
            process::kill_all_running();
            eprintln!("qg: interrupted again; exiting without cleaning up");
            std::process::exit(128 + signal);
        }
    });
}

/// `SIGINT` or `SIGTERM` and the exit status that reports it (130, 143),
/// when a signal cancelled the command.
pub(crate) fn cancelled_by() -> Option<(&'static str, i32)> {
    match CANCELLED_BY.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        SIGINT => Some(("SIGINT", 128 + SIGINT)),
        signal => Some(("SIGTERM", 128 + signal)),
    }
}
