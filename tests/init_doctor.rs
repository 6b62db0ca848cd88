//! `qg init` on three project layouts, and `qg doctor`.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::fs;

use common::{copy_dir, repo_dir, Project};

fn init_fixture(name: &str) -> Project {
    let project = Project::empty();
    copy_dir(&repo_dir().join("fixtures/init").join(name), project.path());
    let gitignore = project.path().join("gitignore.txt");
    if gitignore.exists() {
        fs::rename(&gitignore, project.path().join(".gitignore")).unwrap();
    }
    project.git_init();
    project
}

fn config_of(project: &Project) -> (String, qg::config::Config) {
    let text = fs::read_to_string(project.path().join(".st3/quality.yaml")).unwrap();
    let config = qg::config::parse(&text, ".st3/quality.yaml").expect("generated config is valid");
    (text, config)
}

#[test]
fn src_layout_with_pyproject_config_and_one_installed_tool() {
    let project = init_fixture("src_layout");
    project.fake_tool("ruff", "echo 'ruff 9.9.9'");
    let run = project.qg(&["init"]);
    run.assert_code(0);
    let (text, config) = config_of(&project);
    // ruff is installed (and configured); mypy is configured; pyright neither.
    assert_eq!(config.active_gates, ["ruff_format", "ruff_check", "mypy"]);
    assert!(text.contains("# Layout: src layout"), "{text}");
    assert!(
        text.contains("configured in pyproject.toml [tool.mypy]"),
        "{text}"
    );
    assert!(text.contains("pyright: `pyright` not installed (pip install 'pyright[nodejs]'); no project config → not active"), "{text}");
    assert!(
        text.contains("# Python code found in: src, tests"),
        "{text}"
    );
    // The project's own files are left alone: qg's state keeps itself out
    // of commits.
    assert!(!project.path().join(".gitignore").exists());
    let ignore = fs::read_to_string(project.path().join(".st3/.gitignore")).unwrap();
    assert!(ignore.starts_with("# Created by qg"), "{ignore}");
    // The written config is the one qg then uses.
    let files = project.qg(&["files", "--scope", "project"]);
    files.assert_code(0);
    assert_eq!(
        files.stdout,
        "pyproject.toml\nsrc/app/__init__.py\ntests/test_app.py\n"
    );
}

#[test]
fn flat_layout_with_tool_config_files_and_an_existing_gitignore() {
    let project = init_fixture("flat");
    project.write(".venv/lib/site.py", "x = 1\n");
    project.qg(&["init"]).assert_code(0);
    let (text, config) = config_of(&project);
    assert_eq!(config.active_gates, ["mypy", "pyright"]);
    assert!(text.contains("# Layout: flat layout"), "{text}");
    assert!(text.contains("configured in mypy.ini"), "{text}");
    assert!(text.contains("configured in pyrightconfig.json"), "{text}");
    assert!(text.contains("    - \".venv/**\""), "{text}");
    // The project's own .gitignore is left as it was.
    let gitignore = fs::read_to_string(project.path().join(".gitignore")).unwrap();
    assert_eq!(gitignore, "node_modules/\n.st3/logs/\n");
    project.qg(&["init", "--force"]).assert_code(0);
    let again = fs::read_to_string(project.path().join(".gitignore")).unwrap();
    assert_eq!(again, gitignore);
    // A run's state stays out of `git status`.
    project.qg(&["run", "--no-progress"]);
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(project.path())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status
            .lines()
            .filter(|l| l.contains(".st3/"))
            .all(|l| l.ends_with(".st3/quality.yaml")),
        "{status}"
    );
}

