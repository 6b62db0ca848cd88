//! `qg mcp` driven by a real, independent MCP client: the official Python
//! SDK (`mcp`, pinned in requirements-tools.txt), through
//! `tests/mcp/client.py`. Every answer is checked against the output schema
//! the server declared for its tool; the tools run for real on fixtures
//! (ruff, mypy, pyright) or are small fake tools for cancellation and
//! concurrency. A raw JSON-RPC exchange checks that stdout carries nothing
//! but the protocol.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{repo_dir, tools_venv, Project};
use serde_json::{json, Value};

/// Runs the plan's steps in one client session against `qg mcp` in
/// `project`; one result per step.
fn drive(project: &Project, plan: Value) -> Vec<Value> {
    let venv = tools_venv();
    let python = venv.join("bin/python");
    let client = repo_dir().join("tests/mcp/client.py");
    let out = Command::new(&python)
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_qg"))
        .arg(project.path())
        .arg(plan.to_string())
        .env("VIRTUAL_ENV", &venv)
        .env("QG_TRUST_FILE", project.trust_file())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed (is `mcp` installed? run scripts/test.sh):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the client printed no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"op": "call", "tool": tool, "arguments": arguments})
}

/// A successful answer whose structured content fits the tool's schema.
fn fitting(answer: &Value) -> &Value {
    assert_eq!(answer["is_error"], false, "{answer}");
    assert_eq!(answer["schema_errors"], json!([]), "{answer}");
    &answer["structured"]
}

/// An error answer (`isError`), its text.
fn tool_error(answer: &Value) -> String {
    assert_eq!(answer["is_error"], true, "{answer}");
    answer["text"][0].as_str().unwrap().to_string()
}

fn qg_json(project: &Project, args: &[&str]) -> Value {
    let run = project.qg_with_tools(args);
    run.json()
}

