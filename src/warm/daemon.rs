//! The daemon: one detached qg process per warm gate (`qg daemon serve`),
//! holding the gate's [engine](super::engine) and answering runs on the
//! slot's socket, one thread per connection, one check at a time.
//!
//! It makes the tool's first full pass as soon as it starts, then keeps
//! watch: it stops itself after the idle timeout, when the process that
//! owns it (`qg watch`) is gone, when the project or its `.st3` is gone,
//! or on SIGTERM; it starts the tool again when the tool exits or fails a
//! check, and when its [key](super::key) changes (a new config, tool or
//! package) — answering runs cold meanwhile, never with a stale program.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::context::Context;
use super::engine::Engine;
use super::key::DaemonKey;
use super::log::Log;
use super::record::{Phase, Record};
use super::slot::Slot;
use super::wire::{self, Reply, Request, Status};
use crate::config::{self, Config};
use crate::tools::Toolbox;
use crate::workspace::Workspace;

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
    /// Where the daemon writes what it does (the caller's channel).
    pub(crate) log: Log,
}

/// How often the daemon looks at its clock, its owner and its tool.
const WATCH: Duration = Duration::from_millis(250);
/// How often it computes its key again.
const KEY_EVERY: Duration = Duration::from_secs(2);
/// Restarts of a tool within [`RESTART_WINDOW`] after which it gives up.
const MAX_RESTARTS: usize = 3;
const RESTART_WINDOW: Duration = Duration::from_secs(600);

/// What the daemon's threads share.
struct Shared {
    options: ServeOptions,
    root: PathBuf,
    slot: Slot,
    /// This executable (it also runs the guard).
    qg: PathBuf,
    /// The inode of the socket it listens on: when the file there is gone
    /// or another (`rm -rf .st3`, a `git clean`, a newer daemon), nothing
    /// can reach this daemon any more.
    socket_inode: u64,
    /// The listening socket, shut down to end the accept loop.
    listener: std::os::fd::RawFd,
    live: Mutex<Live>,
    /// Signalled whenever the phase changes.
    phase_changed: Condvar,
    /// The engine and what it was started with; one user at a time.
    engine: Mutex<Option<Held>>,
    stopping: AtomicBool,
}

/// What changes as the daemon serves.
struct Live {
    record: Record,
    checks: u64,
    last_activity: Instant,
    restarts: Vec<Instant>,
    idle_timeout: Duration,
}

/// A running engine with the project and config it runs under.
struct Held {
    ws: Workspace,
    config: Config,
    engine: Engine,
}

