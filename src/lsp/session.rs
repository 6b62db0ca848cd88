//! One client's session: plain state — what the client said it can do,
//! the documents it has open, what it was last shown — and the connection
//! to it. The [handlers](super::api) read and change it on the reader
//! thread; anything slow (a run of the gates) goes to the run [queue].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use lsp_types::{Diagnostic, MessageType};
use serde_json::{json, Value};

use super::diagnostics::{self, Origin};
use super::documents::{self, Documents};
use super::queue::Queue;
use super::store::Store;
use super::{ServeOptions, Settings};
use crate::config::{Config, PositionEncoding};
use crate::warm::lsp::rpc::Rpc;
use crate::watch::filter::Filter;
use crate::workspace::Workspace;

/// The session, shared by the reader thread and the run worker.
pub(crate) struct Session {
    pub(crate) options: ServeOptions,
    rpc: OnceLock<Rpc>,
    state: Mutex<State>,
    pub(crate) queue: Queue,
    ended: Mutex<Sender<()>>,
}

/// What the session knows.
#[derive(Default)]
pub(crate) struct State {
    /// The project's root, once the client has said where it is.
    pub(crate) root: Option<PathBuf>,
    /// The project's config, when it loads.
    pub(crate) config: Option<Arc<Config>>,
    /// Which changed paths can change a verdict (as for `qg watch`).
    pub(crate) filter: Option<Filter>,
    /// The units the client counts columns in.
    pub(crate) encoding: PositionEncoding,
    /// Whether the client shows `$/progress` the server starts.
    pub(crate) progress: bool,
    /// Whether the client resolves a code action's edit lazily.
    pub(crate) resolve_edits: bool,
    /// Whether the client watches files for a server that asks it to.
    pub(crate) watches_files: bool,
    /// Open documents.
    pub(crate) documents: Documents,
    /// Every checked file's findings.
    pub(crate) store: Store,
    /// Files the client was last given diagnostics for (to clear).
    published: BTreeSet<String>,
    /// Each erroring gate's last message (shown once, not on every save).
    gate_errors: BTreeMap<String, String>,
    /// The client was shown that an opened file is outside the project
    /// (once: later ones go to its log).
    told_outside: bool,
    /// The user's choices (command line, then `initializationOptions`).
    pub(crate) settings: Settings,
    /// `shutdown` was received.
    pub(crate) shut_down: bool,
    /// Gates whose daemons this session started.
    pub(crate) owned_daemons: Vec<String>,
    /// Why the repository is not trusted, once the user was asked (asked
    /// again only for another reason).
    pub(crate) trust_asked: Option<String>,
}

impl State {
    /// Files showing findings found in content they no longer hold: a look
    /// at an opened file found them, and the run after a save had nothing
    /// to check there (the file went back to content that passed), so
    /// nothing replaced them. Files gone are left to the store's pruning.
    pub(crate) fn stale_shown(&self, root: &Path) -> Vec<String> {
        self.published
            .iter()
            .filter(|f| crate::file_name::join(root, f).is_file())
            .filter(|f| self.store.current(root, f).is_none())
            .cloned()
            .collect()
    }
}

impl Session {
    /// A session, and the receiver that hears its `exit`.
    pub(crate) fn new(options: ServeOptions) -> (Arc<Session>, Receiver<()>) {
        let (ended, heard) = mpsc::channel();
        let session = Session {
            rpc: OnceLock::new(),
            state: Mutex::new(State {
                settings: options.settings,
                ..State::default()
            }),
            options,
            queue: Queue::default(),
            ended: Mutex::new(ended),
        };
        (Arc::new(session), heard)
    }

    /// Gives the session its connection (once).
    pub(crate) fn attach(&self, rpc: Rpc) {
        let _ = self.rpc.set(rpc);
    }

    /// The session's state.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the client's input has ended.
    pub(crate) fn input_closed(&self) -> bool {
        self.rpc.get().is_some_and(Rpc::is_closed)
    }

    /// Whether `shutdown` came before the end.
    pub(crate) fn was_shut_down(&self) -> bool {
        self.state().shut_down
    }

    /// Stops the run under way and the worker.
    pub(crate) fn stop_runs(&self) {
        self.queue.close();
    }

    /// Stops the daemons this session started.
    pub(crate) fn stop_daemons(&self) {
        let (root, owned) = {
            let state = self.state();
            (state.root.clone(), state.owned_daemons.clone())
        };
        if let (Some(root), false) = (root, owned.is_empty()) {
            crate::warm::control::stop(&root, &owned);
        }
    }

    /// Sends a notification (a closed connection drops it: the client is gone).
    pub(crate) fn notify(&self, method: &str, params: Value) {
        let _ = self.connection().notify(method, params);
    }

    /// The connection. The reader thread may hand over the client's first
    /// message before [`Session::attach`] has run: waiting for it here
    /// keeps an early message (a config error at `initialize`) from being
    /// dropped.
    fn connection(&self) -> &Rpc {
        self.rpc.wait()
    }

    /// Sends a request without waiting for the reply (the reader thread
    /// cannot wait: it is the one that would read it).
    pub(crate) fn request_without_waiting(&self, method: &str, params: Value) {
        let _ = self.connection().request(method, params);
    }

    /// Sends a request whose reply is waited for elsewhere; `None` when
    /// the connection is gone.
    pub(crate) fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Option<crate::warm::lsp::rpc::Pending> {
        self.connection().request(method, params).ok()
    }

    /// Clears every file's findings from the editor (the repository is no
    /// longer trusted: what was shown may not hold).
    pub(crate) fn clear_shown(&self) {
        let shown: Vec<String> = {
            let mut state = self.state();
            state.store = Store::default();
            state.published.iter().cloned().collect()
        };
        self.publish(&shown);
    }

