//! Warm type checkers (`qg daemon`, `qg run` answered by a live daemon,
//! `qg watch`): the lifecycle with the real mypy and pyright on fixtures,
//! scripted edits after each of which the warm verdict equals the cold one,
//! the passes of `qg watch --format json`, and fault injection with fake
//! daemons (a language server in Python, a command daemon in sh). Every
//! test ends by asserting that nothing it started still runs.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{repo_dir, tools_venv, Project, Run};
use serde_json::{json, Value};

// ------------------------------------------------------------ processes

/// Live processes (zombies aside) whose working directory or command line
/// lies under `dir`: what a test started and must have stopped.
fn processes_under(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let needle = dir.to_string_lossy().into_owned();
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        if state == Some("Z") || stat.is_empty() {
            continue;
        }
        let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let cwd_text = cwd.to_string_lossy();
        if cwd.starts_with(&dir) || cwd_text.starts_with(&needle) || cmdline.contains(&needle) {
            found.push(format!("{pid}: {}", cmdline.trim()));
        }
    }
    found
}

/// Waits (up to 10 s) until nothing runs under `dir`.
fn assert_nothing_left(dir: &Path) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_under(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < until,
            "still running under {}:\n{}",
            dir.display(),
            left.join("\n")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// On drop (a failed test included): stops the project's daemons and kills
/// whatever still runs under its directory.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = qg_command(&self.0, &["daemon", "stop"]).output();
        for line in processes_under(&self.0) {
            let pid = line.split(':').next().unwrap_or("");
            let _ = Command::new("kill").args(["-9", pid]).output();
        }
    }
}

/// `qg args…` in `dir` with the real tools' virtualenv.
fn qg_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qg"));
    cmd.args(args)
        .current_dir(dir)
        .env("VIRTUAL_ENV", tools_venv())
        .env("CI", "true")
        .env_remove("NO_COLOR");
    cmd
}

/// Bounded by [`PATIENCE`], as every `qg` these tests run.
fn qg(dir: &Path, args: &[&str]) -> Run {
    Run::within(&mut qg_command(dir, args), PATIENCE)
}

/// Waits up to `patience` for `ready`, checking every 100 ms.
fn eventually(patience: Duration, what: &str, ready: impl FnMut() -> bool) {
    eventually_or(patience, what, ready, String::new);
}

