//! `qg lsp`: a language server over stdio that shows, in any editor, the
//! verdict CI will give — every gate's findings, scoped like `qg run`
//! (what changed and its importers), the baseline's known findings apart
//! from new ones — with fixes as code actions.
//!
//! The client's messages are read on one thread ([`session`]); runs of the
//! gates happen on another ([`runs`]), one at a time, the newest save
//! cancelling a run it makes stale. stdout carries protocol frames only.

mod actions;
pub(crate) mod diagnostics;
mod documents;
mod runs;
mod session;
mod store;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::QgError;
use crate::warm::lsp::rpc::Rpc;

pub(crate) use diagnostics::KnownSeverity;

/// How the server was started.
#[derive(Debug, Clone)]
pub(crate) struct ServeOptions {
    /// The directory qg was started in (the root when the client names none).
    pub(crate) cwd: PathBuf,
    /// `--config`.
    pub(crate) config: Option<PathBuf>,
    /// How findings the baseline knows are shown.
    pub(crate) known: KnownSeverity,
    /// Start the warm gates' daemons (stopped when the server exits).
    pub(crate) start_daemons: bool,
    /// Never ask a daemon (`--no-daemon`).
    pub(crate) no_daemon: bool,
}

/// Serves one client on `input`/`output` until it says `exit` or goes
/// away; returns the exit status the protocol asks for (0 after a
/// `shutdown`, 1 without one).
pub(crate) fn serve(
    input: Box<dyn Read + Send>,
    output: Box<dyn Write + Send>,
    options: ServeOptions,
) -> Result<i32, QgError> {
    let (session, ended) = session::Session::new(options);
    let handler_session = Arc::clone(&session);
    let rpc = Rpc::start(
        output,
        input,
        Box::new(move |incoming| handler_session.handle(incoming)),
    );
    session.attach(rpc);
    let worker = runs::start(Arc::clone(&session));
    // The client's `exit`, or the end of its input.
    loop {
        match ended.recv_timeout(std::time::Duration::from_millis(200)) {
            Ok(()) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !session.input_closed() => {}
            Err(_) => break,
        }
    }
    session.stop_runs();
    let _ = worker.join();
    session.stop_daemons();
    Ok(if session.was_shut_down() { 0 } else { 1 })
}
