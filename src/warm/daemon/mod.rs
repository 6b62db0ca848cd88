//! The daemon: one detached qg process per warm gate (`qg daemon serve`),
//! holding the gate's [engine](super::engine) and answering runs on the
//! slot's socket, one thread per connection, one check at a time.
//!
//! It makes the tool's first full pass as soon as it starts, then compares
//! its answers with a cold run before it serves ([`trust`]); then keeps
//! watch: it stops itself after the idle timeout, when the process that
//! owns it (`qg watch`) is gone, when the project or its `.st3` is gone,
//! or on SIGTERM; it starts the tool again when the tool exits or fails a
//! check, and when its [key](super::key) changes (a new config, tool or
//! package) — answering runs cold meanwhile, never with a stale program.
//!
//! One way down: [`requests`] and [`trust`] use [`lifecycle`] (the tool
//! started again), which uses [`checking`] (a comparison started), which
//! uses [`shared`] (the state every thread holds).

mod checking;
mod lifecycle;
mod requests;
mod shared;
mod trust;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::key::DaemonKey;
use super::log::Log;
use super::record::{Phase, Record};
use super::slot::Slot;
use super::transport;
use super::wire::{self, Reply, Request};
use crate::tools::Toolbox;
use crate::workspace::Workspace;
use shared::{lock, Live, Shared};

/// How `qg daemon serve` was started.
#[derive(Debug, Clone)]
pub(crate) struct ServeOptions {
    /// The project directory.
    pub(crate) cwd: PathBuf,
    /// `--config`.
    pub(crate) config: Option<PathBuf>,
    /// The gate to keep warm.
    pub(crate) gate: String,
    /// The process whose death stops the daemon (`qg watch`).
    pub(crate) owner: Option<u32>,
    /// Overrides the gate's `idle_timeout_minutes`.
    pub(crate) idle_timeout: Option<Duration>,
    /// Overrides the gate's `verify_every`.
    pub(crate) verify_every: Option<usize>,
    /// Where the daemon writes what it does (the caller's channel).
    pub(crate) log: Log,
}

/// How often the daemon looks at its clock, its owner and its tool.
const WATCH: Duration = Duration::from_millis(250);
/// How often it computes its key again, at most.
const KEY_EVERY: Duration = Duration::from_secs(2);
/// Idle time after each key check, per unit of the check's own time: on a
/// large tree (finding the members' configs walks it: 30 ms on 30,000
/// files) the check never takes more than 2% of a core. Runs compute their
/// own key and are answered cold on a mismatch, so a slower check only
/// delays the restart, never makes an answer wrong.
const KEY_IDLE_PER_CHECK: u32 = 50;
/// How long a daemon whose tool failed stays, at most.
const FAILED_LINGER: Duration = Duration::from_secs(60);

