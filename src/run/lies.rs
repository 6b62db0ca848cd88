//! The property that a lying daemon cannot fool qg: over generated edit
//! sequences, a gate's daemon answers every run — telling the truth, or
//! dropping a finding, inventing one, or answering for the files as they
//! were before the edit — and its answers' confirmations land at once,
//! after the next edit, or never. Whatever it does:
//!
//! - **the state never ends green where a cold run is red**: every file a
//!   cold run fails is in the next `auto` run's scope;
//! - **nothing moves on an unconfirmed answer**: a run whose answer awaits
//!   its confirmation leaves the branch's state and the findings record as
//!   they were;
//! - **every lie is surfaced by the next run**: a lie whose confirmation
//!   landed opens the next run's report;
//! - **no baseline entry is dropped on a lie**: an entry whose finding is
//!   still there stays.
//!
//! The daemon is the test's own, serving the gate's socket in-process
//! (and never believing it was caught: it lies on); the cold tool is
//! `awk`, finding each line holding `ERR`. Runs and confirmations are qg's
//! own (`run::run`, `confirm_job`), on a git repository per sequence.
//! Half the sequences run with a result cache (a store of the world's
//! own): a warm gate the cache answers in part asks its daemon for the
//! misses alone, the hits folded into the answer — the same invariants
//! hold. Sequences: `PROPTEST_CASES` (default 1,000).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;

use super::{CacheUse, DaemonUse, RunOptions};
use crate::baseline::BaselineUse;
use crate::report::RunReport;
use crate::scope::{ScopeMode, ScopeRequest};
use crate::warm::slot::Slot;
use crate::warm::transport::Listener;
use crate::warm::wire::{self, Bytes, CommandOutput, Reply, Request};

const FILES: [&str; 4] = ["a.py", "b.py", "c.py", "d.py"];

const CONFIG: &str = r#"version: "1"
active_gates: [fake]
project_scope: {include_globs: ["**/*.py"]}
artifact_logging: {enabled: false}
gates:
  fake:
    execution: {command: ["awk", "-f", "cold.awk"], timeout_seconds: 30, batchable: false}
    parsing:
      strategy: json_violations
      json_lines: true
      violations_path: "/"
      field_map: {file: file, line: line, code: code, message: message}
    capabilities: {file_types: [".py"]}
    version_args: ["-W", "version"]
    daemon:
      protocol: command
      command: ["true"]
      ready_file: "{daemon_dir}/ready"
      check: ["true"]
      verify_every: 0
"#;

/// The cold tool: a finding on every line holding `ERR`.
const AWK: &str = r#"/ERR/ { printf "{\"file\": \"%s\", \"line\": %d, \"code\": \"E1\", \"message\": \"err\"}\n", FILENAME, FNR; found = 1 }
END { exit found ? 1 : 0 }
"#;

/// What the daemon does with its answer.
#[derive(Debug, Clone, Copy)]
enum Lie {
    Truth,
    /// Leaves out the nth finding (of those it would report).
    Drop(usize),
    /// Adds a finding to the nth file.
    Invent(usize),
    /// Answers for the files as they were at its last answer.
    Late,
}

/// When a run's confirmations land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landing {
    /// Before the next edit.
    Now,
    /// After the next edit (the tree changed: nothing to conclude).
    AfterNextEdit,
    /// Never (superseded, the daemon stopped).
    Never,
}

/// What a step does to the files before its run.
#[derive(Debug, Clone, Copy)]
enum Edit {
    /// A line with a finding in the nth file.
    Break(usize),
    /// The nth file's findings removed.
    Fix(usize),
    /// A line without one.
    Touch(usize),
    /// Everything committed.
    Commit,
}

#[derive(Debug, Clone, Copy)]
struct Step {
    edit: Edit,
    lie: Lie,
    landing: Landing,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (0..FILES.len()).prop_map(Edit::Break),
        3 => (0..FILES.len()).prop_map(Edit::Fix),
        2 => (0..FILES.len()).prop_map(Edit::Touch),
        1 => Just(Edit::Commit),
    ]
}

fn lie() -> impl Strategy<Value = Lie> {
    prop_oneof![
        3 => Just(Lie::Truth),
        2 => (0..4usize).prop_map(Lie::Drop),
        2 => (0..FILES.len()).prop_map(Lie::Invent),
        2 => Just(Lie::Late),
    ]
}

