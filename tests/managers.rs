//! Projects set up by their package managers, as users set them up today:
//! uv (a `.venv` without pip, then a uv project), Poetry (its environment
//! kept outside the project), PDM, and Hatch (installing with uv, its
//! environment outside the project). In each, `qg doctor`'s printed fix,
//! run verbatim in a shell, makes the gate green in the next `qg doctor`,
//! and `qg run` checks with the manager's environment: its findings are the
//! ones `uv run mypy .` / `poetry run mypy .` / … print. The real managers
//! come from requirements-tools.txt; they fetch mypy from PyPI.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{tools_venv, Project};
use serde_json::Value;

/// A shell for one project: PATH holds only the managers and the system's
/// directories (no mypy anywhere), plus the variables given.
struct Shell {
    root: PathBuf,
    path: String,
    env: Vec<(String, String)>,
    _tools: tempfile::TempDir,
}

impl Shell {
    fn new(root: &Path, env: &[(&str, String)]) -> Shell {
        let tools = tempfile::tempdir().unwrap();
        for program in ["uv", "poetry", "pdm", "hatch"] {
            std::os::unix::fs::symlink(
                tools_venv().join("bin").join(program),
                tools.path().join(program),
            )
            .unwrap();
        }
        Shell {
            root: root.to_path_buf(),
            path: format!("{}:/usr/bin:/bin", tools.path().display()),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            _tools: tools,
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.root)
            .env("PATH", &self.path)
            .env("CI", "true")
            .env_remove("VIRTUAL_ENV")
            .env_remove("NO_COLOR")
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Runs a command line as a user types it, asserting it succeeds.
    fn sh(&self, line: &str) -> Output {
        let out = self.command("sh").args(["-c", line]).output().unwrap();
        assert!(
            out.status.success(),
            "`{line}` failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn qg_json(&self, args: &[&str]) -> Value {
        let out = self
            .command(env!("CARGO_BIN_EXE_qg"))
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "qg {args:?}: not JSON ({e}):\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// `qg doctor`'s check named `name`.
    fn doctor_check(&self, name: &str) -> Value {
        let doctor = self.qg_json(&["doctor"]);
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no check {name}: {doctor:#}"))
            .clone()
    }

    /// Runs the fix `qg doctor` prints for a missing environment (it must
    /// be `fix`), verbatim; returns how doctor then describes the one found.
    fn make_the_environment(&self, fix: &str) -> String {
        let environment = self.doctor_check("environment");
        assert_eq!(environment["status"], "warning", "{environment:#}");
        assert_eq!(environment["fix"], fix);
        self.sh(fix);
        let environment = self.doctor_check("environment");
        assert_eq!(environment["status"], "ok", "{environment:#}");
        environment["detail"].as_str().unwrap().to_string()
    }

    /// Runs the fix `qg doctor` prints for `name`, verbatim; returns it.
    fn run_doctors_fix(&self, name: &str) -> String {
        let check = self.doctor_check(name);
        assert_eq!(check["status"], "error", "{check:#}");
        let fix = check["fix"].as_str().unwrap().to_string();
        self.sh(&fix);
        let after = self.doctor_check(name);
        assert_eq!(after["status"], "ok", "after `{fix}`: {after:#}");
        fix
    }

    /// The errors the manager's own mypy run reports (`Found N errors`).
    fn mypy_errors_by(&self, runner: &str) -> usize {
        let out = self.command("sh").args(["-c", runner]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter(|line| line.contains(": error:"))
            .count()
    }

    /// qg's mypy findings (project scope, nothing recorded).
    fn qg_mypy_findings(&self) -> usize {
        let report = self.qg_json(&["run", "--gate", "mypy", "--scope", "project", "--no-state"]);
        let mypy = &report["gates"][0];
        assert_eq!(mypy["status"], "failed", "{report:#}");
        mypy["violations"].as_array().unwrap().len()
    }
}

/// A module with two type errors, in a project with no dependencies.
fn python_project(extra_pyproject: &str) -> Project {
    let project = Project::empty();
    project.write(
        "pyproject.toml",
        &format!(
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\ndependencies = []\n{extra_pyproject}"
        ),
    );
    project.write(
        "demo.py",
        "\"\"\"Demo.\"\"\"\n\n\ndef f(x: int) -> str:\n    return x\n\n\ny: int = f(1)\n",
    );
    project.write(".gitignore", ".venv\n");
    project.git_init();
    project
}

#[test]
fn a_uv_project_gets_uv_commands_that_work_as_printed_and_its_environment_is_used() {
    let project = python_project("");
    let shell = Shell::new(project.path(), &[]);
    shell.sh("uv venv --quiet --python python3");
    assert!(!project.path().join(".venv/bin/pip").exists());
    // A virtualenv made by uv, not yet a uv project: no pip to print.
    let environment = shell.doctor_check("environment");
    assert_eq!(environment["status"], "ok", "{environment:#}");
    let fix = shell.run_doctors_fix("ruff_check");
    assert_eq!(fix, "uv pip install --python .venv/bin/python ruff");
    // A uv project: the tool goes into its dev dependencies.
    shell.sh("uv lock --quiet");
    let fix = shell.run_doctors_fix("mypy");
    assert_eq!(fix, "uv add --dev mypy");
    assert!(
        std::fs::read_to_string(project.path().join("pyproject.toml"))
            .unwrap()
            .contains("mypy")
    );
    let own = shell.mypy_errors_by("uv run mypy .");
    assert_eq!(own, 2);
    assert_eq!(shell.qg_mypy_findings(), own);
}

#[test]
fn a_poetry_project_is_checked_in_poetrys_environment_outside_the_project() {
    // This machine's PyPI mirror serves the simple index but not the
    // per-version JSON API Poetry asks PyPI for: the simple index as the
    // primary source works everywhere.
    let project = python_project(
        "\n[tool.poetry]\npackage-mode = false\n\n[[tool.poetry.source]]\nname = \"simple\"\nurl = \"https://pypi.org/simple/\"\npriority = \"primary\"\n",
    );
    let outside = tempfile::tempdir().unwrap();
    let shell = Shell::new(
        project.path(),
        &[
            (
                "POETRY_VIRTUALENVS_PATH",
                outside.path().join("venvs").display().to_string(),
            ),
            ("POETRY_VIRTUALENVS_IN_PROJECT", "false".into()),
            (
                "POETRY_CACHE_DIR",
                outside.path().join("cache").display().to_string(),
            ),
            (
                "POETRY_CONFIG_DIR",
                outside.path().join("config").display().to_string(),
            ),
            (
                "PYTHON_KEYRING_BACKEND",
                "keyring.backends.null.Keyring".into(),
            ),
        ],
    );
    // No environment yet: doctor says so, with Poetry's command.
    let detail = shell.make_the_environment("poetry install");
    assert!(
        detail.starts_with(&outside.path().join("venvs").display().to_string())
            && detail.contains("`poetry env info --path`"),
        "{detail}"
    );
    let fix = shell.run_doctors_fix("mypy");
    assert_eq!(fix, "poetry add --group dev mypy");
    let own = shell.mypy_errors_by("poetry run mypy .");
    assert_eq!(own, 2);
    assert_eq!(shell.qg_mypy_findings(), own);
    // Remembered once a run has made .st3: later runs ask Poetry nothing.
    shell.qg_json(&["run", "--gate", "mypy"]);
    let remembered = std::fs::read_to_string(project.path().join(".st3/environment.json")).unwrap();
    assert!(
        remembered.contains(&outside.path().join("venvs").display().to_string()),
        "{remembered}"
    );
}

#[test]
fn a_pdm_project_gets_pdm_commands_that_work_as_printed() {
    let project = python_project("\n[tool.pdm]\ndistribution = false\n");
    let home = tempfile::tempdir().unwrap();
    // PDM's configuration, cache and logs stay out of the user's home.
    let shell = Shell::new(
        project.path(),
        &[("HOME", home.path().display().to_string())],
    );
    let fix = shell.run_doctors_fix("mypy");
    assert_eq!(fix, "pdm add -dG dev mypy");
    let own = shell.mypy_errors_by("pdm run mypy .");
    assert_eq!(own, 2);
    assert_eq!(shell.qg_mypy_findings(), own);
}

#[test]
fn a_hatch_project_installing_with_uv_is_told_to_declare_the_tool_and_it_survives_a_prune() {
    // Hatch installing with uv has no pip in its environments: `hatch run
    // pip install` would run a pip from elsewhere, into another Python.
    let project =
        python_project("\n[tool.hatch.envs.default]\ninstaller = \"uv\"\nskip-install = true\n");
    let outside = tempfile::tempdir().unwrap();
    let shell = Shell::new(
        project.path(),
        &[
            ("HOME", outside.path().display().to_string()),
            (
                "HATCH_DATA_DIR",
                outside.path().join("data").display().to_string(),
            ),
            (
                "HATCH_CACHE_DIR",
                outside.path().join("cache").display().to_string(),
            ),
        ],
    );
    // No environment yet: doctor says so, with what makes Hatch's.
    let detail = shell.make_the_environment("hatch run python --version");
    assert!(
        detail.starts_with(&outside.path().join("data").display().to_string()),
        "{detail}"
    );
    // Hatch has no command that adds a dependency: the fix says where to
    // declare it, then the command that syncs the environment.
    let check = shell.doctor_check("mypy");
    assert_eq!(check["status"], "error", "{check:#}");
    let fix = check["fix"].as_str().unwrap();
    let (declare, then) = fix.split_once(", then: ").unwrap();
    assert_eq!(
        declare,
        "add \"mypy\" to `dependencies` in [tool.hatch.envs.default] of pyproject.toml"
    );
    let pyproject = project.path().join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(
        &pyproject,
        text.replace(
            "skip-install = true\n",
            "skip-install = true\ndependencies = [\"mypy\"]\n",
        ),
    )
    .unwrap();
    shell.sh(then);
    assert_eq!(shell.doctor_check("mypy")["status"], "ok");
    // What the environment declares comes back after `hatch env prune`.
    shell.sh("hatch env prune");
    shell.sh(then);
    assert_eq!(shell.doctor_check("mypy")["status"], "ok");
    let own = shell.mypy_errors_by("hatch run mypy .");
    assert_eq!(own, 2);
    assert_eq!(shell.qg_mypy_findings(), own);
    // The re-run hint reaches the tool from the user's shell, where only
    // Hatch knows its environment: as printed, it says what qg found.
    let report = shell.qg_json(&["run", "--gate", "mypy", "--scope", "project", "--no-state"]);
    let rerun = report["gates"][0]["rerun_hint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(rerun, "hatch run mypy demo.py");
    assert_eq!(shell.mypy_errors_by(&rerun), own);
}
