//! Verdicts that must be the truth, found by running qg on real projects:
//! each test reproduces one way qg's answer used to differ from the tools'.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::{violation_keys, Project};

/// mypy prints `setup.cfg: note: unused section(s)` after its JSON lines
/// (warn_unused_configs, implied by strict): the findings before it count,
/// and the note is surfaced as a warning, not lost.
#[test]
fn a_tool_note_after_json_lines_keeps_the_findings_and_is_surfaced() {
    let project = Project::empty();
    project.write(
        "setup.cfg",
        "[mypy]\nwarn_unused_configs = True\n[mypy-nonexistent.*]\nignore_missing_imports = True\n",
    );
    project.write("pkg/__init__.py", "");
    project.write("pkg/a.py", "x: int = \"a\"\n");
    let run = project.qg_with_tools(&["run", "pkg/a.py", "--gate", "mypy", "--format", "json"]);
    run.assert_code(1);
    let gate = run.gate("mypy");
    assert_eq!(gate["status"], "failed", "{gate}");
    assert_eq!(
        violation_keys(&gate),
        [(
            "pkg/a.py".to_string(),
            Some(1),
            "assignment".to_string(),
            "error".to_string()
        )]
    );
    assert_eq!(
        gate["warnings"],
        serde_json::json!([
            "output line 2 is not a finding: `setup.cfg: note: unused section(s): [mypy-nonexistent.*]`"
        ])
    );
    let human = project.qg_with_tools(&["run", "pkg/a.py", "--gate", "mypy"]);
    assert!(
        human.stdout.contains(
            "warning: output line 2 is not a finding: `setup.cfg: note: unused section(s)"
        ),
        "{}",
        human.stdout
    );
}

/// A syntax error in the user's code is a finding of the file — for the
/// formatter too, which cannot format it — never a broken tool; mypy, which
/// stops at it without checking anything else, is an error that names it.
#[test]
fn a_syntax_error_is_a_violation_of_the_file_for_every_gate_that_checks_on() {
    let project = Project::empty();
    project.write("pkg/__init__.py", "");
    project.write("pkg/bad.py", "def f(:\n    pass\n");
    project.write("pkg/ugly.py", "x  =  1\n");
    let run = project.qg_with_tools(&["run", "--scope", "project", "--format", "json"]);
    run.assert_code(2);
    let format = run.gate("ruff_format");
    assert_eq!(format["status"], "failed", "{format}");
    assert_eq!(
        violation_keys(&format),
        [
            (
                "pkg/bad.py".to_string(),
                Some(1),
                "invalid-syntax".to_string(),
                "error".to_string()
            ),
            (
                "pkg/ugly.py".to_string(),
                Some(1),
                "unformatted".to_string(),
                "error".to_string()
            ),
        ]
    );
    let syntax = &format["violations"][0];
    assert_eq!(syntax["column"], 7);
    assert_eq!(
        syntax["message"],
        "Expected a parameter or the end of the parameter list"
    );
    let mypy = run.gate("mypy");
    assert_eq!(mypy["error"]["kind"], "stopped", "{mypy}");
    assert!(
        mypy["error"]["short"]
            .as_str()
            .unwrap()
            .starts_with("stopped before checking anything: pkg/bad.py:1: "),
        "{mypy}"
    );
    for id in ["ruff_check", "pyright"] {
        let gate = run.gate(id);
        assert_eq!(gate["status"], "failed", "{gate}");
        assert!(
            violation_keys(&gate)
                .iter()
                .any(|k| k.0 == "pkg/bad.py" && k.1 == Some(1)),
            "{gate}"
        );
    }
}

/// A formatter that fails for another reason (here: a file that is not
/// UTF-8, which ruff cannot read) is still an error, naming the file; the
/// real findings beside it are kept.
#[test]
fn a_formatter_that_cannot_read_a_file_is_an_error() {
    let project = Project::empty();
    std::fs::write(project.path().join("latin1.py"), b"x = '\xff'\n").unwrap();
    project.write("ugly.py", "x  =  1\n");
    let run = project.qg_with_tools(&[
        "run",
        "latin1.py",
        "ugly.py",
        "--gate",
        "ruff_format",
        "--format",
        "json",
    ]);
    run.assert_code(2);
    let gate = run.gate("ruff_format");
    assert_eq!(gate["error"]["kind"], "could_not_check", "{gate}");
    assert_eq!(
        gate["error"]["message"],
        "Ruff format could not check latin1.py: stream did not contain valid UTF-8"
    );
    assert_eq!(
        violation_keys(&gate),
        [(
            "ugly.py".to_string(),
            Some(1),
            "unformatted".to_string(),
            "error".to_string()
        )]
    );
}

