//! End to end with the REAL ruff, mypy and pyright (pinned in
//! requirements-tools.txt, installed by scripts/test.sh) on fixtures/.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::{violation_keys, Project};

type Key = (String, Option<u64>, String, String);

fn key(file: &str, line: Option<u64>, code: &str, severity: &str) -> Key {
    (
        file.to_string(),
        line,
        code.to_string(),
        severity.to_string(),
    )
}

#[test]
fn clean_project_passes_every_gate() {
    let project = Project::fixture("clean");
    let run = project.qg_with_tools(&["run", "--scope", "project", "--format", "json"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["overall_pass"], true);
    assert_eq!(
        json["summary_line"],
        "✅ 4/4 gates passed — 3 files checked (project)"
    );
    for id in ["ruff_format", "ruff_check", "mypy", "pyright"] {
        let gate = run.gate(id);
        assert_eq!(gate["status"], "passed", "{gate}");
        assert_eq!(gate["files_checked"], 3);
        assert!(gate.get("violations").is_none(), "{gate}");
    }
}

#[test]
fn dirty_project_reports_exactly_the_known_violations() {
    let project = Project::fixture("dirty");
    let run = project.qg_with_tools(&["run", "--scope", "project", "--format", "json"]);
    run.assert_code(1);
    let json = run.json();
    assert_eq!(
        json["summary_line"],
        "❌ 4/4 gates failed — 9 violations (2 auto-fixable), 2 notes: Ruff format, Ruff lint, Mypy, Pyright"
    );
    assert_eq!(
        violation_keys(&run.gate("ruff_format")),
        [key("pkg/badformat.py", Some(1), "unformatted", "error")]
    );
    assert_eq!(
        violation_keys(&run.gate("ruff_check")),
        [
            key("pkg/lint.py", Some(1), "F401", "error"),
            key("pkg/lint.py", Some(6), "F841", "error"),
            key("pkg/warn.py", Some(2), "B015", "error"),
        ]
    );
    assert_eq!(
        violation_keys(&run.gate("mypy")),
        [
            key("pkg/notes.py", Some(4), "misc", "info"),
            key("pkg/typing_errors.py", Some(2), "return-value", "error"),
            key("pkg/typing_errors.py", Some(5), "assignment", "error"),
        ]
    );
    assert_eq!(
        violation_keys(&run.gate("pyright")),
        [
            key("pkg/notes.py", Some(4), "", "info"),
            key("pkg/typing_errors.py", Some(2), "reportReturnType", "error"),
            key(
                "pkg/typing_errors.py",
                Some(5),
                "reportAssignmentType",
                "error"
            ),
            key("pkg/warn.py", Some(2), "reportUnusedExpression", "warning"),
        ]
    );
    // warn.py's E712 has only an unsafe fix: `ruff check --fix` leaves it.
    assert_eq!(
        run.gate("ruff_check")["fix_hint"],
        "ruff check --fix pkg/lint.py"
    );
    assert_eq!(
        run.gate("ruff_format")["fix_hint"],
        "ruff format pkg/badformat.py"
    );
    assert_eq!(run.gate("mypy")["rerun_hint"], "mypy pkg/typing_errors.py");
    assert!(run.gate("mypy").get("fix_hint").is_none());
    for id in ["ruff_format", "ruff_check", "mypy", "pyright"] {
        let log = run.gate(id)["log"].as_str().unwrap().to_string();
        let text = std::fs::read_to_string(project.path().join(&log)).unwrap();
        assert!(
            text.contains(".venv/bin/"),
            "{id} log does not name the resolved tool:\n{text}"
        );
    }
}

#[test]
fn pyright_warnings_fail_the_gate_although_pyright_exits_zero() {
    let project = Project::fixture("dirty");
    let run = project.qg_with_tools(&[
        "run",
        "pkg/warn.py",
        "--gate",
        "pyright",
        "--format",
        "json",
    ]);
    run.assert_code(1);
    let gate = run.gate("pyright");
    assert_eq!(gate["status"], "failed");
    assert_eq!(
        violation_keys(&gate),
        [key(
            "pkg/warn.py",
            Some(2),
            "reportUnusedExpression",
            "warning"
        )]
    );
    let log = std::fs::read_to_string(project.path().join(gate["log"].as_str().unwrap())).unwrap();
    assert!(log.contains("result: exit code 0"), "{log}");
}

#[test]
fn notes_alone_are_reported_but_do_not_fail() {
    let project = Project::fixture("dirty");
    let run = project.qg_with_tools(&[
        "run",
        "pkg/notes.py",
        "--gate",
        "mypy",
        "--gate",
        "pyright",
        "--format",
        "json",
    ]);
    run.assert_code(0);
    for id in ["mypy", "pyright"] {
        let gate = run.gate(id);
        assert_eq!(gate["status"], "passed", "{gate}");
        assert_eq!(violation_keys(&gate)[0].3, "info");
    }
}

#[test]
fn human_output_starts_with_the_summary_and_groups_by_file() {
    let project = Project::fixture("dirty");
    let run = project.qg_with_tools(&["run", "pkg/typing_errors.py", "pkg/lint.py"]);
    run.assert_code(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("❌ 3/4 gates failed — 6 violations"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains('\u{1b}'),
        "colour must be off when piped"
    );
    let lint = lines.iter().position(|l| *l == "pkg/lint.py").unwrap();
    let typing = lines
        .iter()
        .position(|l| *l == "pkg/typing_errors.py")
        .unwrap();
    assert!(lint < typing, "files sorted:\n{}", run.stdout);
    let typing_block: Vec<&str> = lines[typing + 1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    let first_positions: Vec<&str> = typing_block
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("      "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        first_positions,
        ["2:12", "2:12", "5:14", "5:14"],
        "{}",
        run.stdout
    );
}

#[test]
fn directories_expand_and_unknown_files_are_skipped_by_type() {
    let project = Project::fixture("clean");
    project.write("docs/readme.txt", "docs\n");
    let run = project.qg_with_tools(&["run", "docs/readme.txt", "--format", "json"]);
    run.assert_code(0);
    assert!(run.json()["summary_line"]
        .as_str()
        .unwrap()
        .starts_with("⏭️ nothing to check"));
    let gate = run.gate("ruff_check");
    assert_eq!(gate["status"], "skipped");
    assert!(
        gate["skip_reason"].as_str().unwrap().contains("file_types"),
        "{gate}"
    );
    let run = project.qg_with_tools(&["files", "pkg", "--format", "json"]);
    let files: Vec<String> = run.json()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, ["pkg/__init__.py", "pkg/cli.py", "pkg/core.py"]);
}

/// SARIF names the version of the tool that made each run's findings (the
/// pins of requirements-tools.txt), asked once and then cached.
#[test]
fn sarif_carries_each_tools_own_version() {
    let pins = std::fs::read_to_string(common::repo_dir().join("requirements-tools.txt")).unwrap();
    let pin = |name: &str| {
        pins.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}==")))
            .or_else(|| {
                pins.lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}[nodejs]==")))
            })
            .unwrap_or_else(|| panic!("{name} is not pinned"))
            .to_string()
    };
    let project = Project::fixture("dirty");
    for _ in 0..2 {
        let run = project.qg_with_tools(&["run", "--scope", "project", "--format", "sarif"]);
        let sarif: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let versions: Vec<&str> = sarif["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tool"]["driver"]["version"].as_str().unwrap())
            .collect();
        assert_eq!(
            versions,
            [pin("ruff"), pin("ruff"), pin("mypy"), pin("pyright")]
        );
    }
    let cache = std::fs::read_to_string(project.path().join(".st3/tool-versions.json")).unwrap();
    assert!(
        cache.contains(&format!("pyright {}", pin("pyright"))),
        "{cache}"
    );
}