#[test]
fn loose_scripts_with_nothing_installed_get_every_default_gate() {
    let project = init_fixture("scripts");
    project.qg(&["init"]).assert_code(0);
    let (text, config) = config_of(&project);
    assert_eq!(
        config.active_gates,
        ["ruff_format", "ruff_check", "mypy", "pyright"]
    );
    assert!(text.contains("# Layout: loose modules"), "{text}");
    assert!(
        text.contains("No tool is installed or configured yet"),
        "{text}"
    );
    assert!(
        text.contains("parent_branch: master") || text.contains("parent_branch: main"),
        "{text}"
    );
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let project = init_fixture("scripts");
    project.write(".st3/quality.yaml", "# mine\n");
    let run = project.qg(&["init"]);
    run.assert_fails_with(2, "already exists; pass --force");
    assert_eq!(
        fs::read_to_string(project.path().join(".st3/quality.yaml")).unwrap(),
        "# mine\n"
    );
    project.qg(&["init", "--force"]).assert_code(0);
    assert!(config_of(&project).0.starts_with("# qg configuration"));
}

#[test]
fn init_pyproject_appends_a_tool_qg_table_and_leaves_the_rest_as_it_was() {
    let project = init_fixture("src_layout");
    project.fake_tool("ruff", "echo 'ruff 9.9.9'");
    let before = fs::read_to_string(project.path().join("pyproject.toml")).unwrap();
    project.qg(&["init", "--pyproject"]).assert_code(0);
    let after = fs::read_to_string(project.path().join("pyproject.toml")).unwrap();
    assert!(
        after.starts_with(&before),
        "the project's own bytes are kept"
    );
    let table = &after[before.len()..];
    assert!(table.trim_start().starts_with("[tool.qg]\n"), "{table}");
    assert!(
        table.contains("active_gates = [\"ruff_format\", \"ruff_check\", \"mypy\"]"),
        "{table}"
    );
    assert!(table.lines().count() < 30, "{table}");
    assert!(!project.path().join(".st3/quality.yaml").exists());
    // The table is the config qg then uses, with the built-in gates.
    let doctor = project.qg(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("pyproject.toml: 6 gates defined, 3 active"),
        "{}",
        doctor.stdout
    );
    let files = project.qg(&["files", "--scope", "project"]);
    assert_eq!(
        files.stdout,
        "pyproject.toml\nsrc/app/__init__.py\ntests/test_app.py\n"
    );
    // Written once: never rewritten, and no YAML that would shadow it.
    project
        .qg(&["init", "--pyproject"])
        .assert_fails_with(2, "already has a [tool.qg] table");
    project.qg(&["init"]).assert_fails_with(
        2,
        "has a [tool.qg] table, which .st3/quality.yaml would shadow",
    );
    assert_eq!(
        fs::read_to_string(project.path().join("pyproject.toml")).unwrap(),
        after
    );
}

#[test]
fn init_pyproject_needs_a_pyproject_and_no_yaml() {
    let project = init_fixture("scripts");
    project
        .qg(&["init", "--pyproject"])
        .assert_fails_with(2, "there is no pyproject.toml");
    project.write("pyproject.toml", "[project]\nname = \"x\"\n");
    project.write(".st3/quality.yaml", "# mine\n");
    project
        .qg(&["init", "--pyproject"])
        .assert_fails_with(2, "would take precedence");
}

#[test]
fn doctor_names_the_missing_tool_and_its_fix() {
    let project = init_fixture("scripts");
    project.fake_tool("ruff", "echo 'ruff 9.9.9'");
    let run = project.qg(&["doctor", "--format", "json"]);
    run.assert_code(1);
    let json = run.json();
    assert_eq!(json["ok"], false);
    let check = |name: &str| {
        json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no check {name}: {json}"))
            .clone()
    };
    assert_eq!(check("ruff_check")["status"], "ok");
    assert!(check("ruff_check")["detail"]
        .as_str()
        .unwrap()
        .ends_with("bin/ruff (ruff 9.9.9)"));
    assert_eq!(check("mypy")["status"], "error");
    assert_eq!(check("mypy")["fix"], "pip install mypy");
    assert_eq!(check("pyright")["fix"], "pip install 'pyright[nodejs]'");
    assert_eq!(check("config")["status"], "ok");
    assert_eq!(check("git")["status"], "ok");
    let human = project.qg(&["doctor"]);
    human.assert_code(1);
    assert!(
        human.stdout.contains("✗ mypy") && human.stdout.contains("fix: pip install mypy"),
        "{}",
        human.stdout
    );
}

