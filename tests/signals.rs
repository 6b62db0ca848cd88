//! Interrupts: Ctrl-C / SIGTERM kill every child tree, leave state alone and
//! exit 130 / 143; `kill -9` at any moment never leaves a torn state file.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Project;

const SLOW_TOOL: &str =
    "echo $$ > tool.pid\nsleep 300 &\necho $! > grandchild.pid\ntouch started\nwait";

fn project(tool: &str) -> Project {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [slow]\nartifact_logging: {enabled: false}\ngates:\n  slow:\n    execution: {command: [\"slow\"], timeout_seconds: 600}\n    parsing: {strategy: exit_code}\n",
    );
    project.fake_tool("slow", tool);
    project.git_init();
    project.write(".st3/state.json", "{\"keep\": \"me\"}");
    project
}

fn spawn_qg(dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_qg"))
        .arg("run")
        .current_dir(dir)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", dir.join("bin").display()),
        )
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gone(pid: i32) -> bool {
    for _ in 0..200 {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(s)
                if s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return true
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(25)),
        }
    }
    false
}

fn pid_in(project: &Project, file: &str) -> i32 {
    fs::read_to_string(project.path().join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn interrupt(signal: i32, expected_code: i32, name: &str) {
    let project = project(SLOW_TOOL);
    let child = spawn_qg(project.path());
    wait_for(&project.path().join("started"));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(expected_code), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "interrupted by {name}; stopped slow; state not updated"
        )),
        "{stderr}"
    );
    assert!(gone(pid_in(&project, "tool.pid")), "the tool survived");
    assert!(
        gone(pid_in(&project, "grandchild.pid")),
        "the tool's child survived"
    );
    assert_eq!(
        fs::read_to_string(project.path().join(".st3/state.json")).unwrap(),
        "{\"keep\": \"me\"}"
    );
}

#[test]
fn ctrl_c_kills_every_tool_tree_and_exits_130() {
    interrupt(libc::SIGINT, 130, "SIGINT");
}

#[test]
fn sigterm_kills_every_tool_tree_and_exits_143() {
    interrupt(libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn kill_9_at_random_moments_never_tears_the_state_file() {
    // The tool alternates pass and fail, so every completed run rewrites state.
    let project = project("if grep -q BAD a.py; then exit 1; fi; exit 0");
    // Kill at a random point within the length of a whole run.
    let run_micros = (0..3)
        .map(|_| {
            let started = Instant::now();
            spawn_qg(project.path()).wait().unwrap();
            started.elapsed().as_micros() as u64
        })
        .max()
        .unwrap();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut killed_mid_run = 0;
    for round in 0..40 {
        project.write("a.py", if round % 2 == 0 { "BAD\n" } else { "x = 1\n" });
        let mut child = spawn_qg(project.path());
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(seed % run_micros.max(1)));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        let text = fs::read_to_string(project.path().join(".st3/state.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("round {round}: torn state file ({e}):\n{text}"));
        assert_eq!(json["keep"], "me", "round {round}");
    }
    assert!(
        killed_mid_run > 5,
        "only {killed_mid_run} kills landed mid-run"
    );
}

/// Ctrl-C during `qg fix` kills the fixer and puts back the file it was
/// halfway through writing, then exits 130.
#[test]
fn ctrl_c_during_fix_puts_every_file_back() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool(
        "lint",
        r#"for f in "$@"; do printf '[{"file":"%s","line":1,"code":"X","message":"bad"}]' "$f"; done; exit 1"#,
    );
    // Writes half a file, then hangs: the state a kill would leave behind.
    project.fake_tool(
        "fixer",
        "for f in \"$@\"; do printf 'x =' > \"$f\"; done\necho $$ > tool.pid\nsleep 300 &\necho $! > grandchild.pid\ntouch started\nwait",
    );
    project.write(
        ".st3/quality.yaml",
        &common::one_gate_config(
            r#"["lint"]"#,
            "    capabilities: {supports_autofix: true}\n    fix: {command: [fixer]}\n",
        ),
    );
    project.git_init();
    let child = Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(["fix", "a.py", "--no-progress"])
        .current_dir(project.path())
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", project.path().join("bin").display()),
        )
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&project.path().join("started"));
    assert_eq!(
        fs::read_to_string(project.path().join("a.py")).unwrap(),
        "x ="
    );
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted by SIGINT; stopped the fixers and put every file back"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(project.path().join("a.py")).unwrap(),
        "x = 1\n"
    );
    assert!(gone(pid_in(&project, "tool.pid")), "the fixer survived");
    assert!(
        gone(pid_in(&project, "grandchild.pid")),
        "the fixer's child survived"
    );
}