fn landing() -> impl Strategy<Value = Landing> {
    prop_oneof![
        4 => Just(Landing::Now),
        1 => Just(Landing::AfterNextEdit),
        1 => Just(Landing::Never),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    (edit(), lie(), landing()).prop_map(|(edit, lie, landing)| Step { edit, lie, landing })
}

/// Root-relative file → the lines holding a finding.
type Truth = BTreeMap<String, Vec<usize>>;

/// The findings in `contents` (file → text), as the cold tool finds them.
fn truth_of(contents: &BTreeMap<String, String>) -> Truth {
    contents
        .iter()
        .map(|(file, text)| {
            let lines = text
                .lines()
                .enumerate()
                .filter(|(_, line)| line.contains("ERR"))
                .map(|(n, _)| n + 1)
                .collect();
            (file.clone(), lines)
        })
        .collect()
}

fn contents(root: &Path) -> BTreeMap<String, String> {
    FILES
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(root.join(f)).unwrap_or_default();
            (f.to_string(), text)
        })
        .collect()
}

/// The daemon's answer as the cold tool prints one: JSON Lines.
fn printed(findings: &Truth) -> String {
    findings
        .iter()
        .flat_map(|(file, lines)| {
            lines.iter().map(move |line| {
                format!(
                    "{{\"file\": \"{file}\", \"line\": {line}, \"code\": \"E1\", \"message\": \"err\"}}\n"
                )
            })
        })
        .collect()
}

/// The test's daemon: it answers every check as told, records the
/// confirmations it is handed, and remembers the jobs that agreed (a run
/// asking again for one is told it is confirmed, as a real daemon does).
#[derive(Clone)]
struct Liar {
    root: PathBuf,
    lie: Arc<Mutex<Lie>>,
    /// The files as they were at the last answer (what a late answer sees).
    seen: Arc<Mutex<BTreeMap<String, String>>>,
    /// Confirmations handed over and not yet landed.
    jobs: Arc<Mutex<Vec<PathBuf>>>,
    agreed: Arc<Mutex<BTreeSet<String>>>,
    /// What the last answer said, when it differed from the truth.
    lied: Arc<Mutex<bool>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Liar {
    fn serve(root: &Path) -> Liar {
        let liar = Liar {
            root: root.to_path_buf(),
            lie: Arc::new(Mutex::new(Lie::Truth)),
            seen: Arc::new(Mutex::new(contents(root))),
            jobs: Arc::default(),
            agreed: Arc::default(),
            lied: Arc::default(),
        };
        let slot = Slot::new(root, "fake");
        std::fs::create_dir_all(&slot.dir).unwrap();
        let listener = Listener::bind(&slot.socket()).unwrap();
        let serving = liar.clone();
        std::thread::spawn(move || {
            while let Ok(stream) = listener.accept() {
                let Ok(request) = wire::read_request(&stream) else {
                    continue;
                };
                let reply = serving.answer(request);
                let _ = wire::write_reply(&stream, &reply);
            }
        });
        liar
    }

    fn answer(&self, request: Request) -> Reply {
        match request {
            Request::Check { .. } => self.check(),
            Request::Confirm { job, path, .. } => {
                if lock(&self.agreed).contains(&job) {
                    return Reply::Confirmed;
                }
                lock(&self.jobs).push(PathBuf::from(path));
                Reply::Confirming
            }
            Request::Compared(crate::warm::record::Comparison::Agreed {
                job: Some(job), ..
            }) => {
                lock(&self.agreed).insert(job);
                Reply::Ok
            }
            _ => Reply::Ok,
        }
    }

    /// An answer for the whole program, as told to lie.
    fn check(&self) -> Reply {
        let now = contents(&self.root);
        let truth = truth_of(&now);
        let mut said = match *lock(&self.lie) {
            Lie::Late => truth_of(&lock(&self.seen)),
            _ => truth.clone(),
        };
        match *lock(&self.lie) {
            Lie::Drop(n) => {
                let found: Vec<(String, usize)> = said
                    .iter()
                    .flat_map(|(f, lines)| lines.iter().map(move |l| (f.clone(), *l)))
                    .collect();
                if let Some((file, line)) = found.get(n % found.len().max(1)) {
                    if let Some(lines) = said.get_mut(file) {
                        lines.retain(|l| l != line);
                    }
                }
            }
            Lie::Invent(n) => said.entry(FILES[n].to_string()).or_default().push(99),
            Lie::Truth | Lie::Late => {}
        }
        *lock(&self.seen) = now;
        *lock(&self.lied) = said != truth;
        let stdout = printed(&said);
        Reply::Output(Box::new(CommandOutput {
            argv: vec!["true".into()],
            exit_code: Some(i32::from(!stdout.is_empty())),
            signal: None,
            timed_out: false,
            stdout: Bytes::from_vec(stdout.into_bytes()),
            stderr: Bytes::from_vec(Vec::new()),
            ms: 1,
            notice: None,
        }))
    }

    /// Lands every confirmation handed over (qg's own `qg daemon confirm`,
    /// in-process).
    fn land(&self) {
        let jobs: Vec<PathBuf> = std::mem::take(&mut *lock(&self.jobs));
        for job in jobs {
            let _ = super::confirm_job(&self.root, None, &job, &Default::default());
        }
    }
}

fn options(root: &Path, mode: ScopeMode, daemons: DaemonUse, cache: CacheUse) -> RunOptions {
    RunOptions {
        cwd: root.to_path_buf(),
        config: None,
        scope: ScopeRequest {
            mode: Some(mode),
            ..ScopeRequest::default()
        },
        gates: Vec::new(),
        jobs: 2,
        no_state: false,
        baseline: BaselineUse::Ratchet,
        shard: None,
        cancel: Default::default(),
        daemons,
        report_covered: true,
        require_trust: false,
        cache,
        confirm: false,
    }
}

fn commit_all(root: &Path) {
    let repo = git2::Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("qg", "qg@example.com").unwrap();
    let parents: Vec<git2::Commit<'_>> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        "step",
        &tree,
        &parents,
    )
    .unwrap();
}

