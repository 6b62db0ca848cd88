//! Starting the gate's tool (again): the project and config as they are
//! now, the engine and its first full pass — then the daemon serves at
//! once if a comparison with a cold run agreed for this key before, or
//! compares first.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::checking;
use super::shared::{lock, Held, Shared};
use crate::tools::Toolbox;
use crate::warm::checker::Compare;
use crate::warm::context::Context;
use crate::warm::engine::Engine;
use crate::warm::key::DaemonKey;
use crate::warm::record::Phase;
use crate::warm::standing::{self, Cause};
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
    if let Some((standing, key)) = drifted_before(shared) {
        // Trust lost for this key stays lost: a tool started again passes
        // its self-check and drifts again at the next edit of that kind.
        drop(engine);
        shared.log(&format!("not starting the tool: {}", standing.describe()));
        let Cause::Drifted { distrust } = standing.cause else {
            return;
        };
        shared.set_phase(Phase::Untrusted, |live| {
            // The key it holds now: its watch starts the tool again only
            // when the key changes from this one.
            live.record.key = key;
            live.record.digest = standing.key;
            live.record.verified = None;
            live.record.distrust = Some(distrust);
            live.record.engine_group = None;
        });
        return;
    }
    if let Some(why) = untrusted(shared) {
        drop(engine);
        shared.log(&format!("not starting the tool: {why}"));
        shared.set_phase(Phase::Failed, |live| {
            live.record.error = Some(why);
            live.record.engine_group = None;
        });
        return;
    }
    shared.log(&format!("starting the tool ({why})"));
    let started = Instant::now();
    match launch(shared) {
        Ok((held, key)) => {
            let ms = started.elapsed().as_millis() as u64;
            let group = held.engine.group();
            let compare_all = weaker_because(&held, &shared.options.gate);
            if let Some(why) = &compare_all {
                shared.log(&format!("every answer is compared with a cold run: {why}"));
            }
            {
                let mut live = lock(&shared.live);
                live.since_start = 0;
                live.compare_all = compare_all;
            }
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
            match trusted {
                true => standing::clear_refusal(&shared.root, &shared.options.gate),
                false => {
                    let _ = checking::compare(shared, Compare::Whole);
                }
            }
        }
        Err(why) => {
            shared.log(&format!("failed: {why}"));
            let key = current_key(shared).map(|k| k.digest()).unwrap_or_default();
            let refused = Cause::Refused {
                reason: why.clone(),
            };
            if let Err(e) = standing::record(&shared.root, &shared.options.gate, &key, refused) {
                shared.log(&format!("cannot record why: {e}"));
            }
            shared.set_phase(Phase::Failed, |live| {
                live.record.error = Some(why);
                live.record.engine_group = None;
            });
        }
    }
}

/// Why every answer of the tool is compared with a cold run, when its
/// config sets a key its daemon is known to be weaker with
/// (`verify_all_when`: dmypy with `plugins`).
fn weaker_because(held: &Held, gate: &str) -> Option<String> {
    let gate = held.config.gates.get(gate)?;
    let spec = gate.daemon.as_ref()?;
    let sources = &gate.selection.as_ref()?.config;
    let found =
        crate::tool_config::first_section(&gate.config_dir(&held.ws.root), sources).ok()??;
    spec.verify_all_when
        .iter()
        .find(|key| {
            !found.section.strings_at(key).is_empty() || found.section.flag(key) == Some(true)
        })
        .map(|key| format!("{} sets `{key}`", found.label))
}

/// Why the tool may not start, for a daemon an automatic context started
/// (`qg watch`, `qg lsp`: it has an owner) in a repository not trusted as
/// it is now — a pull may have changed the gate's command since.
fn untrusted(shared: &Shared) -> Option<String> {
    shared.options.owner?;
    crate::trust::require(&shared.root, shared.options.config.as_deref())
        .err()
        .map(|e| e.to_string())
}

/// The key the tool would start with now, when the config loads.
fn current_key(shared: &Shared) -> Option<DaemonKey> {
    let ws = Workspace::discover(&shared.root).ok()?;
    let config = crate::members::load_config(&ws, shared.options.config.as_deref()).ok()?;
    let gate = config.gates.get(&shared.options.gate)?;
    Some(DaemonKey::now(
        &ws.root,
        &config,
        gate,
        &Toolbox::from_env(&ws.root),
    ))
}

/// The drift found earlier for the key the tool would start with now,
/// with that key.
fn drifted_before(shared: &Shared) -> Option<(standing::Standing, DaemonKey)> {
    let key = current_key(shared)?;
    standing::for_key(&shared.root, &shared.options.gate, &key.digest())
        .filter(|s| s.drifted())
        .map(|s| (s, key))
}

/// Loads the project and config, starts the engine, makes the first pass.
fn launch(shared: &Shared) -> Result<(Held, DaemonKey), String> {
    let ws = Workspace::discover(&shared.root).map_err(|e| e.to_string())?;
    let config = crate::members::load_config(&ws, shared.options.config.as_deref())
        .map_err(|e| e.to_string())?;
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
    let offset = ctx.slot.log_len();
    // The tool's own words say why it failed (dmypy refuses some
    // settings): they go with qg's, to the console and the status.
    let in_its_words = |why: String| match ctx.slot.tool_words_since(offset) {
        Some(words) => format!("{why}; it said: {words}"),
        None => why,
    };
    let mut engine = Engine::start(ctx, deadline).map_err(in_its_words)?;
    if let Err(why) = engine.first_pass(ctx, deadline) {
        engine.stop(ctx);
        return Err(in_its_words(why));
    }
    Ok(engine)
}

/// Stops the tool (on a thread of its own: a check may hold it), for a
/// daemon that will not answer again with this key.
pub(super) fn stop_engine(shared: &Arc<Shared>) {
    let shared = Arc::clone(shared);
    std::thread::spawn(move || {
        let mut engine = lock(&shared.engine);
        if let Some(mut held) = engine.take() {
            held.with(&shared, |engine, ctx| engine.stop(ctx));
            shared.log("stopped the tool");
        }
        drop(engine);
        lock(&shared.live).record.engine_group = None;
    });
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
