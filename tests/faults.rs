//! Fault injection with fake tools: every way a tool can break must end as an
//! `error` gate with evidence — never `passed`, never an empty `failed`.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use common::{one_gate_config, Project};
use serde_json::Value;

/// A project with `a.py`, a fake tool `bin/fake` running `script`, and a
/// config whose gate `fake` runs it with `extra` gate YAML appended.
fn project_with(script: &str, extra: &str) -> Project {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool("fake", script);
    project.write("c.yaml", &one_gate_config("[\"fake\"]", extra));
    project
}

fn run_json(project: &Project) -> common::Run {
    run_format(project, "json")
}

/// `qg run` over the whole project, asserting `expected` is in its output.
fn assert_output_contains(project: &Project, format: &str, expected: &str) {
    let run = run_format(project, format);
    assert!(run.stdout.contains(expected), "{}", run.stdout);
}

fn run_format(project: &Project, format: &str) -> common::Run {
    project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", format,
    ])
}

fn assert_error(gate: &Value, kind: &str) {
    assert_eq!(gate["status"], "error", "{gate}");
    assert_eq!(gate["error"]["kind"], kind, "{gate}");
    assert!(gate.get("violations").is_none(), "{gate}");
}

#[test]
fn missing_tool_is_an_error_naming_the_install_command() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let config = one_gate_config(
        "[\"no-such-tool-qg\"]",
        "    install_hint: \"pip install no-such-tool-qg\"\n",
    );
    project.write("c.yaml", &config);
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "not_found");
    assert_eq!(
        run.json()["summary_line"],
        "⚠️ 1/1 gates errored — fake: not found (install: pip install no-such-tool-qg)"
    );
}

/// With a project virtualenv, the install command puts the tool in it —
/// where qg looks first — and doctor says the same.
#[test]
fn the_install_command_names_the_project_virtualenv() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let config = one_gate_config(
        "[\"no-such-tool-qg\"]",
        "    install_hint: \"{venv_bin}pip install no-such-tool-qg\"\n",
    );
    project.write("c.yaml", &config);
    project.write(".venv/bin/python", "");
    let run = run_json(&project);
    assert_eq!(
        run.json()["summary_line"],
        "⚠️ 1/1 gates errored — fake: not found (install: .venv/bin/pip install no-such-tool-qg)"
    );
    let doctor = project.qg(&["doctor", "--config", "c.yaml", "--format", "json"]);
    let checks = doctor.json()["checks"].clone();
    let fake = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "fake")
        .unwrap()
        .clone();
    assert_eq!(fake["fix"], ".venv/bin/pip install no-such-tool-qg");
    std::fs::remove_dir_all(project.path().join(".venv")).unwrap();
    assert_eq!(
        run_json(&project).json()["summary_line"],
        "⚠️ 1/1 gates errored — fake: not found (install: pip install no-such-tool-qg)"
    );
}

#[test]
fn tool_without_execute_permission_is_an_error() {
    let project = project_with("exit 0", "");
    let tool = project.path().join("bin/fake");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "not_executable");
}

#[test]
fn unexpected_exit_code_carries_code_and_stderr_tail() {
    let project = project_with("echo 'config is broken: line 3' >&2; exit 2", "");
    let run = run_json(&project);
    run.assert_code(2);
    let gate = run.gate("fake");
    assert_error(&gate, "unexpected_exit_code");
    assert_eq!(gate["error"]["exit_code"], 2);
    assert_eq!(gate["error"]["stderr_tail"], "config is broken: line 3");
    assert_eq!(
        run.json()["summary_line"],
        "⚠️ 1/1 gates errored — fake: unexpected exit code 2"
    );
}

#[test]
fn violations_exit_code_with_empty_output_is_an_error() {
    let project = project_with("exit 1", "");
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "unparseable_output");
}

#[test]
fn violations_exit_code_with_zero_parsed_violations_is_an_error() {
    let project = project_with("echo '[]'; exit 1", "");
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "no_violations_parsed");
}

#[test]
fn garbage_json_with_exit_zero_is_an_error_not_a_pass() {
    let project = project_with("echo '{\"oops'; exit 0", "");
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "unparseable_output");
}

