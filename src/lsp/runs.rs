//! The session's runs of the gates, one at a time on a worker thread that
//! takes merged work from the [queue](super::queue) and shows what each
//! run found.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use lsp_types::MessageType;
use serde_json::{json, Value};

use super::queue::Pending;
use super::session::Session;
use crate::baseline::BaselineUse;
use crate::config::Gate;
use crate::error::QgError;
use crate::exec::Observer;
use crate::outcome::{GateResult, GateStatus};
use crate::process::Cancel;
use crate::report::RunReport;
use crate::run::{self, DaemonUse, RunOptions};
use crate::scope::{ScopeMode, ScopeRequest};
use crate::state::pending::Outcome;

/// Starts the worker.
pub(crate) fn start(session: Arc<Session>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while let Some(work) = session.queue.next() {
            // Nothing of an untrusted repository runs: the user is asked.
            if super::trust::allowed(&session) {
                do_work(&session, work);
            }
        }
    })
}

fn do_work(session: &Arc<Session>, work: Pending) {
    if work.start_daemons {
        start_daemons(session);
    }
    if work.baseline_write {
        write_baseline(session);
    }
    let project = work.project || work.baseline_write;
    if project {
        check(session, Kind::Project);
    }
    if work.auto && !project {
        check(session, Kind::Auto);
    }
    let look: BTreeSet<String> = {
        let state = session.state();
        let root = state.root.clone().unwrap_or_default();
        let opened = work
            .open
            .into_iter()
            .filter(|f| state.store.current(&root, f).is_none());
        // Unless newer work waits (its run comes next and may cover them).
        let stale = match session.queue.is_idle() {
            true => state.stale_shown(&root),
            false => Vec::new(),
        };
        opened.chain(stale).collect()
    };
    if !look.is_empty() {
        check(session, Kind::Files(look.into_iter().collect()));
    }
}

/// What a check covers.
enum Kind {
    Auto,
    Project,
    Files(Vec<String>),
}

/// Runs the gates and shows what they found; a run a newer save made
/// stale ends quietly (the next one follows).
fn check(session: &Arc<Session>, kind: Kind) {
    if !session.reload_config() {
        return;
    }
    let Some(options) = run_options(session, &kind) else {
        return;
    };
    // A save makes a check of what changed stale, not a look at an opened
    // file (the run after the save would not cover an unchanged file).
    let stale_by_saves = matches!(kind, Kind::Auto);
    session
        .queue
        .set_current(Some((options.cancel.clone(), stale_by_saves)));
    let title = match kind {
        Kind::Auto => "checking what changed",
        Kind::Project => "checking the project",
        Kind::Files(_) => "checking the opened file",
    };
    let progress = Progress::begin(session, title);
    let started = SystemTime::now();
    let outcome = run::run(&options, &progress);
    session.queue.set_current(None);
    match outcome {
        Ok(report) => {
            // Ended once the editor has the findings: a client (or a test)
            // that waits for the end sees them.
            show_report(session, &report, started);
            progress.end(&crate::report::summary::summary_line(&report));
            await_confirmations(session, &report);
        }
        Err(QgError::Cancelled) => progress.end("cancelled: a newer change"),
        // What would run changed since the check before the run: nothing
        // ran; the user is asked.
        Err(QgError::Untrusted(_)) => {
            progress.end("not trusted: nothing ran");
            super::trust::allowed(session);
        }
        Err(e) => {
            progress.end("could not run");
            session.show(MessageType::ERROR, &format!("qg: {e}"));
        }
    }
}

/// How long the editor waits for a warm answer's confirmation, at most.
const CONFIRMATION_PATIENCE: std::time::Duration = std::time::Duration::from_secs(600);

