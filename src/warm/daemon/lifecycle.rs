//! Starting the gate's tool (again): the project and config as they are
//! now, the engine and its first full pass — then the daemon serves at
//! once if a comparison with a cold run agreed for this key before, or
//! compares first.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::checking;
use super::shared::{lock, Held, Shared};
use crate::config;
use crate::tools::Toolbox;
use crate::warm::checker::Compare;
use crate::warm::context::Context;
use crate::warm::engine::Engine;
use crate::warm::key::DaemonKey;
use crate::warm::record::Phase;
use crate::workspace::Workspace;

/// Restarts of a tool within [`RESTART_WINDOW`] after which it gives up.
const MAX_RESTARTS: usize = 3;
const RESTART_WINDOW: Duration = Duration::from_secs(600);

/// Starts (or starts again) the gate's tool and makes its first full
/// pass, under the config as it is now.
pub(super) fn start_engine(shared: &Arc<Shared>, why: &str) {
    let mut engine = lock(&shared.engine);
    if let Some(mut old) = engine.take() {
        old.with(shared, |engine, ctx| engine.stop(ctx));
    }
    if shared.stopping.load(Ordering::SeqCst) {
        return;
    }
    shared.log(&format!("starting the tool ({why})"));
    let started = Instant::now();
    match launch(shared) {
        Ok((held, key)) => {
            let ms = started.elapsed().as_millis() as u64;
            let group = held.engine.group();
            *engine = Some(held);
            drop(engine);
            let digest = key.digest();
            let trusted = {
                let live = lock(&shared.live);
                live.record.verified.as_deref() == Some(digest.as_str())
                    && live.record.distrust.is_none()
            };
            shared.log(&format!("first full pass in {ms} ms"));
            let phase = match trusted {
                true => Phase::Ready,
                false => Phase::Checking,
            };
            shared.set_phase(phase, |live| {
                live.record.digest = digest;
                live.record.key = key;
                live.record.first_pass_ms = Some(ms);
                live.record.engine_group = Some(group);
                live.record.error = None;
            });
            if !trusted {
                checking::compare(shared, Compare::Whole);
            }
        }
        Err(why) => {
            shared.log(&format!("failed: {why}"));
            shared.set_phase(Phase::Failed, |live| {
                live.record.error = Some(why);
                live.record.engine_group = None;
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
    let ctx = shared.context(&ws, &config, gate, &tools);
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

/// Why the tool starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Restart {
    /// Something went wrong (it exited, a check failed, it drifted): too
    /// many of these and the daemon gives up.
    Trouble,
    /// The project moved under it (a module it does not follow was added
    /// or removed, its key changed): expected, never counted.
    Expected,
}

/// Starts the tool again (on a thread of its own), unless it was in
/// trouble too often lately: then the daemon answers cold until stopped.
pub(super) fn restart(shared: &Arc<Shared>, why: &str, kind: Restart) {
    {
        let mut live = lock(&shared.live);
        if matches!(live.record.phase, Phase::Starting | Phase::Restarting) {
            return;
        }
        if kind == Restart::Expected {
            drop(live);
            return restart_now(shared, why);
        }
        let now = Instant::now();
        live.restarts
            .retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        if live.restarts.len() >= MAX_RESTARTS {
            drop(live);
            shared.log(&format!("not restarting the tool again ({why})"));
            shared.set_phase(Phase::Failed, |live| {
                live.record.error = Some(format!(
                    "restarted {MAX_RESTARTS} times in {} minutes; last: {why}",
                    RESTART_WINDOW.as_secs() / 60
                ));
            });
            return;
        }
        live.restarts.push(now);
    }
    restart_now(shared, why);
}

fn restart_now(shared: &Arc<Shared>, why: &str) {
    // The old tool's group is about to go: the record must not name it.
    shared.set_phase(Phase::Restarting, |live| live.record.engine_group = None);
    let shared = Arc::clone(shared);
    let why = why.to_string();
    std::thread::spawn(move || start_engine(&shared, &why));
}