#[test]
fn text_parser_that_matches_nothing_on_violation_exit_is_an_error() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool("fake", "echo 'something unexpected'; exit 1");
    project.write(
        "c.yaml",
        r#"version: "1"
active_gates: [fake]
gates:
  fake:
    execution: {command: ["fake"]}
    parsing: {strategy: text_violations, pattern: '^(?P<file>\S+):(?P<line>\d+): (?P<message>.*)$'}
"#,
    );
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "no_violations_parsed");
}

#[test]
fn killed_by_signal_is_an_error() {
    let project = project_with("kill -9 $$", "");
    let run = run_json(&project);
    run.assert_code(2);
    let gate = run.gate("fake");
    assert_error(&gate, "signal");
    assert!(
        gate["error"]["message"]
            .as_str()
            .unwrap()
            .contains("SIGKILL"),
        "{gate}"
    );
}

#[test]
fn timeout_kills_the_whole_process_tree() {
    let script = "sleep 300 &\necho $! > grandchild.pid\nsleep 300";
    let project = project_with(script, "");
    let config = std::fs::read_to_string(project.path().join("c.yaml")).unwrap();
    project.write(
        "c.yaml",
        &config.replace("timeout_seconds: 30", "timeout_seconds: 1"),
    );
    let started = Instant::now();
    let run = run_json(&project);
    // Not a speed test: a bound that only a hang would exceed.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "qg hung on a timed-out tool"
    );
    run.assert_code(2);
    assert_error(&run.gate("fake"), "timeout");
    assert_eq!(
        run.json()["summary_line"],
        "⚠️ 1/1 gates errored — fake: timed out after 1s"
    );
    let pid: i32 = std::fs::read_to_string(project.path().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_until_gone(pid),
        "grandchild {pid} survived the timeout"
    );
}