/// Waits, on a thread of its own, for the confirmations of the report's
/// warm answers: one that agreed marks its gate's findings confirmed (and
/// tells the editor again); one that differed checks what changed again —
/// the gate answers cold now — and the editor gets the cold truth. A newer
/// run supersedes the wait (its own answers are waited for).
fn await_confirmations(session: &Arc<Session>, report: &RunReport) {
    let mut awaited = run::awaited(&report.gates);
    if awaited.is_empty() {
        return;
    }
    let generation = RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    let session = Arc::clone(session);
    let root = report.root.clone();
    std::thread::spawn(move || {
        let begun = std::time::Instant::now();
        while !awaited.is_empty() && begun.elapsed() < CONFIRMATION_PATIENCE {
            std::thread::sleep(std::time::Duration::from_millis(200));
            if RUNS.load(Ordering::SeqCst) != generation {
                return;
            }
            let mut index = 0;
            while index < awaited.len() {
                let (gate, job) = &awaited[index];
                match run::landed(&root, gate, job) {
                    None | Some(Outcome::Waiting) => index += 1,
                    Some(Outcome::Agreed) => {
                        let files = session.state().store.confirmed(gate);
                        session.publish(&files);
                        awaited.remove(index);
                    }
                    Some(Outcome::Differed { .. }) => {
                        session.queue.push(super::queue::Job::Auto);
                        return;
                    }
                    Some(Outcome::Inconclusive { .. }) => {
                        awaited.remove(index);
                    }
                }
            }
        }
    });
}

/// Runs that waited for confirmations, counted: a wait ends when a newer
/// one starts.
static RUNS: AtomicUsize = AtomicUsize::new(0);

fn run_options(session: &Session, kind: &Kind) -> Option<RunOptions> {
    let root = session.state().root.clone()?;
    let (mode, paths, no_state) = match kind {
        Kind::Auto => (ScopeMode::Auto, Vec::new(), false),
        Kind::Project => (ScopeMode::Project, Vec::new(), false),
        // Opening a file is looking, not a run to remember.
        Kind::Files(files) => (
            ScopeMode::Files,
            files.iter().map(|f| root.join(f)).collect(),
            true,
        ),
    };
    Some(RunOptions {
        cwd: root,
        config: session.options.config.clone(),
        scope: ScopeRequest {
            mode: Some(mode),
            paths,
            parent: None,
        },
        gates: Vec::new(),
        jobs: crate::process::cores(),
        no_state,
        baseline: BaselineUse::Ratchet,
        shard: None,
        cancel: Cancel::default(),
        report_covered: true,
        require_trust: true,
        cache: Default::default(),
        confirm: false,
        daemons: match session.state().settings.no_daemon {
            true => DaemonUse::Ignore,
            false => DaemonUse::Use,
        },
    })
}

/// Takes in a run's findings, shows the files whose findings it replaced
/// (clearing those now clean) and the gates that could not give a verdict.
fn show_report(session: &Session, report: &RunReport, started: SystemTime) {
    let touched: Vec<String> = {
        let mut state = session.state();
        let Some(root) = state.root.clone() else {
            return;
        };
        let Some(config) = state.config.clone() else {
            return;
        };
        let mut touched = state.store.apply(&root, &config, report, started);
        touched.extend(state.store.prune(&root));
        if let Err(e) = state.store.save(&root) {
            drop(state);
            session.show(
                MessageType::WARNING,
                &format!("qg: cannot keep the findings for the next session: {e}"),
            );
            return;
        }
        touched.into_iter().collect()
    };
    session.publish(&touched);
    let mut errors = BTreeMap::new();
    for gate in &report.gates {
        if let (GateStatus::Error, Some(error)) = (&gate.status, &gate.error) {
            errors.insert(gate.id.clone(), gate_error_message(gate, &error.message));
        }
    }
    let ran: Vec<String> = report.gates.iter().map(|g| g.id.clone()).collect();
    session.report_gate_errors(errors, &ran);
}

/// `qg: mypy could not give a verdict: … fix: …` — with the gate's own hint.
fn gate_error_message(gate: &GateResult, message: &str) -> String {
    let hint = gate
        .fix_hint
        .as_deref()
        .or(gate.rerun_hint.as_deref())
        .map(|h| format!(" (then: {h})"))
        .unwrap_or_default();
    format!("qg: {} could not give a verdict: {message}{hint}", gate.id)
}

