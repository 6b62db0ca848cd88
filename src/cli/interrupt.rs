//! Ctrl-C and SIGTERM: tools run in their own process groups (so a timeout
//! can kill a whole tree), which also means the terminal's SIGINT never
//! reaches them. qg therefore kills every running tree itself, says what it
//! interrupted, and exits 130 (SIGINT) or 143 (SIGTERM) without touching
//! the state file: an interrupted run proves nothing.
//!
//! The interrupts are one stream on every platform: Ctrl-C and SIGTERM on
//! Unix (signal-hook), Ctrl-C and Ctrl-Break on Windows (ctrlc: Windows has
//! console control events, not signals).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::process;

/// Starts the watcher thread. Call once, before any tool starts.
pub(crate) fn install() {
    let Ok(mut interrupts) = watch() else {
        warn_user!("cannot watch for Ctrl-C; an interrupt may leave tools running");
        return;
    };
    std::thread::spawn(move || {
        if let Some(interrupt) = interrupts.next() {
            // Before the kill: the command's thread wakes from it and must
            // find this thread exiting for it (`let_the_interrupt_exit`).
            INTERRUPTING.store(true, Ordering::SeqCst);
            let stopped = process::kill_all_running();
            let what = if stopped.is_empty() {
                "no tool was running".to_string()
            } else {
                format!("stopped {}", stopped.join(", "))
            };
            eprintln!(
                "qg: interrupted by {}; {what}; state not updated",
                interrupt.name
            );
            std::process::exit(interrupt.status);
        }
    });
}

/// Set once an interrupt is being handled by `install`'s thread, which will
/// exit the process with the interrupt's status.
static INTERRUPTING: AtomicBool = AtomicBool::new(false);

/// Called as a command returns: when an interrupt is being handled, waits
/// for its thread to exit the process. Killing the tools lets the command
/// finish at once (a gate whose tool died), and its exit code (2) raced the
/// interrupt's report and status (130): a CI run saw "qg: interrupted by "
/// cut off, and exit 2.
pub(crate) fn let_the_interrupt_exit() {
    if INTERRUPTING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// The interrupt that cancelled the command, once one has.
static CANCELLED_BY: std::sync::OnceLock<Interrupt> = std::sync::OnceLock::new();

/// For a command that must clean up after its tools (`qg fix` puts back
/// the files its fixers touched): the first Ctrl-C or SIGTERM cancels
/// `cancel` — the tools are killed and the command unwinds through its own
/// cleanup — and a second one exits at once. Call once, before any tool
/// starts.
pub(crate) fn install_cancelling(cancel: &process::Cancel) {
    let Ok(mut interrupts) = watch() else {
        warn_user!("cannot watch for Ctrl-C; an interrupt may leave tools running");
        return;
    };
    let cancel = cancel.clone();
    std::thread::spawn(move || {
        if let Some(interrupt) = interrupts.next() {
            let _ = CANCELLED_BY.set(interrupt);
            cancel.cancel();
        }
        if let Some(interrupt) = interrupts.next() {
            process::kill_all_running();
            eprintln!("qg: interrupted again; exiting without cleaning up");
            std::process::exit(interrupt.status);
        }
    });
}

/// The interrupt's name (`SIGINT`, `SIGTERM`, `Ctrl-C`) and the exit
/// status that reports it (130, 143), when one cancelled the command.
pub(crate) fn cancelled_by() -> Option<(&'static str, i32)> {
    CANCELLED_BY.get().map(|i| (i.name, i.status))
}

/// One interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Interrupt {
    /// How it is named in messages (`SIGINT`, `SIGTERM`, `Ctrl-C`).
    pub(crate) name: &'static str,
    /// The exit status that reports it: 128 + the signal on Unix (130,
    /// 143), 130 for Ctrl-C on Windows too, as shells there report it.
    pub(crate) status: i32,
}

/// The interrupts from now on, in order; `Err` when they cannot be watched.
#[cfg(unix)]
pub(crate) fn watch() -> Result<impl Iterator<Item = Interrupt>, String> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(|e| e.to_string())?;
    Ok(
        std::iter::from_fn(move || signals.forever().next()).map(|signal| Interrupt {
            name: if signal == SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            },
            status: 128 + signal,
        }),
    )
}

/// The interrupts from now on, in order; `Err` when they cannot be watched.
#[cfg(windows)]
pub(crate) fn watch() -> Result<impl Iterator<Item = Interrupt>, String> {
    let (send, receive) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = send.send(Interrupt {
            name: "Ctrl-C",
            status: 130,
        });
    })
    .map_err(|e| e.to_string())?;
    Ok(receive.into_iter())
}
