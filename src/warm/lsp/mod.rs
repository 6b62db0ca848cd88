//! One generic Language Server Protocol client: qg starts the gate's
//! language server on the project, answers its `workspace/configuration`
//! requests from the gate's `settings`, tells it which files changed since
//! it last looked (`workspace/didChangeWatchedFiles`; a file new to it is
//! also opened for the check, so a server that learns of new files lazily
//! still checks it), and pulls the diagnostics of the files a run reports
//! (`textDocument/diagnostic`, LSP 3.17), which the server computes on the
//! current content before it replies.

pub(crate) mod diagnostics;
pub(crate) mod rpc;

use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_types::Diagnostic;
use serde_json::{json, Value};

use super::context::Context;
use super::program::Program;
use super::snapshot::Snapshot;
use super::tree::Process;
use super::wire::Reply;
use crate::config::{LspSpec, PositionEncoding};
use crate::violation::Violation;
use rpc::{CallError, Incoming, Rpc};

/// A running language server.
pub(crate) struct Server {
    process: Process,
    rpc: Rpc,
    spec: LspSpec,
    /// How the server counts columns (what it agreed to, else UTF-16).
    encoding: PositionEncoding,
    /// The files as the server was last told about them.
    seen: Snapshot,
    /// The daemon's log, as the user finds it (`.st3/daemons/pyright/daemon.log`).
    log: String,
}

impl Server {
    /// Starts the server and completes the `initialize` handshake.
    pub(crate) fn start(
        ctx: &Context<'_>,
        spec: &LspSpec,
        deadline: Instant,
    ) -> Result<Server, String> {
        let (process, stdin, stdout) = Process::spawn_daemon(ctx, true)?;
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err("the language server's pipes could not be opened".into());
        };
        let asked = Arc::new(AtomicBool::new(false));
        let handler = handler(ctx, spec, Arc::clone(&asked));
        let rpc = Rpc::start(Box::new(stdin), Box::new(stdout), handler);
        let mut server = Server {
            process,
            rpc,
            spec: spec.clone(),
            encoding: PositionEncoding::Utf16,
            seen: Snapshot::default(),
            log: ctx.shown_log(),
        };
        let reply = server
            .rpc
            .call("initialize", initialize_params(ctx, spec), deadline)
            .map_err(|e| server.failure("initialize", e))?;
        server.encoding = agreed_encoding(&reply);
        let written = |e: std::io::Error| format!("cannot write to the language server: {e}");
        server
            .rpc
            .notify("initialized", json!({}))
            .map_err(written)?;
        // A server that does not ask for its settings is told they changed,
        // as editors tell it: pyright before 1.1.409 asks for its
        // `workspace/configuration` only then, and until then analyses
        // nothing — its first pull went unanswered for the gate's whole
        // timeout (pyright 1.1.401, a project's own pin). One that asks by
        // itself is not told twice.
        let patience = Instant::now() + Duration::from_secs(2);
        while !asked.load(Ordering::SeqCst) && Instant::now() < patience.min(deadline) {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !asked.load(Ordering::SeqCst) {
            let settings = json!({"settings": spec.settings});
            server
                .rpc
                .notify("workspace/didChangeConfiguration", settings)
                .map_err(written)?;
        }
        Ok(server)
    }

    /// Pulls every file the tool's own run checks: the server analyses the
    /// whole program once, and later pulls reuse what did not change.
    pub(crate) fn first_pass(
        &mut self,
        ctx: &Context<'_>,
        program: &Program,
        deadline: Instant,
    ) -> Result<(), String> {
        // The server reads the disk as it starts: nothing to tell it yet.
        self.seen = Snapshot::take(&ctx.ws.root, &program.listing, &Snapshot::default());
        self.pull(ctx, &program.checked, deadline).map(|_| ())
    }

