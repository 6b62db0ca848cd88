//! `qg watch`: a run on every save. The project's files are watched (file
//! system notifications, debounced; git-ignored, excluded and qg's own
//! files do not count), each burst of changes makes one pass — the same
//! run as `qg run`, scope, state and history included — and a screen
//! ([`Screen`]) shows it with what was fixed and what is new since the
//! pass before. The warm gates' daemons are started first (and those this
//! watch started are stopped when it ends); they compare their answers
//! with a cold run themselves (after each start, then one in
//! `verify_every`), and a pass says when one was found wrong. A change
//! made while a pass runs is never lost: it makes the next pass.

pub(crate) mod filter;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer_opt, DebounceEventResult, NoCache};

use crate::error::QgError;
use crate::exec::Silent;
use crate::outcome::GateResult;
use crate::report::RunReport;
use crate::run::{self, DaemonUse, RunOptions};
use crate::state::pending::Outcome;
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
    /// The daemons this watch starts compare one warm answer in this many
    /// with a cold run (0: only after each start).
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
    /// The last pass again, once a cold run confirmed its warm answers
    /// (its gates marked so); a screen of one report per pass says nothing.
    fn confirmed(&mut self, pass: &Pass<'_>) {
        let _ = pass;
    }
}

/// Watches until `stop` is set; then stops the daemons it started.
pub(crate) fn watch(
    options: &WatchOptions,
    screen: &mut dyn Screen,
    stop: &AtomicBool,
) -> Result<(), QgError> {
    // Started by an editor's task as often as by hand: nothing of the
    // repository's runs until it is trusted.
    crate::trust::require(&options.run.cwd, options.run.config.as_deref())?;
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
    let (workspace, config) = run::prepare(&options.run.cwd, options.run.config.as_deref())?;
    let gates: Vec<String> = control::warm_gates(&config, &options.run.gates)
        .unwrap_or_default()
        .iter()
        .map(|g| g.id.clone())
        .collect();
    if gates.is_empty() {
        return Ok(Vec::new());
    }
    // Daemons `qg daemon start` (or another watch) began are used, not
    // started again: say which is which.
    let running = control::running(&workspace.root, &gates);
    let to_start: Vec<&str> = gates
        .iter()
        .filter(|g| !running.contains(g))
        .map(String::as_str)
        .collect();
    if !running.is_empty() {
        screen.note(&format!("daemons already running: {}", running.join(", ")));
    }
    if !to_start.is_empty() {
        screen.note(&format!("starting daemons: {}", to_start.join(", ")));
    }
    let request = StartRequest {
        cwd: options.run.cwd.clone(),
        config: options.run.config.clone(),
        gates,
        owner: Some(std::process::id()),
        idle_timeout: options.idle_timeout,
        verify_every: Some(options.verify_every),
        at_most: crate::warm::control::DEFAULT_AT_MOST,
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
    let mut state = Passes::default();
    let mut changed: Vec<String> = Vec::new();
    loop {
        state.run(options, &changed, screen);
        changed = loop {
            match wait_for_changes(&heard, filter, root, stop, screen, &mut state) {
                Wake::Changed(changed) => break changed,
                // The cold truth, as the gate now answers (cold).
                Wake::Contradicted => break Vec::new(),
                Wake::Confirmed => state.show_again(screen),
                Wake::Stop => return Ok(()),
            }
        };
    }
}

/// Why a watch stops waiting.
enum Wake {
    /// Relevant files changed (sorted).
    Changed(Vec<String>),
    /// A cold run confirmed the last pass's warm answers.
    Confirmed,
    /// A cold run found a warm answer of the last pass wrong.
    Contradicted,
    /// `stop` is set.
    Stop,
}

/// Blocks until relevant files change, a confirmation of the last pass's
/// warm answers lands, or `stop` is set; shows file-watching errors
/// meanwhile.
fn wait_for_changes(
    heard: &mpsc::Receiver<DebounceEventResult>,
    filter: &Filter,
    root: &std::path::Path,
    stop: &AtomicBool,
    screen: &mut dyn Screen,
    passes: &mut Passes,
) -> Wake {
    let mut changed = BTreeSet::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Wake::Stop;
        }
        if let Some(wake) = passes.landed(root, screen) {
            return wake;
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
            Err(mpsc::RecvTimeoutError::Disconnected) => return Wake::Stop,
        }
        // Whatever else is already queued belongs to the same burst.
        if !changed.is_empty() {
            while let Ok(Ok(events)) = heard.try_recv() {
                for event in events {
                    changed.extend(filter.relevant_paths(root, &event));
                }
            }
            return Wake::Changed(changed.into_iter().collect());
        }
    }
}

/// The passes so far: the findings of the last one, for the next one's
/// fixed and new; the last one's report, and the confirmations of its warm
/// answers not yet landed.
#[derive(Default)]
struct Passes {
    number: usize,
    last: Option<BTreeMap<(String, Fingerprint), Violation>>,
    shown: Option<(RunReport, Vec<String>)>,
    awaited: Vec<(String, String)>,
}

impl Passes {
    /// Whether a confirmation of the last pass's answers landed: each that
    /// agreed marks its gate confirmed; one that differed makes the next
    /// pass (its gate answers cold now), the cold truth on the screen.
    fn landed(&mut self, root: &std::path::Path, screen: &mut dyn Screen) -> Option<Wake> {
        let mut confirmed = false;
        let mut index = 0;
        while index < self.awaited.len() {
            let (gate, job) = &self.awaited[index];
            match run::landed(root, gate, job) {
                None | Some(Outcome::Waiting) => index += 1,
                Some(Outcome::Agreed) => {
                    if let Some((report, _)) = self.shown.as_mut() {
                        for result in report.gates.iter_mut().filter(|g| &g.id == gate) {
                            result.unconfirmed = None;
                            result.verified = true;
                        }
                    }
                    self.awaited.remove(index);
                    confirmed = true;
                }
                Some(Outcome::Differed { said }) => {
                    screen.note(&format!(
                        "{gate}'s warm answer was wrong: {said}; checking again"
                    ));
                    self.awaited.clear();
                    return Some(Wake::Contradicted);
                }
                Some(Outcome::Inconclusive { .. }) => {
                    self.awaited.remove(index);
                }
            }
        }
        confirmed.then_some(Wake::Confirmed)
    }

    /// Shows the last pass again, its confirmed answers marked so.
    fn show_again(&self, screen: &mut dyn Screen) {
        let Some((report, changed)) = &self.shown else {
            return;
        };
        screen.confirmed(&Pass {
            number: self.number,
            report,
            changed,
            fixed: Vec::new(),
            new: Vec::new(),
        });
    }

    /// Runs one pass and shows it.
    fn run(&mut self, options: &WatchOptions, changed: &[String], screen: &mut dyn Screen) {
        self.number += 1;
        // A pull that changed a gate command takes the trust away.
        if let Err(e) = crate::trust::require(&options.run.cwd, options.run.config.as_deref()) {
            screen.note(&format!("pass {} not run: {e}", self.number));
            return;
        }
        let report = match run::run(&options.run, &Silent) {
            Ok(report) => report,
            Err(e) => {
                screen.note(&format!("pass {} could not run: {e}", self.number));
                return;
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
        self.awaited = run::awaited(&report.gates);
        self.shown = Some((report, changed.to_vec()));
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