/// Where the environment already holds every dependency the project
/// declares, installing them cannot resolve those imports: the advice says
/// so and names the way to silence them, instead of an install that changes
/// nothing (issue 65: `uv sync` advised on every run of a synced workspace).
#[test]
fn unresolved_imports_in_a_complete_environment_are_no_install_problem() {
    let project = Project::empty();
    project.write(
        "app.py",
        "import notinstalled_a\nimport notinstalled_b\nfrom notinstalled_c import x\n\nprint(notinstalled_a, notinstalled_b, x)\n",
    );
    // The tools' virtualenv, where the tools run, holds mypy.
    project.write("pyproject.toml", "[project]\nname = \"app\"\nversion = \"0\"\ndependencies = [\"mypy>=1\"]\n[dependency-groups]\ndev = [\"Pyright[nodejs]\"]\n");
    let pyright_warning = |project: &Project| {
        let run = project.qg_with_tools(&[
            "run", "--scope", "project", "--gate", "pyright", "--format", "json",
        ]);
        run.assert_code(1);
        run.gate("pyright")["warnings"][0]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        pyright_warning(&project),
        "3 of 3 findings are unresolved imports: pyright's environment already holds every dependency the project declares, so no install finds them: declare the packages that provide those modules, or silence them with `reportMissingImports = false` (and `reportMissingModuleSource`) in pyright's config"
    );
    // One declared dependency missing: installing may help.
    project.write("pyproject.toml", "[project]\nname = \"app\"\nversion = \"0\"\ndependencies = [\"mypy>=1\", \"notinstalled-a\"]\n");
    assert!(pyright_warning(&project)
        .contains("pyright cannot see the project's dependencies; install them where it runs"),);
}

/// A type checker that cannot see the project's dependencies reports them
/// by the hundred; the run says so, and so does `qg doctor` afterwards.
#[test]
fn mostly_unresolved_imports_are_named_as_an_environment_problem() {
    let project = Project::empty();
    project.write(
        "app.py",
        "import notinstalled_a\nimport notinstalled_b\nfrom notinstalled_c import x\n\nprint(notinstalled_a, notinstalled_b, x)\n",
    );
    let run = project.qg_with_tools(&[
        "run", "--scope", "project", "--gate", "mypy", "--gate", "pyright", "--format", "json",
    ]);
    run.assert_code(1);
    // The tools run from the test virtualenv, so that is where to install.
    let advice = format!(
        "pyright cannot see the project's dependencies; install them where it runs: {}/bin/pip install -e . (or the project's requirements file)",
        common::tools_venv().display()
    );
    assert_eq!(
        run.gate("pyright")["warnings"],
        serde_json::json!([format!("3 of 3 findings are unresolved imports: {advice}")])
    );
    assert!(
        run.gate("mypy")["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("3 of 3 findings are unresolved imports: mypy cannot see"),
        "{}",
        run.gate("mypy")
    );
    let doctor = project.qg_with_tools(&["doctor", "--format", "json"]);
    let checks = doctor.json()["checks"].clone();
    let pyright = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pyright imports")
        .unwrap_or_else(|| panic!("{checks}"))
        .clone();
    assert_eq!(pyright["status"], "warning");
    assert_eq!(pyright["fix"], advice.as_str());
    // One unresolved import among real findings is not an environment.
    project.write(
        "app.py",
        "import notinstalled_a\n\nx: int = 'a'\ny: int = 'b'\nprint(notinstalled_a)\n",
    );
    let run = project.qg_with_tools(&[
        "run", "--scope", "project", "--gate", "pyright", "--format", "json",
    ]);
    assert!(
        run.gate("pyright").get("warnings").is_none(),
        "{}",
        run.gate("pyright")
    );
}
