//! What the daemon's threads share: its options and slot, the live record
//! (phase, trust, counters), the engine, the self-check under way — and the
//! few operations on them every part uses (locking, logging, a new phase).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::ServeOptions;
use crate::config::Config;
use crate::tools::Toolbox;
use crate::warm::checker::Checker;
use crate::warm::context::Context;
use crate::warm::engine::Engine;
use crate::warm::record::{Phase, Record};
use crate::warm::slot::Slot;
use crate::warm::transport;
use crate::workspace::Workspace;

/// What the daemon's threads share.
pub(super) struct Shared {
    pub(super) options: ServeOptions,
    pub(super) root: PathBuf,
    pub(super) slot: Slot,
    /// This executable (it also runs the guard and the self-checks).
    pub(super) qg: PathBuf,
    /// The identity of the socket it listens on: when the file there is
    /// gone or another (`rm -rf .st3`, a `git clean`, a newer daemon),
    /// nothing can reach this daemon any more.
    pub(super) socket_identity: transport::Identity,
    /// Ends the accept loop.
    pub(super) waker: transport::Waker,
    pub(super) live: Mutex<Live>,
    /// Signalled whenever the phase changes.
    pub(super) phase_changed: Condvar,
    /// The engine and what it was started with; one user at a time.
    pub(super) engine: Mutex<Option<Held>>,
    /// The comparison with a cold run under way, if any.
    pub(super) checker: Mutex<Checker>,
    pub(super) stopping: AtomicBool,
}

/// What changes as the daemon serves.
pub(super) struct Live {
    pub(super) record: Record,
    /// Warm answers given since the daemon started.
    pub(super) checks: u64,
    pub(super) last_activity: Instant,
    pub(super) restarts: Vec<Instant>,
    pub(super) idle_timeout: Duration,
    /// Every this many warm answers, one is compared with a cold run.
    pub(super) verify_every: usize,
    /// Warm answers given since the tool last started.
    pub(super) since_start: u64,
    /// The first this many after each start are all compared.
    pub(super) verify_first: usize,
    /// Why every answer is compared, when the tool's config makes it
    /// weaker (`plugins` set).
    pub(super) compare_all: Option<String>,
    /// A comparison was asked for and has not told how it came out.
    pub(super) comparing_since: Option<Instant>,
    /// Comparisons in a row that could not conclude.
    pub(super) inconclusive: u32,
    /// How long the last agreeing self-check of the whole program took.
    pub(super) checked_ms: Option<u64>,
    /// A warm answer given earlier was found wrong: told to the next run.
    pub(super) notice: Option<String>,
    /// Comparisons with a cold run that agreed since the daemon started
    /// (its self-checks, samples and confirmations).
    pub(super) agreed: u64,
    /// When the last one did (RFC 3339, UTC).
    pub(super) last_agreed: Option<String>,
    /// The last confirmation of an answer that agreed (its job's id).
    pub(super) last_confirmed: Option<String>,
    /// Runs' checks being answered now (the comparison under way stands
    /// still meanwhile).
    pub(super) answering: u32,
}

/// A running engine with the project and config it runs under.
pub(super) struct Held {
    pub(super) ws: Workspace,
    pub(super) config: Config,
    pub(super) engine: Engine,
}

impl Held {
    /// Calls `f` with the engine and its context.
    pub(super) fn with<T>(
        &mut self,
        shared: &Shared,
        f: impl FnOnce(&mut Engine, &Context<'_>) -> T,
    ) -> T {
        let tools = Toolbox::from_env(&self.ws.root);
        let gate = &self.config.gates[&shared.options.gate];
        let ctx = shared.context(&self.ws, &self.config, gate, &tools);
        f(&mut self.engine, &ctx)
    }
}

impl Shared {
    /// The context the engine of `gate` (one with a `daemon` section) runs
    /// in: the project and config as loaded, with this daemon's slot,
    /// executable and log.
    pub(super) fn context<'a>(
        &'a self,
        ws: &'a Workspace,
        config: &'a Config,
        gate: &'a crate::config::Gate,
        tools: &'a Toolbox<'a>,
    ) -> Context<'a> {
        Context {
            ws,
            config,
            gate,
            spec: gate.daemon.as_ref().expect("a daemon's gate has a daemon"),
            slot: &self.slot,
            tools,
            qg: &self.qg,
            log: &self.options.log,
        }
    }

    /// Writes a line to the daemon's log.
    pub(super) fn log(&self, message: &str) {
        self.options.log.line(message);
    }

    /// Records a new phase (and whatever else `update` changes) and wakes
    /// whoever waits for one.
    pub(super) fn set_phase(&self, phase: Phase, update: impl FnOnce(&mut Live)) {
        let mut live = lock(&self.live);
        live.record.phase = phase;
        if phase == Phase::Ready {
            live.last_activity = Instant::now();
        }
        update(&mut live);
        if let Err(e) = self.slot.write_record(&live.record) {
            self.log(&format!("cannot write the record: {e}"));
        }
        drop(live);
        self.phase_changed.notify_all();
    }
}

impl Shared {
    /// Writes `record` (the live one, under its lock), saying in the log
    /// when it cannot.
    pub(super) fn write_record(&self, record: &crate::warm::record::Record) {
        if let Err(e) = self.slot.write_record(record) {
            self.log(&format!("cannot write the record: {e}"));
        }
    }

    /// Records the comparison under way in the background (none: it
    /// ended), for runs to name in their time line.
    pub(super) fn note_background(&self, background: Option<crate::warm::record::Background>) {
        let mut live = lock(&self.live);
        if live.record.background == background {
            return;
        }
        live.record.background = background;
        if let Err(e) = self.slot.write_record(&live.record) {
            self.log(&format!("cannot write the record: {e}"));
        }
    }
}

/// A poisoned lock only means another thread panicked; the data is usable.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