fn apply(root: &Path, edit: Edit, serial: usize) {
    let path = |n: usize| root.join(FILES[n]);
    let text = |n: usize| std::fs::read_to_string(path(n)).unwrap_or_default();
    match edit {
        Edit::Break(n) => std::fs::write(path(n), format!("{}ERR {serial}\n", text(n))).unwrap(),
        Edit::Fix(n) => {
            let kept: String = text(n)
                .lines()
                .filter(|l| !l.contains("ERR"))
                .map(|l| format!("{l}\n"))
                .collect();
            std::fs::write(path(n), kept).unwrap();
        }
        Edit::Touch(n) => std::fs::write(path(n), format!("{}x = {serial}\n", text(n))).unwrap(),
        Edit::Commit => commit_all(root),
    }
}

/// The branch's state without what a run writes whatever it found (when,
/// what it holds for its confirmations, fields still empty), and the
/// findings record: what must not move on an unconfirmed answer.
fn moved_by_answers(root: &Path) -> (serde_json::Value, serde_json::Value) {
    let read = |file: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        serde_json::from_str(&text).unwrap_or_default()
    };
    let state = read(crate::state::STATE_FILE)["quality_gates"]["branches"].clone();
    let findings = read(crate::state::findings::FINDINGS_FILE)["branches"].clone();
    let normal = |value: serde_json::Value, left_out: &[&str]| match without_empty(value, left_out)
    {
        serde_json::Value::Object(map) if map.is_empty() => serde_json::Value::Null,
        other => other,
    };
    (
        normal(state, &["pending", "updated_at"]),
        normal(findings, &[]),
    )
}

/// `value` without the keys named, and without what is null or empty.
fn without_empty(value: serde_json::Value, left_out: &[&str]) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .into_iter()
                .filter(|(key, _)| !left_out.contains(&key.as_str()))
                .map(|(key, value)| (key, without_empty(value, left_out)))
                .filter(|(_, value)| match value {
                    Value::Null => false,
                    Value::Object(map) => !map.is_empty(),
                    Value::Array(items) => !items.is_empty(),
                    _ => true,
                })
                .collect();
            Value::Object(kept)
        }
        other => other,
    }
}

/// The baseline's entries, as `(file, line)` (the gate's one finding kind).
fn baseline_entries(root: &Path) -> BTreeSet<(String, usize)> {
    crate::baseline::file::read(root)
        .ok()
        .flatten()
        .map(|file| {
            file.entries
                .iter()
                .map(|e| (e.path.clone(), e.line.unwrap_or(0) as usize))
                .collect()
        })
        .unwrap_or_default()
}