fn write_baseline(session: &Session) {
    if !session.reload_config() {
        return;
    }
    let Some(mut options) = run_options(session, &Kind::Project) else {
        return;
    };
    options.report_covered = false;
    session
        .queue
        .set_current(Some((options.cancel.clone(), false)));
    let progress = Progress::begin(session, "writing the baseline");
    let written = run::write_baseline(&options, &progress);
    session.queue.set_current(None);
    match written {
        Ok(written) => {
            let line = format!(
                "qg: baseline written: {} of {} gates",
                crate::report::summary::plural(written.entries, "finding"),
                written.gates
            );
            progress.end(&line);
            session.show(MessageType::INFO, &line);
        }
        Err(e) => {
            progress.end("baseline not written");
            session.show(MessageType::ERROR, &format!("qg: {e}"));
        }
    }
}

fn start_daemons(session: &Session) {
    let Some(root) = session.state().root.clone() else {
        return;
    };
    let Some(config) = session.state().config.clone() else {
        return;
    };
    let gates: Vec<String> = crate::warm::control::warm_gates(&config, &[])
        .unwrap_or_default()
        .iter()
        .map(|g| g.id.clone())
        .collect();
    if gates.is_empty() {
        return;
    }
    let progress = Progress::begin(session, "starting the daemons");
    let request = crate::warm::control::StartRequest {
        cwd: root,
        config: session.options.config.clone(),
        gates,
        owner: Some(std::process::id()),
        idle_timeout: None,
        verify_every: None,
        at_most: crate::warm::control::DEFAULT_AT_MOST,
    };
    let owned = match crate::warm::control::start_owned(&request) {
        Ok(owned) => owned,
        Err(e) => {
            session.show(MessageType::WARNING, &format!("qg: no daemons: {e}"));
            Default::default()
        }
    };
    for (gate, why) in &owned.without {
        session.show(
            MessageType::WARNING,
            &format!("qg: {gate}: no daemon ({why}); answered cold"),
        );
    }
    progress.end(&format!("{} daemons started", owned.started.len()));
    session.state().owned_daemons.extend(owned.started);
}

/// `$/progress` of one run, when the client shows the server's progress.
struct Progress<'s> {
    session: &'s Session,
    token: Option<String>,
    /// Gates finished so far. Counted and told under one lock: two gates
    /// finishing at once would otherwise be told as "(2 done)", "(1 done)".
    finished: std::sync::Mutex<usize>,
}

/// Tokens are unique in a session.
static NEXT_TOKEN: AtomicUsize = AtomicUsize::new(1);

impl<'s> Progress<'s> {
    fn begin(session: &'s Session, title: &str) -> Progress<'s> {
        let token = session
            .state()
            .progress
            .then(|| format!("qg-{}", NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)));
        // The client must accept the token before it is used.
        let token = token.filter(|token| {
            session
                .ask("window/workDoneProgress/create", json!({"token": token}))
                .is_some()
        });
        let progress = Progress {
            session,
            token,
            finished: std::sync::Mutex::new(0),
        };
        progress
            .send(json!({"kind": "begin", "title": format!("qg: {title}"), "cancellable": false}));
        progress
    }

    fn send(&self, value: Value) {
        if let Some(token) = &self.token {
            self.session
                .notify("$/progress", json!({"token": token, "value": value}));
        }
    }

    fn end(&self, message: &str) {
        self.send(json!({"kind": "end", "message": message}));
    }
}

impl Observer<GateResult> for Progress<'_> {
    fn gate_started(&self, gate: &Gate, files: usize, _argv: &[String]) {
        self.send(json!({"kind": "report", "message": format!("{} on {}", gate.id, crate::report::summary::plural(files, "file"))}));
    }

    fn gate_finished(&self, result: &GateResult) {
        let mut done = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        *done += 1;
        self.send(json!({
            "kind": "report",
            "message": format!("{} {} ({done} done)", result.id, result.status.as_str()),
        }));
    }
}