/// Runs the daemon until it stops. Returns at once (with `Ok`) when a
/// daemon for this gate is already alive.
pub(crate) fn serve(options: ServeOptions) -> Result<(), String> {
    let ws = Workspace::discover(&options.cwd).map_err(|e| e.to_string())?;
    let config =
        crate::members::load_config(&ws, options.config.as_deref()).map_err(|e| e.to_string())?;
    let gate = config
        .gates
        .get(&options.gate)
        .ok_or_else(|| format!("no gate `{}` in {}", options.gate, config.origin))?;
    let spec = gate
        .daemon
        .as_ref()
        .ok_or_else(|| format!("gate `{}` has no `daemon` section", gate.id))?;
    let slot = Slot::new(&ws.root, &gate.id);
    let Some(_alive) = slot
        .hold_alive(Duration::from_secs(3))
        .map_err(|e| format!("cannot lock {}: {e}", slot.dir.display()))?
    else {
        return Ok(());
    };
    let idle_timeout = options.idle_timeout.unwrap_or(spec.idle_timeout);
    let key = DaemonKey::now(&ws.root, &config, gate, &Toolbox::from_env(&ws.root));
    let record = Record {
        gate: gate.id.clone(),
        pid: std::process::id(),
        digest: key.digest(),
        key,
        phase: Phase::Starting,
        started_at: super::record::now_rfc3339(),
        first_pass_ms: None,
        owner: options.owner,
        idle_timeout_s: idle_timeout.as_secs(),
        engine_group: None,
        error: None,
        verified: None,
        distrust: None,
        background: None,
        unsettled: 0,
    };
    let verify_every = options.verify_every.unwrap_or(spec.verify_every);
    slot.write_record(&record)
        .map_err(|e| format!("cannot write {}: {e}", slot.record_file().display()))?;
    let listener = transport::Listener::bind(&slot.socket())
        .map_err(|e| format!("cannot listen on {}: {e}", slot.socket().display()))?;
    let socket_identity =
        transport::identity_at(&slot.socket()).ok_or("the socket vanished as it was made")?;
    let shared = Arc::new(Shared {
        socket_identity,
        waker: listener.waker(),
        root: ws.root.clone(),
        qg: std::env::current_exe().map_err(|e| format!("cannot find qg itself: {e}"))?,
        options,
        slot,
        live: Mutex::new(Live {
            record,
            checks: 0,
            last_activity: Instant::now(),
            restarts: Vec::new(),
            idle_timeout,
            verify_every,
            since_start: 0,
            verify_first: spec.verify_first,
            compare_all: None,
            comparing_since: None,
            inconclusive: 0,
            checked_ms: None,
            notice: None,
            agreed: 0,
            last_agreed: None,
            last_confirmed: None,
            answering: 0,
        }),
        phase_changed: Condvar::new(),
        engine: Mutex::new(None),
        checker: Mutex::new(Default::default()),
        stopping: AtomicBool::new(false),
    });
    shared.log(&format!(
        "serving (pid {}, idle timeout {}s, one answer in {verify_every} compared with a cold run)",
        std::process::id(),
        idle_timeout.as_secs()
    ));
    let terminated = Arc::new(AtomicBool::new(false));
    crate::process::termination::raise_on_request(&terminated);
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || lifecycle::start_engine(&shared, "started"));
    }
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || watch(&shared, &terminated));
    }
    loop {
        let stream = listener.accept();
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || answer(&shared, stream));
    }
    shut_down(&shared);
    Ok(())
}

/// Reads one request and answers it.
fn answer(shared: &Arc<Shared>, stream: transport::Connection) {
    let reply = match wire::read_request(&stream) {
        Ok(Request::Check {
            key,
            files,
            verify,
            left_out,
        }) => {
            let asked = requests::Asked {
                report: &files,
                left_out: &left_out,
            };
            requests::check(shared, &key, &asked, verify)
        }
        Ok(Request::Confirm { key, job, path }) => requests::confirm(shared, &key, &job, &path),
        Ok(Request::WaitReady) => requests::wait_ready(shared),
        Ok(Request::Status) => Reply::Status(Box::new(requests::status(shared))),
        Ok(Request::Stop) => {
            stop(shared, "asked to stop");
            Reply::Ok
        }
        Ok(Request::Compared(comparison)) => {
            // Before the outcome turns the daemon ready: the first answer's
            // sample then waits for this self-check to exit, not skips it.
            lock(&shared.checker).told();
            trust::compared(shared, comparison);
            Reply::Ok
        }
        Err(e) => Reply::Unavailable {
            reason: e.to_string(),
            warn: true,
            notice: None,
        },
    };
    let _ = wire::write_reply(&stream, &reply);
}