/// True once `pid` no longer runs (gone, or a zombie waiting to be reaped).
fn wait_until_gone(pid: i32) -> bool {
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        match stat {
            Err(_) => return true,
            Ok(s)
                if s.rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z')) =>
            {
                return true
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    false
}

#[test]
fn tool_reading_stdin_gets_eof_immediately() {
    // If stdin were inherited, `cat` would block until the timeout.
    let project = project_with("cat; echo '[]'", "");
    let run = run_json(&project);
    run.assert_code(0);
    assert_eq!(run.gate("fake")["status"], "passed");
}

#[test]
fn files_are_passed_as_argv_and_dash_names_cannot_become_options() {
    let script =
        r#"printf '%s\n' "$@" > args.txt; echo '[{"file":"./-rf.py","message":"m"}]'; exit 1"#;
    let project = project_with(script, "");
    project.write("-rf.py", "x = 1\n");
    project.write("sub dir/b.py", "x = 1\n");
    project.write("notes.txt", "not python\n");
    let extra = "    capabilities: {file_types: [\".py\"]}\n    fix_hint: \"fix {files}\"\n";
    project.write("c.yaml", &one_gate_config("[\"fake\", \"--flag\"]", extra));
    let run = run_json(&project);
    run.assert_code(1);
    let args = std::fs::read_to_string(project.path().join("args.txt")).unwrap();
    assert_eq!(args, "--flag\n./-rf.py\na.py\nsub dir/b.py\n");
    // The tool's `./-rf.py` is normalized; the fix hint guards the dash again.
    let gate = run.gate("fake");
    assert_eq!(gate["violations"][0]["file"], "-rf.py");
    assert_eq!(gate["fix_hint"], "fix ./-rf.py");
}

#[test]
fn huge_output_keeps_every_violation() {
    const COUNT: usize = 100_000;
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let mut json = String::from("[");
    for i in 0..COUNT {
        if i > 0 {
            json.push(',');
        }
        let pad = "x".repeat(140);
        json.push_str(&format!(
            r#"{{"file":"a.py","line":{},"code":"C{i}","message":"violation {i} {pad}"}}"#,
            i + 1
        ));
    }
    json.push(']');
    assert!(json.len() > 20_000_000, "output is {} bytes", json.len());
    let data = project.write("out.json", &json);
    project.fake_tool("fake", &format!("cat '{}'; exit 1", data.display()));
    project.write("c.yaml", &one_gate_config("[\"fake\"]", ""));
    let run = run_json(&project);
    run.assert_code(1);
    let gate = run.gate("fake");
    let violations = gate["violations"].as_array().unwrap();
    assert_eq!(violations.len(), COUNT);
    assert_eq!(violations[0]["code"], "C0");
    assert_eq!(violations[COUNT - 1]["code"], format!("C{}", COUNT - 1));
    assert!(violations[COUNT - 1]["message"]
        .as_str()
        .unwrap()
        .ends_with(&"x".repeat(140)));
    assert_eq!(run.json()["summary"]["total_violations"], COUNT);
}

#[test]
fn exit_code_strategy_fails_with_one_finding() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool("fake", "echo 'tests failed' >&2; exit 1");
    project.write(
        "c.yaml",
        "version: \"1\"\nactive_gates: [fake]\ngates:\n  fake:\n    execution: {command: [\"fake\"]}\n    parsing: {strategy: exit_code}\n",
    );
    let run = run_json(&project);
    run.assert_code(1);
    let gate = run.gate("fake");
    assert_eq!(gate["status"], "failed");
    assert_eq!(gate["violations"].as_array().unwrap().len(), 1);
    assert_eq!(gate["violations"][0]["code"], "exit-1");
}

#[test]
fn gates_run_concurrently_and_report_in_config_order() {
    // Each gate announces itself, then waits for the other: only a parallel
    // run lets both see each other before their 10 s patience runs out.
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let waiter = |me: &str, other: &str| {
        format!(
            "touch {me}.started\ni=0\nwhile [ ! -e {other}.started ]; do i=$((i+1)); [ $i -gt 100 ] && exit 3; sleep 0.1; done\necho '[]'"
        )
    };
    project.fake_tool("first", &waiter("first", "second"));
    project.fake_tool("second", &waiter("second", "first"));
    let gate = |id: &str| {
        format!("  {id}:\n    execution: {{command: [\"{id}\"]}}\n    parsing: {{strategy: json_violations, field_map: {{file: f, message: m}}}}\n")
    };
    project.write(
        "c.yaml",
        &format!(
            "version: \"1\"\nactive_gates: [second, first]\ngates:\n{}{}",
            gate("first"),
            gate("second")
        ),
    );
    let run = project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", "json", "--jobs", "2",
    ]);
    run.assert_code(0);
    let ids: Vec<String> = run.json()["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["second", "first"]);

    // With one job the first gate gives up waiting: proof that --jobs is honoured.
    std::fs::remove_file(project.path().join("first.started")).unwrap();
    std::fs::remove_file(project.path().join("second.started")).unwrap();
    let run = project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", "json", "--jobs", "1",
    ]);
    run.assert_code(2);
    assert_eq!(run.gate("second")["error"]["exit_code"], 3);
}