/// [`eventually`], with `explain()` in the message when it times out.
fn eventually_or(
    patience: Duration,
    what: &str,
    mut ready: impl FnMut() -> bool,
    explain: impl Fn() -> String,
) {
    let until = Instant::now() + patience;
    while !ready() {
        assert!(
            Instant::now() < until,
            "timed out waiting for {what}\n{}",
            explain()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `qg daemon status --format json`, by gate.
fn status(dir: &Path) -> BTreeMap<String, Value> {
    let run = qg(dir, &["daemon", "status", "--format", "json"]);
    run.assert_code(0);
    run.json()["daemons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["gate"].as_str().unwrap().to_string(), d.clone()))
        .collect()
}

/// How long a test lets one `qg` command take — `qg daemon start` waiting
/// for a daemon's first pass and its comparison with a cold run included:
/// seconds on these projects, a minute on a loaded machine. Without a bound
/// of its own, a daemon that never becomes ready (a mutant of its trust)
/// makes `start` wait out twice the gate's timeout, and the test hangs
/// instead of failing.
const PATIENCE: Duration = Duration::from_secs(90);

/// How long a test waits for a daemon's comparison with a cold run (a
/// restart's included): as long as for one command. The comparison runs at
/// the lowest CPU priority, so on two cores busy with other tests' tools it
/// gets a sliver of CPU: a real mypy restart's took over 30 s in CI.
const COMPARISON_PATIENCE: Duration = PATIENCE;

fn start(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["daemon", "start", "--format", "json"];
    args.extend(extra);
    let run = qg(dir, &args);
    run.assert_code(0);
    run.json()
}

fn daemon_pid(dir: &Path, gate: &str) -> u32 {
    status(dir)[gate]["status"]["record"]["pid"]
        .as_u64()
        .unwrap() as u32
}

// ------------------------------------------------------------ comparing runs

/// What must be equal between a warm and a cold run: each gate's status
/// and findings (everything but timing and how it was obtained).
fn verdicts(run: &Run) -> Vec<(String, String, Vec<Value>)> {
    let json = run.json();
    json["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let violations = g["violations"].as_array().cloned().unwrap_or_default();
            (
                g["id"].as_str().unwrap().to_string(),
                g["status"].as_str().unwrap().to_string(),
                violations,
            )
        })
        .collect()
}

/// A run whose every gate gave a verdict — or whose tool stopped before
/// checking anything (mypy at a syntax error), which both ways must say.
fn judged(run: &Run) -> bool {
    match run.code {
        0 | 1 => true,
        2 => run.json()["gates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["status"] == "error")
            .all(|g| g["error"]["kind"] == "stopped"),
        _ => false,
    }
}

fn warm_gates(run: &Run) -> Vec<String> {
    common::warm_gate_ids(&run.json())
}

/// A warm `qg run` (must be answered warm by mypy and pyright) and a cold
/// one on the same tree; their verdicts must be equal. mypy's cache is
/// cleared before the cold run: it can keep a stale answer for an edit
/// that leaves a file's size and second unchanged, which a scripted edit
/// easily does.
fn assert_warm_equals_cold(dir: &Path, step: &str) -> Run {
    assert_warm_equals_cold_but(dir, step, &[])
}

/// [`assert_warm_equals_cold`], with `restarting` gates expected to answer
/// cold (a module added or removed: their daemon starts its tool again,
/// and the run does not wait for it); they are ready again afterwards.
fn assert_warm_equals_cold_but(dir: &Path, step: &str, restarting: &[&str]) -> Run {
    let warm = qg(dir, &["run", "--format", "json", "--no-state"]);
    assert!(
        judged(&warm),
        "{step}: warm run:\n{}{}",
        warm.stdout,
        warm.stderr
    );
    let _ = std::fs::remove_dir_all(dir.join(".mypy_cache"));
    let cold = qg(
        dir,
        &["run", "--format", "json", "--no-state", "--no-daemon"],
    );
    assert!(
        judged(&cold),
        "{step}: cold run:\n{}{}",
        cold.stdout,
        cold.stderr
    );
    let (w, c) = (verdicts(&warm), verdicts(&cold));
    assert_eq!(
        w, c,
        "{step}: the warm verdict differs from the cold one\nwarm: {}\ncold: {}",
        warm.stdout, cold.stdout
    );
    let checkers: Vec<String> = ["mypy", "pyright"]
        .into_iter()
        .filter(|id| !restarting.contains(id))
        // A tool that stopped before checking (mypy at a syntax error) is
        // no warm answer: the gate runs cold, which stops the same way.
        .filter(|id| {
            w.iter()
                .any(|(g, status, _)| g == id && status != "skipped" && status != "error")
        })
        .map(String::from)
        .collect();
    let logs = || -> String {
        ["mypy", "pyright"]
            .iter()
            .map(|g| {
                std::fs::read_to_string(dir.join(format!(".st3/daemons/{g}/daemon.log")))
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        warm_gates(&warm),
        checkers,
        "{step}: type checkers answered warm\n{}\n{}",
        warm.stdout,
        logs()
    );
    for gate in restarting {
        eventually(COMPARISON_PATIENCE, &format!("{gate} ready again"), || {
            status(dir)[*gate]["state"] == "ready"
        });
    }
    assert!(
        warm_gates(&cold).is_empty(),
        "{step}: --no-daemon answers cold"
    );
    warm
}

fn findings_of(run: &Run, gate: &str) -> Vec<(String, u64, String)> {
    run.gate(gate)["violations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(common::shapes::key_of)
        .collect()
}

// ------------------------------------------------------------ lifecycle

#[test]
fn daemons_start_answer_runs_warm_and_stop_leaving_nothing() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let started = start(dir, &[]);
    assert_eq!(started["ok"], true, "{started}");
    let daemons = started["daemons"].as_array().unwrap();
    let gates: Vec<&str> = daemons
        .iter()
        .map(|d| d["gate"].as_str().unwrap())
        .collect();
    assert_eq!(gates, ["mypy", "pyright"]);
    for d in daemons {
        assert_eq!(d["state"], "ready", "{d}");
        assert!(d["first_pass_ms"].as_u64().unwrap() > 0, "{d}");
        assert_eq!(d["already_running"], false);
    }
    let live = status(dir);
    for gate in ["mypy", "pyright"] {
        let d = &live[gate];
        assert_eq!(d["state"], "ready", "{d}");
        assert_eq!(d["current"], true, "{d}");
        assert!(d["status"]["rss_kib"].as_u64().unwrap() > 10_000, "{d}");
    }
    // Human status: the summary first, then a line per gate.
    let human = qg(dir, &["daemon", "status"]);
    assert!(
        human.stdout.starts_with("2/2 warm gates answer warm\n"),
        "{}",
        human.stdout
    );
    // A project run answered warm equals the cold one.
    let warm = qg(
        dir,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    warm.assert_code(0);
    assert_eq!(warm_gates(&warm), ["mypy", "pyright"]);
    common::assert_fits_schema("run-report.json", &warm.json());
    let cold = qg(
        dir,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
            "--no-daemon",
        ],
    );
    assert_eq!(verdicts(&warm), verdicts(&cold), "cold: {}", cold.stdout);
    let human = qg(dir, &["run", "--scope", "project", "--no-state"]);
    assert!(
        human.stdout.contains(", warm\n"),
        "human output says which were warm:\n{}",
        human.stdout
    );
    // `qg fix` checks with the same daemons.
    let fixed = qg(dir, &["fix", "--format", "json"]);
    fixed.assert_code(0);
    let report = fixed.json()["report"].clone();
    let warm_in_fix = common::warm_gate_ids(&report);
    assert_eq!(warm_in_fix, ["mypy", "pyright"], "{}", report["gates"]);
    // A second start starts nothing.
    let pids = (daemon_pid(dir, "mypy"), daemon_pid(dir, "pyright"));
    let again = start(dir, &[]);
    assert!(
        again["daemons"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["already_running"] == true),
        "{again}"
    );
    assert_eq!((daemon_pid(dir, "mypy"), daemon_pid(dir, "pyright")), pids);
    // A watch uses them, says so (it starts none), and leaves them running.
    let watch = Watch::start(dir, &[]);
    let _ = watch.pass();
    Command::new("kill")
        .args(["-INT", &watch.child.id().to_string()])
        .status()
        .unwrap();
    let ended = watch.child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&ended.stderr);
    assert!(
        said.contains("qg watch: daemons already running: mypy, pyright\n")
            && !said.contains("starting daemons"),
        "{said}"
    );
    assert_eq!((daemon_pid(dir, "mypy"), daemon_pid(dir, "pyright")), pids);
    let stopped = qg(dir, &["daemon", "stop"]);
    stopped.assert_code(0);
    assert_eq!(stopped.stdout, "⏹️ stopped 2 daemons: mypy, pyright\n");
    assert!(status(dir).values().all(|d| d["state"] == "stopped"));
    assert_nothing_left(dir);
    // With no daemon, the run is cold, and says nothing about it.
    let cold = qg(dir, &["run", "--format", "json", "--no-state"]);
    assert!(warm_gates(&cold).is_empty());
    assert!(!cold.stdout.contains("answered cold"), "{}", cold.stdout);
}

#[test]
fn two_concurrent_starts_make_one_daemon_per_gate() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let starts: Vec<Child> = (0..2)
        .map(|_| {
            qg_command(
                dir,
                &["daemon", "start", "--gate", "mypy", "--format", "json"],
            )
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let outputs: Vec<Value> = starts
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stdout)
            );
            serde_json::from_slice(&output.stdout).unwrap()
        })
        .collect();
    let pids: Vec<u64> = outputs
        .iter()
        .map(|o| o["daemons"][0]["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(
        pids[0], pids[1],
        "both starts report the same daemon: {outputs:?}"
    );
    let serving = processes_under(dir)
        .into_iter()
        .filter(|p| p.contains("daemon serve"))
        .count();
    assert_eq!(serving, 1, "{:?}", processes_under(dir));
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

#[test]
fn an_idle_daemon_stops_itself() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    start(dir, &["--gate", "mypy", "--idle-timeout", "2s"]);
    assert_eq!(status(dir)["mypy"]["status"]["record"]["idle_timeout_s"], 2);
    eventually(Duration::from_secs(15), "the idle timeout", || {
        status(dir)["mypy"]["state"] == "stopped"
    });
    assert_nothing_left(dir);
    let log = std::fs::read_to_string(dir.join(".st3/daemons/mypy/daemon.log")).unwrap();
    assert!(log.contains("stopping: idle for"), "{log}");
}

/// A virtualenv of wrapper scripts around the real tools: rewriting one is
/// a new tool for qg (another binary), without touching the shared one.
fn wrapper_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    for tool in ["ruff", "mypy", "dmypy", "pyright", "pyright-langserver"] {
        write_wrapper(&venv, tool, "");
    }
    venv
}

fn write_wrapper(venv: &Path, tool: &str, comment: &str) {
    use std::os::unix::fs::PermissionsExt;
    let real = tools_venv().join("bin").join(tool);
    let path = venv.join("bin").join(tool);
    std::fs::write(
        &path,
        format!("#!/bin/sh\n# {comment}\nexec {} \"$@\"\n", real.display()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_new_config_or_a_new_tool_restarts_the_daemon() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let outside = tempfile::tempdir().unwrap();
    let venv = wrapper_venv(outside.path());
    let with_venv = |args: &[&str]| {
        let mut cmd = qg_command(dir, args);
        cmd.env("VIRTUAL_ENV", &venv);
        Run::within(&mut cmd, PATIENCE)
    };
    with_venv(&["daemon", "start", "--gate", "mypy"]).assert_code(0);
    let group = |s: &BTreeMap<String, Value>| s["mypy"]["status"]["record"]["engine_group"].clone();
    let statuses = || {
        let run = with_venv(&["daemon", "status", "--format", "json"]);
        let list = run.json()["daemons"].as_array().unwrap().clone();
        list.into_iter()
            .map(|d| (d["gate"].as_str().unwrap().to_string(), d))
            .collect::<BTreeMap<_, _>>()
    };
    let daemon_log =
        || std::fs::read_to_string(dir.join(".st3/daemons/mypy/daemon.log")).unwrap_or_default();
    let first = group(&statuses());
    assert!(first.is_u64());
    // A run under this virtualenv is answered warm.
    let run = with_venv(&["run", "--gate", "mypy", "--format", "json", "--no-state"]);
    assert_eq!(warm_gates(&run), ["mypy"], "{}", run.stdout);
    // A new config: the daemon starts its tool again under it.
    let config = format!("{}\n# edited\n", qg::config::EMBEDDED_DEFAULT);
    project.write(".st3/quality.yaml", &config);
    eventually_or(
        COMPARISON_PATIENCE,
        "a restart under the new config",
        || {
            let now = statuses();
            group(&now) != first
                && now["mypy"]["state"] == "ready"
                && now["mypy"]["current"] == true
        },
        daemon_log,
    );
    let second = group(&statuses());
    let log = daemon_log();
    assert!(log.contains("changed: qg config"), "{log}");
    // A new mypy binary: again.
    write_wrapper(&venv, "mypy", "reinstalled");
    eventually_or(
        COMPARISON_PATIENCE,
        "a restart for the new tool",
        || {
            let now = statuses();
            group(&now) != second
                && now["mypy"]["state"] == "ready"
                && now["mypy"]["current"] == true
        },
        daemon_log,
    );
    let log = std::fs::read_to_string(dir.join(".st3/daemons/mypy/daemon.log")).unwrap();
    assert!(log.contains("changed: tool version"), "{log}");
    let run = with_venv(&["run", "--gate", "mypy", "--format", "json", "--no-state"]);
    assert_eq!(warm_gates(&run), ["mypy"], "{}", run.stdout);
    with_venv(&["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
    assert_nothing_left(outside.path());
}

#[test]
fn a_daemon_killed_with_sigkill_takes_its_tool_with_it() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    start(dir, &["--gate", "pyright"]);
    let before = processes_under(dir);
    assert!(
        before.iter().any(|p| p.contains("langserver")),
        "{before:?}"
    );
    let pid = daemon_pid(dir, "pyright");
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert_nothing_left(dir);
    assert_eq!(status(dir)["pyright"]["state"], "stopped");
    // Its socket is left behind: a run answers cold, quietly.
    let run = qg(
        dir,
        &[
            "run",
            "--gate",
            "pyright",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    run.assert_code(0);
    assert!(warm_gates(&run).is_empty());
    assert!(
        run.gate("pyright").get("warnings").is_none(),
        "{}",
        run.stdout
    );
    // And the next start makes a new one.
    start(dir, &["--gate", "pyright"]);
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

#[test]
fn daemons_stop_when_the_repository_disappears() {
    let project = Project::fixture("warm");
    let dir = project.path().to_path_buf();
    let _cleanup = Cleanup(dir.clone());
    start(&dir, &["--gate", "mypy"]);
    assert!(!processes_under(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_nothing_left(&dir);
}

// ------------------------------------------------------------ scripted edits

#[test]
fn after_every_scripted_edit_the_warm_verdict_equals_the_cold_one() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // A green baseline: auto scopes are what changed since, with importers.
    let first = qg(dir, &["run", "--format", "json"]);
    first.assert_code(0);
    start(dir, &[]);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
    let shapes = read("app/shapes.py");
    let report = read("app/report.py");
    let util = read("app/util.py");
    let mut steps = 0;
    // mypy's daemon does not follow a module added or removed: it starts
    // again, and the run meanwhile is answered cold (never slower). It
    // sees the modules only when a run checks something (a step back to
    // the baseline has nothing to check), so the set it saw last is kept.
    let modules = || -> BTreeSet<String> {
        ["app"]
            .iter()
            .flat_map(|d| std::fs::read_dir(dir.join(d)).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".py") || n.ends_with(".pyi"))
            .collect()
    };
    let mut seen = modules();
    let mut step = |name: &str, edit: &dyn Fn()| -> Run {
        edit();
        steps += 1;
        let now = modules();
        let checks = !qg(dir, &["files", "--format", "json"]).json()["files"]
            .as_array()
            .unwrap()
            .is_empty();
        let restarting: &[&str] = match checks && now != seen {
            true => &["mypy"],
            false => &[],
        };
        if checks {
            seen = now;
        }
        assert_warm_equals_cold_but(dir, name, restarting)
    };
    let run = step("1 body-only change", &|| {
        project.write(
            "app/shapes.py",
            &shapes.replace("shape.side * shape.side", "shape.side**2"),
        );
    });
    assert_eq!(run.json()["overall_pass"], true, "{}", run.stdout);
    let run = step("2 a signature change that breaks importers", &|| {
        project.write(
            "app/shapes.py",
            &shapes.replace(
                "def area(shape: Square) -> float:",
                "def area(shape: Square) -> str:",
            ),
        );
    });
    let broken: Vec<String> = findings_of(&run, "mypy").into_iter().map(|f| f.0).collect();
    assert!(
        broken.contains(&"app/shapes.py".to_string())
            && broken.contains(&"app/geometry.py".to_string()),
        "{broken:?}"
    );
    let run = step("3 the fix", &|| {
        project.write("app/shapes.py", &shapes);
    });
    assert_eq!(run.json()["overall_pass"], true, "{}", run.stdout);
    let run = step("4 a new file with a type error", &|| {
        project.write("app/extra.py", "\"\"\"Extra.\"\"\"\n\nfrom app.util import double\n\n\ndef half(x: int) -> int:\n    \"\"\"Half of x.\"\"\"\n    return double(x) / 4\n");
    });
    assert_eq!(findings_of(&run, "mypy").len(), 1, "{}", run.stdout);
    step("5 the new file fixed", &|| {
        project.write("app/extra.py", "\"\"\"Extra.\"\"\"\n\nfrom app.util import double\n\n\ndef half(x: int) -> int:\n    \"\"\"Half of x.\"\"\"\n    return double(x) // 4\n");
    });
    step("6 the new file deleted", &|| {
        std::fs::remove_file(dir.join("app/extra.py")).unwrap()
    });
    let run = step("7 a module deleted that others import", &|| {
        std::fs::remove_file(dir.join("app/geometry.py")).unwrap()
    });
    assert!(
        findings_of(&run, "pyright")
            .iter()
            .any(|f| f.0 == "app/report.py"),
        "{}",
        run.stdout
    );
    step("8 the module back", &|| {
        project.write("app/geometry.py", &read_fixture("app/geometry.py"));
    });
    let run = step("9 a rename", &|| {
        std::fs::rename(dir.join("app/util.py"), dir.join("app/helpers.py")).unwrap()
    });
    assert_eq!(run.json()["overall_pass"], true, "{}", run.stdout);
    let run = step(
        "10 a stub beside the renamed module, narrower than it",
        &|| {
            project.write("app/helpers.pyi", "def double(x: int) -> str: ...\n");
            project.write("app/use_helpers.py", "\"\"\"Uses the stub.\"\"\"\n\nfrom app.helpers import double\n\nVALUE: int = double(2)\n");
        },
    );
    assert!(
        findings_of(&run, "mypy")
            .iter()
            .any(|f| f.0 == "app/use_helpers.py"),
        "{}",
        run.stdout
    );
    step("11 the stub removed", &|| {
        std::fs::remove_file(dir.join("app/helpers.pyi")).unwrap()
    });
    step("12 the rename undone", &|| {
        std::fs::remove_file(dir.join("app/use_helpers.py")).unwrap();
        std::fs::rename(dir.join("app/helpers.py"), dir.join("app/util.py")).unwrap();
    });
    let run = step("13 a wrong call in an importer", &|| {
        project.write(
            "app/report.py",
            &report.replace("total(shapes):.1f", "total(len(shapes)):.1f"),
        );
    });
    assert!(
        findings_of(&run, "pyright")
            .iter()
            .any(|f| f.0 == "app/report.py"),
        "{}",
        run.stdout
    );
    step("14 reverted with git", &|| {
        common::git(dir, &["checkout", "--", "app/report.py"]);
    });
    let run = step("15 a syntax error", &|| {
        project.write("app/util.py", &util.replace("return 2 * x", "return 2 *"));
    });
    assert_eq!(run.json()["overall_pass"], false);
    step("16 the syntax error fixed", &|| {
        project.write("app/util.py", &util);
    });
    step("17 two files at once, same size as before", &|| {
        project.write(
            "app/shapes.py",
            &shapes.replace("side: float", "side: int  "),
        );
        project.write("app/util.py", &util.replace("2 * x", "x * 2"));
    });
    step("18 both reverted", &|| {
        project.write("app/shapes.py", &shapes);
        project.write("app/util.py", &util);
    });
    step("19 a package re-export removed", &|| {
        project.write("app/__init__.py", "\"\"\"A small package.\"\"\"\n");
        project.write(
            "app/top.py",
            "\"\"\"Uses the re-export.\"\"\"\n\nfrom app import total\n\nTOTAL = total([])\n",
        );
    });
    step("20 the re-export back", &|| {
        project.write("app/__init__.py", &read_fixture("app/__init__.py"));
        std::fs::remove_file(dir.join("app/top.py")).unwrap();
    });
    step("21 stashed", &|| {
        project.write("app/shapes.py", &shapes.replace("-> float:", "-> int:"));
        common::git(dir, &["stash", "-q"]);
    });
    step("22 popped", &|| {
        common::git(dir, &["stash", "pop", "-q"]);
    });
    step("23 on another branch", &|| {
        common::git(dir, &["checkout", "-q", "-b", "other"]);
        common::git(
            dir,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "-am",
                "int area",
            ],
        );
    });
    step("24 back on main", &|| {
        common::git(dir, &["checkout", "-q", "-"]);
    });
    assert!(steps >= 20);
    // The type checkers' own whole-project runs check build/ too; qg's
    // project_scope leaves it out, warm as cold.
    project.write("build/generated.py", "X: int = 'x'\n");
    let project_run = |extra: &[&str]| qg(dir, &[&PROJECT_RUN[..], extra].concat());
    let (warm, cold) = (project_run(&[]), project_run(&["--no-daemon"]));
    assert_eq!(
        verdicts(&warm),
        verdicts(&cold),
        "{}\n{}",
        warm.stdout,
        cold.stdout
    );
    assert!(
        warm_gates(&warm).contains(&"mypy".to_string()),
        "{}",
        warm.stdout
    );
    assert!(
        !warm.stdout.contains("build/generated.py"),
        "{}",
        warm.stdout
    );
    std::fs::remove_dir_all(dir.join("build")).unwrap();
    // An edit made while a warm pass runs is seen by the next one.
    let pass = qg_command(dir, &["run", "--format", "json", "--no-state"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    project.write(
        "app/util.py",
        &util.replace("return 2 * x", "return str(x)"),
    );
    let _ = pass.wait_with_output().unwrap();
    let run = assert_warm_equals_cold(dir, "25 an edit during a pass");
    assert!(
        findings_of(&run, "mypy")
            .iter()
            .any(|f| f.0 == "app/util.py"),
        "{}",
        run.stdout
    );
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

fn read_fixture(file: &str) -> String {
    std::fs::read_to_string(repo_dir().join("fixtures/warm").join(file)).unwrap()
}

// ------------------------------------------------------------ qg watch

/// A `qg watch --format json` and its passes, line by line.
struct Watch {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Watch {
    fn start(dir: &Path, args: &[&str]) -> Watch {
        let mut all = vec!["watch", "--format", "json", "--debounce", "50ms"];
        all.extend(args);
        let mut child = qg_command(dir, &all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Watch { child, lines }
    }

    /// The next pass's report, waiting up to a minute.
    fn pass(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a pass within a minute");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON report ({e}): {line}"))
    }

    /// Whether a pass came within `wait`.
    fn quiet_for(&self, wait: Duration) -> bool {
        self.lines.recv_timeout(wait).is_err()
    }
}

fn gate_of<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id)
        .unwrap()
}

#[test]
fn watch_prints_a_report_per_pass_and_stops_cleanly_on_ctrl_c() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let mut watch = Watch::start(dir, &[]);
    let first = watch.pass();
    assert_eq!(first["overall_pass"], true, "{first}");
    common::assert_fits_schema("run-report.json", &first);
    // Its own writes (state, logs, mypy's cache) make no pass.
    assert!(
        watch.quiet_for(Duration::from_secs(2)),
        "a pass with no edit"
    );
    project.write(
        "app/shapes.py",
        &read_fixture("app/shapes.py").replace("-> float:", "-> str:"),
    );
    let broken = watch.pass();
    assert_eq!(broken["overall_pass"], false, "{broken}");
    for id in ["mypy", "pyright"] {
        assert_eq!(gate_of(&broken, id)["warm"], true, "{broken}");
        // A warm answer has its log as a cold one does: the daemon's
        // output, or the language server's diagnostics.
        let log = gate_of(&broken, id)["log"]
            .as_str()
            .unwrap_or_else(|| panic!("{id}: no log"));
        let logged = std::fs::read_to_string(dir.join(log)).unwrap();
        assert!(logged.contains("app/geometry.py"), "{id}: {logged}");
        let files: Vec<&str> = gate_of(&broken, id)["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["file"].as_str().unwrap())
            .collect();
        assert!(files.contains(&"app/geometry.py"), "{id}: {files:?}");
    }
    // Shown at once, unconfirmed: the red moves the state once a cold run
    // has confirmed it in the background.
    eventually(COMPARISON_PATIENCE, "the red confirmed", || {
        let state = branch_state(dir);
        state["pending"].is_null()
            && state["failed_files"]
                .as_array()
                .is_some_and(|f| !f.is_empty())
    });
    // A git-ignored file, or one outside the project's globs, makes none.
    project.write(".gitignore", "build/\n");
    let _ = watch.pass();
    project.write("build/generated.py", "x: int = 'not checked'\n");
    project.write("notes.txt", "nothing to check\n");
    assert!(
        watch.quiet_for(Duration::from_secs(2)),
        "a pass for an ignored file"
    );
    project.write("app/shapes.py", &read_fixture("app/shapes.py"));
    let fixed = watch.pass();
    assert_eq!(fixed["overall_pass"], true, "{fixed}");
    assert!(
        fixed["since_last_run"]["fixed"].as_u64().unwrap() > 0,
        "{fixed}"
    );
    Command::new("kill")
        .args(["-INT", &watch.child.id().to_string()])
        .status()
        .unwrap();
    let status = watch.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_nothing_left(dir);
}

#[test]
fn a_watch_killed_with_sigkill_leaves_no_daemon_behind() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let mut watch = Watch::start(dir, &["--verify-every", "0"]);
    let first = watch.pass();
    assert_eq!(gate_of(&first, "pyright")["warm"], true, "{first}");
    watch.child.kill().unwrap();
    let _ = watch.child.wait();
    assert_nothing_left(dir);
}

#[test]
fn a_watch_leaves_daemons_it_did_not_start_running() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    start(dir, &["--gate", "mypy"]);
    let pid = daemon_pid(dir, "mypy");
    let mut watch = Watch::start(dir, &["--gate", "mypy", "--verify-every", "0"]);
    assert_eq!(gate_of(&watch.pass(), "mypy")["warm"], true);
    Command::new("kill")
        .args(["-TERM", &watch.child.id().to_string()])
        .status()
        .unwrap();
    assert!(watch.child.wait().unwrap().success());
    assert_eq!(
        daemon_pid(dir, "mypy"),
        pid,
        "the daemon started before the watch lives on"
    );
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

// ------------------------------------------------------------ fake daemons

/// A project whose one gate `fake` is kept warm by `daemon_yaml`, its cold
/// run printing `truth.jsonl`.
fn fake_project(daemon_yaml: &str) -> Project {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.write(
        "cold.sh",
        "cat truth.jsonl\ntest -s truth.jsonl && exit 1\nexit 0\n",
    );
    project.write(
        "truth.jsonl",
        "{\"file\": \"a.py\", \"line\": 1, \"code\": \"T1\", \"message\": \"the truth\"}\n",
    );
    let config = format!(
        r#"version: "1"
active_gates: [fake]
project_scope: {{include_globs: ["**/*.py"]}}
gates:
  fake:
    execution: {{command: ["sh", "cold.sh"], timeout_seconds: 3, batchable: false}}
    parsing:
      strategy: json_violations
      json_lines: true
      violations_path: "/"
      field_map: {{file: file, line: line, column: column, end_line: end_line,
                  end_column: end_column, code: code, message: message, severity: severity}}
    capabilities: {{file_types: [".py"]}}
{daemon_yaml}"#
    );
    project.write(".st3/quality.yaml", &config);
    project.write(".gitignore", "control/\n");
    project.git_init();
    project
}

/// `qg run` of the whole project, reported as JSON, recording nothing.
const PROJECT_RUN: [&str; 6] = [
    "run",
    "--scope",
    "project",
    "--format",
    "json",
    "--no-state",
];

fn fake_run(dir: &Path, extra: &[&str]) -> Run {
    fake_qg(dir, &[&PROJECT_RUN[..], extra].concat())
}

/// `qg args…` for a fake project: no virtualenv of real tools, which
/// would be another environment than the one its daemon started in.
fn fake_qg(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qg"));
    cmd.args(args).current_dir(dir).env("CI", "true");
    Run::within(&mut cmd, PATIENCE)
}

/// `qg daemon start` in a fake project, whatever comes of it.
fn fake_try_start(dir: &Path) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qg"));
    cmd.args(["daemon", "start"]).current_dir(dir);
    Run::within(&mut cmd, PATIENCE)
}

fn fake_start(dir: &Path) {
    let run = fake_try_start(dir);
    if run.code != 0 {
        let log = std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log"));
        panic!(
            "qg daemon start: {}{}\ndaemon.log:\n{}",
            run.stdout,
            run.stderr,
            log.unwrap_or_default()
        );
    }
}

const COMMAND_DAEMON: &str = r#"    daemon:
      protocol: command
      command: ["sh", "-c", "touch '{daemon_dir}/ready'; exec sleep 600"]
      ready_file: "{daemon_dir}/ready"
      check: ["sh", "warm.sh"]
"#;

#[test]
fn a_command_daemon_that_crashes_hangs_or_answers_garbage_is_answered_cold() {
    let project = fake_project(COMMAND_DAEMON);
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    let warm = fake_run(dir, &[]);
    warm.assert_code(1);
    assert_eq!(warm.gate("fake")["warm"], true, "{}", warm.stdout);
    assert_eq!(
        findings_of(&warm, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())]
    );
    for (fault, script, expected) in [
        (
            "crash",
            "echo 'Traceback: the daemon crashed' >&2\nexit 2\n",
            "exited with code 2",
        ),
        (
            "garbage",
            "echo 'this is not JSON'\nexit 1\n",
            "exit code 1 signals violations, but none could be parsed",
        ),
        (
            "a pass with no findings from a violations exit code",
            "exit 1\n",
            "none could be parsed",
        ),
        ("hang", "sleep 30\n", "did not answer within"),
    ] {
        project.write("warm.sh", script);
        let run = fake_run(dir, &[]);
        // Never a pass: the cold answer, the truth, with a warning.
        run.assert_code(1);
        let gate = run.gate("fake");
        assert_eq!(gate["warm"], false, "{fault}: {gate}");
        assert_eq!(
            findings_of(&run, "fake"),
            [("a.py".to_string(), 1, "T1".to_string())],
            "{fault}"
        );
        let warnings = gate["warnings"].to_string();
        assert!(
            warnings.contains("answered cold") && warnings.contains(expected),
            "{fault}: {warnings}"
        );
    }
    Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(["daemon", "stop"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_nothing_left(dir);
}

/// A daemon in trouble again and again — each check hanging, each restart's
/// first pass fine — starts its tool again three times within 10 minutes,
/// then gives up, says so, and runs are answered cold.
#[test]
fn a_daemon_in_trouble_again_and_again_gives_up_after_three_restarts() {
    let project = fake_project(COMMAND_DAEMON);
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // Each hang is a one-shot token: the check that finds it hangs past
    // its deadline; the restarted tool's first pass does not.
    project.write(
        "warm.sh",
        "if [ -f control/hang ]; then rm control/hang; sleep 30; fi\ncat truth.jsonl\nexit 1\n",
    );
    fake_start(dir);
    let log = || std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap();
    for _ in 0..8 {
        eventually(COMPARISON_PATIENCE, "the restart done", || {
            matches!(fake_status(dir)["phase"].as_str(), Some("ready" | "failed"))
        });
        if fake_status(dir)["phase"] == "failed" {
            break;
        }
        project.write("control/hang", "");
        fake_run(dir, &[]).assert_code(1);
    }
    assert_eq!(fake_status(dir)["phase"], "failed", "{}", log());
    assert!(log().contains("not restarting the tool again"), "{}", log());
    assert_eq!(
        log().matches("starting the tool (a check failed").count(),
        3,
        "{}",
        log()
    );
    let cold = fake_run(dir, &[]);
    assert_eq!(cold.gate("fake")["warm"], false, "{}", cold.stdout);
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A command daemon whose answers the test controls (`warm.sh`), compared
/// with a cold run one answer in `every` (0: after each start only).
fn sampled_daemon(every: usize) -> String {
    format!("{COMMAND_DAEMON}      verify_every: {every}\n")
}

/// Stopping a daemon stops the comparison it started — the cold tool with
/// it — before `qg daemon stop` returns. (The comparison's tool, in a
/// process group of its own, outlived a kill of the comparison's group:
/// orphaned, a hanging one ran on past its timeout.)
#[test]
fn a_daemon_stopped_mid_comparison_takes_the_comparison_with_it() {
    let project = fake_project(&sampled_daemon(1));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // Green answers: the run itself confirms none of them.
    project.write("truth.jsonl", "");
    project.write("warm.sh", "exit 0\n");
    fake_start(dir);
    // The next comparison's cold run hangs (until the gate's 3 s timeout).
    project.write("cold.sh", "touch cold-started\nexec sleep 60\n");
    fake_run(dir, &[]).assert_code(0);
    eventually(COMPARISON_PATIENCE, "the comparison's cold run", || {
        dir.join("cold-started").exists()
    });
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    let left = processes_under(dir);
    assert!(
        left.is_empty(),
        "{left:?}\n{}",
        std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap_or_default()
    );
}

/// A daemon started for an automatic context (an owner: `qg watch`, `qg
/// lsp`) starts no tool of a repository not trusted as it is now — a pull
/// may have changed the gate's command under a running watch.
#[test]
fn a_daemon_with_an_owner_starts_no_tool_of_an_untrusted_repository() {
    let project = fake_project(&COMMAND_DAEMON.replace(
        "touch '{daemon_dir}/ready'",
        "touch control/ran; touch '{daemon_dir}/ready'",
    ));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("control/.keep", "");
    let log = dir.join("control/daemon.log");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(["daemon", "serve", "--gate", "fake", "--owner"])
        .arg(std::process::id().to_string())
        .current_dir(dir)
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    eventually(COMPARISON_PATIENCE, "the refusal", || {
        said().contains("not starting the tool: ")
    });
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(!dir.join("control/ran").exists(), "{}", said());
}

/// What `fake`'s daemon says about itself.
fn fake_status(dir: &Path) -> Value {
    let run = fake_qg(dir, &["daemon", "status", "--format", "json"]);
    run.json()["daemons"][0]["status"]["record"].clone()
}

/// A daemon that disagrees with a cold run from the start is never
/// believed: `qg daemon start` says so, with the first differing finding
/// and the file holding both sides, and every run answers the gate cold
/// saying why — for good for that tool and config: started again it is
/// not believed either, until the config (or the tool) changes.
#[test]
fn a_daemon_whose_first_answer_differs_from_a_cold_run_is_never_believed() {
    let project = fake_project(COMMAND_DAEMON);
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "echo '{\"file\": \"a.py\", \"line\": 2, \"code\": \"W9\", \"message\": \"a stale finding\"}'\nexit 1\n");
    let started = fake_try_start(dir);
    started.assert_code(2);
    assert!(
        started.stdout.contains("fake  failed: untrusted: its answer for the whole program differed from a cold run of the tool (only warm: a.py:2:0 W9 a stale finding; both sides: .st3/logs/"),
        "{}",
        started.stdout
    );
    let both = started.stdout.split("both sides: ").nth(1).unwrap();
    let both = both.split(')').next().unwrap();
    let text = std::fs::read_to_string(dir.join(both)).unwrap();
    assert!(
        text.contains("===== only warm =====\n{\"file\":\"a.py\",\"line\":2")
            && text.contains("===== only cold =====\n{\"file\":\"a.py\",\"line\":1"),
        "{text}"
    );
    assert_eq!(fake_status(dir)["phase"], "untrusted");
    // It will not answer again with this tool and config: the tool is
    // stopped (a pyright server holds a GiB), the daemon stays to say why.
    eventually(
        Duration::from_secs(10),
        "the untrusted tool stopped",
        || {
            !processes_under(dir)
                .iter()
                .any(|p| p.ends_with("sleep 600"))
        },
    );
    let doctor = fake_qg(dir, &["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("! fake daemon  answers cold for this tool and config: its answer for the whole program differed"),
        "{}",
        doctor.stdout
    );
    let run = fake_run(dir, &[]);
    let gate = run.gate("fake");
    assert_eq!(gate["warm"], false);
    assert_eq!(
        findings_of(&run, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())],
        "the cold truth"
    );
    let warnings = gate["warnings"].to_string();
    assert!(
        warnings.contains("answered cold: its daemon is untrusted for this tool and config: its answer for the whole program differed from a cold run of the tool (only warm: a.py:2:0 W9 a stale finding; both sides: .st3/logs/"),
        "{warnings}"
    );
    // Started again, the same tool and config are not believed: the
    // daemon does not even start its tool.
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    let again = fake_try_start(dir);
    again.assert_code(2);
    assert!(
        again.stdout.contains("fake  failed: untrusted: "),
        "{}",
        again.stdout
    );
    let stopped = fake_run(dir, &[]);
    assert_eq!(stopped.gate("fake")["warm"], false);
    let log = std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap();
    assert!(
        log.contains("not starting the tool: its warm answers drifted"),
        "{log}"
    );
    // Stopped, the memory of the drift still says why runs are cold.
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    let cold = fake_run(dir, &[]);
    assert!(
        cold.gate("fake")["warnings"].to_string().contains(
            "answered cold: its warm answers drifted from a cold run for this tool and config"
        ),
        "{}",
        cold.stdout
    );
    let status = fake_qg(dir, &["daemon", "status"]);
    assert!(
        status.stdout.starts_with("0/1 warm gates answer warm\n")
            && status
                .stdout
                .contains("fake  stopped  answers cold: its warm answers drifted"),
        "{}",
        status.stdout
    );
    // A new config earns trust again: compared, and believed.
    let config = std::fs::read_to_string(dir.join(".st3/quality.yaml")).unwrap();
    project.write(".st3/quality.yaml", &format!("{config}# mended\n"));
    fake_start(dir);
    assert_eq!(fake_run(dir, &[]).gate("fake")["warm"], true);
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A daemon whose answers cannot be compared with a cold run (the tool's
/// own run fails: a path its config names is missing) is never used, and
/// `qg daemon start` returns saying why instead of waiting for ever; mended
/// and started again, it is compared and believed.
#[test]
fn a_daemon_that_cannot_be_compared_fails_and_start_says_why() {
    let project = fake_project(COMMAND_DAEMON);
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    let cold = std::fs::read_to_string(dir.join("cold.sh")).unwrap();
    // Each cold run leaves a line outside the project (a file changed in
    // it would be a reason of its own to call a comparison inconclusive).
    let tally = tempfile::tempdir().unwrap();
    let runs = tally.path().join("cold-runs");
    project.write(
        "cold.sh",
        &format!(
            "echo run >> '{}'\necho 'examples: error: Cannot read file' >&2\nexit 2\n",
            runs.display()
        ),
    );
    let started = fake_try_start(dir);
    started.assert_code(2);
    // It tried three times, not fewer, before it gave up.
    let tries = std::fs::read_to_string(&runs).unwrap_or_default();
    assert_eq!(tries.lines().count(), 3, "cold runs: {tries:?}");
    assert!(
        started.stdout.contains(
            "fake  failed: its answers could not be compared with a cold run in 3 tries (the last: the cold run erred:"
        ),
        "{}",
        started.stdout
    );
    assert_eq!(fake_status(dir)["phase"], "failed");
    let run = fake_run(dir, &[]);
    assert_eq!(run.gate("fake")["warm"], false, "{}", run.stdout);
    assert_eq!(run.gate("fake")["status"], "error", "{}", run.stdout);
    project.write("cold.sh", &cold);
    fake_start(dir);
    assert_eq!(fake_run(dir, &[]).gate("fake")["warm"], true);
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A warm answer that lacks a known finding (dmypy forgets an
/// `unused-ignore` after an edit elsewhere, python/mypy#9655) does not
/// shrink the baseline: only a cold run drops what it found fixed, so the
/// finding cannot come back as new.
#[test]
fn a_warm_answer_never_drops_baseline_entries() {
    let project = fake_project(&sampled_daemon(0));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    fake_qg(dir, &["baseline", "write"]).assert_code(0);
    let baseline = std::fs::read_to_string(dir.join(".st3/baseline.jsonl")).unwrap();
    assert!(baseline.contains("the truth"), "{baseline}");
    // The daemon forgets the finding: a green warm run, which must not
    // call the entry fixed for good.
    project.write("warm.sh", "exit 0\n");
    let warm = fake_qg(dir, &["run", "--scope", "project", "--format", "json"]);
    warm.assert_code(0);
    assert_eq!(warm.gate("fake")["warm"], true, "{}", warm.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.join(".st3/baseline.jsonl")).unwrap(),
        baseline,
        "a warm answer shrank the baseline"
    );
    // A cold run that finds it fixed does drop it.
    project.write("truth.jsonl", "");
    fake_qg(dir, &["run", "--scope", "project", "--no-daemon"]).assert_code(0);
    let after = std::fs::read_to_string(dir.join(".st3/baseline.jsonl")).unwrap();
    assert!(!after.contains("the truth"), "{after}");
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// The daemon's comparisons with a cold run write no mypy cache: they run
/// in the background, and a second mypy writing the project's
/// `.mypy_cache` while the user's own run reads it crashed that run
/// (INTERNAL ERROR, an errored gate) in this file's scripted edits.
#[test]
fn a_daemon_s_comparison_leaves_the_project_s_mypy_cache_alone() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let _ = std::fs::remove_dir_all(dir.join(".mypy_cache"));
    start(dir, &["--gate", "mypy"]);
    assert!(
        !dir.join(".mypy_cache").exists(),
        "the self-check wrote the project's mypy cache"
    );
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// Under `--confirm` a failing warm answer that differs is withheld (the
/// cold one is reported), but answers shown before it came from the same
/// drifting tool: the next run opens with the news that they may have been
/// wrong.
#[test]
fn answers_shown_before_a_withheld_drift_may_have_been_wrong() {
    let project = fake_project(&sampled_daemon(0));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    for _ in 0..2 {
        assert_eq!(fake_run(dir, &[]).gate("fake")["warm"], true);
    }
    project.write("warm.sh", STALE);
    let confirmed = fake_run(dir, &["--confirm"]);
    assert_eq!(
        confirmed.gate("fake")["warm"],
        false,
        "{}",
        confirmed.stdout
    );
    assert_eq!(
        findings_of(&confirmed, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())],
        "the cold truth, never the stale finding: {}",
        confirmed.stdout
    );
    eventually(COMPARISON_PATIENCE, "untrusted", || {
        fake_status(dir)["phase"] == "untrusted"
    });
    let told = fake_run(dir, &[]);
    assert!(
        contradiction(&told, "fake").contains("the last warm answers of fake may have been wrong"),
        "{}",
        told.stdout
    );
}

/// A stale finding a drifting daemon reports (line 2, not the truth's 1).
const STALE: &str = "echo '{\"file\": \"a.py\", \"line\": 2, \"code\": \"W9\", \"message\": \"a stale finding\"}'\nexit 1\n";

/// What a run's report opens with about `gate`'s last warm answers (empty:
/// nothing).
fn contradiction(run: &Run, gate: &str) -> String {
    run.json()["contradicted"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["gate"] == gate)
        .map(|c| c["said"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The branch's state entry, as `.st3/state.json` holds it (the project
/// has one branch; null before any).
fn branch_state(dir: &Path) -> Value {
    let Ok(text) = std::fs::read_to_string(dir.join(".st3/state.json")) else {
        return Value::Null;
    };
    let state: Value = serde_json::from_str(&text).unwrap();
    let branches = state["quality_gates"]["branches"].as_object().cloned();
    branches
        .and_then(|b| b.values().next().cloned())
        .unwrap_or(Value::Null)
}

/// A warm answer is shown at once and confirmed in the background; the
/// branch's state moves only once it is. A daemon that forgets a finding
/// still there (dmypy drops a module's `unused-ignore` when it rechecks it
/// after an edit elsewhere, python/mypy#9655) gives a green shown at once —
/// marked unconfirmed, moving nothing — whose confirmation finds the
/// finding: the next run opens with what the answer got wrong, and answers
/// the gate cold for that tool and config.
#[test]
fn a_warm_green_moves_nothing_until_a_cold_run_confirms_it() {
    let project = fake_project(&sampled_daemon(0));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    let auto = ["run", "--format", "json"];
    let red = fake_qg(dir, &auto);
    red.assert_code(1);
    assert_eq!(red.gate("fake")["warm"], true, "{}", red.stdout);
    assert_eq!(
        red.gate("fake")["unconfirmed"],
        serde_json::json!({"files": 1, "confirming": true}),
        "{}",
        red.stdout
    );
    // Confirmed in the background: the held state moves.
    eventually(COMPARISON_PATIENCE, "the red confirmed", || {
        branch_state(dir)["pending"].is_null()
            && branch_state(dir)["failed_files"] == serde_json::json!(["a.py"])
    });
    // The daemon forgets the finding; a.py is edited (the finding stays).
    project.write("warm.sh", "exit 0\n");
    project.write("a.py", "x = 1\ny = 2\n");
    let forgot = fake_qg(dir, &auto);
    forgot.assert_code(0);
    let gate = forgot.gate("fake");
    assert_eq!(gate["warm"], true, "{}", forgot.stdout);
    assert_eq!(gate["unconfirmed"]["files"], 1, "{}", forgot.stdout);
    // Nothing moved on its word: a.py is still failed, the green held.
    let held = branch_state(dir);
    assert_eq!(held["failed_files"], serde_json::json!(["a.py"]), "{held}");
    assert_eq!(held["pending"]["gates"]["fake"]["files"], 1, "{held}");
    eventually(COMPARISON_PATIENCE, "untrusted", || {
        fake_status(dir)["phase"] == "untrusted"
    });
    let held = branch_state(dir);
    assert_eq!(held["failed_files"], serde_json::json!(["a.py"]), "{held}");
    assert_eq!(
        held["pending"]["gates"]["fake"]["outcome"]["outcome"], "differed",
        "{held}"
    );
    let next = fake_qg(dir, &auto);
    next.assert_code(1);
    let said = contradiction(&next, "fake");
    assert!(
        said.contains("the last warm answer of fake was wrong: a cold run of 1 file found otherwise (only cold: a.py:1:0 T1 the truth; both sides: .st3/logs/"),
        "{}",
        next.stdout
    );
    assert_eq!(
        findings_of(&next, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())],
        "the cold truth: {}",
        next.stdout
    );
    assert_eq!(next.gate("fake")["warm"], false);
    // Told once: its own state replaced the held one.
    let again = fake_qg(dir, &auto);
    assert_eq!(contradiction(&again, "fake"), "", "{}", again.stdout);
    let human = fake_qg(dir, &["run", "--scope", "project", "--no-state"]);
    assert!(
        !human.stdout.contains("unconfirmed"),
        "answered cold now: {}",
        human.stdout
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A user who edits faster than a cold run confirms (each confirmation
/// inconclusive: files changed during it) would otherwise be shown the
/// daemon's unconfirmed answers for ever, a wrong one too (werkzeug's
/// property setters after a dmypy update, every step of the ecosystem
/// loop): after `UNSETTLED_LIMIT` (3) such comparisons in a row the next
/// answer is confirmed before it is shown, and says so; its agreement
/// settles the daemon, and the next answer is confirmed in the background
/// again.
#[test]
fn answers_unconfirmed_too_long_are_confirmed_before_they_are_shown() {
    let project = fake_project(&sampled_daemon(0));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // The cold run changes b.py while a file `churn` exists (the user's
    // next edit, landing during each confirmation).
    project.write(
        "cold.sh",
        "test -e churn && echo '# edited' >> b.py\ncat truth.jsonl\ntest -s truth.jsonl && exit 1\nexit 0\n",
    );
    project.write("b.py", "y = 1\n");
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    project.write("churn", "");
    let auto = ["run", "--format", "json"];
    let unsettled = || fake_status(dir)["unsettled"].as_u64().unwrap_or(0);
    for n in 1..=3 {
        project.write("a.py", &format!("x = {n}\n"));
        let run = fake_qg(dir, &auto);
        run.assert_code(1);
        let gate = run.gate("fake");
        assert_eq!(gate["unconfirmed"]["confirming"], true, "{}", run.stdout);
        eventually(COMPARISON_PATIENCE, "an inconclusive confirmation", || {
            unsettled() >= n
        });
    }
    std::fs::remove_file(dir.join("churn")).unwrap();
    project.write("a.py", "x = 9\n");
    let run = fake_qg(dir, &auto);
    run.assert_code(1);
    let gate = run.gate("fake");
    assert_eq!(gate["warm"], true, "{}", run.stdout);
    assert_eq!(gate["verified"], true, "{}", run.stdout);
    assert!(gate.get("unconfirmed").is_none(), "{}", run.stdout);
    let warnings = gate["warnings"].to_string();
    assert!(
        warnings.contains("confirmed before it was shown: 3 cold runs in a row could not confirm"),
        "{warnings}"
    );
    eventually(COMPARISON_PATIENCE, "the daemon settled", || {
        unsettled() == 0
    });
    project.write("a.py", "x = 10\n");
    let run = fake_qg(dir, &auto);
    assert_eq!(
        run.gate("fake")["unconfirmed"]["confirming"],
        true,
        "{}",
        run.stdout
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// `--confirm` waits for the confirmation: the cold truth is reported when
/// the warm answer is wrong, the run is told nothing later, and the state
/// moves at once on a confirmed answer.
#[test]
fn confirm_reports_a_confirmed_answer_and_moves_the_state_at_once() {
    let project = fake_project(&sampled_daemon(0));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    let confirmed = fake_qg(dir, &["run", "--confirm", "--format", "json"]);
    confirmed.assert_code(1);
    let gate = confirmed.gate("fake");
    assert_eq!(gate["warm"], true, "{}", confirmed.stdout);
    assert_eq!(gate["verified"], true, "{}", confirmed.stdout);
    assert!(gate.get("unconfirmed").is_none(), "{}", confirmed.stdout);
    let state = branch_state(dir);
    assert!(state["pending"].is_null(), "{state}");
    assert_eq!(
        state["failed_files"],
        serde_json::json!(["a.py"]),
        "{state}"
    );
    let human = fake_qg(dir, &["run", "--confirm"]);
    assert!(
        human.stdout.contains("warm, equal to a cold run"),
        "{}",
        human.stdout
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A commit's `qg run --confirm FILES` (the pre-commit hook) right after a
/// warm run whose confirmation landed, on the same tree, is confirmed by
/// that cold run: it runs no cold tool again, and costs the warm answer
/// alone (issue 65: the hook took 13–15 s with daemons running). An edit
/// makes a new tree, which is confirmed cold again.
#[test]
fn a_confirmation_made_on_this_tree_is_not_made_again() {
    let project = fake_project(&sampled_daemon(0));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write(
        "cold.sh",
        "echo run >> cold-runs\ncat truth.jsonl\ntest -s truth.jsonl && exit 1\nexit 0\n",
    );
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    let cold_runs = || {
        std::fs::read_to_string(dir.join("cold-runs"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    fake_qg(dir, &["run", "--format", "json"]).assert_code(1);
    eventually(COMPARISON_PATIENCE, "the red confirmed", || {
        branch_state(dir)["pending"].is_null()
    });
    let before = cold_runs();
    let hook = [
        "run",
        "--confirm",
        "--no-progress",
        "--format",
        "json",
        "a.py",
    ];
    let commit = fake_qg(dir, &hook);
    commit.assert_code(1);
    let gate = commit.gate("fake");
    assert_eq!(gate["warm"], true, "{}", commit.stdout);
    assert_eq!(gate["verified"], true, "{}", commit.stdout);
    assert_eq!(cold_runs(), before, "confirmed again: {}", commit.stdout);
    // A new tree: the confirmation runs cold again.
    project.write("a.py", "x = 1\ny = 2\n");
    let edited = fake_qg(dir, &hook);
    edited.assert_code(1);
    assert_eq!(edited.gate("fake")["verified"], true, "{}", edited.stdout);
    assert_eq!(cold_runs(), before + 1, "{}", edited.stdout);
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// The same with the real dmypy, which forgets a finding by itself
/// (python/mypy#9655, mypy 2.4): a module's unneeded `# type: ignore` is
/// reported until a module it imports changes; rechecked after that, dmypy
/// says nothing where a cold mypy still reports `unused-ignore`. The warm
/// green is shown at once but moves nothing; its confirmation finds the
/// finding, and the next run opens with it and reports the cold truth.
/// `--confirm` reports the cold truth at once.
#[test]
fn dmypy_forgetting_an_unused_ignore_after_an_edit_elsewhere_is_no_green() {
    let project = Project::empty();
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("pyproject.toml", "[tool.mypy]\nstrict = true\n");
    project.write("a.py", "def f() -> int:\n    return 1\n");
    project.write("main.py", "import a\n\nz = a.f()  # type: ignore\n");
    project.git_init();
    let started = start(dir, &["--gate", "mypy"]);
    assert_eq!(started["ok"], true, "{started}");
    let unused = [("main.py".to_string(), 3, "unused-ignore".to_string())];
    let red = qg(dir, &["run", "--format", "json", "--gate", "mypy"]);
    red.assert_code(1);
    assert_eq!(findings_of(&red, "mypy"), unused, "{}", red.stdout);
    assert_eq!(warm_gates(&red), ["mypy"], "{}", red.stdout);
    let edited = "def f() -> int:\n    return 1\n\n\ndef h() -> None:\n    pass\n";
    project.write("a.py", edited);
    let confirmed = qg(
        dir,
        &["run", "--format", "json", "--gate", "mypy", "--confirm"],
    );
    confirmed.assert_code(1);
    assert_eq!(
        findings_of(&confirmed, "mypy"),
        unused,
        "a cold mypy's answer, not dmypy's forgetful green: {}",
        confirmed.stdout
    );
    qg(dir, &["daemon", "stop"]).assert_code(0);
    // Without --confirm: shown at once, then found wrong.
    project.write("a.py", "def f() -> int:\n    return 1\n");
    let _ = std::fs::remove_dir_all(dir.join(".st3/warm-standing"));
    start(dir, &["--gate", "mypy"]);
    qg(dir, &["run", "--format", "json", "--gate", "mypy"]).assert_code(1);
    project.write("a.py", edited);
    let forgot = qg(dir, &["run", "--format", "json", "--gate", "mypy"]);
    if forgot.code == 0 {
        assert!(
            forgot.gate("mypy")["unconfirmed"].is_object(),
            "a forgetful green is never a confirmed one: {}",
            forgot.stdout
        );
        eventually(COMPARISON_PATIENCE, "the drift found", || {
            status(dir)["mypy"]["status"]["record"]["phase"] == "untrusted"
        });
        let next = qg(dir, &["run", "--format", "json", "--gate", "mypy"]);
        next.assert_code(1);
        assert!(
            contradiction(&next, "mypy").contains("only cold: main.py:3"),
            "{}",
            next.stdout
        );
        assert_eq!(findings_of(&next, "mypy"), unused, "{}", next.stdout);
    }
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A daemon that agreed, then drifts (its incremental state gone stale).
/// Its wrong answer is shown at once, marked unconfirmed, and its
/// confirmation in the background finds the drift: the gate answers cold
/// for good for that tool and config, and the next run opens with what the
/// answer got wrong. A drift a run does not confirm (a finding missed by a
/// run that moves no state, its findings as the last confirmed answer's)
/// is found by the sampled comparison in the background, and the next run
/// hears the last answers may have been wrong. `--verify` turns a drift
/// into an error showing both sides.
#[test]
fn a_drift_after_warm_answers_is_found_and_told_to_the_next_run() {
    let project = fake_project(&sampled_daemon(2));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    // It drifts: its failing answer is shown, unconfirmed.
    project.write("warm.sh", STALE);
    let shown = fake_run(dir, &[]);
    shown.assert_code(1);
    assert_eq!(
        findings_of(&shown, "fake"),
        [("a.py".to_string(), 2, "W9".to_string())],
        "{}",
        shown.stdout
    );
    assert_eq!(shown.gate("fake")["unconfirmed"]["confirming"], true);
    eventually(COMPARISON_PATIENCE, "untrusted", || {
        fake_status(dir)["phase"] == "untrusted"
    });
    let standing = std::fs::read_to_string(dir.join(".st3/warm-standing/fake.json")).unwrap();
    assert!(standing.contains("\"cause\": \"drifted\""), "{standing}");
    // The next run opens with it and is answered cold, saying why.
    let told = fake_run(dir, &[]);
    assert!(
        contradiction(&told, "fake").contains("the last warm answers of fake may have been wrong: its answer for a run's 1 file differed from a cold run of the tool (only warm: a.py:2:0 W9 a stale finding"),
        "{}",
        told.stdout
    );
    let warnings = told.gate("fake")["warnings"].to_string();
    assert!(
        warnings.contains("answered cold: its daemon is untrusted for this tool and config: its answer for a run's 1 file differed"),
        "{warnings}"
    );
    assert_eq!(told.gate("fake")["warm"], false);
    assert_eq!(
        findings_of(&told, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())]
    );
    let again = fake_run(dir, &[]);
    assert_eq!(contradiction(&again, "fake"), "", "told once");
    // A new config earns trust again; then a drift that fails nothing (a
    // finding missed) in runs that move no state: the second answer is
    // compared in the background.
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    let config = std::fs::read_to_string(dir.join(".st3/quality.yaml")).unwrap();
    project.write(".st3/quality.yaml", &format!("{config}# mended\n"));
    fake_start(dir);
    assert_eq!(fake_run(dir, &[]).gate("fake")["warm"], true);
    project.write("warm.sh", "exit 0\n");
    let missed = fake_run(dir, &[]);
    assert_eq!(missed.gate("fake")["warm"], true);
    assert!(
        missed.gate("fake").get("unconfirmed").is_none(),
        "a green equal to the last confirmed answer (none recorded by runs \
         that record nothing), in a run that moves no state: {}",
        missed.stdout
    );
    eventually(COMPARISON_PATIENCE, "the sampled drift found", || {
        fake_status(dir)["distrust"].is_object()
    });
    let told = fake_run(dir, &[]);
    assert!(
        contradiction(&told, "fake").contains("the last warm answers of fake may have been wrong: its answer for a run's 1 file differed"),
        "{}",
        told.stdout
    );
    assert_eq!(
        findings_of(&told, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())]
    );
    // --verify: a drift is an error showing both sides.
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    project.write(".st3/quality.yaml", &format!("{config}# verified\n"));
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    fake_start(dir);
    project.write("warm.sh", STALE);
    let verified = fake_run(dir, &["--verify"]);
    verified.assert_code(2);
    let gate = verified.gate("fake");
    assert_eq!(gate["error"]["kind"], "warm_drift");
    let message = gate["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("only warm: a.py:2:0 W9 a stale finding; only cold: a.py:1:0 T1 the truth; both sides: .st3/logs/"),
        "{message}"
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// `--verify`'s error lists five findings of a side and counts the rest.
#[test]
fn a_verify_error_lists_five_findings_of_a_side_and_counts_the_rest() {
    let project = fake_project(COMMAND_DAEMON);
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let stale = |count: u32| -> String {
        (2..2 + count)
            .map(|line| {
                format!("echo '{{\"file\": \"a.py\", \"line\": {line}, \"code\": \"W9\", \"message\": \"stale\"}}'\n")
            })
            .collect()
    };
    let round = std::cell::Cell::new(0);
    let refused = |script: String| -> String {
        project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
        fake_qg(dir, &["daemon", "stop"]).assert_code(0);
        // A drift holds for its key: each round's config is a new one.
        round.set(round.get() + 1);
        let config = std::fs::read_to_string(dir.join(".st3/quality.yaml")).unwrap();
        project.write(
            ".st3/quality.yaml",
            &format!("{config}# round {}\n", round.get()),
        );
        fake_start(dir);
        project.write("warm.sh", &script);
        let run = fake_run(dir, &["--verify"]);
        run.assert_code(2);
        let error = &run.gate("fake")["error"];
        assert_eq!(error["kind"], "warm_drift");
        error["message"].as_str().unwrap().to_string()
    };
    let five = refused(format!("cat truth.jsonl\n{}exit 1\n", stale(5)));
    assert!(
        five.contains("only warm: a.py:2:0 W9 stale | ") && !five.contains("more"),
        "{five}"
    );
    let six = refused(format!("cat truth.jsonl\n{}exit 1\n", stale(6)));
    assert!(
        six.contains("a.py:6:0 W9 stale | and 1 more; only cold: none"),
        "{six}"
    );
    let missed = refused("exit 0\n".into());
    assert!(
        missed.contains("only cold: a.py:1:0 T1 the truth"),
        "{missed}"
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

#[test]
fn the_generic_lsp_client_speaks_the_protocol_with_a_fake_server() {
    let control = tempfile::tempdir().unwrap();
    let server = control.path().join("fake_lsp.py");
    std::fs::copy(repo_dir().join("tests/warm/fake_lsp.py"), &server).unwrap();
    let diagnostic = |line: u64, severity: u64, code: Value, message: &str| {
        json!({"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 9}},
               "severity": severity, "code": code, "message": message})
    };
    let answers = json!({"mode": "normal", "diagnostics": {"a.py": [
        diagnostic(0, 1, json!("E1"), "an error"),
        diagnostic(1, 2, json!(7), "a warning with a numbered code"),
        diagnostic(2, 3, json!("I1"), "information"),
        diagnostic(3, 4, json!("unused"), "a hint, greyed out in an editor: no finding"),
    ]}});
    std::fs::write(control.path().join("answers.json"), answers.to_string()).unwrap();
    let daemon = format!(
        r#"    daemon:
      protocol: lsp
      command: ["python3", "{}", "{}"]
      settings: {{fake: {{analysis: {{strict: true, level: 3}}}}}}
"#,
        server.display(),
        control.path().display()
    );
    let project = fake_project(&daemon);
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // The cold run prints what the server's diagnostics are, in its own
    // shape (1-based, end column exclusive): the daemon's self-check
    // compares the two exactly before it serves.
    project.write(
        "truth.jsonl",
        concat!(
            "{\"file\": \"a.py\", \"line\": 1, \"column\": 5, \"end_line\": 1, \"end_column\": 10, \"code\": \"E1\", \"message\": \"an error\", \"severity\": \"error\"}\n",
            "{\"file\": \"a.py\", \"line\": 2, \"column\": 5, \"end_line\": 2, \"end_column\": 10, \"code\": \"7\", \"message\": \"a warning with a numbered code\", \"severity\": \"warning\"}\n",
            "{\"file\": \"a.py\", \"line\": 3, \"column\": 5, \"end_line\": 3, \"end_column\": 10, \"code\": \"I1\", \"message\": \"information\", \"severity\": \"info\"}\n",
        ),
    );
    fake_start(dir);
    let warm = fake_run(dir, &[]);
    assert_eq!(warm.gate("fake")["warm"], true, "{}", warm.stdout);
    let cold = fake_run(dir, &["--no-daemon"]);
    let shape = |run: &Run| {
        run.gate("fake")["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["line"].clone(),
                    v["column"].clone(),
                    v["end_column"].clone(),
                    v["code"].clone(),
                    v["message"].clone(),
                    v["severity"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let warm_shape = shape(&warm);
    assert_eq!(
        warm_shape.len(),
        3,
        "the hint is no finding: {warm_shape:?}"
    );
    assert_eq!(warm_shape[0].2, 10, "end column, 1-based");
    assert_eq!(warm_shape, shape(&cold));
    // An edit is announced, a new file opened for its pull.
    project.write("a.py", "x = 2\n");
    project.write("b.py", "y = 1\n");
    assert_eq!(fake_run(dir, &[]).gate("fake")["warm"], true);
    let log: Vec<Value> = std::fs::read_to_string(control.path().join("log.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let config_answer = log
        .iter()
        .find(|m| m["id"] == "config-1")
        .expect("the configuration was answered");
    assert_eq!(
        config_answer["result"],
        json!([{"strict": true, "level": 3}, null])
    );
    let init = log.iter().find(|m| m["method"] == "initialize").unwrap();
    assert_eq!(
        init["params"]["capabilities"]["workspace"]["configuration"],
        true
    );
    let changes: Vec<&Value> = log
        .iter()
        .filter(|m| m["method"] == "workspace/didChangeWatchedFiles")
        .collect();
    let events = changes.last().unwrap()["params"]["changes"]
        .as_array()
        .unwrap();
    let kinds: Vec<(bool, u64)> = events
        .iter()
        .map(|e| {
            (
                e["uri"].as_str().unwrap().ends_with("/b.py"),
                e["type"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&(true, 1)) && kinds.contains(&(false, 2)),
        "{events:?}"
    );
    assert!(log.iter().any(|m| m["method"] == "textDocument/didOpen"
        && m["params"]["textDocument"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("/b.py")));
    // A server that crashes, or answers garbage, mid-check: answered cold.
    for mode in ["garbage", "crash", "hang"] {
        let stop = Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(["daemon", "stop"])
            .current_dir(dir)
            .output();
        assert!(stop.unwrap().status.success());
        std::fs::write(control.path().join("answers.json"), answers.to_string()).unwrap();
        fake_start(dir);
        let mut faulty = answers.clone();
        faulty["mode"] = json!(mode);
        std::fs::write(control.path().join("answers.json"), faulty.to_string()).unwrap();
        let run = fake_run(dir, &[]);
        let gate = run.gate("fake");
        assert_eq!(gate["warm"], false, "{mode}: {gate}");
        assert!(
            gate["warnings"].to_string().contains("answered cold"),
            "{mode}: {gate}"
        );
        assert_eq!(
            gate["violations"].as_array().unwrap().len(),
            3,
            "{mode}: the cold truth"
        );
    }
    Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(["daemon", "stop"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_nothing_left(dir);
    assert_nothing_left(control.path());
    let log = std::fs::read_to_string(control.path().join("log.jsonl")).unwrap();
    assert!(log.contains("\"method\": \"shutdown\""), "a polite stop");
}

#[test]
fn ty_answered_warm_words_and_places_findings_as_its_command_line_does() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // After an emoji (two UTF-16 units, one character): ty's command line
    // counts characters; its server's message adds notes after a blank line.
    project.write(
        "app/emoji.py",
        "\"\"\"Emoji.\"\"\"\n\nPAIR = (\"\u{1F600}\", 1 + \"a\")\n\n\ndef size(x: object) -> int:\n    \"\"\"Its length.\"\"\"\n    return len(x)\n",
    );
    start(dir, &["--gate", "ty"]);
    let args = [
        "run",
        "--gate",
        "ty",
        "--scope",
        "project",
        "--format",
        "json",
        "--no-state",
    ];
    let warm = qg(dir, &args);
    assert_eq!(warm_gates(&warm), ["ty"], "{}", warm.stdout);
    let mut cold_args = args.to_vec();
    cold_args.push("--no-daemon");
    let cold = qg(dir, &cold_args);
    assert_eq!(verdicts(&warm), verdicts(&cold));
    let found = findings_of(&warm, "ty");
    assert_eq!(found.len(), 2, "{}", warm.stdout);
    let operator = &warm.gate("ty")["violations"][0];
    assert_eq!(
        (operator["line"].as_u64(), operator["column"].as_u64()),
        (Some(3), Some(14))
    );
    let sized = warm.gate("ty")["violations"][1]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sized.starts_with("invalid-argument-type: ") && !sized.contains('\n'),
        "{sized}"
    );
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A daemon of a tool whose cold run reports the modules its files import
/// (`reports_imported`, as mypy's does): its answer keeps the findings in
/// those modules, as the import graph knows them, and in the packages above
/// them (Python runs a package's `__init__` first), like the cold run.
#[test]
fn a_warm_answer_keeps_the_findings_in_the_modules_the_files_import() {
    let daemon = COMMAND_DAEMON.replace(
        "      check: [\"sh\", \"warm.sh\"]\n",
        "      check: [\"sh\", \"warm.sh\"]\n      reports_imported: true\n",
    );
    let project = fake_project(&format!(
        "{daemon}    scope: {{importers: true}}\nimport_graph:\n  command: [\"sh\", \"graph.sh\"]\n"
    ));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    for file in ["app/__init__.py", "app/a.py", "app/b.py"] {
        project.write(file, "y = 2\n");
    }
    // app/a.py imports app/b.py; the findings are in b.py and the package.
    project.write(
        "graph.sh",
        "echo '{\"a.py\": [], \"app/__init__.py\": [], \"app/a.py\": [\"app/b.py\"], \"app/b.py\": []}'\n",
    );
    project.write(
        "truth.jsonl",
        "{\"file\": \"app/__init__.py\", \"line\": 1, \"code\": \"T1\", \"message\": \"in the package\"}\n\
         {\"file\": \"app/b.py\", \"line\": 1, \"code\": \"T2\", \"message\": \"in the imported module\"}\n",
    );
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    project.git_init();
    // A recorded whole-project run builds the import graph.
    fake_qg(dir, &["run", "--scope", "project", "--no-daemon"]).assert_code(1);
    assert!(dir.join(".st3/import-graph.json").exists());
    fake_start(dir);
    let expected = [
        ("app/__init__.py".to_string(), 1, "T1".to_string()),
        ("app/b.py".to_string(), 1, "T2".to_string()),
    ];
    // app/a.py alone: the run's file is a.py; it reports b.py and app.
    let run_a = |extra: &[&str]| {
        let args = [
            &["run", "--format", "json", "--no-state"],
            extra,
            &["app/a.py"],
        ]
        .concat();
        fake_qg(dir, &args)
    };
    let cold = run_a(&["--no-daemon"]);
    assert_eq!(findings_of(&cold, "fake"), expected, "{}", cold.stdout);
    let warm = run_a(&[]);
    assert_eq!(warm.gate("fake")["warm"], true, "{}", warm.stdout);
    assert_eq!(findings_of(&warm, "fake"), expected, "{}", warm.stdout);
    warm.assert_code(1);
}

/// `interface_aware_importers` leaves out the importers of a body-only
/// edit; the daemon's sample of such a run checks them too. Here the edit
/// breaks its importer all the same (the fake tool says so, as a real one
/// would if qg read an interface wrong): the run was green on the edited
/// file alone, and the sample proves it wrong. Leaving importers out is
/// then off in the project, and the importer is failed on the branch: the
/// next `auto` run reports it, saying why — the green does not stand.
#[test]
fn a_sample_proving_a_left_out_importer_wrong_turns_leaving_out_off() {
    let project = fake_project(&format!(
        "{}    scope: {{importers: true}}\nimport_graph:\n  command: [\"sh\", \"graph.sh\"]\ninterface_aware_importers: true\n",
        sampled_daemon(1)
    ));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("a.py", "def f() -> int:\n    return 1\n");
    project.write("b.py", "import a\n\ny = a.f()\n");
    project.write("graph.sh", "echo '{\"a.py\": [], \"b.py\": [\"a.py\"]}'\n");
    project.write("truth.jsonl", "");
    project.write(
        "warm.sh",
        "cat truth.jsonl\ntest -s truth.jsonl && exit 1\nexit 0\n",
    );
    project.git_init();
    // Green, recorded: the baseline, and the import graph.
    fake_qg(dir, &["run", "--no-daemon"]).assert_code(0);
    fake_start(dir);
    project.write("a.py", "def f() -> int:\n    return 2\n");
    project.write(
        "truth.jsonl",
        "{\"file\": \"b.py\", \"line\": 3, \"code\": \"T9\", \"message\": \"the importer broke\"}\n",
    );
    let left_out = fake_qg(dir, &["run", "--format", "json"]);
    left_out.assert_code(0);
    assert_eq!(left_out.gate("fake")["warm"], true, "{}", left_out.stdout);
    assert_eq!(
        left_out.json()["scope"]["files_checked"],
        1,
        "a.py alone: {}",
        left_out.stdout
    );
    // The self-check logs its proof last, after keeping it
    // (`.st3/importers-off.json`) and failing the importer on the branch:
    // waiting for the file alone raced with those (seen in CI).
    let read_log =
        || std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap_or_default();
    eventually_or(
        COMPARISON_PATIENCE,
        "the sample's proof",
        || read_log().contains("leaving out the importers of a body-only edit was wrong"),
        read_log,
    );
    assert!(dir.join(".st3/importers-off.json").exists());
    let log = read_log();
    assert!(
        log.contains("a run's 1 file and the 1 importer it left out")
            && log.contains("fake fails on 1 findings in importers it left out: b.py:3:0 T9"),
        "{log}"
    );
    let next = fake_qg(dir, &["run", "--format", "json"]);
    next.assert_code(1);
    assert_eq!(
        findings_of(&next, "fake"),
        [("b.py".to_string(), 3, "T9".to_string())],
        "{}",
        next.stdout
    );
    assert!(
        next.json()["warnings"]
            .to_string()
            .contains("interface_aware_importers is off here"),
        "{}",
        next.stdout
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// Starting is not idling: a tool whose first pass outlasts the idle
/// timeout is served, and the idle clock runs from when it is ready.
#[test]
fn a_daemon_slower_to_start_than_its_idle_timeout_is_served_then_stops_idle() {
    let project = fake_project(&COMMAND_DAEMON.replace(
        "touch '{daemon_dir}/ready'",
        "sleep 2; touch '{daemon_dir}/ready'",
    ));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "cat truth.jsonl\nexit 1\n");
    let started = start(dir, &["--idle-timeout", "1s"]);
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(status(dir)["fake"]["state"], "ready");
    eventually(Duration::from_secs(15), "the idle timeout", || {
        status(dir)["fake"]["state"] == "stopped"
    });
    let log = std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap();
    assert!(log.contains("stopping: idle for"), "{log}");
}

/// A tool that refuses the project's config (dmypy: `follow_imports =
/// "silent"` is not supported): `qg daemon start` names the tool's own
/// reason and the command as it ran; status, doctor and every run say that
/// gate answers cold — and why — while the other daemon serves.
#[test]
fn a_tool_that_refuses_its_config_says_why_and_only_its_gate_answers_cold() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write(
        "pyproject.toml",
        "[tool.mypy]\nfollow_imports = \"silent\"\n",
    );
    let started = qg(dir, &["daemon", "start"]);
    started.assert_code(2);
    let out = &started.stdout;
    assert!(
        out.contains("mypy     failed: `dmypy --status-file ")
            && out.contains("/.st3/daemons/mypy/engine/dmypy.json daemon -- --output=json` exited before it was ready; it said: dmypy: follow-imports=silent not supported")
            && !out.contains("{daemon_dir}"),
        "{out}"
    );
    assert!(out.contains("pyright  ready: "), "{out}");
    let status = qg(dir, &["daemon", "status"]);
    assert!(
        status.stdout.starts_with("1/2 warm gates answer warm\n"),
        "{}",
        status.stdout
    );
    let doctor = qg(dir, &["doctor"]);
    assert!(
        doctor.stdout.contains("! mypy daemon")
            && doctor
                .stdout
                .contains("follow-imports=silent not supported"),
        "{}",
        doctor.stdout
    );
    let run = qg(
        dir,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    assert_eq!(warm_gates(&run), ["pyright"], "{}", run.stdout);
    let mypy = run.gate("mypy")["warnings"].to_string();
    assert!(
        mypy.contains("answered cold: ") && mypy.contains("follow-imports=silent not supported"),
        "{mypy}"
    );
    // Once its daemon is gone, the memory of why still says so.
    qg(dir, &["daemon", "stop", "--gate", "mypy"]).assert_code(0);
    let run = qg(
        dir,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    let mypy = run.gate("mypy")["warnings"].to_string();
    assert!(
        mypy.contains("answered cold: its daemon could not start: "),
        "{mypy}"
    );
    // Every daemon stopped: the user runs cold, and no run names the one
    // that could not start (uvicorn's trial: every run did); doctor does.
    qg(dir, &["daemon", "stop"]).assert_code(0);
    let cold = qg(
        dir,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    assert!(!cold.stdout.contains("could not start"), "{}", cold.stdout);
    let doctor = qg(dir, &["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("follow-imports=silent not supported")
            && doctor
                .stdout
                .contains("the gate's findings need nothing (it answers cold)"),
        "{}",
        doctor.stdout
    );
    // Mended: it starts, and the reason is forgotten.
    project.write("pyproject.toml", "[tool.mypy]\n");
    start(dir, &[]);
    let run = qg(
        dir,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    assert_eq!(warm_gates(&run), ["mypy", "pyright"], "{}", run.stdout);
    assert!(!dir.join(".st3/warm-standing/mypy.json").exists());
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// mypy's note on its own config (`warn_unused_configs`: "unused
/// section(s)") is no finding: a cold mypy exits 0 on it, dmypy 1. The
/// daemon still starts, answers warm, and its answers equal cold runs' —
/// the project's (tomli 2.2.1) mypy answered cold for good before.
#[test]
fn a_note_on_mypy_s_config_alone_is_a_clean_warm_answer() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write(
        "pyproject.toml",
        "[tool.mypy]\nwarn_unused_configs = true\n\n[[tool.mypy.overrides]]\nmodule = \"nowhere.*\"\nignore_errors = true\n",
    );
    let started = start(dir, &[]);
    assert_eq!(started["ok"], true, "{started}");
    assert_warm_equals_cold(dir, "a note on the config").assert_code(0);
    project.write("app/util.py", "x: int = \"a\"\n");
    let run = assert_warm_equals_cold(dir, "an error beside the note");
    assert_eq!(findings_of(&run, "mypy").len(), 1, "{}", run.stdout);
    qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// Where the tool is known to be weaker — its config names `plugins`, for
/// mypy's daemon — every warm answer is compared with a cold run, and so
/// are the first answers after a start; the daemon's log says which and
/// why, and doctor shows how many comparisons agreed since it started.
#[test]
fn a_weaker_configuration_has_every_warm_answer_compared() {
    let project = fake_project(&format!(
        "{COMMAND_DAEMON}      verify_every: 0\n      verify_all_when: [plugins]\n    selection:\n      config: [{{file: pyproject.toml, section: tool.fake}}]\n"
    ));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // Green answers: none of them is confirmed cold by the run itself.
    project.write("truth.jsonl", "");
    project.write("warm.sh", "exit 0\n");
    project.write("pyproject.toml", "[tool.fake]\nplugins = [\"x.plugin\"]\n");
    fake_start(dir);
    let log = || std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap();
    assert!(
        log().contains(
            "every answer is compared with a cold run: pyproject.toml [tool.fake] sets `plugins`"
        ),
        "{}",
        log()
    );
    for round in 1..=3 {
        fake_run(dir, &[]).assert_code(0);
        eventually(COMPARISON_PATIENCE, "the comparison", || {
            log()
                .matches("its answers for a run's 1 file equal a cold run's")
                .count()
                >= round
        });
    }
    let doctor = fake_qg(dir, &["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("its answers agreed with a cold run 4 times since it started"),
        "{}",
        doctor.stdout
    );
    // A run of some files is compared on those files, not the project's.
    project.write(
        "b.py", "y = 2
",
    );
    fake_qg(dir, &["run", "a.py", "--no-state"]).assert_code(0);
    eventually(COMPARISON_PATIENCE, "the named file's comparison", || {
        log()
            .matches("its answers for a run's 1 file equal a cold run's")
            .count()
            == 4
    });
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// The first answers after a start are compared with a cold run
/// (`verify_first`), the later ones only one in `verify_every`.
#[test]
fn the_first_answers_after_a_start_are_compared() {
    let project = fake_project(&format!(
        "{COMMAND_DAEMON}      verify_every: 0\n      verify_first: 2\n      verify_all_when: [plugins]\n    selection:\n      config: [{{file: pyproject.toml, section: tool.fake}}]\n"
    ));
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    // A config without the key the tool is weaker with: only the first
    // answers are compared, not every one.
    project.write("pyproject.toml", "[tool.fake]\nstrict = true\n");
    project.write("truth.jsonl", "");
    project.write("warm.sh", "exit 0\n");
    fake_start(dir);
    let log = || std::fs::read_to_string(dir.join(".st3/daemons/fake/daemon.log")).unwrap();
    // A sample is started (and logged) before the answer goes back.
    let started = || log().matches("comparing its answers for a run's").count();
    let agreed = || {
        log()
            .matches("its answers for a run's 1 file equal a cold run's")
            .count()
    };
    for expected in [1, 2, 2, 2] {
        let run = fake_run(dir, &[]);
        run.assert_code(0);
        assert!(run.gate("fake").get("verified").is_none(), "{}", run.stdout);
        assert_eq!(started(), expected, "{}", log());
        // One comparison at a time: the next answer's starts after it.
        eventually(COMPARISON_PATIENCE, "the comparison", || {
            agreed() == expected
        });
    }
    // --verify says that it compared, when the two agree too.
    let verified = fake_run(dir, &["--verify"]);
    verified.assert_code(0);
    assert_eq!(
        verified.gate("fake")["verified"],
        true,
        "{}",
        verified.stdout
    );
    let told = fake_qg(
        dir,
        &["run", "--scope", "project", "--no-state", "--verify"],
    );
    assert!(
        told.stdout.contains("ms, warm, equal to a cold run"),
        "{}",
        told.stdout
    );
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A gate whose daemon was asked and did not answer says why on its line
/// and in the JSON report: here the socket of a daemon that is gone
/// (`qg-3.sock`: the name of wire protocol 3's socket), which the run does
/// not warn about.
#[test]
fn a_gate_answered_cold_in_a_warm_run_says_why_on_its_line() {
    let project = Project::fixture("warm");
    let dir = project.path();
    let slot = dir.join(".st3/daemons/mypy");
    std::fs::create_dir_all(&slot).unwrap();
    drop(std::os::unix::net::UnixListener::bind(slot.join("qg-3.sock")).unwrap());
    let args = ["run", "--scope", "project", "--gate", "mypy", "--no-state"];
    let human = qg(dir, &args);
    assert!(
        human.stdout.contains(" ms, cold: its daemon is gone\n"),
        "{}",
        human.stdout
    );
    let json = qg(dir, &[&args[..], &["--format", "json"]].concat());
    let gate = &json.json()["gates"][0];
    assert_eq!(gate["cold_because"], "its daemon is gone", "{gate}");
    assert!(gate.get("warnings").is_none(), "{gate}");
    common::assert_fits_schema("run-report.json", &json.json());
    // With no import graph yet (`--no-state` caches none), a daemon that
    // reports what its files import is not asked: the line says that too.
    let files = qg(
        dir,
        &["run", "--gate", "mypy", "--no-state", "app/shapes.py"],
    );
    assert!(
        files.stdout.contains(
            " ms, cold: the import graph is unknown, and a cold run of these files also reports the modules they import\n"
        ),
        "{}",
        files.stdout
    );
}

/// A fake project whose gate has a version (so the result cache keys it):
/// `sh -c …`, as the gate's command is `sh cold.sh`, asked as `sh ARGS`.
fn versioned_fake_project() -> Project {
    fake_project(&format!(
        "    version_args: [\"-c\", \"echo fake 1.0\"]\n{}",
        sampled_daemon(0)
    ))
}

/// Two green files, a daemon that says so, and a cold tool that logs what
/// it is given to `control/cold-args.log`.
fn logging_two_green_files(project: &Project) {
    project.write("b.py", "y = 1\n");
    project.write(
        "cold.sh",
        "echo \"$*\" >> control/cold-args.log\ncat truth.jsonl\ntest -s truth.jsonl && exit 1\nexit 0\n",
    );
    project.write("control/.keep", "");
    project.write("truth.jsonl", "");
    project.write("warm.sh", "exit 0\n");
}

/// Two green files whose cold verdicts a store holds, and the daemon
/// started: the project and its store.
fn two_stored_files_kept_warm() -> (Project, tempfile::TempDir) {
    let project = versioned_fake_project();
    logging_two_green_files(&project);
    let store = tempfile::tempdir().unwrap();
    let qg = |args: &[&str]| stored_qg(project.path(), store.path(), args);
    qg(&["run", "--scope", "project", "--no-daemon", "--no-state"]).assert_code(0);
    qg(&["daemon", "start"]).assert_code(0);
    (project, store)
}

/// `qg args…` in a fake project with the result cache on, in `store`
/// (no background sample of its hits).
fn stored_qg(dir: &Path, store: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qg"));
    cmd.args(args)
        .current_dir(dir)
        .env("CI", "true")
        .env("QG_NO_CACHE", "0")
        .env("QG_CACHE_SAMPLE", "0")
        .env("QG_CACHE_DIR", store);
    Run::within(&mut cmd, PATIENCE)
}

/// A gate whose every file the result cache holds is answered from it,
/// not by its daemon: a cold verdict, shown as one, needing no
/// confirmation (a fix back to a state seen before, a stash popped, a
/// branch switched back). A file it does not hold is the daemon's again.
#[test]
fn a_warm_gate_the_result_cache_answers_whole_asks_no_daemon() {
    let project = versioned_fake_project();
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    project.write("warm.sh", "touch asked-warm\ncat truth.jsonl\nexit 1\n");
    fake_start(dir);
    let store = tempfile::tempdir().unwrap();
    let cached_run =
        |extra: &[&str]| stored_qg(dir, store.path(), &[&PROJECT_RUN[..], extra].concat());
    // A cold run fills the store.
    let cold = cached_run(&["--no-daemon"]);
    cold.assert_code(1);
    assert_eq!(cold.gate("fake")["cache"]["stored"], 1, "{}", cold.stdout);

    // (Its start's first pass asked it.)
    let _ = std::fs::remove_file(dir.join("asked-warm"));
    let answered = cached_run(&[]);
    answered.assert_code(1);
    let gate = answered.gate("fake");
    assert_eq!(gate["warm"], false, "{}", answered.stdout);
    assert!(gate["unconfirmed"].is_null(), "{}", answered.stdout);
    assert_eq!(gate["cache"]["hits"], 1, "{}", answered.stdout);
    assert_eq!(
        findings_of(&answered, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())]
    );
    assert!(!dir.join("asked-warm").exists(), "the daemon was asked");

    // An edit the store has not seen: the daemon answers.
    project.write("a.py", "x = 2\n");
    let edited = cached_run(&[]);
    assert_eq!(edited.gate("fake")["warm"], true, "{}", edited.stdout);
    assert!(edited.gate("fake")["cache"].is_null(), "{}", edited.stdout);
    assert!(dir.join("asked-warm").exists());

    // A daemon that fails to answer: the gate runs cold, and what its tool
    // finds is kept (uvicorn's mypy, whose daemon refuses the project's
    // settings, never reached the cache in a warm loop).
    project.write("warm.sh", "echo 'Traceback: crashed' >&2\nexit 2\n");
    project.write("a.py", "x = 3\n");
    let fell_back = cached_run(&[]);
    assert_eq!(
        fell_back.gate("fake")["warm"],
        false,
        "{}",
        fell_back.stdout
    );
    assert_eq!(
        fell_back.gate("fake")["cache"]["stored"],
        1,
        "{}",
        fell_back.stdout
    );
    let again = cached_run(&[]);
    assert_eq!(again.gate("fake")["cache"]["hits"], 1, "{}", again.stdout);
    fake_qg(dir, &["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A warm answer's confirmation checks with the tool only what no cold
/// run has: the files whose findings the result cache holds for the same
/// inputs are its answer (uvicorn: a 5 s cold run of 84 files, stopped by
/// every next run, kept the state from ever moving).
#[test]
fn a_confirmation_runs_the_tool_only_on_what_the_result_cache_lacks() {
    let (project, store) = two_stored_files_kept_warm();
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let qg = |args: &[&str]| stored_qg(dir, store.path(), args);
    // a.py edited: the warm green covers both files (no green run yet).
    project.write("a.py", "x = 2\n");
    let log = dir.join("control/cold-args.log");
    let _ = std::fs::remove_file(&log);
    let warm = qg(&["run", "--format", "json"]);
    warm.assert_code(0);
    assert_eq!(warm.gate("fake")["warm"], true, "{}", warm.stdout);
    assert_eq!(
        warm.gate("fake")["unconfirmed"]["files"],
        2,
        "{}",
        warm.stdout
    );
    eventually(COMPARISON_PATIENCE, "the green confirmed", || {
        branch_state(dir)["pending"].is_null() && !branch_state(dir)["baseline_sha"].is_null()
    });
    let asked = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        asked.lines().collect::<Vec<_>>(),
        ["a.py"],
        "the cold run was given only the file the store lacks"
    );
    qg(&["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A warm gate the result cache answers in part asks its daemon for the
/// misses alone: the hits are the cache's cold findings, folded into the
/// warm answer (uvicorn: pyright's server pulled 45 files where a cold run
/// checked 1, the other 44 from the cache, and the warm step was slower).
#[test]
fn a_warm_gate_asks_its_daemon_only_for_what_the_result_cache_lacks() {
    let (project, store) = two_stored_files_kept_warm();
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    let qg = |args: &[&str]| stored_qg(dir, store.path(), args);
    // The daemon says b.py, which the store holds as clean, has a finding:
    // the answer for b.py is the store's, so the daemon was not asked it.
    project.write(
        "warm.sh",
        "echo '{\"file\": \"b.py\", \"line\": 1, \"code\": \"W9\", \"message\": \"warm\"}'\nexit 1\n",
    );
    project.write("a.py", "x = 2\n");
    let warm = qg(&["run", "--format", "json"]);
    warm.assert_code(0);
    let gate = warm.gate("fake");
    assert_eq!(gate["warm"], true, "{}", warm.stdout);
    assert_eq!(gate["cache"]["hits"], 1, "{}", warm.stdout);
    assert_eq!(gate["cache"]["misses"], 1, "{}", warm.stdout);
    assert_eq!(gate["cache"]["stored"], 0, "{}", warm.stdout);
    assert!(findings_of(&warm, "fake").is_empty(), "{}", warm.stdout);
    qg(&["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}

/// A daemon's self-check after its first pass is a cold run of the whole
/// program: its findings are kept in the result cache, so the first run on
/// that tree is answered from it — cold, with nothing to confirm, the
/// state moving at once (uvicorn: the first warm green's 5 s confirmation
/// was stopped by every next run, and the state never moved).
#[test]
fn a_daemons_first_self_check_fills_the_result_cache_for_its_confirmations() {
    let project = versioned_fake_project();
    let dir = project.path();
    let _cleanup = Cleanup(dir.to_path_buf());
    logging_two_green_files(&project);
    let store = tempfile::tempdir().unwrap();
    let qg = |args: &[&str]| stored_qg(dir, store.path(), args);
    qg(&["daemon", "start"]).assert_code(0);
    let entries = || {
        std::fs::read_dir(store.path().join("results-v1"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|fan| {
                std::fs::read_dir(fan.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .count()
    };
    eventually(
        COMPARISON_PATIENCE,
        "the self-check's findings kept",
        || entries() == 2,
    );
    let log = dir.join("control/cold-args.log");
    let _ = std::fs::remove_file(&log);
    // The first run on that tree: answered from the cache, cold, nothing
    // to confirm, the state moved at once.
    let first = qg(&["run", "--format", "json"]);
    first.assert_code(0);
    assert_eq!(first.gate("fake")["warm"], false, "{}", first.stdout);
    assert_eq!(first.gate("fake")["cache"]["hits"], 2, "{}", first.stdout);
    let state = branch_state(dir);
    assert!(
        state["pending"].is_null() && !state["baseline_sha"].is_null(),
        "{state}"
    );
    assert!(!log.exists(), "the tool ran");
    qg(&["daemon", "stop"]).assert_code(0);
    assert_nothing_left(dir);
}
