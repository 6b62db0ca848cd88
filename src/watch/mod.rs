//! `qg watch`: a run on every save. The project's files are watched (file
//! system notifications, debounced; git-ignored, excluded and qg's own
//! files do not count), each burst of changes makes one pass — the same
//! run as `qg run`, scope, state and history included — and a screen
//! ([`Screen`]) shows it with what was fixed and what is new since the
//! pass before. The warm gates' daemons are started first (and those this
//! watch started are stopped when it ends); a sampled pass is verified
//! against a cold run in the background. A change made while a pass runs
//! is never lost: it makes the next pass.

pub(crate) mod filter;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer_opt, DebounceEventResult, NoCache};

use crate::error::QgError;
use crate::exec::Silent;
use crate::outcome::{ErrorKind, GateResult};
use crate::report::RunReport;
use crate::run::{self, DaemonUse, RunOptions};
use crate::violation::{BaselineState, Fingerprint, Violation};
use crate::warm::control::{self, StartRequest};
use filter::Filter;

/// What `qg watch` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct WatchOptions {
    /// The run each pass makes.
    pub(crate) run: RunOptions,
    /// Quiet time after a change before a pass starts.
    pub(crate) debounce: Duration,
    /// Verify the first warm pass and then one in this many (0: never).
    pub(crate) verify_every: usize,
    /// The idle timeout of the daemons this watch starts.
    pub(crate) idle_timeout: Option<Duration>,
}

/// A finding of one gate.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// The gate.
    pub(crate) gate: String,
    /// The finding.
    pub(crate) violation: Violation,
}

/// One pass, as a screen shows it.
pub(crate) struct Pass<'a> {
    /// 1 for the first.
    pub(crate) number: usize,
    /// The run's report.
    pub(crate) report: &'a RunReport,
    /// The root-relative files whose change started it (empty for the first).
    pub(crate) changed: &'a [String],
    /// Findings of the pass before that this one no longer has (those the
    /// baseline knows aside).
    pub(crate) fixed: Vec<Finding>,
    /// Findings the pass before did not have (likewise).
    pub(crate) new: Vec<Finding>,
}

/// Where passes are shown.
pub(crate) trait Screen {
    /// Something to say that is not a pass (starting the daemons, a
    /// verification's outcome, a pass that could not run).
    fn note(&mut self, message: &str);
    /// A pass.
    fn pass(&mut self, pass: &Pass<'_>);
}

/// Watches until `stop` is set; then stops the daemons it started.
pub(crate) fn watch(
    options: &WatchOptions,
    screen: &mut dyn Screen,
    stop: &AtomicBool,
) -> Result<(), QgError> {
    let (workspace, config) = run::prepare(&options.run.cwd, options.run.config.as_deref())?;
    let filter = Filter::new(&workspace, &config, options.run.config.as_deref());
    let root = workspace.root.clone();
    drop(workspace);
    let owned = match options.run.daemons {
        DaemonUse::Ignore => Vec::new(),
        _ => start_daemons(options, screen)?,
    };
    let watched = watch_loop(options, &root, &filter, screen, stop);
    if !owned.is_empty() {
        control::stop(&root, &owned);
    }
    watched
}

/// Starts the warm gates' daemons, owned by this process (they stop when
/// it dies, however it dies); returns the gates whose daemon it started.
fn start_daemons(options: &WatchOptions, screen: &mut dyn Screen) -> Result<Vec<String>, QgError> {
    let (_, config) = run::prepare(&options.run.cwd, options.run.config.as_deref())?;
    let gates: Vec<String> = control::warm_gates(&config, &options.run.gates)
        .unwrap_or_default()
        .iter()
        .map(|g| g.id.clone())
        .collect();
    if gates.is_empty() {
        return Ok(Vec::new());
    }
    screen.note(&format!("starting daemons: {}", gates.join(", ")));
    let request = StartRequest {
        cwd: options.run.cwd.clone(),
        config: options.run.config.clone(),
        gates,
        owner: Some(std::process::id()),
        idle_timeout: options.idle_timeout,
    };
    let owned = control::start_owned(&request)?;
    for (gate, why) in &owned.without {
        screen.note(&format!("{gate}: no daemon ({why}); answered cold"));
    }
    Ok(owned.started)
}

fn watch_loop(
    options: &WatchOptions,
    root: &std::path::Path,
    filter: &Filter,
    screen: &mut dyn Screen,
    stop: &AtomicBool,
) -> Result<(), QgError> {
    let (events, heard) = mpsc::channel::<DebounceEventResult>();
    let mut debouncer = new_debouncer_opt::<_, notify::RecommendedWatcher, NoCache>(
        options.debounce,
        None,
        move |result| {
            let _ = events.send(result);
        },
        NoCache,
        notify::Config::default(),
    )
    .map_err(|e| QgError::Usage(format!("cannot watch files: {e}")))?;
    debouncer
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| QgError::Usage(format!("cannot watch {}: {e}", root.display())))?;
    // Bumped on every relevant change: a verification that saw one during
    // its runs compared two different trees and is dropped.
    let generation = Arc::new(AtomicU64::new(0));
    let (verified_tx, verified) = mpsc::channel::<String>();
    let mut state = Passes::default();
    let mut changed: Vec<String> = Vec::new();
    loop {
        // The first pass, then one in every `verify_every`, is verified: its
        // scope is taken first (the pass moves the baseline).
        let sampled = options.verify_every > 0 && state.number % options.verify_every == 0;
        let scope = sampled.then(|| pass_scope(options)).flatten();
        let warm = state.run(options, &changed, screen);
        if let (Some(warm), Some(scope)) = (warm, scope) {
            verify_in_background(
                options,
                warm,
                scope,
                Arc::clone(&generation),
                verified_tx.clone(),
            );
        }
        changed = match wait_for_changes(&heard, filter, root, stop, &generation, &verified, screen)
        {
            Some(changed) => changed,
            None => return Ok(()),
        };
    }
}