/// One repository and its daemon, shared by the sequences (each starts
/// from a fresh state on a new commit): setting up a repository per
/// sequence was most of the test's time.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    liar: Liar,
    /// The result cache of the sequences that use one.
    store: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".st3")).unwrap();
        std::fs::write(root.join(".st3/quality.yaml"), CONFIG).unwrap();
        std::fs::write(root.join("cold.awk"), AWK).unwrap();
        git2::Repository::init(&root).unwrap();
        commit_all(&root);
        let liar = Liar::serve(&root);
        World {
            _dir: dir,
            root,
            liar,
            store: tempfile::tempdir().unwrap(),
        }
    }

    /// Files holding `start` findings each, committed, qg's state gone —
    /// and the baseline written from them when `baseline`, the result
    /// cache (if `cache` is one) holding their cold findings.
    fn reset(&self, start: &[usize], baseline: bool, cache: &CacheUse) {
        let root = &self.root;
        for file in [
            crate::state::STATE_FILE,
            crate::state::findings::FINDINGS_FILE,
            crate::baseline::file::BASELINE_FILE,
        ] {
            let _ = std::fs::remove_file(root.join(file));
        }
        for (file, errors) in FILES.iter().zip(start) {
            let text: String = (0..*errors).map(|i| format!("ERR {i}\n")).collect();
            std::fs::write(root.join(file), format!("x = 0\n{text}")).unwrap();
        }
        if baseline {
            let cold = options(root, ScopeMode::Project, DaemonUse::Ignore, CacheUse::Off);
            super::write_baseline(&cold, &crate::exec::Silent).unwrap();
        }
        if !matches!(cache, CacheUse::Off) {
            let cold = RunOptions {
                no_state: true,
                baseline: BaselineUse::Locked,
                ..options(root, ScopeMode::Project, DaemonUse::Ignore, cache.clone())
            };
            super::run(&cold, &crate::exec::Silent).unwrap();
        }
        commit_all(root);
        lock(&self.liar.jobs).clear();
        lock(&self.liar.agreed).clear();
        *lock(&self.liar.seen) = contents(root);
    }
}

thread_local! {
    static WORLD: World = World::new();
}

/// Checks the invariants after each step; a failure says which and why.
fn sequence(world: &World, steps: &[Step], cache: &CacheUse) -> Result<(), TestCaseError> {
    let root = &world.root;
    let liar = &world.liar;
    // The entries not yet dropped where their finding was gone (a cold
    // answer's ratchet, rightly: a finding back on the line later is new).
    let mut known = baseline_entries(root);
    let mut told_of_a_lie = false;
    let mut late: Vec<PathBuf> = Vec::new();
    for (serial, step) in steps.iter().enumerate() {
        apply(root, step.edit, serial);
        // Confirmations that land after the edit find the tree changed.
        lock(&liar.jobs).append(&mut late);
        liar.land();
        *lock(&liar.lie) = step.lie;
        let before = moved_by_answers(root);
        let failing = failing_files(root);
        let report = super::run(
            &options(root, ScopeMode::Auto, DaemonUse::Use, cache.clone()),
            &crate::exec::Silent,
        )
        .map_err(|e| TestCaseError::fail(format!("step {serial}: {e}")))?;
        // The state never lets a run skip a file a cold run fails.
        let checked: BTreeSet<&str> = report
            .covered
            .get("fake")
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        for file in &failing {
            prop_assert!(
                checked.contains(file.as_str()),
                "step {serial}: {file} fails a cold run, but the auto run did not check it (it checked {checked:?})"
            );
        }
        if told_of_a_lie {
            prop_assert!(
                report.contradicted.iter().any(|(gate, _)| gate == "fake"),
                "step {serial}: a lie's confirmation landed, and the next run did not open with it: {:?}",
                report.contradicted
            );
        }
        let unconfirmed = report.gates.iter().any(|g| g.unconfirmed.is_some());
        if unconfirmed {
            prop_assert_eq!(
                &moved_by_answers(root),
                &before,
                "step {}: the state or the findings record moved on an unconfirmed answer",
                serial
            );
        }
        let shown_wrong = shown_a_lie(root, &report);
        // What qg adds to an answer (the result cache's hits) is the truth.
        prop_assert!(
            *lock(&liar.lied) || !shown_wrong,
            "step {serial}: the daemon told the truth, and the run showed something else"
        );
        let lied = *lock(&liar.lied) && shown_wrong;
        match step.landing {
            Landing::Now => liar.land(),
            Landing::AfterNextEdit => late.append(&mut lock(&liar.jobs)),
            Landing::Never => lock(&liar.jobs).clear(),
        }
        told_of_a_lie = lied && step.landing == Landing::Now && unconfirmed;
        let kept = baseline_entries(root);
        let truth = truth_of(&contents(root));
        for (file, line) in &known {
            let still_there = truth.get(file).is_some_and(|lines| lines.contains(line));
            prop_assert!(
                !still_there || kept.contains(&(file.clone(), *line)),
                "step {serial}: the baseline entry {file}:{line} was dropped while its finding is still there"
            );
        }
        known.retain(|entry| kept.contains(entry));
    }
    liar.land();
    never_green_where_cold_is_red(root)
}

