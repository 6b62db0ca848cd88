//! One client's session: what it said it can do, the documents it has
//! open, what it was last shown; every message it sends is answered or
//! handled here, on the connection's reader thread. Anything slow (a run
//! of the gates) is handed to the run queue.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use lsp_types::{Diagnostic, MessageType};
use serde_json::{json, Value};

use super::diagnostics::{self, Origin};
use super::documents::{self, Document, Documents};
use super::runs::{Job, Queue};
use super::store::Store;
use super::{ServeOptions, Settings};
use crate::config::{Config, PositionEncoding};
use crate::warm::lsp::rpc::{Answer, Incoming, Rpc};
use crate::watch::filter::Filter;
use crate::workspace::Workspace;

/// `workspace/executeCommand`: run the project scope into the editor.
pub(crate) const RUN_PROJECT: &str = "qg.runProject";
/// `workspace/executeCommand`: write the baseline from the project's findings.
pub(crate) const BASELINE_WRITE: &str = "qg.baselineWrite";

/// `InvalidParams`: a request qg understood but cannot serve as asked.
const INVALID_PARAMS: i64 = -32602;

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
    filter: Option<Filter>,
    /// The units the client counts columns in.
    pub(crate) encoding: PositionEncoding,
    /// Whether the client shows `$/progress` the server starts.
    pub(crate) progress: bool,
    /// Whether the client resolves a code action's edit lazily.
    pub(crate) resolve_edits: bool,
    /// Whether the client watches files for a server that asks it to.
    watches_files: bool,
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
    shut_down: bool,
    /// Gates whose daemons this session started.
    pub(crate) owned_daemons: Vec<String>,
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

    /// Answers a request or handles a notification.
    pub(crate) fn handle(&self, incoming: Incoming<'_>) -> Option<Answer> {
        match incoming {
            Incoming::Request(method, params) => self.request(method, params),
            Incoming::Notification(method, params) => {
                self.notification(method, params);
                None
            }
        }
    }

    fn request(&self, method: &str, params: &Value) -> Option<Answer> {
        let answer = match method {
            "initialize" => Ok(self.initialize(params)),
            "shutdown" => {
                self.state().shut_down = true;
                self.queue.cancel_current();
                Ok(Value::Null)
            }
            "textDocument/codeAction" => Ok(super::actions::code_actions(self, params)),
            "codeAction/resolve" => super::actions::resolve(self, params),
            "workspace/executeCommand" => self.execute_command(params),
            _ => return None,
        };
        Some(answer.map_err(|message| (INVALID_PARAMS, message)))
    }

    fn notification(&self, method: &str, params: &Value) {
        match method {
            "initialized" => self.initialized(),
            "exit" => {
                let _ = self.ended.lock().map(|e| e.send(()));
            }
            "textDocument/didOpen" => self.did_open(params),
            "textDocument/didChange" => self.did_change(params),
            "textDocument/didClose" => self.did_close(params),
            "textDocument/didSave" => self.did_save(params),
            "workspace/didChangeWatchedFiles" => self.did_change_watched_files(params),
            // `$/cancelRequest` among them: a request is answered as soon as
            // it is read, before any cancellation of it can be.
            _ => {}
        }
    }

    /// Takes the client's root and abilities; says what qg serves.
    fn initialize(&self, params: &Value) -> Value {
        let folder = params["workspaceFolders"][0]["uri"]
            .as_str()
            .or(params["rootUri"].as_str())
            .and_then(documents::uri_path)
            .or_else(|| params["rootPath"].as_str().map(PathBuf::from))
            .unwrap_or_else(|| self.options.cwd.clone());
        let capabilities = &params["capabilities"];
        let offered = capabilities["general"]["positionEncodings"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // Characters when the client counts them too: no recounting.
        let encoding = match offered.iter().any(|e| e == "utf-32") {
            true => PositionEncoding::Utf32,
            false => PositionEncoding::Utf16,
        };
        let resolves_edits = capabilities["textDocument"]["codeAction"]["resolveSupport"]
            ["properties"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p == "edit"));
        let (settings, errors) = self
            .state()
            .settings
            .with_client_options(&params["initializationOptions"]);
        for error in errors {
            self.show(MessageType::ERROR, &format!("qg: {error}"));
        }
        {
            let mut state = self.state();
            state.settings = settings;
            state.encoding = encoding;
            state.progress = capabilities["window"]["workDoneProgress"] == json!(true);
            state.resolve_edits = resolves_edits;
            state.watches_files = capabilities["workspace"]["didChangeWatchedFiles"]
                ["dynamicRegistration"]
                == json!(true);
        }
        self.open_project(&folder);
        json!({
            "capabilities": {
                "positionEncoding": match encoding {
                    PositionEncoding::Utf32 => "utf-32",
                    _ => "utf-16",
                },
                "textDocumentSync": {
                    "openClose": true,
                    "change": 1,
                    "save": {"includeText": false},
                },
                "codeActionProvider": {
                    "codeActionKinds": ["quickfix", "source.fixAll.qg"],
                    "resolveProvider": true,
                },
                "executeCommandProvider": {"commands": [RUN_PROJECT, BASELINE_WRITE]},
            },
            "serverInfo": {"name": "qg", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// Finds the project from the client's folder and loads its config; a
    /// config that does not load is shown, and tried again on the next run.
    fn open_project(&self, folder: &Path) {
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

    /// After the handshake: asks to hear about file changes, starts the
    /// daemons when asked to, and checks what changed since the last run.
    fn initialized(&self) {
        self.register_file_watching();
        let settings = self.state().settings;
        if settings.start_daemons && !settings.no_daemon {
            self.queue.push(Job::StartDaemons);
        }
        self.queue.push(Job::Auto);
    }

    fn register_file_watching(&self) {
        if !self.state().watches_files {
            return;
        }
        let registration = json!({"registrations": [{
            "id": "qg-watched-files",
            "method": "workspace/didChangeWatchedFiles",
            "registerOptions": {"watchers": [{"globPattern": "**/*"}]},
        }]});
        // The reply is not awaited: this is the reader thread.
        let _ = self
            .connection()
            .request("client/registerCapability", registration);
    }

    fn document_file(&self, params: &Value) -> Option<(String, String)> {
        let uri = params["textDocument"]["uri"].as_str()?.to_string();
        let root = self.state().root.clone()?;
        let file = documents::relative(&root, &uri)?;
        Some((uri, file))
    }

    fn did_open(&self, params: &Value) {
        let Some((uri, file)) = self.document_file(params) else {
            self.tell_outside(params["textDocument"]["uri"].as_str().unwrap_or(""));
            return;
        };
        let document = Document {
            uri,
            text: params["textDocument"]["text"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            version: params["textDocument"]["version"].as_i64().unwrap_or(0) as i32,
        };
        let mut state = self.state();
        state.documents.open(file.clone(), document);
        let root = state.root.clone().unwrap_or_default();
        let known = state.store.current(&root, &file).is_some();
        drop(state);
        match known {
            true => self.publish(&[file]),
            false => self.queue.push(Job::Open(file)),
        }
    }

    /// Says that an opened document is not one qg checks: a warning the
    /// first time, a log line after (jumping into a library's sources
    /// should not pop up a message each time).
    fn tell_outside(&self, uri: &str) {
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

    fn did_change(&self, params: &Value) {
        let Some((_, file)) = self.document_file(params) else {
            return;
        };
        // Full sync: the last change holds the whole text.
        let Some(text) = params["contentChanges"]
            .as_array()
            .and_then(|c| c.last())
            .and_then(|c| c["text"].as_str())
        else {
            return;
        };
        let version = params["textDocument"]["version"].as_i64().unwrap_or(0) as i32;
        self.state()
            .documents
            .change(&file, text.to_string(), version);
    }

    fn did_close(&self, params: &Value) {
        if let Some((_, file)) = self.document_file(params) {
            self.state().documents.close(&file);
        }
    }

    fn did_save(&self, params: &Value) {
        if self.document_file(params).is_some() {
            self.queue.push(Job::Auto);
        }
    }

    /// Files changed outside the editor (a `git checkout`, a formatter, a
    /// save in another tool): the project's own files and configs count;
    /// an open document's own save arrives as `didSave`.
    fn did_change_watched_files(&self, params: &Value) {
        let Some(root) = self.state().root.clone() else {
            return;
        };
        let Some(changes) = params["changes"].as_array() else {
            return;
        };
        let state = self.state();
        let relevant = changes.iter().any(|change| {
            let Some(path) = change["uri"].as_str().and_then(documents::uri_path) else {
                return false;
            };
            // 1 created, 2 changed, 3 deleted.
            let moved = change["type"] != json!(2);
            let Some(file) = (match &state.filter {
                Some(filter) => filter.relevant(&root, &path, moved),
                // No config: any change may be the one that fixes it.
                None => documents::relative(&root, change["uri"].as_str().unwrap_or("")),
            }) else {
                return false;
            };
            let saved_here = !moved && state.documents.is_open(&file);
            !saved_here
        });
        drop(state);
        if relevant {
            self.queue.push(Job::Auto);
        }
    }

    fn execute_command(&self, params: &Value) -> Result<Value, String> {
        match params["command"].as_str() {
            Some(RUN_PROJECT) => self.queue.push(Job::Project),
            Some(BASELINE_WRITE) => self.queue.push(Job::BaselineWrite),
            other => {
                return Err(format!(
                    "qg has no command {}; it has {RUN_PROJECT} and {BASELINE_WRITE}",
                    other.unwrap_or("(none)")
                ))
            }
        }
        Ok(Value::Null)
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