    /// Tells the server what changed, then pulls `report`'s diagnostics.
    pub(crate) fn check(
        &mut self,
        ctx: &Context<'_>,
        program: &Program,
        report: &[String],
        deadline: Instant,
    ) -> Result<Reply, String> {
        let started = Instant::now();
        // Stamped before the server is told: a later edit differs next time.
        let now = Snapshot::take(&ctx.ws.root, &program.listing, &self.seen);
        let changes = self.seen.changes_to(&now);
        if !changes.is_empty() {
            self.notify_changes(&ctx.ws.root, &changes)?;
        }
        let opened: Vec<&String> = report
            .iter()
            .filter(|f| changes.created.contains(*f))
            .collect();
        for file in &opened {
            self.open(&ctx.ws.root, file)?;
        }
        self.reread_when_imports_move(ctx, &changes)?;
        let pulled = self.pull(ctx, report, deadline);
        for file in &opened {
            let uri = file_uri(&ctx.ws.root, file);
            let _ = self.rpc.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
        self.seen = now;
        Ok(Reply::Diagnostics {
            violations: pulled?,
            ms: started.elapsed().as_millis() as u64,
            notice: None,
        })
    }

    /// Whether the server still runs.
    pub(crate) fn running(&mut self) -> bool {
        self.process.running() && !self.rpc.is_closed()
    }

    /// Its process group.
    pub(crate) fn group(&self) -> u32 {
        self.process.group()
    }

    /// `shutdown` and `exit`, then whatever is left is killed.
    pub(crate) fn stop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(3);
        if self.rpc.call("shutdown", Value::Null, deadline).is_ok() {
            let _ = self.rpc.notify("exit", Value::Null);
            self.process.wait_exit(Duration::from_secs(2));
        }
        self.process.kill();
    }

    fn notify_changes(
        &self,
        root: &Path,
        changes: &super::snapshot::Changes,
    ) -> Result<(), String> {
        let events = [
            (&changes.created, 1),
            (&changes.changed, 2),
            (&changes.deleted, 3),
        ];
        let changes: Vec<Value> = events
            .iter()
            .flat_map(|(files, kind)| {
                files
                    .iter()
                    .map(move |f| json!({"uri": file_uri(root, f), "type": kind}))
            })
            .collect();
        self.rpc
            .notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": changes}),
            )
            .map_err(|e| format!("cannot write to the language server: {e}"))
    }

    /// Makes the server analyse afresh before it answers when what its
    /// imports resolve to may have moved:
    /// - a file created or deleted anywhere: the server learns of it
    ///   through `didChangeWatchedFiles`, whose reanalysis pyright runs on a
    ///   timer, so a pull right after can answer from its old resolution
    ///   (a module deleted, then added back: its importers still said
    ///   "could not be resolved", found by a confirmation under CI's load);
    /// - a file outside the gate's working directory changed (a workspace
    ///   member's server, whose folder is the member, and `a`'s module that
    ///   `b` imports through an editable install): to the server that file
    ///   is a library's, whose change it takes in only after a delay (two
    ///   seconds in pyright), so a pull right after would answer from the
    ///   old text.
    ///
    /// A changed configuration makes it read every file again before it
    /// answers.
    fn reread_when_imports_move(
        &self,
        ctx: &Context<'_>,
        changes: &super::snapshot::Changes,
    ) -> Result<(), String> {
        let added_or_removed = !changes.created.is_empty() || !changes.deleted.is_empty();
        let outside = ctx.gate.working_dir.as_ref().is_some_and(|dir| {
            let inside = format!("{}/", crate::paths::to_slash(dir));
            [&changes.changed, &changes.created, &changes.deleted]
                .into_iter()
                .flatten()
                .any(|f| !f.starts_with(&inside))
        });
        if !added_or_removed && !outside {
            return Ok(());
        }
        self.rpc
            .notify("workspace/didChangeConfiguration", json!({"settings": {}}))
            .map_err(|e| format!("cannot write to the language server: {e}"))
    }

    fn open(&self, root: &Path, file: &str) -> Result<(), String> {
        let Ok(text) = std::fs::read_to_string(crate::file_name::join(root, file)) else {
            return Ok(());
        };
        let document = json!({"uri": file_uri(root, file), "languageId": "python", "version": 1, "text": text});
        self.rpc
            .notify("textDocument/didOpen", json!({"textDocument": document}))
            .map_err(|e| format!("cannot write to the language server: {e}"))
    }

    /// Pulls the diagnostics of `files`, all requests sent before the first
    /// reply is awaited.
    fn pull(
        &self,
        ctx: &Context<'_>,
        files: &[String],
        deadline: Instant,
    ) -> Result<Vec<Violation>, String> {
        let root = &ctx.ws.root;
        let mut waiting = Vec::with_capacity(files.len());
        for file in files {
            waiting.push((file, self.send_pull(root, file)?));
        }
        let mut violations = Vec::new();
        for (file, pending) in waiting {
            let items = self.settle(root, file, pending, deadline)?;
            self.convert(root, file, &items, &mut violations);
        }
        Ok(violations)
    }

    /// Waits for one file's full report, sending the pull again while the
    /// server cancels it or does not know the file yet: it then answers
    /// `unchanged` to a pull that named no previous result (a server that
    /// finds the workspace's files after `initialize`, or a new file
    /// later). Past `deadline` the check fails (and the run goes cold).
    fn settle(
        &self,
        root: &Path,
        file: &str,
        pending: rpc::Pending,
        deadline: Instant,
    ) -> Result<Vec<Diagnostic>, String> {
        let mut reply = pending.wait(deadline);
        let mut pause = Duration::from_millis(10);
        loop {
            let again = match &reply {
                Err(CallError::Server { code, .. }) => {
                    *code == rpc::SERVER_CANCELLED || *code == rpc::CONTENT_MODIFIED
                }
                Ok(report) => report.get("kind").and_then(Value::as_str) == Some("unchanged"),
                Err(_) => false,
            };
            if !again || Instant::now() + pause > deadline {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(250));
            reply = self.send_pull(root, file)?.wait(deadline);
        }
        let reply = reply.map_err(|e| self.failure(&format!("diagnostics of {file}"), e))?;
        report_items(reply).map_err(|why| format!("diagnostics of {file}: {why}"))
    }

    fn send_pull(&self, root: &Path, file: &str) -> Result<rpc::Pending, String> {
        let params = json!({"textDocument": {"uri": file_uri(root, file)}});
        self.rpc
            .request("textDocument/diagnostic", params)
            .map_err(|e| self.failure("a diagnostics request", e))
    }

    fn convert(&self, root: &Path, file: &str, items: &[Diagnostic], into: &mut Vec<Violation>) {
        let mut text: Option<Option<Rc<String>>> = None;
        let mut read = || {
            text.get_or_insert_with(|| {
                std::fs::read_to_string(crate::file_name::join(root, file))
                    .ok()
                    .map(Rc::new)
            })
            .clone()
        };
        into.extend(items.iter().filter_map(|d| {
            diagnostics::to_violation(file, d, &self.spec, self.encoding, &mut read)
        }));
    }

    /// Words a failed call, saying when the server is gone.
    fn failure(&self, what: &str, error: CallError) -> String {
        match error {
            CallError::Closed => {
                format!(
                    "the language server exited during {what} (its log: {})",
                    self.log
                )
            }
            CallError::Timeout => format!("the language server did not answer {what} in time"),
            other => format!("{what}: {other}"),
        }
    }
}