/// The daemon's watch: idle time, its owner, the project, its key, its tool.
fn watch(shared: &Arc<Shared>, terminated: &AtomicBool) {
    let mut key_checked = Instant::now();
    let mut key_every = KEY_EVERY;
    while !shared.stopping.load(Ordering::SeqCst) {
        std::thread::sleep(WATCH);
        if terminated.load(Ordering::SeqCst) {
            return stop(shared, "terminated by a signal");
        }
        let socket = transport::identity_at(&shared.slot.socket());
        if !shared.root.is_dir() || socket.as_ref() != Some(&shared.socket_identity) {
            return stop(
                shared,
                "its socket is gone: the project, or its .st3, was removed",
            );
        }
        let (idle, timeout, owner, phase) = {
            let live = lock(&shared.live);
            (
                live.last_activity.elapsed(),
                live.idle_timeout,
                live.record.owner,
                live.record.phase,
            )
        };
        // A tool's first pass, and the self-check comparing it with a cold
        // run, are work, not idleness: the idle clock runs from when it is
        // ready (dmypy's first pass on a loaded machine outlasted a 2 s
        // timeout, and so did a low-priority self-check: the daemon
        // stopped before it served).
        let starting = matches!(phase, Phase::Starting | Phase::Restarting | Phase::Checking);
        // A daemon whose tool failed serves nothing: it stays only long
        // enough for a start waiting on it, and the status, to hear why
        // (the standing file keeps the reason after).
        let timeout = match phase {
            Phase::Failed => timeout.min(FAILED_LINGER),
            _ => timeout,
        };
        if idle > timeout && !starting {
            return stop(shared, &format!("idle for {}s", idle.as_secs()));
        }
        if let Some(owner) = owner.filter(|pid| !super::procfs::alive(*pid)) {
            return stop(shared, &format!("its owner (pid {owner}) is gone"));
        }
        checking::yield_to_runs(shared);
        // An untrusted daemon watches its key too: a new tool or new
        // settings earn trust again.
        if !matches!(phase, Phase::Ready | Phase::Checking | Phase::Untrusted) {
            continue;
        }
        if key_checked.elapsed() >= key_every {
            let began = Instant::now();
            let changed = key_change(shared);
            key_checked = Instant::now();
            key_every = KEY_EVERY.max(began.elapsed() * KEY_IDLE_PER_CHECK);
            if let Some(changed) = changed {
                lifecycle::restart(shared, &changed, lifecycle::Restart::Expected);
                continue;
            }
        }
        // A tool that exited by itself (not while a check holds it).
        let crashed = match shared.engine.try_lock() {
            Ok(mut engine) => engine.as_mut().is_some_and(|held| !held.engine.running()),
            Err(_) => false,
        };
        if crashed {
            lifecycle::restart(shared, "the tool exited", lifecycle::Restart::Trouble);
        }
        checking::start_queued(shared);
        let silent =
            lock(&shared.live).comparing_since.is_some() && !lock(&shared.checker).running();
        if silent {
            trust::compared(
                shared,
                super::record::Comparison::Inconclusive {
                    reason: "the self-check ended without telling how the comparison came out"
                        .into(),
                },
            );
        }
    }
}

/// What changed in the key since the engine started, if anything; a gate
/// that lost its `daemon` section (or a config that no longer loads)
/// stops the daemon.
fn key_change(shared: &Arc<Shared>) -> Option<String> {
    let loaded = Workspace::discover(&shared.root)
        .and_then(|ws| crate::members::load_config(&ws, shared.options.config.as_deref()));
    let config = match loaded {
        Ok(config) => config,
        Err(e) => return Some(format!("the config changed and does not load: {e}")),
    };
    let Some(gate) = config
        .gates
        .get(&shared.options.gate)
        .filter(|g| g.daemon.is_some())
    else {
        stop(shared, "the gate no longer has a `daemon` section");
        return None;
    };
    let now = DaemonKey::now(
        &shared.root,
        &config,
        gate,
        &Toolbox::from_env(&shared.root),
    );
    let live = lock(&shared.live);
    let changed = now.differences(&live.record.key);
    (!changed.is_empty()).then(|| format!("changed: {}", changed.join(", ")))
}

/// Ends the accept loop.
fn stop(shared: &Arc<Shared>, why: &str) {
    if shared.stopping.swap(true, Ordering::SeqCst) {
        return;
    }
    shared.log(&format!("stopping: {why}"));
    shared.phase_changed.notify_all();
    // The listener outlives every thread that may call this: the accept
    // loop owns it and only returns after `stopping` is seen.
    shared.waker.wake();
}

/// Stops the self-check and the tool, and removes the socket and the record.
fn shut_down(shared: &Arc<Shared>) {
    lock(&shared.checker).stop();
    let mut engine = lock(&shared.engine);
    if let Some(mut held) = engine.take() {
        held.with(shared, |engine, ctx| engine.stop(ctx));
    }
    // A socket that is not ours any more belongs to someone else.
    if transport::identity_at(&shared.slot.socket()).as_ref() == Some(&shared.socket_identity) {
        shared.slot.clear();
    }
    shared.log("stopped");
}