/// mypy 1.10 stops at `--output=json` ("unrecognized arguments"): doctor
/// says the installed mypy is older than the gate needs and how to
/// upgrade it, and a run's error explains itself the same way.
#[test]
fn a_tool_older_than_its_gate_needs_is_named_with_its_upgrade() {
    let project = init_fixture("scripts");
    for tool in ["ruff", "pyright"] {
        project.fake_tool(tool, &format!("echo '{tool} 9.9'"));
    }
    project.fake_tool(
        "mypy",
        "case \"$1\" in --version) echo 'mypy 0.971 (compiled: yes)' ;; \
         *) echo 'mypy: error: unrecognized arguments: --no-pretty' >&2; exit 2 ;; esac",
    );
    let doctor = project.qg(&["doctor", "--format", "json"]);
    doctor.assert_code(1);
    let json = doctor.json();
    let mypy = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mypy")
        .unwrap();
    assert_eq!(mypy["status"], "error", "{json}");
    assert!(
        mypy["detail"].as_str().unwrap().ends_with(
            "bin/mypy: mypy 0.971 (compiled: yes) is older than 1.0, the oldest the gate's command works with"
        ),
        "{mypy}"
    );
    assert_eq!(mypy["fix"], "upgrade it: pip install 'mypy>=1.0'");
    let run = project.qg(&["run", "--gate", "mypy", "--format", "json"]);
    run.assert_code(2);
    let warnings = run.gate("mypy")["warnings"].to_string();
    assert!(
        warnings.contains("mypy 0.971 (compiled: yes) is older than 1.0, the oldest the gate's command works with: upgrade it (pip install 'mypy>=1.0')"),
        "{warnings}"
    );
}

/// ruff before 0.6.6 has no `ruff analyze graph`: doctor says the import
/// graph cannot be built and names the upgrade, and a partial run says why
/// its importer gates check the whole project — not ruff's usage text.
#[test]
fn an_import_analyzer_older_than_its_command_is_named_with_its_upgrade() {
    let project = init_fixture("scripts");
    project.fake_tool(
        "ruff",
        "case \"$1\" in --version) echo 'ruff 0.5.7' ;; \
         analyze) echo \"error: unrecognized subcommand 'analyze'\" >&2; exit 2 ;; *) exit 0 ;; esac",
    );
    project.fake_tool("mypy", "echo 'mypy 2.4.1'");
    project.fake_tool("pyright", "echo 'pyright 1.1.414'");
    let doctor = project.qg(&["doctor", "--format", "json"]);
    let json = doctor.json();
    let graph = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "import graph")
        .unwrap_or_else(|| panic!("no import graph check: {json}"));
    assert_eq!(graph["status"], "warning", "{graph}");
    assert_eq!(
        graph["detail"],
        "the import analyzer ruff 0.5.7 is older than 0.6.6, the oldest with `ruff analyze graph`: the gates that check importers check the whole project on every partial scope"
    );
    assert_eq!(graph["fix"], "pip install 'ruff>=0.6.6'");
    let run = project.qg(&["run", "--gate", "mypy", "--format", "json", "one.py"]);
    let scope = &run.json()["scope"];
    assert_eq!(
        scope["importers_unknown"],
        "the import analyzer ruff 0.5.7 is older than 0.6.6, the oldest with `ruff analyze graph`",
        "{scope}"
    );
}

#[test]
fn doctor_is_happy_when_everything_is_there_and_never_touches_state() {
    let project = init_fixture("scripts");
    for tool in ["ruff", "mypy", "pyright"] {
        project.fake_tool(tool, &format!("echo '{tool} 9.9'"));
    }
    project.qg(&["doctor"]).assert_code(0);
    project.write(".st3/state.json", "{broken");
    let run = project.qg(&["doctor", "--format", "json"]);
    run.assert_code(1);
    assert!(run.stdout.contains("unusable"), "{}", run.stdout);
    assert_eq!(
        fs::read_to_string(project.path().join(".st3/state.json")).unwrap(),
        "{broken"
    );
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: []\ngates: {}\n",
    );
    let run = project.qg(&["doctor", "--format", "json"]);
    run.assert_code(1);
    assert_eq!(run.json()["checks"][0]["status"], "error");
}