impl Held {
    /// Calls `f` with the engine and its context.
    fn with<T>(&mut self, shared: &Shared, f: impl FnOnce(&mut Engine, &Context<'_>) -> T) -> T {
        let tools = Toolbox::from_env(&self.ws.root);
        let gate = &self.config.gates[&shared.options.gate];
        let spec = gate
            .daemon
            .as_ref()
            .expect("a held engine's gate has a daemon");
        let ctx = Context {
            ws: &self.ws,
            config: &self.config,
            gate,
            spec,
            slot: &shared.slot,
            tools: &tools,
            qg: &shared.qg,
            log: &shared.options.log,
        };
        f(&mut self.engine, &ctx)
    }
}

/// Runs the daemon until it stops. Returns at once (with `Ok`) when a
/// daemon for this gate is already alive.
pub(crate) fn serve(options: ServeOptions) -> Result<(), String> {
    let ws = Workspace::discover(&options.cwd).map_err(|e| e.to_string())?;
    let config = config::load(&ws.root, options.config.as_deref()).map_err(|e| e.to_string())?;
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
    };
    slot.write_record(&record)
        .map_err(|e| format!("cannot write {}: {e}", slot.record_file().display()))?;
    let listener = wire::listen(&slot.socket())
        .map_err(|e| format!("cannot listen on {}: {e}", slot.socket().display()))?;
    let socket_inode = socket_inode(&slot).ok_or("the socket vanished as it was made")?;
    let shared = Arc::new(Shared {
        socket_inode,
        listener: std::os::fd::AsRawFd::as_raw_fd(&listener),
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
        }),
        phase_changed: Condvar::new(),
        engine: Mutex::new(None),
        stopping: AtomicBool::new(false),
    });
    log(
        &shared,
        &format!(
            "serving (pid {}, idle timeout {}s)",
            std::process::id(),
            idle_timeout.as_secs()
        ),
    );
    let terminated = Arc::new(AtomicBool::new(false));
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&terminated));
    }
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || start_engine(&shared, "started"));
    }
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || watch(&shared, &terminated));
    }
    for stream in listener.incoming() {
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
fn answer(shared: &Arc<Shared>, stream: std::os::unix::net::UnixStream) {
    let reply = match wire::read_request(&stream) {
        Ok(Request::Check { key, files }) => check(shared, &key, &files),
        Ok(Request::WaitReady) => wait_ready(shared),
        Ok(Request::Status) => Reply::Status(Box::new(status(shared))),
        Ok(Request::Stop) => {
            stop(shared, "asked to stop");
            Reply::Ok
        }
        Ok(Request::Restart { reason }) => {
            restart(shared, &reason);
            Reply::Ok
        }
        Err(e) => Reply::Unavailable {
            reason: e.to_string(),
            warn: true,
        },
    };
    let _ = wire::write_reply(&stream, &reply);
}

/// Checks with the engine, when it is ready and was started for `key`.
fn check(shared: &Arc<Shared>, key: &str, report: &[String]) -> Reply {
    {
        let live = lock(&shared.live);
        let unavailable = |reason: String, warn| Reply::Unavailable { reason, warn };
        match live.record.phase {
            Phase::Ready => {}
            Phase::Failed => {
                let why = live.record.error.clone().unwrap_or_default();
                return unavailable(format!("its tool failed to start: {why}"), true);
            }
            phase => return unavailable(format!("the daemon is {}", phase.as_str()), false),
        }
        if live.record.digest != key {
            return unavailable("the daemon was started for another config, tool or virtualenv; it is starting again".into(), false);
        }
    }
    let mut engine = lock(&shared.engine);
    let Some(held) = engine.as_mut() else {
        return Reply::Unavailable {
            reason: "the daemon has no tool running".into(),
            warn: true,
        };
    };
    let timeout = held.config.gates[&shared.options.gate].timeout;
    let answered = held.with(shared, |engine, ctx| {
        engine.check(ctx, report, Instant::now() + timeout)
    });
    drop(engine);
    let mut live = lock(&shared.live);
    live.last_activity = Instant::now();
    match answered {
        Ok(reply) => {
            live.checks += 1;
            reply
        }
        Err(why) => {
            drop(live);
            restart(shared, &format!("a check failed: {why}"));
            Reply::Unavailable {
                reason: why,
                warn: true,
            }
        }
    }
}

/// Waits for the first full pass (or its failure).
fn wait_ready(shared: &Shared) -> Reply {
    let mut live = lock(&shared.live);
    while matches!(live.record.phase, Phase::Starting | Phase::Restarting)
        && !shared.stopping.load(Ordering::SeqCst)
    {
        live = shared
            .phase_changed
            .wait_timeout(live, Duration::from_millis(200))
            .map(|(guard, _)| guard)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    match (live.record.phase, live.record.first_pass_ms) {
        (Phase::Ready, Some(ms)) => Reply::Ready { first_pass_ms: ms },
        _ => Reply::Failed {
            reason: live
                .record
                .error
                .clone()
                .unwrap_or_else(|| "the daemon stopped".into()),
        },
    }
}

/// The record and the live figures.
fn status(shared: &Shared) -> Status {
    let live = lock(&shared.live);
    let mut rss_kib = super::procfs::rss_kib(std::process::id());
    if let Some(group) = live.record.engine_group {
        rss_kib += super::procfs::group_members(group)
            .into_iter()
            .map(super::procfs::rss_kib)
            .sum::<u64>();
    }
    Status {
        record: live.record.clone(),
        checks: live.checks,
        idle_s: live.last_activity.elapsed().as_secs(),
        rss_kib,
    }
}

/// Starts (or starts again) the gate's tool and makes its first full
/// pass, under the config as it is now.
fn start_engine(shared: &Arc<Shared>, why: &str) {
    let mut engine = lock(&shared.engine);
    if let Some(mut old) = engine.take() {
        old.with(shared, |engine, ctx| engine.stop(ctx));
    }
    if shared.stopping.load(Ordering::SeqCst) {
        return;
    }
    log(shared, &format!("starting the tool ({why})"));
    let started = Instant::now();
    match launch(shared) {
        Ok((held, key)) => {
            let ms = started.elapsed().as_millis() as u64;
            let group = held.engine.group();
            *engine = Some(held);
            log(shared, &format!("ready: first full pass in {ms} ms"));
            set_phase(shared, Phase::Ready, |record| {
                record.digest = key.digest();
                record.key = key;
                record.first_pass_ms = Some(ms);
                record.engine_group = Some(group);
                record.error = None;
            });
        }
        Err(why) => {
            log(shared, &format!("failed: {why}"));
            set_phase(shared, Phase::Failed, |record| {
                record.error = Some(why);
                record.engine_group = None;
            });
        }
    }
}

/// Loads the project and config, starts the engine, makes the first pass.
fn launch(shared: &Shared) -> Result<(Held, DaemonKey), String> {
    let ws = Workspace::discover(&shared.root).map_err(|e| e.to_string())?;
    let config =
        config::load(&ws.root, shared.options.config.as_deref()).map_err(|e| e.to_string())?;
    let gate = config
        .gates
        .get(&shared.options.gate)
        .filter(|g| g.daemon.is_some())
        .ok_or("the gate no longer has a `daemon` section")?;
    let tools = Toolbox::from_env(&ws.root);
    let key = DaemonKey::now(&ws.root, &config, gate, &tools);
    let spec = gate.daemon.as_ref().expect("filtered above");
    let ctx = Context {
        ws: &ws,
        config: &config,
        gate,
        spec,
        slot: &shared.slot,
        tools: &tools,
        qg: &shared.qg,
        log: &shared.options.log,
    };
    let deadline = Instant::now() + gate.timeout;
    let engine = start_and_pass(&ctx, deadline)?;
    drop(tools);
    Ok((Held { ws, config, engine }, key))
}

/// Starts the engine and makes its first full pass (stopping it when the
/// pass fails).
fn start_and_pass(ctx: &Context<'_>, deadline: Instant) -> Result<Engine, String> {
    let mut engine = Engine::start(ctx, deadline)?;
    if let Err(why) = engine.first_pass(ctx, deadline) {
        engine.stop(ctx);
        return Err(why);
    }
    Ok(engine)
}

/// Records a new phase and wakes whoever waits for one.
fn set_phase(shared: &Shared, phase: Phase, update: impl FnOnce(&mut Record)) {
    let mut live = lock(&shared.live);
    live.record.phase = phase;
    if phase == Phase::Ready {
        live.last_activity = Instant::now();
    }
    update(&mut live.record);
    if let Err(e) = shared.slot.write_record(&live.record) {
        log(shared, &format!("cannot write the record: {e}"));
    }
    drop(live);
    shared.phase_changed.notify_all();
}

/// Starts the tool again (on a thread of its own), unless it was
/// restarted too often lately: then the daemon answers cold until stopped.
fn restart(shared: &Arc<Shared>, why: &str) {
    {
        let mut live = lock(&shared.live);
        if matches!(live.record.phase, Phase::Starting | Phase::Restarting) {
            return;
        }
        let now = Instant::now();
        live.restarts
            .retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        if live.restarts.len() >= MAX_RESTARTS {
            drop(live);
            log(shared, &format!("not restarting the tool again ({why})"));
            set_phase(shared, Phase::Failed, |record| {
                record.error = Some(format!(
                    "restarted {MAX_RESTARTS} times in {} minutes; last: {why}",
                    RESTART_WINDOW.as_secs() / 60
                ));
            });
            return;
        }
        live.restarts.push(now);
    }
    // The old tool's group is about to go: the record must not name it.
    set_phase(shared, Phase::Restarting, |record| {
        record.engine_group = None
    });
    let shared = Arc::clone(shared);
    let why = why.to_string();
    std::thread::spawn(move || start_engine(&shared, &why));
}

/// The daemon's watch: idle time, its owner, the project, its key, its tool.
fn watch(shared: &Arc<Shared>, terminated: &AtomicBool) {
    let mut key_checked = Instant::now();
    while !shared.stopping.load(Ordering::SeqCst) {
        std::thread::sleep(WATCH);
        if terminated.load(Ordering::SeqCst) {
            return stop(shared, "terminated by a signal");
        }
        if !shared.root.is_dir() || socket_inode(&shared.slot) != Some(shared.socket_inode) {
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
        // A tool's first pass is work, not idleness: the idle clock runs
        // from when it is ready (dmypy's first pass on a loaded machine
        // outlasted a 2 s timeout, and the daemon stopped before it served).
        let starting = matches!(phase, Phase::Starting | Phase::Restarting);
        if idle > timeout && !starting {
            return stop(shared, &format!("idle for {}s", idle.as_secs()));
        }
        if let Some(owner) = owner.filter(|pid| !super::procfs::alive(*pid)) {
            return stop(shared, &format!("its owner (pid {owner}) is gone"));
        }
        if phase != Phase::Ready {
            continue;
        }
        if key_checked.elapsed() >= KEY_EVERY {
            key_checked = Instant::now();
            if let Some(changed) = key_change(shared) {
                restart(shared, &changed);
                continue;
            }
        }
        // A tool that exited by itself (not while a check holds it).
        let crashed = match shared.engine.try_lock() {
            Ok(mut engine) => engine.as_mut().is_some_and(|held| !held.engine.running()),
            Err(_) => false,
        };
        if crashed {
            restart(shared, "the tool exited");
        }
    }
}

/// What changed in the key since the engine started, if anything; a gate
/// that lost its `daemon` section (or a config that no longer loads)
/// stops the daemon.
fn key_change(shared: &Arc<Shared>) -> Option<String> {
    let loaded = config::load(&shared.root, shared.options.config.as_deref());
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

/// The inode of the file at the slot's socket path.
fn socket_inode(slot: &Slot) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(slot.socket())
        .ok()
        .map(|m| m.ino())
}

/// Ends the accept loop: shutting the listening socket down wakes it even
/// when the socket's file is gone.
fn stop(shared: &Arc<Shared>, why: &str) {
    if shared.stopping.swap(true, Ordering::SeqCst) {
        return;
    }
    log(shared, &format!("stopping: {why}"));
    shared.phase_changed.notify_all();
    // SAFETY: the listener outlives every thread that may call this (the
    // accept loop owns it and only returns after `stopping` is seen).
    unsafe {
        libc::shutdown(shared.listener, libc::SHUT_RDWR);
    }
}

/// Stops the tool and removes the socket and the record.
fn shut_down(shared: &Arc<Shared>) {
    let mut engine = lock(&shared.engine);
    if let Some(mut held) = engine.take() {
        held.with(shared, |engine, ctx| engine.stop(ctx));
    }
    // A socket that is not ours any more belongs to someone else.
    if socket_inode(&shared.slot) == Some(shared.socket_inode) {
        shared.slot.clear();
    }
    log(shared, "stopped");
}

fn log(shared: &Shared, message: &str) {
    shared.options.log.line(message);
}

/// A poisoned lock only means another thread panicked; the data is usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