/// Blocks until relevant files change (then returns them, sorted) or
/// `stop` is set (`None`); shows verification outcomes meanwhile.
fn wait_for_changes(
    heard: &mpsc::Receiver<DebounceEventResult>,
    filter: &Filter,
    root: &std::path::Path,
    stop: &AtomicBool,
    generation: &AtomicU64,
    verified: &mpsc::Receiver<String>,
    screen: &mut dyn Screen,
) -> Option<Vec<String>> {
    let mut changed = BTreeSet::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        while let Ok(message) = verified.try_recv() {
            screen.note(&message);
        }
        match heard.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(events)) => {
                for event in events {
                    changed.extend(filter.relevant_paths(root, &event));
                }
            }
            Ok(Err(errors)) => {
                for error in errors {
                    screen.note(&format!("file watching: {error}"));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        }
        // Whatever else is already queued belongs to the same burst.
        if !changed.is_empty() {
            while let Ok(Ok(events)) = heard.try_recv() {
                for event in events {
                    changed.extend(filter.relevant_paths(root, &event));
                }
            }
            generation.fetch_add(1, Ordering::SeqCst);
            return Some(changed.into_iter().collect());
        }
    }
}

/// The passes so far: the findings of the last one, for the next one's
/// fixed and new.
#[derive(Default)]
struct Passes {
    number: usize,
    last: Option<BTreeMap<(String, Fingerprint), Violation>>,
}

impl Passes {
    /// Runs one pass and shows it; returns the gates a daemon answered.
    fn run(
        &mut self,
        options: &WatchOptions,
        changed: &[String],
        screen: &mut dyn Screen,
    ) -> Option<Vec<String>> {
        self.number += 1;
        let report = match run::run(&options.run, &Silent) {
            Ok(report) => report,
            Err(e) => {
                screen.note(&format!("pass {} could not run: {e}", self.number));
                return None;
            }
        };
        let now = findings(&report.gates);
        let (fixed, new) = match &self.last {
            Some(last) => (difference(last, &now), difference(&now, last)),
            None => (Vec::new(), Vec::new()),
        };
        screen.pass(&Pass {
            number: self.number,
            report: &report,
            changed,
            fixed,
            new,
        });
        self.last = Some(now);
        let warm: Vec<String> = report
            .gates
            .iter()
            .filter(|g| g.warm)
            .map(|g| g.id.clone())
            .collect();
        (!warm.is_empty()).then_some(warm)
    }
}

type Findings = BTreeMap<(String, Fingerprint), Violation>;