#[test]
fn completions_are_generated() {
    let project = Project::empty();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = project.qg(&["completions", shell]);
        run.assert_code(0);
        assert!(
            run.stdout.contains("qg") && run.stdout.contains("doctor"),
            "{shell}"
        );
    }
}

/// A directory the tool's own config names to check that does not exist
/// (`files = ["src", "tests", "examples"]` without `examples`): bare mypy
/// stops with "Cannot read file" and the gate errors, so doctor says so and
/// how to fix it; a glob matching nothing is no such mistake.
#[test]
fn doctor_names_a_path_the_tools_config_names_that_does_not_exist() {
    let project = init_fixture("scripts");
    for tool in ["ruff", "mypy", "pyright"] {
        project.fake_tool(tool, &format!("echo '{tool} 9.9'"));
    }
    project.write(
        "pyproject.toml",
        "[tool.mypy]\nfiles = [\"src\", \"tests\", \"examples\", \"gen/*.py\"]\n",
    );
    project.write("src/a.py", "x = 1\n");
    project.write("tests/test_a.py", "x = 1\n");
    let run = project.qg(&["doctor", "--format", "json"]);
    run.assert_code(1);
    let json = run.json();
    let failed: Vec<&serde_json::Value> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "error")
        .collect();
    assert_eq!(failed.len(), 1, "{json}");
    assert_eq!(failed[0]["name"], "mypy files");
    assert_eq!(
        failed[0]["detail"],
        "pyproject.toml [tool.mypy] `files` names examples, which does not exist: the tool's own run stops on it, and `qg run` with it"
    );
    assert_eq!(
        failed[0]["fix"],
        "remove examples from `files` in pyproject.toml [tool.mypy], or create it"
    );
    project.write("examples/demo.py", "x = 1\n");
    project.qg(&["doctor"]).assert_code(0);
    // pyright only warns about a missing include entry, and checks the
    // rest: so does doctor.
    project.write(
        "pyrightconfig.json",
        "{\"include\": [\"src\", \"missing\"]}\n",
    );
    let run = project.qg(&["doctor", "--format", "json"]);
    run.assert_code(0);
    let warned = run.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pyright files" && c["status"] == "warning")
        .cloned()
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        warned["detail"].as_str().unwrap().ends_with(
            "names missing, which does not exist: the tool warns about it and checks the rest"
        ),
        "{warned}"
    );
}

/// The root's mypy `files` names a directory inside a workspace member
/// with its own mypy config: qg checks it as the member's own run does,
/// and `qg doctor` says so, with how to check it the root's way too.
#[test]
fn doctor_says_where_the_roots_files_lie_in_a_member_with_its_own_config() {
    let project = common::Project::empty();
    project.write("a/m.py", "x: int = 1\n");
    project.write("b/sub/n.py", "y: int = 1\n");
    project.write(
        "b/pyproject.toml",
        "[project]\nname = \"b\"\nversion = \"0\"\n\n[tool.mypy]\nstrict = true\n",
    );
    project.write(
        "pyproject.toml",
        "[project]\nname = \"root\"\nversion = \"0\"\n\n[tool.uv.workspace]\nmembers = [\"b\"]\n\n\
         [tool.mypy]\nfiles = [\"a\", \"b/sub\"]\n",
    );
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    let json = project.qg(&["doctor", "--format", "json"]).json();
    let said: Vec<&serde_json::Value> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "mypy files" && c["status"] == "warning")
        .collect();
    assert_eq!(said.len(), 1, "{json}");
    assert_eq!(
        said[0]["detail"],
        "pyproject.toml [tool.mypy] `files` names b/sub, inside member b (checked as `cd b && mypy` checks it, with its config); `mypy` run here would check it with these settings as well, which qg does not"
    );
}

