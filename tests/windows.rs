//! qg as a Windows program: these tests are built for
//! x86_64-pc-windows-gnu and run under wine by `scripts/windows-tests.sh`
//! (part of the README's test command). They drive `qg.exe` with the real
//! `ruff.exe` from ruff's win_amd64 wheel, with a `.cmd` tool and with
//! `fake_tool.exe` (examples/fake_tool.rs), a Windows program of our own.
#![cfg(windows)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A Windows path for a path the build wrote in Unix form (wine maps the
/// Unix root to drive Z:).
fn windows_path(path: &str) -> PathBuf {
    match path.strip_prefix('/') {
        Some(rest) => PathBuf::from(format!("Z:\\{}", rest.replace('/', "\\"))),
        None => PathBuf::from(path),
    }
}

fn qg_exe() -> PathBuf {
    windows_path(env!("CARGO_BIN_EXE_qg"))
}

/// `fake_tool.exe`, which `cargo test` builds beside the test binaries.
fn fake_tool() -> PathBuf {
    let me = std::env::current_exe().unwrap();
    let tool = me.parent().unwrap().parent().unwrap();
    tool.join("examples").join("fake_tool.exe")
}

/// `ruff.exe` from the pinned ruff's win_amd64 wheel; the set-up script
/// names it. Missing, the test fails: it never skips.
fn ruff_exe() -> PathBuf {
    let path = std::env::var("QG_WINDOWS_RUFF")
        .expect("QG_WINDOWS_RUFF names ruff.exe: run scripts/windows-tests.sh");
    let path = windows_path(&path);
    assert!(path.is_file(), "no ruff.exe at {}", path.display());
    path
}

/// A project in a temp dir, a git repository with its files committed.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let project = Project {
            dir: tempfile::tempdir().unwrap(),
        };
        for (path, text) in files {
            project.write(path, text);
        }
        let repo = git2::Repository::init(project.root()).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let me = git2::Signature::now("qg", "qg@example.com").unwrap();
        repo.commit(Some("HEAD"), &me, &me, "start", &tree, &[])
            .unwrap();
        project
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, path: &str, text: &str) {
        let file = self.root().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    /// `qg ARGS` in the project, with `path` as the whole PATH.
    fn qg(&self, args: &[&str], path: &str) -> Output {
        self.command(args, path).output().unwrap()
    }

    fn command(&self, args: &[&str], path: &str) -> Command {
        let mut command = Command::new(qg_exe());
        command
            .args(args)
            .current_dir(self.root())
            .env("PATH", path)
            .env_remove("VIRTUAL_ENV")
            .env("CI", "true");
        command
    }

    /// `qg run --scope project --format json`, recording nothing.
    fn run_json(&self, path: &str) -> (i32, Value) {
        let out = self.qg(&RUN_JSON, path);
        report_of(out)
    }

    /// [`Project::run_json`], failing the test when qg has not finished
    /// within `limit` (a tool's child that kept qg's pipes open would
    /// otherwise hang the suite). Output goes to files, which no
    /// leftover process can hold open.
    fn run_json_within(&self, path: &str, limit: Duration) -> (i32, Value) {
        let out_dir = tempfile::tempdir().unwrap();
        let stdout = out_dir.path().join("stdout");
        let stderr = out_dir.path().join("stderr");
        let mut child = self
            .command(&RUN_JSON, path)
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                panic!("qg did not finish within {limit:?}: a tool's process outlived it");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        report_of(Output {
            status,
            stdout: std::fs::read(stdout).unwrap(),
            stderr: std::fs::read(stderr).unwrap(),
        })
    }
}

/// `qg run` over the whole project, as JSON, recording no state.
const RUN_JSON: [&str; 6] = [
    "run",
    "--scope",
    "project",
    "--format",
    "json",
    "--no-state",
];