/// The fix and re-run hints run as printed from a shell that has not
/// activated the project's `.venv`, where qg found the tools without
/// activation: they name the tools by path (`.venv/bin/mypy …`), which
/// the shell finds, where a bare `mypy` is "command not found".
#[test]
fn every_hint_runs_as_printed_from_a_shell_without_the_environment() {
    let project = Project::fixture("dirty");
    let bin = project.path().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["ruff", "mypy", "pyright", "python"] {
        std::os::unix::fs::symlink(common::tools_venv().join("bin").join(tool), bin.join(tool))
            .unwrap();
    }
    project.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    let project_run = [
        "run",
        "--scope",
        "project",
        "--format",
        "json",
        "--no-state",
    ];
    let run = project.qg(&project_run);
    run.assert_code(1);
    let mut hints = Vec::new();
    for id in ["ruff_check", "mypy", "pyright", "ruff_format"] {
        let gate = run.gate(id);
        let hint = gate["fix_hint"].as_str().or(gate["rerun_hint"].as_str());
        hints.push(
            hint.unwrap_or_else(|| panic!("{id} has no hint: {gate}"))
                .to_string(),
        );
    }
    assert_eq!(
        hints,
        [
            ".venv/bin/ruff check --fix pkg/lint.py",
            ".venv/bin/mypy pkg/typing_errors.py",
            ".venv/bin/pyright pkg/typing_errors.py pkg/warn.py",
            ".venv/bin/ruff format pkg/badformat.py",
        ]
    );
    for hint in &hints {
        let out = std::process::Command::new("sh")
            .args(["-c", hint])
            .current_dir(project.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", std::env::var("HOME").unwrap())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_ne!(out.status.code(), Some(127), "{hint}: {said}");
        let file = hint.rsplit(' ').next().unwrap();
        assert!(
            said.contains(file) || said.contains("1 file"),
            "{hint}: {said}"
        );
    }
    // A uv project's `.venv` is uv's: `uv run` where the shell has uv, the
    // path where it has not.
    project.write("uv.lock", "version = 1\n");
    let rerun = |run: common::Run| run.gate("mypy")["rerun_hint"].as_str().unwrap().to_string();
    let args = [&project_run[..], &["--gate", "mypy"]].concat();
    assert_eq!(
        rerun(project.qg(&args)),
        ".venv/bin/mypy pkg/typing_errors.py"
    );
    project.fake_tool("uv", "exit 0");
    assert_eq!(rerun(project.qg(&args)), "uv run mypy pkg/typing_errors.py");
}

/// `scripts/try.sh` leaves alone a tool the project's environment already
/// has — the version its lock file pins, here a ruff 0.0.1 — installs
/// nothing the project has, and says what it kept.
#[test]
fn try_sh_keeps_the_projects_own_tools_and_says_which() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.git_init();
    let venv = project.path().join(".venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let site = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = std::path::PathBuf::from(String::from_utf8(site.stdout).unwrap().trim());
    // The project's own ruff, as its lock file pinned it; mypy and pyright
    // reach it from the tests' environment.
    let ruff = site.join("ruff-0.0.1.dist-info");
    std::fs::create_dir_all(&ruff).unwrap();
    std::fs::write(
        ruff.join("METADATA"),
        "Metadata-Version: 2.1\nName: ruff\nVersion: 0.0.1\n",
    )
    .unwrap();
    let tools_site = std::process::Command::new(common::tools_venv().join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    std::fs::write(site.join("tools.pth"), tools_site.stdout).unwrap();
    let out = std::process::Command::new("bash")
        .arg(common::repo_dir().join("scripts/try.sh"))
        .arg(project.path())
        .env("QG_TRY_QG", env!("CARGO_BIN_EXE_qg"))
        .env(
            "PATH",
            format!(
                "{}:{}",
                common::tools_venv().join("bin").display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .env("QG_TRUST_FILE", project.trust_file())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("try.sh:\u{1b}[0m keeping the project's own ruff 0.0.1, mypy ")
            && said.contains(", pyright "),
        "{said}"
    );
    assert!(!said.contains("installing what it lacks"), "{said}");
    assert!(
        ruff.join("METADATA").exists(),
        "the project's ruff was replaced"
    );
}