/// Every fingerprinted finding of a run that the baseline does not know,
/// by gate and fingerprint: a known finding is neither fixed nor new
/// because a pass did or did not look at its file.
fn findings(gates: &[GateResult]) -> Findings {
    gates
        .iter()
        .flat_map(|g| {
            g.violations.iter().filter_map(move |v| {
                let fingerprint = v.tracking.fingerprint?;
                let known = v.tracking.baseline_state == Some(BaselineState::Unchanged);
                (!known).then(|| ((g.id.clone(), fingerprint), v.clone()))
            })
        })
        .collect()
}

/// What `a` has that `b` does not.
fn difference(a: &Findings, b: &Findings) -> Vec<Finding> {
    a.iter()
        .filter(|(key, _)| !b.contains_key(*key))
        .map(|((gate, _), violation)| Finding {
            gate: gate.clone(),
            violation: violation.clone(),
        })
        .collect()
}

/// The files the next pass checks, as named paths (a run of them checks
/// the same files: their importers are among them already).
fn pass_scope(options: &WatchOptions) -> Option<Vec<PathBuf>> {
    let run = &options.run;
    let resolved = run::scope_of(&run.cwd, run.config.as_deref(), &run.scope, &run.cancel).ok()?;
    if resolved.scope.files.is_empty() {
        return None;
    }
    let root = crate::workspace::Workspace::discover(&run.cwd).ok()?.root;
    let files = resolved.scope.files.iter();
    Some(
        files
            .map(|f| crate::file_name::join(&root, &f.path))
            .collect(),
    )
}

/// Runs the pass's warm gates on its files again, warm and cold
/// (`--verify`, recording nothing), on a thread of its own; a drift is
/// reported unless the tree changed meanwhile.
fn verify_in_background(
    options: &WatchOptions,
    gates: Vec<String>,
    files: Vec<PathBuf>,
    generation: Arc<AtomicU64>,
    report: mpsc::Sender<String>,
) {
    let run = RunOptions {
        daemons: DaemonUse::Verify,
        no_state: true,
        gates,
        scope: crate::scope::ScopeRequest {
            mode: None,
            paths: files,
            parent: None,
        },
        ..options.run.clone()
    };
    std::thread::spawn(move || {
        let before = generation.load(Ordering::SeqCst);
        let started = Instant::now();
        let Ok(verified) = run::run(&run, &Silent) else {
            return;
        };
        if generation.load(Ordering::SeqCst) != before {
            return;
        }
        let drifted: Vec<String> = verified
            .gates
            .iter()
            .filter(|g| {
                g.error
                    .as_ref()
                    .is_some_and(|e| e.kind == ErrorKind::WarmDrift)
            })
            .map(|g| {
                let why = g.error.as_ref().map_or("", |e| e.message.as_str());
                format!("{}: {why}", g.id)
            })
            .collect();
        let message = match drifted.is_empty() {
            true => format!(
                "verified: the warm answers equal a cold run's ({:.1} s)",
                started.elapsed().as_secs_f64()
            ),
            false => format!(
                "verification failed, the daemon starts its tool again: {}",
                drifted.join("; ")
            ),
        };
        let _ = report.send(message);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(findings: &[(&str, &str, Option<&str>)]) -> GateResult {
        let violations: Vec<serde_json::Value> = findings
            .iter()
            .map(|(file, fingerprint, state)| {
                let mut v = serde_json::json!({"file": file, "line": 1, "column": 1,
                    "message": "m", "severity": "error", "fingerprint": fingerprint});
                if let Some(state) = state {
                    v["baseline_state"] = serde_json::json!(state);
                }
                v
            })
            .collect();
        serde_json::from_value(
            serde_json::json!({"id": "g", "name": "G", "status": "failed",
            "duration_ms": 0, "files_checked": 1, "fail_on": "warning", "violations": violations}),
        )
        .unwrap()
    }

    #[test]
    fn fixed_and_new_leave_out_what_the_baseline_knows() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let c = "c".repeat(40);
        let k = "d".repeat(40);
        let before = findings(&[gate(&[("x.py", &a, Some("new")), ("x.py", &b, None)])]);
        // A known finding appears (its file was checked this time): not new.
        let after = findings(&[gate(&[
            ("x.py", &b, None),
            ("y.py", &c, None),
            ("z.py", &k, Some("unchanged")),
        ])]);
        let names = |found: Vec<Finding>| {
            found
                .iter()
                .map(|f| f.violation.file.clone().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(difference(&after, &before)), ["y.py"], "new");
        assert_eq!(names(difference(&before, &after)), ["x.py"], "fixed");
    }
}
