//! `qg lsp`: a language server over stdio that shows, in any editor, the
//! verdict CI will give — every gate's findings, scoped like `qg run`
//! (what changed and its importers), the baseline's known findings apart
//! from new ones — with fixes as code actions.
//!
//! The client's messages are read on one thread and handed to their
//! handlers by the dispatcher ([`api`]), which read and change the plain
//! [`session`]; runs of the gates happen on another thread ([`runs`]), one
//! at a time from the [`queue`], the newest save cancelling a run it makes
//! stale. stdout carries protocol frames only.

mod api;
pub(crate) mod diagnostics;
mod documents;
mod fixes;
mod queue;
mod runs;
mod session;
mod store;
mod trust;

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
    /// The command line's choices (the client's `initializationOptions`
    /// may change them).
    pub(crate) settings: Settings,
}

/// What the user chose: on the command line, then in the client's
/// `initializationOptions` (`{"known": "information", "startDaemons":
/// true, "noDaemon": false}`), for editors that configure a server there.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Settings {
    /// How findings the baseline knows are shown.
    pub(crate) known: KnownSeverity,
    /// Start the warm gates' daemons (stopped when the server exits).
    pub(crate) start_daemons: bool,
    /// Never ask a daemon (`--no-daemon`).
    pub(crate) no_daemon: bool,
}

impl Settings {
    /// These settings changed by the client's `initializationOptions`; an
    /// option qg does not know, or a value it cannot take, is an error
    /// naming it (the other options still apply).
    pub(crate) fn with_client_options(
        mut self,
        options: &serde_json::Value,
    ) -> (Settings, Vec<String>) {
        let mut errors = Vec::new();
        let Some(options) = options.as_object() else {
            if !options.is_null() {
                errors.push("initializationOptions must be an object".to_string());
            }
            return (self, errors);
        };
        for (key, value) in options {
            match (key.as_str(), value) {
                ("known", serde_json::Value::String(known)) => {
                    match <KnownSeverity as clap::ValueEnum>::from_str(known, true) {
                        Ok(known) => self.known = known,
                        Err(_) => errors.push(format!(
                            "initializationOptions.known must be hint, information or hidden, not {known:?}"
                        )),
                    }
                }
                ("startDaemons", serde_json::Value::Bool(on)) => self.start_daemons = *on,
                ("noDaemon", serde_json::Value::Bool(on)) => self.no_daemon = *on,
                ("known" | "startDaemons" | "noDaemon", _) => errors.push(format!(
                    "initializationOptions.{key} has the wrong type: {value}"
                )),
                _ => errors.push(format!(
                    "initializationOptions.{key} is not a qg option (known: known, startDaemons, noDaemon)"
                )),
            }
        }
        (self, errors)
    }
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
        Box::new(move |incoming| api::handle(&handler_session, incoming)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_options_change_the_command_lines_settings_and_bad_ones_are_named() {
        let command_line = Settings {
            start_daemons: true,
            ..Settings::default()
        };
        let (settings, errors) =
            command_line.with_client_options(&json!({"known": "Information", "noDaemon": true}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(settings.known, KnownSeverity::Information);
        assert!(settings.no_daemon && settings.start_daemons);
        let (settings, errors) = command_line.with_client_options(
            &json!({"known": "loud", "startDaemons": "yes", "colour": 1, "noDaemon": true}),
        );
        assert_eq!(settings.known, KnownSeverity::Hint);
        assert!(settings.start_daemons && settings.no_daemon);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors
            .iter()
            .any(|e| e.contains("known must be hint, information or hidden")));
        assert!(errors
            .iter()
            .any(|e| e.contains("colour is not a qg option")));
        assert!(errors
            .iter()
            .any(|e| e.contains("startDaemons has the wrong type")));
        let (_, errors) = command_line.with_client_options(&json!(null));
        assert!(errors.is_empty());
        let (_, errors) = command_line.with_client_options(&json!([1]));
        assert_eq!(errors, ["initializationOptions must be an object"]);
    }
}
