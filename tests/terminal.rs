//! Terminal behaviour: --quiet, --verbose, --color and NO_COLOR.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::{one_gate_config, Project};

fn failing_project() -> Project {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.fake_tool(
        "fake",
        "echo '[{\"file\":\"a.py\",\"line\":1,\"code\":\"X1\",\"message\":\"bad\"}]'; exit 1",
    );
    project.write("c.yaml", &one_gate_config("[\"fake\", \"--opt\"]", ""));
    project
}

fn qg(project: &Project, extra: &[&str], no_color: bool) -> common::Run {
    let mut args = vec!["run", "--config", "c.yaml", "--scope", "project"];
    args.extend_from_slice(extra);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_qg"));
    cmd.args(&args)
        .current_dir(project.path())
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", project.path().join("bin").display()),
        )
        .env("CI", "true");
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
    common::Run::from(cmd.output().unwrap())
}

#[test]
fn quiet_prints_only_the_summary_line() {
    let run = qg(&failing_project(), &["--quiet"], false);
    run.assert_code(1);
    assert_eq!(run.stdout, "❌ 1/1 gates failed — 1 violation: Fake tool\n");
}

#[test]
fn verbose_prints_each_command_on_stderr() {
    let project = failing_project();
    let run = qg(&project, &["--verbose"], false);
    run.assert_code(1);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("qg: fake: "))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(line.ends_with("bin/fake --opt a.py"), "{line}");
    assert!(!run.stdout.contains("qg: fake:"));
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let project = failing_project();
    // Piped: no colour by default.
    assert!(!qg(&project, &[], false).stdout.contains('\u{1b}'));
    // Forced on, even when piped.
    assert!(qg(&project, &["--color", "always"], false)
        .stdout
        .contains("\u{1b}["));
    // NO_COLOR wins over auto; --color never wins over everything.
    assert!(!qg(&project, &["--color", "auto"], true)
        .stdout
        .contains('\u{1b}'));
    assert!(!qg(&project, &["--color", "never"], false)
        .stdout
        .contains('\u{1b}'));
}

#[test]
fn quiet_and_verbose_conflict() {
    let run = qg(&failing_project(), &["--quiet", "--verbose"], false);
    run.assert_fails_with(2, "cannot be used with");
}

/// A reader that goes away (`qg completions bash | head -3`) is no error
/// of qg's: no panic, exit 0, whatever the command writes.
#[test]
fn a_closed_pipe_on_stdout_is_quietly_the_end() {
    let project = common::Project::empty();
    for args in [&["completions", "bash"][..], &["completions", "fish"][..]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(args)
            .current_dir(project.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before qg writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