/// The items of a full report; anything else is not an answer qg can use
/// (qg never sends a previous result id, so `unchanged` is out of turn).
fn report_items(reply: Value) -> Result<Vec<Diagnostic>, String> {
    let kind = reply.get("kind").and_then(Value::as_str);
    if kind != Some("full") {
        let shown: String = reply.to_string().chars().take(200).collect();
        return Err(format!("not a full diagnostic report: {shown}"));
    }
    let items = reply
        .get("items")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    serde_json::from_value(items).map_err(|e| format!("unreadable diagnostics ({e})"))
}

/// The `initialize` request: the gate's working directory (the project,
/// or a workspace member, whose config the server then reads as the
/// member's own `cd packages/a && pyright` does) as the one workspace
/// folder, and only the client capabilities qg uses (so servers leave out
/// greyed-out hints, code lenses and the like).
fn initialize_params(ctx: &Context<'_>, spec: &LspSpec) -> Value {
    let root = &ctx.cwd();
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "qg", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": dir_uri(root),
        "rootPath": root.display().to_string(),
        "workspaceFolders": [{"uri": dir_uri(root), "name": name}],
        "initializationOptions": spec.initialization_options,
        "capabilities": {
            "general": {"positionEncodings": [encoding_name(spec.position_encoding)]},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeWatchedFiles": {"dynamicRegistration": true},
            },
            "textDocument": {
                "diagnostic": {"dynamicRegistration": true},
                "publishDiagnostics": {},
                "synchronization": {},
            },
        },
    })
}