    /// Says the client's `exit` was heard: the server ends.
    pub(crate) fn end(&self) {
        let _ = self.ended.lock().map(|e| e.send(()));
    }

    /// Sends a request and waits (briefly) for the client's reply.
    pub(crate) fn ask(&self, method: &str, params: Value) -> Option<Value> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        self.connection().call(method, params, deadline).ok()
    }

    /// `window/showMessage`.
    pub(crate) fn show(&self, kind: MessageType, message: &str) {
        self.notify(
            "window/showMessage",
            json!({"type": kind, "message": message}),
        );
    }

    /// Finds the project from the client's folder and loads its config; a
    /// config that does not load is shown, and tried again on the next run.
    pub(crate) fn open_project(&self, folder: &Path) {
        let workspace = match Workspace::discover(folder) {
            Ok(workspace) => workspace,
            Err(e) => {
                self.show(MessageType::ERROR, &format!("qg: {e}"));
                return;
            }
        };
        let store = Store::load(&workspace.root);
        let mut state = self.state();
        state.root = Some(workspace.root.clone());
        state.store = store;
        drop(state);
        self.reload_config();
    }

    /// Loads the project's config again; `false` (and an error shown) when
    /// it does not load.
    pub(crate) fn reload_config(&self) -> bool {
        let Some(root) = self.state().root.clone() else {
            return false;
        };
        match crate::run::prepare(&root, self.options.config.as_deref()) {
            Ok((workspace, config)) => {
                let filter = Filter::new(&workspace, &config, self.options.config.as_deref());
                let mut state = self.state();
                state.config = Some(Arc::new(config));
                state.filter = Some(filter);
                true
            }
            Err(e) => {
                self.state().config = None;
                self.show(MessageType::ERROR, &format!("qg: {e}"));
                false
            }
        }
    }

    /// The document a notification is about: its URI and root-relative
    /// file, when it is one of the project's.
    pub(crate) fn document_file(&self, params: &Value) -> Option<(String, String)> {
        let uri = params["textDocument"]["uri"].as_str()?.to_string();
        let root = self.state().root.clone()?;
        let file = documents::relative(&root, &uri)?;
        Some((uri, file))
    }

    /// Says that an opened document is not one qg checks: a warning the
    /// first time, a log line after (jumping into a library's sources
    /// should not pop up a message each time).
    pub(crate) fn tell_outside(&self, uri: &str) {
        let (root, told) = {
            let mut state = self.state();
            let told = std::mem::replace(&mut state.told_outside, true);
            (state.root.clone().unwrap_or_default(), told)
        };
        let message = format!(
            "qg: {uri} is outside the project {}; qg shows findings for the project's files only",
            root.display()
        );
        match told {
            false => self.show(MessageType::WARNING, &message),
            true => self.notify(
                "window/logMessage",
                json!({"type": MessageType::LOG, "message": message}),
            ),
        }
    }

    /// Shows `files`' findings (an empty list clears a file).
    pub(crate) fn publish(&self, files: &[String]) {
        let mut state = self.state();
        let Some(root) = state.root.clone() else {
            return;
        };
        for file in files {
            let diagnostics = file_diagnostics(&state, &root, file, state.settings.known);
            let was_shown = state.published.contains(file);
            if diagnostics.is_empty() && !was_shown {
                continue;
            }
            match diagnostics.is_empty() {
                true => state.published.remove(file),
                false => state.published.insert(file.clone()),
            };
            let uri = match state.documents.get(file) {
                Some(document) => document.uri.clone(),
                None => documents::path_uri(&crate::file_name::join(&root, file)),
            };
            self.notify(
                "textDocument/publishDiagnostics",
                json!({"uri": uri, "diagnostics": diagnostics}),
            );
        }
    }

    /// Shows a gate error once per distinct message; forgets gates that
    /// recovered.
    pub(crate) fn report_gate_errors(&self, errors: BTreeMap<String, String>, ran: &[String]) {
        let mut fresh = Vec::new();
        {
            let mut state = self.state();
            for gate in ran {
                if !errors.contains_key(gate) {
                    state.gate_errors.remove(gate);
                }
            }
            for (gate, message) in errors {
                if state.gate_errors.get(&gate) != Some(&message) {
                    fresh.push(message.clone());
                    state.gate_errors.insert(gate, message);
                }
            }
        }
        for message in fresh {
            self.show(MessageType::WARNING, &message);
        }
    }
}

/// The diagnostics of one file, every gate's.
fn file_diagnostics(
    state: &State,
    root: &Path,
    file: &str,
    known: diagnostics::KnownSeverity,
) -> Vec<Diagnostic> {
    let Some(findings) = state.store.get(file) else {
        return Vec::new();
    };
    let mut lines: Option<Vec<String>> = None;
    let mut line_text = |line: u32| -> Option<String> {
        let lines = lines.get_or_insert_with(|| {
            std::fs::read_to_string(crate::file_name::join(root, file))
                .map(|text| text.lines().map(str::to_string).collect())
                .unwrap_or_default()
        });
        lines.get(line as usize).cloned()
    };
    findings
        .gates
        .iter()
        .flat_map(|(gate, found)| {
            let origin = Origin {
                gate,
                columns: found.columns,
                unconfirmed: found.unconfirmed,
            };
            found
                .violations
                .iter()
                .map(move |v| (origin, v))
                .collect::<Vec<_>>()
        })
        .filter_map(|(origin, violation)| {
            diagnostics::to_diagnostic(origin, violation, known, state.encoding, &mut line_text)
        })
        .collect()
}
