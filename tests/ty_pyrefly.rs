//! The opt-in type checkers, ty and pyrefly, defined in YAML alone: off in
//! the default, activated by `qg init` when the project configures them,
//! and — the real tools, pinned in requirements-tools.txt — counting what
//! their own runs count.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::process::Command;

use common::{tools_venv, Project};
use serde_json::Value;

const PYPROJECT: &str =
    "[project]\nname = \"pkg\"\nversion = \"0\"\n\n[tool.ty]\n\n[tool.pyrefly]\n";

/// The dirty fixture, configuring both tools.
fn configured() -> Project {
    let project = Project::empty();
    common::copy_dir(&common::repo_dir().join("fixtures/dirty"), project.path());
    project.write("pyproject.toml", PYPROJECT);
    project.git_init();
    project
}

/// The project's own run of a tool, as a user types it (its virtualenv
/// active), and the JSON it printed on stdout.
fn own_run(project: &Project, argv: &[&str]) -> Value {
    let venv = tools_venv();
    let out = Command::new(venv.join("bin").join(argv[0]))
        .args(&argv[1..])
        .current_dir(project.path())
        .env("VIRTUAL_ENV", &venv)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{argv:?} printed no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn gate_count(report: &Value, id: &str) -> usize {
    let gate = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id)
        .unwrap_or_else(|| panic!("no gate {id}: {report}"));
    assert_ne!(gate["status"], "error", "{gate}");
    gate["violations"].as_array().map_or(0, Vec::len)
}

#[test]
fn ty_and_pyrefly_count_what_their_own_runs_count() {
    let project = configured();
    let ty = own_run(&project, &["ty", "check", "--output-format", "gitlab"]);
    let pyrefly = own_run(&project, &["pyrefly", "check", "--output-format", "json"]);
    let ty_count = ty.as_array().unwrap().len();
    let pyrefly_count = pyrefly["errors"].as_array().unwrap().len();
    assert!(ty_count >= 2 && pyrefly_count >= 2, "{ty}\n{pyrefly}");

    let run = project.qg_with_tools(&[
        "run", "--scope", "project", "--gate", "ty", "--gate", "pyrefly", "--format", "json",
    ]);
    let report = run.json();
    assert_eq!(gate_count(&report, "ty"), ty_count, "{report}");
    assert_eq!(gate_count(&report, "pyrefly"), pyrefly_count, "{report}");
    run.assert_code(1);

    // A partial scope: the file and what it reports, positions 1-based.
    let one = project
        .qg_with_tools(&[
            "run",
            "pkg/typing_errors.py",
            "--gate",
            "ty",
            "--gate",
            "pyrefly",
            "--format",
            "json",
        ])
        .json();
    for gate in one["gates"].as_array().unwrap() {
        let lines: Vec<(u64, u64)> = gate["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["file"] == "pkg/typing_errors.py")
            .map(|v| (v["line"].as_u64().unwrap(), v["column"].as_u64().unwrap()))
            .collect();
        assert_eq!(lines, [(2, 12), (5, 14)], "{gate}");
    }
}

#[test]
fn init_activates_ty_and_pyrefly_only_where_the_project_configures_them() {
    // Installed (the tools' virtualenv is active) but not configured: off.
    let plain = Project::fixture("dirty");
    plain.qg_with_tools(&["init"]).assert_code(0);
    let config = std::fs::read_to_string(plain.path().join(".st3/quality.yaml")).unwrap();
    assert!(
        config.contains("active_gates: [ruff_format, ruff_check, mypy, pyright]\n"),
        "{config}"
    );
    // The file is committed: no path of this machine outside the project.
    assert!(
        config.contains("# ty: `ty` installed outside the project;"),
        "{config}"
    );
    let venv = tools_venv().display().to_string();
    assert!(!config.contains(&venv), "{config}");
    assert!(
        config
            .contains("no project config → not active (activated when the project configures it)"),
        "{config}"
    );

    // Configured: on, and `qg run` runs them.
    let project = Project::empty();
    common::copy_dir(&common::repo_dir().join("fixtures/dirty"), project.path());
    project.write("ty.toml", "");
    project.write("pyproject.toml", "[tool.pyrefly]\n");
    project.git_init();
    project.qg_with_tools(&["init"]).assert_code(0);
    let config = std::fs::read_to_string(project.path().join(".st3/quality.yaml")).unwrap();
    assert!(
        config.contains("active_gates: [ruff_format, ruff_check, mypy, pyright, pyrefly, ty]\n"),
        "{config}"
    );
    let run = project.qg_with_tools(&["run", "--scope", "project", "--format", "json"]);
    let report = run.json();
    let ids: Vec<&str> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "ruff_format",
            "ruff_check",
            "mypy",
            "pyright",
            "pyrefly",
            "ty"
        ]
    );
}