/// The encoding the server said it uses (UTF-16 when it says none).
fn agreed_encoding(initialized: &Value) -> PositionEncoding {
    match initialized
        .pointer("/capabilities/positionEncoding")
        .and_then(Value::as_str)
    {
        Some("utf-8") => PositionEncoding::Utf8,
        Some("utf-32") => PositionEncoding::Utf32,
        _ => PositionEncoding::Utf16,
    }
}

fn encoding_name(encoding: PositionEncoding) -> &'static str {
    match encoding {
        PositionEncoding::Utf16 => "utf-16",
        PositionEncoding::Utf32 => "utf-32",
        PositionEncoding::Utf8 => "utf-8",
    }
}

/// Answers the server's requests: its configuration from the gate's
/// `settings`, the workspace folder, and a null to registrations and
/// progress; its error and warning messages go to the daemon's log.
fn handler(ctx: &Context<'_>, spec: &LspSpec, asked: Arc<AtomicBool>) -> rpc::Handler {
    let settings = spec.settings.clone();
    let folder = json!([{"uri": dir_uri(&ctx.cwd()), "name": "project"}]);
    let log = ctx.log.named("language server");
    Box::new(move |incoming| match incoming {
        Incoming::Request("workspace/configuration", params) => {
            asked.store(true, Ordering::SeqCst);
            let items = params.get("items").and_then(Value::as_array);
            let answers = items
                .map(|items| items.iter().map(|item| section(&settings, item)).collect())
                .unwrap_or_default();
            Some(Ok(Value::Array(answers)))
        }
        Incoming::Request("workspace/workspaceFolders", _) => Some(Ok(folder.clone())),
        Incoming::Request(
            "client/registerCapability"
            | "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh",
            _,
        ) => Some(Ok(Value::Null)),
        Incoming::Request(..) => None,
        Incoming::Notification("window/logMessage" | "window/showMessage", params) => {
            let serious = params
                .get("type")
                .and_then(Value::as_i64)
                .is_some_and(|t| t <= 2);
            if serious {
                log.line(params.get("message").and_then(Value::as_str).unwrap_or(""));
            }
            None
        }
        Incoming::Notification(..) => None,
    })
}

/// The settings of one `workspace/configuration` item: the dotted section
/// looked up in `settings`, or all of them for an item without one.
fn section(settings: &Value, item: &Value) -> Value {
    let Some(name) = item.get("section").and_then(Value::as_str) else {
        return settings.clone();
    };
    name.split('.')
        .filter(|part| !part.is_empty())
        .try_fold(settings, |value, part| value.get(part))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A `file://` URI for a root-relative file (percent-encoded bytes).
fn file_uri(root: &Path, file: &str) -> String {
    path_uri(&crate::file_name::join(root, file))
}

fn dir_uri(dir: &Path) -> String {
    path_uri(dir)
}

/// What a URI's path keeps unencoded.
const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The `file://` URI of a path (percent-encoded bytes).
#[cfg(unix)]
pub(crate) fn path_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    format!("file://{}", percent_encoding::percent_encode(bytes, KEEP))
}

/// The `file://` URI of a path: `C:\x\a.py` is `file:///C%3A/x/a.py`, as
/// VS Code writes it.
#[cfg(windows)]
pub(crate) fn path_uri(path: &Path) -> String {
    windows_uri(&path.to_string_lossy())
}

/// [`path_uri`] of a Windows path given as text.
#[cfg_attr(not(windows), allow(dead_code, reason = "tested on every platform"))]
pub(crate) fn windows_uri(path: &str) -> String {
    let slashed = path.replace('\\', "/");
    let rooted = match slashed.starts_with('/') {
        true => slashed,
        false => format!("/{slashed}"),
    };
    format!(
        "file://{}",
        percent_encoding::percent_encode(rooted.as_bytes(), KEEP)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_sections_are_looked_up_by_their_dotted_names() {
        let settings = json!({"python": {"analysis": {"diagnosticMode": "workspace"}}});
        let item = |section: &str| json!({"section": section});
        assert_eq!(
            section(&settings, &item("python.analysis")),
            json!({"diagnosticMode": "workspace"})
        );
        assert_eq!(section(&settings, &item("pyright")), Value::Null);
        assert_eq!(section(&settings, &json!({})), settings);
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        let uri = file_uri(Path::new("/work/my project"), "pkg/a b#1.py");
        assert_eq!(uri, "file:///work/my%20project/pkg/a%20b%231.py");
    }
}