fn violations(report: &Value) -> Vec<Value> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn every_tool_is_listed_with_valid_schemas_and_answers_as_the_cli_does() {
    let project = Project::fixture("dirty");
    let results = drive(
        &project,
        json!([
            {"op": "list_tools"},
            call("run_gates", json!({"scope": "project", "max_violations": 3, "no_state": true})),
            call("list_scope", json!({"scope": "project"})),
            call("explain_gate", json!({"gate": "mypy"})),
            call("fix", json!({"scope": "project", "diff": true})),
            call("run_gates", json!({"scope": "project"})),
            call("history", json!({})),
        ]),
    );
    let tools = results[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["tool"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["run_gates", "list_scope", "fix", "explain_gate", "history"]
    );
    for tool in tools {
        assert_eq!(tool["schema_problems"], json!([]), "{tool}");
        assert!(tool["tool"]["outputSchema"].is_object(), "{tool}");
        assert!(tool["tool"]["description"].as_str().unwrap().len() > 80);
    }

    // run_gates: the CLI's report, three violations listed, errors first,
    // the others counted and written down whole.
    let cli = qg_json(
        &project,
        &[
            "run",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
        ],
    );
    let run = fitting(&results[1]);
    assert_eq!(run["summary_line"], cli["summary_line"]);
    assert_eq!(run["summary"], cli["summary"]);
    // Every finding is listed or counted as left out, notes too.
    let total = cli["summary"]["total_violations"].as_u64().unwrap()
        + cli["summary"]["notes"].as_u64().unwrap();
    assert!(total > 3, "{cli}");
    assert_eq!(violations(run).len(), 3);
    assert_eq!(run["truncated"], total - 3);
    assert_eq!(run["known_not_listed"], 0);
    assert!(violations(run).iter().all(|v| v["severity"] == "error"));
    // The text an agent reads starts with the verdict and what is left out.
    let text = results[1]["text"][0].as_str().unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    assert_eq!(at("summary_line"), 1, "{text}");
    assert!(
        at("overall_pass") < at("truncated") && at("truncated") < at("summary"),
        "{text}"
    );
    let full: Value = serde_json::from_slice(
        &std::fs::read(project.path().join(run["full_report"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    assert_eq!(violations(&full).len() as u64, total);

    // list_scope: `qg files --format json`.
    let files = qg_json(
        &project,
        &["files", "--scope", "project", "--format", "json"],
    );
    assert_eq!(fitting(&results[2]), &files);

    // explain_gate: the program that runs, and its version.
    let explained = fitting(&results[3]);
    assert!(explained["program"]
        .as_str()
        .unwrap()
        .ends_with("/bin/mypy"));
    assert!(explained["tool_version"]
        .as_str()
        .unwrap()
        .starts_with("mypy 2.4.1"));
    assert_eq!(explained["checks_importers"], true);

    // fix with diff: the diffs, and nothing written.
    let fixed = fitting(&results[4]);
    assert_eq!(fixed["changed_files"], json!([]));
    assert!(fixed["diffs"]["ruff_format"]
        .as_str()
        .unwrap()
        .contains("badformat.py"));
    assert_eq!(
        project
            .qg_with_tools(&[
                "run",
                "--scope",
                "project",
                "--format",
                "json",
                "--no-state"
            ])
            .json()["summary"],
        cli["summary"]
    );

    // A run that records state is in the history.
    fitting(&results[5]);
    let history = fitting(&results[6]);
    assert_eq!(history["runs"].as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history["runs"][0]["scope"], "project");
}

#[test]
fn long_runs_report_progress_per_gate() {
    let project = Project::fixture("dirty");
    let results = drive(
        &project,
        json!([call("run_gates", json!({"scope": "project"}))]),
    );
    fitting(&results[0]);
    let progress = results[0]["progress"].as_array().unwrap();
    let messages: Vec<&str> = progress
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    for gate in ["Ruff format", "Ruff lint", "Mypy", "Pyright"] {
        assert!(
            messages.contains(&format!("{gate}: running on 6 files").as_str()),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with(&format!("{gate}: failed ("))),
            "{messages:?}"
        );
    }
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
}

#[test]
fn bad_arguments_are_tool_errors_and_an_unknown_tool_is_a_protocol_error() {
    let project = Project::fixture("dirty");
    let results = drive(
        &project,
        json!([
            call("run_gates", json!({"scop": "project"})),
            call("run_gates", json!({"scope": "everything"})),
            call("run_gates", json!({"max_violations": "ten"})),
            call("run_gates", json!({"gates": ["mpy"]})),
            call("list_scope", json!({"paths": ["/etc/passwd"]})),
            call("explain_gate", json!({})),
            {"op": "call", "tool": "no_such_tool", "arguments": {}},
            call("explain_gate", json!({"gate": "ruff_check"})),
        ]),
    );
    assert_eq!(
        tool_error(&results[0]),
        "invalid arguments: unknown argument `scop`; did you mean `scope`?"
    );
    let scope = tool_error(&results[1]);
    assert!(
        scope.starts_with("invalid arguments: unknown variant `everything`, expected one of"),
        "{scope}"
    );
    assert!(tool_error(&results[2]).starts_with("invalid arguments: invalid type: string \"ten\""));
    assert!(tool_error(&results[3]).contains("did you mean `mypy`?"));
    assert!(
        tool_error(&results[4]).starts_with("path is outside the project root"),
        "{}",
        results[4]
    );
    assert_eq!(
        tool_error(&results[5]),
        "invalid arguments: missing field `gate`"
    );
    assert_eq!(
        results[6]["protocol_error"]["code"], -32602,
        "{}",
        results[6]
    );
    assert!(results[6]["protocol_error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown tool `no_such_tool`"));
    // None of it hurt the server.
    fitting(&results[7]);
}

/// A project with two gates, `slow` and `other`, each a fake tool that
/// records its pid, its child's and when it ran, sleeping `seconds`.
/// The pid file appears whole (written aside, then renamed): a cancel
/// waits for it to exist, and a cancel between the shell's truncating
/// open and its write left it empty (CI at ae6781e).
fn sleeping_gate_project(seconds: u32) -> Project {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let script = r#"name=$1; seconds=$2; shift 2
sleep 60 &
echo $! > "$name.child"
echo "$(date +%s.%N) start" >> "$name.times"
echo $$ > "$name.pid.tmp"
mv "$name.pid.tmp" "$name.pid"
sleep "$seconds"
echo "$(date +%s.%N) end" >> "$name.times"
echo '[]'"#;
    project.fake_tool("sleeper", script);
    let gate = |name: &str| {
        format!(
            r#"  {name}:
    execution:
      command: ["bin/sleeper", "{name}", "{seconds}"]
      timeout_seconds: 120
    parsing:
      strategy: json_violations
      violations_path: "/"
      field_map: {{file: file, line: line, code: code, message: message}}
"#
        )
    };
    project.write(
        ".st3/quality.yaml",
        &format!(
            "version: \"1\"\nactive_gates: [slow, other]\ngates:\n{}{}",
            gate("slow"),
            gate("other")
        ),
    );
    project.git_init();
    project.trust();
    project
}

/// Alive, and not a zombie waiting for its parent.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

fn pid(path: PathBuf) -> u32 {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_cancelled_call_kills_its_tool_tree_records_nothing_and_the_server_goes_on() {
    let project = sleeping_gate_project(60);
    let started = Instant::now();
    let results = drive(
        &project,
        json!([
            {"op": "cancel", "tool": "run_gates", "arguments": {"gates": ["slow"]},
             "when_file": project.path().join("slow.pid")},
            call("list_scope", json!({})),
        ]),
    );
    assert_eq!(results[0]["answered"], false, "{}", results[0]);
    assert!(results[0].get("never_started").is_none());
    let tool = pid(project.path().join("slow.pid"));
    let child = pid(project.path().join("slow.child"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while (running(tool) || running(child)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!running(tool), "the cancelled tool {tool} still runs");
    assert!(
        !running(child),
        "the cancelled tool's child {child} still runs"
    );
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "the call ran to its end"
    );
    // An interrupted run proves nothing: no baseline, no history.
    let state = std::fs::read_to_string(project.path().join(".st3/state.json")).unwrap_or_default();
    assert!(!state.contains("baseline_sha"), "{state}");
    assert!(!project.path().join(".st3/history.jsonl").exists());
    // The server answered the next call.
    let scope = fitting(&results[1]);
    assert_eq!(scope["mode"], "project", "{scope}");
}

#[test]
fn two_calls_at_once_run_side_by_side() {
    let project = sleeping_gate_project(1);
    let results = drive(
        &project,
        json!([{"op": "concurrent", "calls": [
            {"tool": "run_gates", "arguments": {"gates": ["slow"], "scope": "project", "no_state": true}},
            {"tool": "run_gates", "arguments": {"gates": ["other"], "scope": "project", "no_state": true}},
        ]}]),
    );
    let answers = results[0]["answers"].as_array().unwrap();
    let mut logs = Vec::new();
    for (answer, gate) in answers.iter().zip(["slow", "other"]) {
        let report = fitting(answer);
        assert_eq!(report["overall_pass"], true, "{report}");
        assert_eq!(report["gates"][0]["id"], gate);
        logs.push(report["gates"][0]["log"].as_str().unwrap().to_string());
    }
    assert_ne!(logs[0], logs[1]);
    let span = |name: &str| -> (f64, f64) {
        let text = std::fs::read_to_string(project.path().join(format!("{name}.times"))).unwrap();
        let times: Vec<f64> = text
            .lines()
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .collect();
        (times[0], times[1])
    };
    let (slow, other) = (span("slow"), span("other"));
    assert!(
        slow.0 < other.1 && other.0 < slow.1,
        "the calls did not overlap: {slow:?} {other:?}"
    );
}

/// stdout carries JSON-RPC messages and nothing else, even when a tool
/// prints on its own stdout and stderr; the server answers `tools/list`.
#[test]
fn stdout_is_the_protocol_alone() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool("noisy", "echo 'noise on stderr' >&2\necho '[]'");
    project.write(
        ".st3/quality.yaml",
        &common::one_gate_config("[\"bin/noisy\"]", ""),
    );
    project.trust();
    let mut server = common::qg_server(&project, "mcp");
    let mut input = server.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "run_gates", "arguments": {"scope": "project", "no_state": true}}}),
    ];
    for message in &messages {
        writeln!(input, "{message}").unwrap();
    }
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut answered = std::collections::BTreeMap::new();
    while answered.len() < 3 {
        let line = lines.next().expect("the server closed stdout").unwrap();
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        if let Some(id) = message["id"].as_u64() {
            answered.insert(id, message);
        }
    }
    drop(input);
    let status = server.wait().unwrap();
    assert!(status.success(), "closing stdin ends the server cleanly");
    assert_eq!(answered[&1]["result"]["serverInfo"]["name"], "qg");
    assert_eq!(answered[&2]["result"]["tools"].as_array().unwrap().len(), 5);
    let report = &answered[&3]["result"]["structuredContent"];
    assert_eq!(report["overall_pass"], true, "{report}");
    assert_eq!(report["gates"][0]["warnings"], Value::Null, "{report}");
}

#[test]
fn with_a_baseline_only_new_violations_are_listed_and_the_known_ones_counted() {
    let project = Project::fixture("dirty");
    project.qg_with_tools(&["baseline", "write"]).assert_code(0);
    project.write("pkg/extra.py", "import os\n");
    let results = drive(
        &project,
        json!([
            call("run_gates", json!({"scope": "project", "no_state": true})),
            call(
                "run_gates",
                json!({"scope": "project", "no_state": true, "new_only": false})
            ),
        ]),
    );
    let new_only = fitting(&results[0]);
    assert_eq!(new_only["overall_pass"], false);
    let listed = violations(new_only);
    assert_eq!(listed.len(), 1, "{new_only}");
    assert_eq!(listed[0]["file"], "pkg/extra.py");
    assert_eq!(listed[0]["code"], "F401");
    assert_eq!(listed[0]["baseline_state"], "new");
    let known = new_only["baseline"]["known"].as_u64().unwrap();
    assert!(known > 0);
    assert_eq!(new_only["known_not_listed"], known);
    assert_eq!(new_only["truncated"], 0);
    assert!(new_only["full_report"].is_string());

    let everything = fitting(&results[1]);
    assert_eq!(everything["known_not_listed"], 0);
    assert_eq!(violations(everything).len() as u64, known + 1);
    assert!(everything.get("full_report").is_none());
}

#[test]
fn fix_changes_exactly_the_failing_files_in_scope_and_reports_what_is_left() {
    let project = Project::fixture("dirty");
    let untouched = std::fs::read(project.path().join("pkg/badformat.py")).unwrap();
    let results = drive(
        &project,
        json!([call("fix", json!({"paths": ["pkg/lint.py"]}))]),
    );
    let fixed = fitting(&results[0]);
    assert_eq!(fixed["changed_files"], json!(["pkg/lint.py"]), "{fixed}");
    assert_eq!(fixed["fixed"], 1, "{fixed}");
    assert_eq!(fixed["errors"], json!([]));
    // What is left: the unused variable ruff will not remove by itself.
    let left: Vec<String> = violations(&fixed["report"])
        .iter()
        .map(|v| {
            format!(
                "{}:{}",
                v["file"].as_str().unwrap(),
                v["code"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(left, ["pkg/lint.py:F841"], "{fixed}");
    assert_eq!(
        std::fs::read(project.path().join("pkg/badformat.py")).unwrap(),
        untouched,
        "a file outside the scope was touched"
    );
}

#[test]
fn run_gates_is_answered_by_live_daemons() {
    let project = Project::fixture("warm");
    let qg = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(args)
            .current_dir(project.path())
            .env("VIRTUAL_ENV", tools_venv())
            .output()
            .unwrap()
    };
    assert!(qg(&["daemon", "start"]).status.success());
    let answers = drive(
        &project,
        json!([call(
            "run_gates",
            json!({"scope": "project", "no_state": true})
        )]),
    );
    let stopped = qg(&["daemon", "stop"]);
    assert!(stopped.status.success());
    let report = fitting(&answers[0]);
    let warm = common::warm_gate_ids(report);
    assert_eq!(warm, ["mypy", "pyright"], "{report}");
    assert_eq!(report["overall_pass"], true, "{report}");
}

/// An agent's call runs nothing of a repository the user has not trusted:
/// every tool answers an error naming `qg trust` (with the official SDK),
/// and the gate that would create a file never runs; trusted, it does.
#[test]
fn an_untrusted_repository_answers_every_call_with_an_error_naming_qg_trust() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let marker = project.path().with_extension("ran");
    project.write(
        ".st3/quality.yaml",
        &common::one_gate_config(
            &format!(
                "[\"sh\", \"-c\", \"touch {}; echo '[]'\"]",
                marker.display()
            ),
            "",
        ),
    );
    project.git_init();
    let results = drive(
        &project,
        json!([
            call("run_gates", json!({"scope": "project", "no_state": true})),
            call("explain_gate", json!({"gate": "fake"})),
        ]),
    );
    for answer in &results {
        let error = tool_error(answer);
        assert!(
            error.contains("is not trusted: qg would run the gate commands of .st3/quality.yaml; read them, then run `qg trust` there"),
            "{error}"
        );
    }
    assert!(!marker.exists(), "an untrusted gate ran");
    project.trust();
    let results = drive(
        &project,
        json!([call(
            "run_gates",
            json!({"scope": "project", "no_state": true})
        )]),
    );
    assert_eq!(fitting(&results[0])["overall_pass"], true, "{}", results[0]);
    assert!(marker.exists());
    let _ = std::fs::remove_file(&marker);
}