/// The exit code and the JSON report of a `qg run`.
fn report_of(out: Output) -> (i32, Value) {
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "qg printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// The system's own directories, so `cmd.exe` runs a `.cmd` tool.
fn system_path() -> String {
    std::env::var("SystemRoot")
        .map(|root| format!("{root}\\system32;{root}"))
        .unwrap_or_else(|_| "C:\\windows\\system32;C:\\windows".into())
}

/// The findings of `gate` in a report: (file, line, code).
fn findings(report: &Value, gate: &str) -> Vec<(String, u64, String)> {
    let gate = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == gate)
        .unwrap_or_else(|| panic!("no gate {gate} in {report}"));
    let mut found: Vec<_> = gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["file"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

fn gate<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id)
        .unwrap_or_else(|| panic!("no gate {id} in {report}"))
}

/// The built-in config with the ruff gates alone (mypy and pyright are
/// not in these tests' environment).
fn ruff_only_config() -> String {
    let all = "active_gates: [ruff_format, ruff_check, mypy, pyright]";
    assert!(qg::config::EMBEDDED_DEFAULT.contains(all));
    qg::config::EMBEDDED_DEFAULT.replacen(all, "active_gates: [ruff_format, ruff_check]", 1)
}

/// A virtualenv as Windows has them: `.venv\Scripts\`, with ruff.exe.
fn with_venv_ruff(project: &Project) {
    let scripts = project.root().join(".venv").join("Scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::copy(ruff_exe(), scripts.join("ruff.exe")).unwrap();
    project.write(".venv/pyvenv.cfg", "home = C:\\Python311\n");
}

const LINTED: &str = "import os\nimport sys\n\n\nprint(sys.argv)\n";

#[test]
fn ruff_exe_in_the_venv_scripts_is_the_gate_and_its_findings_are_ruffs_own() {
    let project = Project::new(&[
        ("pkg/a.py", LINTED),
        ("pkg/b.py", "x = 1\n"),
        (".st3/quality.yaml", &ruff_only_config()),
        (".gitignore", ".venv/\n"),
    ]);
    with_venv_ruff(&project);
    // Nothing on PATH: ruff is found in the project's .venv\Scripts alone.
    let (code, report) = project.run_json(&system_path());
    assert_eq!(code, 1, "{report}");
    // ruff's own run on the project, as a user runs it.
    let own = Command::new(project.root().join(".venv\\Scripts\\ruff.exe"))
        .args(["check", "--output-format=json", "."])
        .current_dir(project.root())
        .output()
        .unwrap();
    let own: Value = serde_json::from_slice(&own.stdout).unwrap();
    let mut expected: Vec<(String, u64, String)> = own
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let file = v["filename"].as_str().unwrap();
            let relative = Path::new(file)
                .strip_prefix(project.root().canonicalize().unwrap())
                .or_else(|_| Path::new(file).strip_prefix(project.root()))
                .unwrap_or(Path::new(file));
            (
                relative.to_string_lossy().replace('\\', "/"),
                v["location"]["row"].as_u64().unwrap(),
                v["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    expected.sort();
    // The same findings, the paths with forward slashes.
    assert_eq!(findings(&report, "ruff_check"), expected);
    let unused = ("pkg/a.py".to_string(), 1, "F401".to_string());
    assert!(expected.contains(&unused), "{expected:?}");
    assert_eq!(gate(&report, "ruff_format")["status"], "passed", "{report}");
}

#[test]
fn a_cmd_tool_in_the_venv_is_found_by_pathext_before_one_on_the_path() {
    let truth = r#"{"file": "a.py", "line": 1, "code": "T1", "message": "from the venv"}"#;
    let decoy = r#"{"file": "a.py", "line": 9, "code": "DECOY", "message": "from PATH"}"#;
    let config = r#"version: "1"
active_gates: [fake]
project_scope: {include_globs: ["**/*.py"]}
gates:
  fake:
    execution: {command: ["findings"], timeout_seconds: 30, batchable: false}
    parsing:
      strategy: json_violations
      json_lines: true
      violations_path: "/"
      field_map: {file: file, line: line, code: code, message: message}
    capabilities: {file_types: [".py"]}
"#;
    let project = Project::new(&[
        ("a.py", "x = 1\n"),
        ("truth.jsonl", truth),
        ("decoy.jsonl", decoy),
        (".st3/quality.yaml", config),
        (".gitignore", ".venv/\nelsewhere/\n"),
    ]);
    let cmd = |file: &str| format!("@echo off\r\ntype {file}\r\nexit /b 1\r\n");
    project.write(".venv/Scripts/findings.cmd", &cmd("truth.jsonl"));
    project.write(".venv/pyvenv.cfg", "home = C:\\Python311\n");
    project.write("elsewhere/findings.cmd", &cmd("decoy.jsonl"));
    let path = format!(
        "{};{}",
        project.root().join("elsewhere").display(),
        system_path()
    );
    let (code, report) = project.run_json(&path);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        findings(&report, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())]
    );
}

/// Whether `beat` (written every 50 ms by a live `fake_tool beat`) stops
/// changing within `patience`.
fn beat_stops(beat: &Path, patience: Duration) -> bool {
    let until = Instant::now() + patience;
    while Instant::now() < until {
        let before = std::fs::read_to_string(beat).unwrap_or_default();
        std::thread::sleep(Duration::from_millis(400));
        if std::fs::read_to_string(beat).unwrap_or_default() == before {
            return true;
        }
    }
    false
}

/// A config whose one gate runs `fake_tool spawn-and-sleep BEAT`: a tool
/// whose child beats into `beat` until killed.
fn slow_tool_config(beat: &Path, timeout_seconds: u32) -> String {
    format!(
        r#"version: "1"
active_gates: [slow]
project_scope: {{include_globs: ["**/*.py"]}}
gates:
  slow:
    execution: {{command: [{tool:?}, "spawn-and-sleep", {beat:?}], timeout_seconds: {timeout_seconds}, batchable: false}}
    parsing: {{strategy: text_violations, pattern: "^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$"}}
    capabilities: {{file_types: [".py"]}}
"#,
        tool = fake_tool().display().to_string(),
        beat = beat.display().to_string(),
    )
}

#[test]
fn a_timeout_kills_the_tools_child_too() {
    let beat = tempfile::tempdir().unwrap();
    let beat = beat.path().join("beat");
    let config = slow_tool_config(&beat, 2);
    let project = Project::new(&[("a.py", "x = 1\n"), (".st3/quality.yaml", &config)]);
    let started = Instant::now();
    let (code, report) = project.run_json_within(&system_path(), Duration::from_secs(60));
    assert_eq!(code, 2, "{report}");
    assert_eq!(gate(&report, "slow")["status"], "error", "{report}");
    assert_eq!(
        gate(&report, "slow")["error"]["kind"],
        "timeout",
        "{report}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(beat.exists(), "the tool's child never ran");
    assert!(
        beat_stops(&beat, Duration::from_secs(5)),
        "the tool's child outlived the timeout"
    );
}

/// A config whose one gate has a daemon: `fake_tool serve`, beating into
/// `beat` for as long as it lives, and the check printing `truth.jsonl`.
fn daemon_config(beat: &Path) -> String {
    let tool = fake_tool().display().to_string();
    format!(
        r#"version: "1"
active_gates: [fake]
project_scope: {{include_globs: ["**/*.py"]}}
gates:
  fake:
    execution: {{command: [{tool:?}, "print", "truth.jsonl"], timeout_seconds: 20, batchable: false}}
    parsing:
      strategy: json_violations
      json_lines: true
      violations_path: "/"
      field_map: {{file: file, line: line, code: code, message: message}}
    capabilities: {{file_types: [".py"]}}
    daemon:
      protocol: command
      command: [{tool:?}, "serve", "{{daemon_dir}}/ready", {beat:?}]
      ready_file: "{{daemon_dir}}/ready"
      check: [{tool:?}, "print", "truth.jsonl"]
"#,
        beat = beat.display().to_string(),
    )
}

#[test]
fn a_daemon_starts_answers_warm_and_stops_leaving_nothing() {
    let beat_dir = tempfile::tempdir().unwrap();
    let beat = beat_dir.path().join("beat");
    let config = daemon_config(&beat);
    let truth = r#"{"file": "a.py", "line": 1, "code": "T1", "message": "the truth"}"#;
    let project = Project::new(&[
        ("a.py", "x = 1\n"),
        ("truth.jsonl", truth),
        (".st3/quality.yaml", &config),
    ]);
    let path = system_path();
    let start = project.qg(&["daemon", "start"], &path);
    let log = || std::fs::read_to_string(project.root().join(".st3/daemons/fake/daemon.log"));
    assert_eq!(
        start.status.code(),
        Some(0),
        "{}{}\n{}",
        String::from_utf8_lossy(&start.stdout),
        String::from_utf8_lossy(&start.stderr),
        log().unwrap_or_default()
    );
    let (code, report) = project.run_json(&path);
    assert_eq!(code, 1, "{report}");
    assert_eq!(gate(&report, "fake")["warm"], true, "{report}");
    assert_eq!(
        findings(&report, "fake"),
        [("a.py".to_string(), 1, "T1".to_string())]
    );
    let stop = project.qg(&["daemon", "stop"], &path);
    assert_eq!(stop.status.code(), Some(0));
    assert!(
        beat_stops(&beat, Duration::from_secs(10)),
        "the daemon's tool outlived `qg daemon stop`"
    );
    let status = project.qg(&["daemon", "status"], &path);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("0/1"), "{status}");
}

/// The README's PowerShell set-up: `qg completions powershell` prints a
/// script that registers completions for `qg` and knows its commands.
#[test]
fn completions_for_powershell_register_qg_and_its_commands() {
    let project = Project::new(&[("a.py", "x = 1\n")]);
    let out = project.qg(&["completions", "powershell"], &system_path());
    assert!(out.status.success(), "{out:?}");
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(script.contains("Register-ArgumentCompleter"), "{script}");
    assert!(script.contains("'qg'"), "{script}");
    assert!(script.contains("doctor"), "{script}");
}

/// qg killed outright (TerminateProcess: Task Manager, a CI runner's
/// cancel) takes its running tool's whole tree with it: the tree's Job
/// Object dies with the last handle to it, qg's.
#[test]
fn a_killed_qg_takes_its_tools_tree_with_it() {
    let beat = tempfile::tempdir().unwrap();
    let beat = beat.path().join("beat");
    let project = Project::new(&[
        ("a.py", "x = 1\n"),
        (".st3/quality.yaml", &slow_tool_config(&beat, 600)),
    ]);
    let mut qg = project
        .command(&RUN_JSON, &system_path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while !beat.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(beat.exists(), "the tool's child never ran");
    qg.kill().unwrap();
    qg.wait().unwrap();
    assert!(
        beat_stops(&beat, Duration::from_secs(5)),
        "the tool's child outlived qg"
    );
}

/// A daemon killed outright takes its tool with it: the tool lives in the
/// daemon's Job Object, which dies with the daemon.
#[test]
fn a_killed_daemon_takes_its_tool_with_it() {
    let beat_dir = tempfile::tempdir().unwrap();
    let beat = beat_dir.path().join("beat");
    let project = Project::new(&[
        ("a.py", "x = 1\n"),
        ("truth.jsonl", ""),
        (".st3/quality.yaml", &daemon_config(&beat)),
    ]);
    let path = system_path();
    let start = project.qg(&["daemon", "start"], &path);
    assert_eq!(start.status.code(), Some(0), "{start:?}");
    assert!(!beat_stops(&beat, Duration::from_secs(1)), "no tool beats");
    let record = std::fs::read_to_string(project.root().join(".st3/daemons/fake/daemon.json"));
    let record: Value = serde_json::from_str(&record.unwrap()).unwrap();
    let pid = record["pid"].as_u64().unwrap().to_string();
    let kill = Command::new("taskkill")
        .args(["/F", "/PID", &pid])
        .output()
        .unwrap();
    assert!(kill.status.success(), "{kill:?}");
    assert!(
        beat_stops(&beat, Duration::from_secs(10)),
        "the daemon's tool outlived the daemon"
    );
}

/// Workspace trust on Windows: the record lives in `%APPDATA%\qg\
/// trust.json` (never in the repository); `qg watch` runs nothing of an
/// untrusted repository, and runs once it is trusted.
#[test]
fn trust_is_kept_in_appdata_and_an_untrusted_repository_runs_nothing() {
    let beat = tempfile::tempdir().unwrap();
    let marker = beat.path().join("ran");
    let config = format!(
        "version: \"1\"\nactive_gates: [lint]\ngates:\n  lint:\n    execution: {{command: [{tool:?}, \"touch\", {marker:?}]}}\n    parsing: {{strategy: exit_code}}\n",
        tool = fake_tool().display().to_string(),
        marker = marker.display().to_string(),
    );
    let project = Project::new(&[("a.py", "x = 1\n"), (".st3/quality.yaml", &config)]);
    let appdata = tempfile::tempdir().unwrap();
    let qg = |args: &[&str]| {
        project
            .command(args, &system_path())
            .env("APPDATA", appdata.path())
            .env_remove("QG_TRUST_FILE")
            .output()
            .unwrap()
    };
    let refused = qg(&["watch", "--format", "json"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("is not trusted") && stderr.contains("qg trust"),
        "{stderr}"
    );
    assert!(!marker.exists(), "an untrusted gate ran");
    let trusted = qg(&["trust"]);
    assert!(trusted.status.success(), "{trusted:?}");
    let store = appdata.path().join("qg").join("trust.json");
    let text = std::fs::read_to_string(&store).unwrap();
    assert!(text.contains("\"digest\""), "{text}");
    let listed = qg(&["trust", "--list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).starts_with("1 trusted ("),
        "{listed:?}"
    );
}

/// A `.cmd` tool given 1,500 files whose names hold a `%`: the standard
/// library escapes each `%` for cmd.exe as `%%cd:~,%`, and the batches are
/// cut for that length — every file checked, none over cmd.exe's 8,191
/// characters (one batch was 8,751 once, and the gate errored).
#[test]
fn a_cmd_tools_batches_count_cmds_escaping_of_percent_signs() {
    let config = r#"version: "1"
active_gates: [count]
project_scope: {include_globs: ["**/*.py"]}
gates:
  count:
    execution: {command: ["count"], timeout_seconds: 120}
    parsing: {strategy: exit_code}
    capabilities: {file_types: [".py"]}
"#;
    let mut files: Vec<(String, String)> = (0..1500)
        .map(|n| {
            (
                format!("coverage_100%_module_{n:04}.py"),
                "x = 1\n".to_string(),
            )
        })
        .collect();
    files.push((".st3/quality.yaml".into(), config.into()));
    files.push((".gitignore".into(), ".venv/\n".into()));
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let project = Project::new(&borrowed);
    // Fails when cmd.exe could not take the line (it says so, exit 1).
    project.write(".venv/Scripts/count.cmd", "@echo off\r\nexit /b 0\r\n");
    project.write(".venv/pyvenv.cfg", "home = C:\\Python311\n");
    let mut args = RUN_JSON.to_vec();
    args.push("--verbose");
    let out = project.qg(&args, &system_path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let (code, report) = report_of(out);
    assert_eq!(code, 0, "{report}");
    let gate = gate(&report, "count");
    assert_eq!(gate["status"], "passed", "{gate}");
    assert_eq!(gate["files_checked"], 1500, "{gate}");
    // What cmd.exe gets, as the standard library builds it: each name
    // quoted (it holds a `%`), its `%` as `%%cd:~,%`, a space before it.
    // (Wine's cmd.exe takes longer lines than Windows': measured here.)
    let batches: Vec<usize> = stderr
        .lines()
        .filter(|l| l.starts_with("qg: count: "))
        .map(|l| l.matches("_module_").count())
        .collect();
    assert_eq!(batches.iter().sum::<usize>(), 1500, "{stderr}");
    let per_name = "coverage_100%_module_0000.py".len() + 7 + 2 + 1;
    let program = project
        .root()
        .join(".venv\\Scripts\\count.cmd")
        .display()
        .to_string()
        .len();
    for files in batches {
        let line = "cmd.exe /e:ON /v:OFF /d /c \"\"".len() + program + files * per_name;
        assert!(
            line <= 8191,
            "a batch of {files} files makes a {line}-character line"
        );
    }
}

/// The install hint in a virtualenv without pip (as `uv venv` makes it,
/// and no uv on PATH), as Windows PowerShell 5.1 can run it: one
/// separator (`.venv\Scripts\`), and `;` where a POSIX shell has `&&`.
#[test]
fn the_install_hint_is_one_powershell_can_run() {
    let config = r#"version: "1"
active_gates: [ruff_check]
gates:
  ruff_check:
    execution: {command: ["no-such-ruff"]}
    parsing: {strategy: exit_code}
    install_hint: "{install} ruff"
"#;
    let project = Project::new(&[("a.py", "x = 1\n"), (".st3/quality.yaml", config)]);
    project.write(".venv/Scripts/python.exe", "");
    project.write(".venv/pyvenv.cfg", "home = C:\\Python311\n");
    let (code, report) = project.run_json(&system_path());
    assert_eq!(code, 2, "{report}");
    let line = report["summary_line"].as_str().unwrap();
    assert!(
        line.contains(".venv\\Scripts\\python -m ensurepip; .venv\\Scripts\\pip install ruff"),
        "{line}"
    );
    assert!(!line.contains("&&") && !line.contains("Scripts/"), "{line}");
}

/// A case-only rename on disk (Explorer's; git with core.ignorecase shows
/// nothing): the known finding of `pkg/A.py` is still known in `pkg/a.py`,
/// not "+1 new, 1 fixed" — whole project or named.
#[test]
fn a_case_only_rename_keeps_known_findings_known() {
    let project = Project::new(&[
        ("pkg/A.py", LINTED),
        (".st3/quality.yaml", &ruff_only_config()),
        (".gitignore", ".venv/\n"),
    ]);
    with_venv_ruff(&project);
    let written = project.qg(&["baseline", "write", "--no-progress"], &system_path());
    assert!(written.status.success(), "{written:?}");
    // Renamed as Explorer does, through a name of its own.
    let root = project.root();
    std::fs::rename(
        root.join("pkg").join("A.py"),
        root.join("pkg").join("tmp.py"),
    )
    .unwrap();
    std::fs::rename(
        root.join("pkg").join("tmp.py"),
        root.join("pkg").join("a.py"),
    )
    .unwrap();
    let (code, report) = project.run_json(&system_path());
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["baseline"]["new"], 0, "{report}");
    assert_eq!(report["baseline"]["fixed"], 0, "{report}");
    let named = ["run", "pkg/A.py", "--format", "json", "--no-state"];
    let (code, report) = report_of(project.qg(&named, &system_path()));
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["baseline"]["new"], 0, "{report}");
}

/// `--verbose` prints each command as PowerShell reads it: `'it''s.py'`,
/// not a POSIX shell's `'it'\''s.py'`.
#[test]
fn verbose_commands_are_quoted_for_powershell() {
    let project = Project::new(&[
        ("it's.py", "x = 1\n"),
        (".st3/quality.yaml", &ruff_only_config()),
        (".gitignore", ".venv/\n"),
    ]);
    with_venv_ruff(&project);
    let args = [
        "run",
        "it's.py",
        "--format",
        "json",
        "--no-state",
        "--verbose",
    ];
    let out = project.qg(&args, &system_path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'it''s.py'"), "{stderr}");
    assert!(!stderr.contains(r"'\''"), "{stderr}");
}

/// A config saved as UTF-16 (Notepad's "Unicode") is named as every other
/// config error names it: `.st3/quality.yaml`, never `Z:\…\.st3/quality.yaml`.
#[test]
fn a_utf16_config_is_named_as_the_project_names_it() {
    let project = Project::new(&[("a.py", "x = 1\n")]);
    let text: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "version: \"1\"\n"
                .encode_utf16()
                .flat_map(|u| u.to_le_bytes()),
        )
        .collect();
    std::fs::create_dir_all(project.root().join(".st3")).unwrap();
    std::fs::write(project.root().join(".st3").join("quality.yaml"), text).unwrap();
    let out = project.qg(&RUN_JSON, &system_path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid config: .st3/quality.yaml:1: config is not valid UTF-8"),
        "{stderr}"
    );
}