#[test]
fn artifact_log_has_everything_and_is_rotated() {
    let project = project_with("echo '[]'; echo 'diagnostic on stderr' >&2", "");
    let config = std::fs::read_to_string(project.path().join("c.yaml")).unwrap();
    project.write(
        "c.yaml",
        &format!("{config}artifact_logging: {{enabled: true, output_dir: logs, max_files: 2}}\n"),
    );
    for _ in 0..3 {
        run_json(&project).assert_code(0);
    }
    let run = run_json(&project);
    let log = run.gate("fake")["log"].as_str().unwrap().to_string();
    assert!(
        log.starts_with("logs/") && log.ends_with("-fake.log"),
        "{log}"
    );
    let text = std::fs::read_to_string(project.path().join(&log)).unwrap();
    for expected in [
        "gate: fake",
        "program: ",
        "bin/fake",
        "result: exit code 0",
        "duration_ms: ",
        "[]",
        "diagnostic on stderr",
        "\"a.py\"",
    ] {
        assert!(text.contains(expected), "log lacks {expected:?}:\n{text}");
    }
    let logs = std::fs::read_dir(project.path().join("logs"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count();
    assert_eq!(logs, 2);
}

#[test]
fn human_output_neutralizes_terminal_escapes() {
    let hostile = r#"[{"file":"a.py","line":1,"code":"X","message":"evil \u001b[2J\u001b]52;c;aGk=\u0007 text"}]"#;
    let project = project_with(&format!("echo '{hostile}'; exit 1"), "");
    let run = project.qg(&["run", "--config", "c.yaml", "--scope", "project"]);
    run.assert_code(1);
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{7}'),
        "{:?}",
        run.stdout
    );
    assert!(run.stdout.contains("evil \\u{1b}[2J"), "{}", run.stdout);
    // JSON keeps the message exactly as the tool wrote it.
    let run = run_json(&project);
    assert_eq!(
        run.gate("fake")["violations"][0]["message"],
        "evil \u{1b}[2J\u{1b}]52;c;aGk=\u{7} text"
    );
}

#[test]
fn non_utf8_output_is_an_error_for_json_and_kept_for_text() {
    let project = project_with(
        "printf '[{\"file\":\"a.py\",\"message\":\"caf\\351\"}]'; exit 1",
        "",
    );
    let run = run_json(&project);
    run.assert_code(2);
    assert_error(&run.gate("fake"), "unparseable_output");

    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool("fake", "printf 'a.py:1: caf\\351 \\377\\n'; exit 1");
    project.write(
        "c.yaml",
        "version: \"1\"\nactive_gates: [fake]\ngates:\n  fake:\n    execution: {command: [\"fake\"]}\n    parsing: {strategy: text_violations, pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$'}\n",
    );
    let run = run_json(&project);
    run.assert_code(1);
    assert_eq!(
        run.gate("fake")["violations"][0]["message"],
        "caf\u{fffd} \u{fffd}"
    );
}

#[test]
fn a_tool_that_closes_stdout_early_is_an_error_not_a_pass() {
    for code in [0, 1] {
        let project = project_with(&format!("exec 1>&-\nsleep 0.2\nexit {code}"), "");
        let run = run_json(&project);
        run.assert_code(2);
        assert_error(&run.gate("fake"), "unparseable_output");
    }
}

#[test]
fn a_hundred_megabytes_of_output_go_to_the_log_not_to_memory() {
    let project = project_with(
        "yes 'this is not JSON at all' | head -c 100000000; exit 1",
        "",
    );
    let config = std::fs::read_to_string(project.path().join("c.yaml")).unwrap();
    project.write(
        "c.yaml",
        &format!("{config}artifact_logging: {{enabled: true, output_dir: logs}}\n"),
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_qg"))
        .args([
            "run", "--config", "c.yaml", "--scope", "project", "--format", "json",
        ])
        .current_dir(project.path())
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", project.path().join("bin").display()),
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // VmHWM (peak RSS) only grows; sample it until the process is gone.
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_path) {
            if let Some(kb) = status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<u64>().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &json["gates"][0];
    assert_error(gate, "unparseable_output");
    let log = project.path().join(gate["log"].as_str().unwrap());
    assert!(
        std::fs::metadata(&log).unwrap().len() > 100_000_000,
        "the whole output is in the log"
    );
    assert!(peak_kb > 0, "never sampled qg's memory");
    assert!(
        peak_kb < 64 * 1024,
        "qg peaked at {peak_kb} KiB for 100 MB of output"
    );
}

#[test]
fn hostile_file_names_are_passed_safely_and_rendered_on_one_line() {
    let quote = "it's \"quoted\" $(touch pwned).py";
    let newline = "new\nline.py";
    let script = r#"for f in "$@"; do printf '%s\0' "$f" >> args.bin; done
printf '%s' '[{"file":"new\nline.py","line":1,"code":"X","message":"m"}]'; exit 1"#;
    let project = project_with(script, "");
    project.write(quote, "x = 1\n");
    project.write(newline, "x = 1\n");
    let run = run_json(&project);
    run.assert_code(1);
    // Each name arrived as one argument, byte for byte; nothing was run by a shell.
    let args = std::fs::read(project.path().join("args.bin")).unwrap();
    let args: Vec<&[u8]> = args.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
    assert!(
        args.contains(&quote.as_bytes()) && args.contains(&newline.as_bytes()),
        "{args:?}"
    );
    assert!(!project.path().join("pwned").exists());
    assert_eq!(run.gate("fake")["violations"][0]["file"], newline);
    // Human and concise output keep each finding on one line, the name
    // quoted like a C string so it cannot pass for another name.
    assert_output_contains(&project, "human", "\"new\\nline.py\"\n");
    assert_output_contains(
        &project,
        "concise",
        "\"new\\nline.py\":1: error: m [fake:X]\n",
    );
}

#[test]
fn a_non_utf8_file_name_reaches_the_tool_byte_for_byte_and_prints_quoted() {
    // Like real tools, the fake prints the undecodable byte as U+FFFD.
    let script = r#"for f in "$@"; do printf '%s\0' "$f" >> args.bin; done
printf '[{"file":"caf\357\277\275.py","line":1,"code":"X","message":"m"}]'; exit 1"#;
    let project = project_with(script, "    fix_hint: \"fix {files}\"\n");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    std::fs::write(project.path().join(name), "x = 1\n").unwrap();
    let run = run_json(&project);
    run.assert_code(1);
    let args = std::fs::read(project.path().join("args.bin")).unwrap();
    let args: Vec<&[u8]> = args.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
    assert_eq!(args, [&b"a.py"[..], b"caf\xe9.py"]);
    // The finding names the real file (quoted, as JSON cannot hold the byte)
    // and the fix hint can be pasted into bash.
    let gate = run.gate("fake");
    assert_eq!(gate["violations"][0]["file"], r#""caf\xE9.py""#);
    assert_eq!(gate["fix_hint"], r"fix $'caf\xE9.py'");
    assert_output_contains(
        &project,
        "concise",
        "\"caf\\xE9.py\":1: error: m [fake:X]\n",
    );
    assert_output_contains(&project, "sarif", r#""uri": "caf%E9.py""#);
}

#[test]
fn a_symlink_out_of_the_root_is_refused_and_never_checked() {
    let project = project_with("printf '%s\\n' \"$@\" > args.txt; echo '[]'", "");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.py"),
        project.path().join("link.py"),
    )
    .unwrap();
    let run = project.qg(&["run", "--config", "c.yaml", "link.py"]);
    run.assert_fails_with(2, "outside the project root");
    run_json(&project).assert_code(0);
    let args = std::fs::read_to_string(project.path().join("args.txt")).unwrap();
    assert_eq!(args, "a.py\n", "a symlink is never passed to a tool");
}

/// From a subdirectory, human and concise output print paths relative to
/// it (as ruff and git do), and hints say to run from the root; JSON stays
/// root-relative.
#[test]
fn paths_print_relative_to_the_current_directory() {
    let script = r#"for f in "$@"; do echo "{\"file\":\"$f\",\"line\":1,\"code\":\"X\",\"message\":\"m\"}"; done; exit 1"#;
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool("fake", script);
    project.write(
        "c.yaml",
        &one_gate_config(
            "[\"fake\"]",
            "      json_lines: true\n    fix_hint: \"fix {files}\"\n",
        ),
    );
    project.write("pkg/sub/b.py", "x = 1\n");
    project.write("docs/conf.py", "x = 1\n");
    project.git_init();
    let run_in = |dir: &str, format: &str| {
        let config = project.path().join("c.yaml");
        let mut args = vec!["run", "--config", config.to_str().unwrap()];
        args.extend(["--scope", "project", "--format", format]);
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(&args)
            .current_dir(project.path().join(dir))
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", project.path().join("bin").display()),
            )
            .env("CI", "true")
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let concise = run_in("pkg", "concise");
    for line in [
        "sub/b.py:1: error: m [fake:X]",
        "../a.py:1: error: m [fake:X]",
        "../docs/conf.py:1: error: m [fake:X]",
    ] {
        assert!(concise.contains(&format!("\n{line}\n")), "{concise}");
    }
    let human = run_in("pkg", "human");
    assert!(human.contains("\nsub/b.py\n"), "{human}");
    assert!(
        human.contains("fix: cd .. && fix a.py docs/conf.py pkg/sub/b.py"),
        "{human}"
    );
    let concise = run_in("pkg/sub", "concise");
    assert!(
        concise.contains("\nb.py:1: error: m [fake:X]\n"),
        "{concise}"
    );
    assert!(
        concise.contains("\n../../a.py:1: error: m [fake:X]\n"),
        "{concise}"
    );
    assert!(run_in("pkg/sub", "json").contains("\"file\":\"pkg/sub/b.py\""));
    let concise = run_in(".", "concise");
    assert!(
        concise.contains("\npkg/sub/b.py:1: error: m [fake:X]\n"),
        "{concise}"
    );
    assert!(run_in(".", "human").contains("fix: fix a.py"));
}

/// A broken tool's long stderr (long last lines, past the 4 KiB tail cap)
/// ends in a bounded tail that keeps its last line; the log keeps it all.
#[test]
fn a_long_stderr_is_cut_to_its_tail() {
    let script = "i=0; while [ $i -lt 40 ]; do printf 'line %s %0300d é\\n' $i 0 >&2; i=$((i+1)); done; echo 'the real reason' >&2; exit 3";
    let project = project_with(script, "");
    let run = run_json(&project);
    run.assert_code(2);
    let gate = run.gate("fake");
    assert_error(&gate, "unexpected_exit_code");
    let tail = gate["error"]["stderr_tail"].as_str().unwrap();
    assert!(tail.len() <= 4096 && tail.len() > 3500, "{}", tail.len());
    assert!(tail.ends_with("the real reason"), "{tail}");
    let log = std::fs::read_to_string(project.path().join(gate["log"].as_str().unwrap())).unwrap();
    assert!(log.contains("line 0 ") && log.contains("line 39 "));
}

/// A checker with mypy's cache: a file whose size and mtime in whole
/// seconds are what it cached is not read again (mypy's `validate_meta`).
const WHOLE_SECOND_CACHE: &str = r#"#!/bin/sh
out=""
mkdir -p .cache
for f in "$@"; do
  key="$(stat -c '%Y %s' "$f")"
  memo=".cache/$(printf '%s' "$f" | tr / _)"
  if [ -f "$memo" ] && [ "$(head -n 1 "$memo")" = "$key" ]; then
    verdict=$(tail -n 1 "$memo")
  else
    verdict=ok
    grep -q BAD "$f" && verdict=bad
    printf '%s\n%s\n' "$key" "$verdict" > "$memo"
  fi
  if [ "$verdict" = bad ]; then
    out="$out${out:+,}{\"file\":\"$f\",\"line\":1,\"code\":\"BAD\",\"message\":\"bad\"}"
  fi
done
echo "[$out]"
[ -z "$out" ]
"#;

/// Sleeps until just after the start of the next second.
fn start_of_a_second() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    std::thread::sleep(
        Duration::from_millis(1_020) - Duration::from_nanos(now.subsec_nanos().into()),
    );
}

#[test]
fn an_edit_in_the_second_of_a_cached_run_is_seen_by_a_whole_second_cache() {
    // The ecosystem check's cleo: mypy cached a module in the second of its
    // last write, the revert that followed in that second kept its size,
    // and every later run read the edit from the cache. qg now starts such a
    // tool only after the second of the newest write.
    let repo = common::repo::GitRepo::new(&[("m.py", "GOOD\n"), (".gitignore", ".cache/\n")]);
    repo.write("checker.sh", WHOLE_SECOND_CACHE);
    let config = one_gate_config(
        r#"["sh", "checker.sh"]"#,
        "    success: {exit_codes_ok: [0], exit_codes_violations: [1]}\n",
    )
    .replace(
        "timeout_seconds: 30",
        "timeout_seconds: 30\n      whole_second_mtimes: true",
    );
    repo.write(".st3/quality.yaml", &config);
    repo.commit("a checker that caches by whole-second mtime");
    repo.run().assert_code(0);
    for attempt in 0..2 {
        start_of_a_second();
        repo.write("m.py", "BAD!\n");
        let broken = repo.qg(&["run", "--no-state", "--format", "json", "m.py"]);
        assert_eq!(broken.code, 1, "attempt {attempt}: {}", broken.stdout);
        // The same size, at once: in the same second, were it not for qg.
        // (Named, as mypy reads a module it was not given: the revert is
        // no change to git.)
        repo.write("m.py", "GOOD\n");
        let fixed = repo.qg(&["run", "--no-state", "--format", "json", "m.py"]);
        assert_eq!(
            fixed.code, 0,
            "attempt {attempt}: a stale red: {}",
            fixed.stdout
        );
    }
}