/// A new folder with its own mypy config that the root's `files` leaves
/// out and no workspace declares is checked by nothing: `qg doctor` says
/// so, and how to make it a member; declared, it is one.
#[test]
fn doctor_names_a_config_folder_nothing_checks_and_how_to_make_it_a_member() {
    let project = common::Project::empty();
    project.write("a/m.py", "x: int = 1\n");
    project.write("mypy.ini", "[mypy]\nfiles = a\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    // Made a minute ago, not yet `git add`ed.
    project.write(
        "b/pyproject.toml",
        "[project]\nname = \"b\"\nversion = \"0\"\n\n[tool.mypy]\nstrict = true\n",
    );
    project.write("b/n.py", "def f(x):\n    return x\n");
    let check = |name: &str| -> Option<serde_json::Value> {
        let json = project.qg(&["doctor", "--format", "json"]).json();
        json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
    };
    let unrun = check("not members").expect("a `not members` line");
    assert!(
        unrun["detail"]
            .as_str()
            .unwrap()
            .starts_with("b (its own pyproject.toml): "),
        "{unrun}"
    );
    assert!(
        unrun["fix"].as_str().unwrap().contains("cd b && "),
        "{unrun}"
    );
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\nmembers: [b]\n",
    );
    assert!(check("not members").is_none());
    let member = check("member").expect("b is a member");
    assert!(
        member["detail"].as_str().unwrap().contains("mypy@b"),
        "{member}"
    );
}

/// A pre-commit hook that narrows what its tool checks (`exclude:`,
/// `files:`) is named with the gate running the same tool: qg checks what
/// the tool selects (polyfactory: its hooks passed where `qg run --scope
/// project` found 66 findings in the files they leave out).
#[test]
fn doctor_names_the_pre_commit_hooks_that_narrow_a_tools_files() {
    let project = init_fixture("scripts");
    for tool in ["ruff", "mypy", "pyright"] {
        project.fake_tool(tool, &format!("echo '{tool} 9.9'"));
    }
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [ruff_format, ruff_check, mypy, pyright]\n",
    );
    project.write(
        ".pre-commit-config.yaml",
        r#"repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.14.6
    hooks:
      - id: ruff
      - id: ruff-format
        files: ^src/
  - repo: local
    hooks:
      - id: typecheck
        name: mypy
        entry: uv run mypy
        language: system
        exclude: ^(tests/|docs/examples/)
"#,
    );
    let run = project.qg(&["doctor", "--format", "json"]);
    let json = run.json();
    let warned: Vec<(String, String)> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["status"] == "warning" && c["detail"].as_str().unwrap_or("").contains("pre-commit")
        })
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert_eq!(warned[0].0, "ruff_format files");
    assert!(
        warned[0].1.contains("hook `ruff-format` with files: ^src/"),
        "{warned:?}"
    );
    assert_eq!(warned[1].0, "mypy files");
    assert!(
        warned[1].1.starts_with(".pre-commit-config.yaml runs it as hook `typecheck` with exclude: ^(tests/|docs/examples/): qg checks"),
        "{warned:?}"
    );
    // Once the gate is given globs of its own, the hook is not named.
    project.qg(&["init", "--force"]).assert_code(0);
    let written = fs::read_to_string(project.path().join(".st3/quality.yaml")).unwrap();
    let mypy = written
        .find("\n  mypy:\n")
        .expect("the mypy gate spelled out");
    let (before, after) = written.split_at(mypy);
    let after = after.replacen(
        "    scope: {importers: true}",
        "    scope: {importers: true, exclude_globs: [\"tests/**\"]}",
        1,
    );
    project.write(".st3/quality.yaml", &format!("{before}{after}"));
    let again = project.qg(&["doctor"]);
    assert!(
        again.stdout.contains("mypy files"),
        "mypy still active: {}",
        again.stdout
    );
    assert!(
        !again.stdout.contains("hook `typecheck`"),
        "{}",
        again.stdout
    );
    assert!(
        again.stdout.contains("hook `ruff-format`"),
        "{}",
        again.stdout
    );
}