/// Files a cold run surely fails now: more findings than the baseline
/// holds entries for them (it may fail others too: a finding that moved
/// from its entry's line; [`cold_failing`] is the exact answer).
fn failing_files(root: &Path) -> Vec<String> {
    let known = baseline_entries(root);
    truth_of(&contents(root))
        .into_iter()
        .filter(|(file, lines)| lines.len() > known.iter().filter(|(f, _)| f == file).count())
        .map(|(file, _)| file)
        .collect()
}

/// The files a cold run of the whole project fails, as qg measures it
/// against the baseline (recording nothing).
fn cold_failing(root: &Path) -> Result<Vec<String>, TestCaseError> {
    let cold = RunOptions {
        no_state: true,
        baseline: BaselineUse::Locked,
        ..options(root, ScopeMode::Project, DaemonUse::Ignore, CacheUse::Off)
    };
    let report = super::run(&cold, &crate::exec::Silent)
        .map_err(|e| TestCaseError::fail(format!("the cold run: {e}")))?;
    let failing: BTreeSet<String> = report
        .gates
        .iter()
        .flat_map(|g| {
            g.violations
                .iter()
                .filter(|v| v.fails_gate(g.fail_on))
                .filter_map(|v| v.file.clone())
        })
        .collect();
    Ok(failing.into_iter().collect())
}

/// Whether `report` showed findings other than the truth's in the files
/// its gate covered.
fn shown_a_lie(root: &Path, report: &RunReport) -> bool {
    let Some(gate) = report.gates.iter().find(|g| g.id == "fake" && g.warm) else {
        return false;
    };
    let covered: BTreeSet<&str> = report
        .covered
        .get("fake")
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let truth = truth_of(&contents(root));
    let shown: BTreeSet<(String, usize)> = gate
        .violations
        .iter()
        .filter_map(|v| Some((v.file.clone()?, v.line? as usize)))
        .collect();
    let true_there: BTreeSet<(String, usize)> = truth
        .iter()
        .filter(|(f, _)| covered.contains(f.as_str()))
        .flat_map(|(f, lines)| lines.iter().map(move |l| (f.clone(), *l)))
        .collect();
    shown != true_there
}

/// Every file a cold run fails is in the next `auto` run's scope, once
/// every confirmation has landed: the state ends vouching for nothing red.
fn never_green_where_cold_is_red(root: &Path) -> Result<(), TestCaseError> {
    let request = ScopeRequest {
        mode: Some(ScopeMode::Auto),
        ..ScopeRequest::default()
    };
    let resolved = super::scope_of(root, None, &request, &Default::default())
        .map_err(|e| TestCaseError::fail(format!("the last scope: {e}")))?;
    let scope: BTreeSet<&str> = resolved.scope.paths().collect();
    for file in cold_failing(root)? {
        prop_assert!(
            scope.contains(file.as_str()),
            "at the end: {file} fails a cold run but the next auto run would not check it (scope {scope:?})"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(super::sequences::config())]

    #[test]
    fn a_lying_daemon_never_fools_the_state(
        start in proptest::collection::vec(0..3usize, FILES.len()),
        baseline in proptest::bool::weighted(0.3),
        steps in proptest::collection::vec(step(), 1..6),
        cached in proptest::bool::ANY,
    ) {
        WORLD.with(|world| {
            let cache = match cached {
                true => CacheUse::At(world.store.path().to_path_buf()),
                false => CacheUse::Off,
            };
            world.reset(&start, baseline, &cache);
            sequence(world, &steps, &cache)
        })?;
    }
}
