//! A change to a tool's own settings (`[tool.mypy]`, `pyrightconfig.json`,
//! a `ruff.toml` anywhere) makes that gate — and only that gate — check its
//! whole project scope on the next `auto` or `branch` run, committed or
//! not: with the real tools, the verdict `--scope project` gives. A change
//! elsewhere in a shared file (a dependency in `pyproject.toml`) does not.
#![cfg(unix)]

mod common;

use std::fs;

use common::repo::GitRepo;
use serde_json::Value;

/// Each gate's status in a JSON report, by id.
fn statuses(report: &Value) -> Vec<(String, String)> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let id = g["id"].as_str().unwrap().to_string();
            (id, g["status"].as_str().unwrap().to_string())
        })
        .collect()
}

fn status_of(report: &Value, gate: &str) -> String {
    statuses(report)
        .into_iter()
        .find(|(id, _)| id == gate)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no gate {gate} in {report}"))
}

/// The gates the report says checked their whole project scope.
fn whole(report: &Value) -> Vec<String> {
    report["scope"]["whole_project"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn codes(report: &Value, gate: &str) -> Vec<String> {
    let gate = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == gate)
        .unwrap()
        .clone();
    gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            format!(
                "{}:{}",
                v["file"].as_str().unwrap(),
                v["code"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// A project every gate passes, with one unannotated function and one
/// double-quoted string: what stricter settings of each tool flag.
fn green_project(pyproject_tools: &str) -> GitRepo {
    let pyproject = format!("[project]\nname = \"demo\"\nversion = \"0\"\n\n{pyproject_tools}");
    let repo = GitRepo::new(&[
        ("pyproject.toml", &pyproject),
        ("pkg/__init__.py", ""),
        (
            "pkg/core.py",
            "def double(x):\n    return x * 2\n\n\nNAME = \"core\"\n",
        ),
        (
            "pkg/use.py",
            "from pkg.core import double\n\n\ndef four() -> int:\n    return int(double(2))\n",
        ),
    ]);
    let first = repo.run();
    assert_eq!(first.code, 0, "{}", first.stdout);
    let quiet = repo.run();
    assert!(quiet.json()["summary_line"]
        .as_str()
        .unwrap()
        .contains("nothing to check"));
    repo
}

fn set_pyproject(repo: &GitRepo, tools: &str) {
    let text = format!("[project]\nname = \"demo\"\nversion = \"0\"\n\n{tools}");
    fs::write(repo.path().join("pyproject.toml"), text).unwrap();
}

#[test]
fn a_mypy_setting_edited_makes_mypy_alone_check_the_whole_project_and_says_why() {
    let repo = green_project("[tool.mypy]\n");
    set_pyproject(&repo, "[tool.mypy]\ndisallow_untyped_defs = true\n");
    let run = repo.run();
    let report = run.json();
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(whole(&report), ["mypy"]);
    assert_eq!(codes(&report, "mypy"), ["pkg/core.py:no-untyped-def"]);
    for other in ["ruff_format", "pyright"] {
        assert_eq!(status_of(&report, other), "skipped", "{other}");
    }
    // ruff lints the edited pyproject.toml itself, as `ruff check .` does.
    assert_eq!(status_of(&report, "ruff_check"), "passed");
    let line = report["summary_line"].as_str().unwrap();
    assert!(
        line.contains("whole project for Mypy: its settings in pyproject.toml changed since the last green run"),
        "{line}"
    );
    // The same verdict as the project's own run.
    let project = repo.qg(&[
        "run", "--scope", "project", "--format", "json", "--gate", "mypy",
    ]);
    assert_eq!(codes(&project.json(), "mypy"), codes(&report, "mypy"));
    // Committed, on a branch: `--scope branch` compares with the merge-base.
    repo.git(&["checkout", "-q", "-b", "stricter"]);
    repo.commit("stricter mypy");
    let branch = repo.qg(&["run", "--scope", "branch", "--format", "json"]);
    assert_eq!(whole(&branch.json()), ["mypy"], "{}", branch.stdout);
    assert_eq!(
        codes(&branch.json(), "mypy"),
        ["pkg/core.py:no-untyped-def"]
    );
    // Auto keeps checking until it passes: annotate, and it is green.
    repo.write(
        "pkg/core.py",
        "def double(x: int) -> int:\n    return x * 2\n\n\nNAME = \"core\"\n",
    );
    assert_eq!(repo.run().code, 0);
    let after = repo.run().json();
    assert!(whole(&after).is_empty(), "{after}");
}

#[test]
fn a_plugin_table_and_an_ini_file_count_as_mypy_settings_but_other_tables_do_not() {
    let repo = green_project("[tool.mypy]\n");
    // A dependency and another tool's table: nothing of mypy's changed.
    set_pyproject(&repo, "[tool.mypy]\n\n[tool.black]\nline-length = 100\n");
    let unrelated = repo.run().json();
    assert!(whole(&unrelated).is_empty(), "{unrelated}");
    // Only ruff's lint looks at the file itself (it lints pyproject.toml).
    let checked: Vec<&str> = unrelated["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["status"] != "skipped")
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(checked, ["ruff_check"], "{unrelated}");
    // A plugin's own table.
    set_pyproject(
        &repo,
        "[tool.mypy]\n\n[tool.pydantic-mypy]\ninit_typed = true\n",
    );
    let plugin = repo.run().json();
    assert_eq!(whole(&plugin), ["mypy"], "{plugin}");
    // mypy.ini, created: mypy reads it first.
    repo.write("mypy.ini", "[mypy]\ndisallow_untyped_defs = True\n");
    let ini = repo.run();
    assert_eq!(whole(&ini.json()), ["mypy"], "{}", ini.stdout);
    assert_eq!(codes(&ini.json(), "mypy"), ["pkg/core.py:no-untyped-def"]);
}

#[test]
fn pyright_settings_make_pyright_alone_check_the_whole_project() {
    let repo = green_project("");
    repo.write(
        "pyrightconfig.json",
        "{\n  // strict everywhere\n  \"strict\": [\"pkg\"]\n}\n",
    );
    let run = repo.run();
    let report = run.json();
    assert_eq!(whole(&report), ["pyright"], "{}", run.stdout);
    assert_eq!(status_of(&report, "pyright"), "failed");
    assert!(codes(&report, "pyright")
        .iter()
        .all(|c| c.starts_with("pkg/")));
    assert_eq!(status_of(&report, "mypy"), "skipped");
    // Removed again: the settings are those of the last green run, and
    // only the files that failed are checked again.
    fs::remove_file(repo.path().join("pyrightconfig.json")).unwrap();
    let gone = repo.run().json();
    assert!(whole(&gone).is_empty(), "{gone}");
    assert_eq!(status_of(&gone, "pyright"), "passed");
}

#[test]
fn ruff_settings_at_any_level_make_both_ruff_gates_check_the_whole_project() {
    let repo = green_project("[tool.ruff]\n");
    set_pyproject(&repo, "[tool.ruff.format]\nquote-style = \"single\"\n");
    let run = repo.run();
    let report = run.json();
    assert_eq!(
        whole(&report),
        ["ruff_check", "ruff_format"],
        "{}",
        run.stdout
    );
    assert_eq!(codes(&report, "ruff_format"), ["pkg/core.py:unformatted"]);
    assert_eq!(status_of(&report, "mypy"), "skipped");
    set_pyproject(&repo, "[tool.ruff]\n");
    assert_eq!(repo.run().code, 0);
    // A ruff.toml below the root configures the files under it.
    repo.write("pkg/ruff.toml", "[lint]\nextend-select = [\"ANN\"]\n");
    let nested = repo.run();
    let report = nested.json();
    assert!(
        whole(&report).contains(&"ruff_check".to_string()),
        "{}",
        nested.stdout
    );
    assert!(
        codes(&report, "ruff_check").contains(&"pkg/core.py:ANN001".to_string()),
        "{}",
        nested.stdout
    );
}

/// Only what a tool reads is its settings: a new `pyproject.toml` of a
/// package's metadata alone re-checks nothing, while `requires-python`,
/// which ruff takes as its target version when nothing else names one, is
/// ruff's (here it decides UP006 under a `ruff.toml` that selects it).
#[test]
fn a_pyproject_table_no_tool_reads_is_no_settings_but_ruffs_requires_python_is() {
    let pyproject = |requires: &str| {
        format!("[project]\nname = \"demo\"\nversion = \"0\"\nrequires-python = \">={requires}\"\n")
    };
    let repo = GitRepo::new(&[
        ("pyproject.toml", &pyproject("3.8")),
        ("ruff.toml", "[lint]\nselect = [\"E\", \"F\", \"UP006\"]\n"),
        ("pkg/__init__.py", ""),
        (
            "pkg/core.py",
            "from typing import List\n\n\ndef same(x: List[int]) -> List[int]:\n    return x\n",
        ),
    ]);
    assert_eq!(repo.run().code, 0);
    assert_eq!(repo.run().code, 0);
    repo.write("docs/pyproject.toml", "[project]\nname = \"docs\"\n");
    let metadata = repo.run();
    assert_eq!(metadata.code, 0, "{}", metadata.stdout);
    assert!(
        whole(&metadata.json()).is_empty(),
        "a table no tool reads counted as settings:\n{}",
        metadata.stdout
    );
    repo.write("pyproject.toml", &pyproject("3.9"));
    let target = repo.run();
    let report = target.json();
    assert_eq!(
        whole(&report),
        ["ruff_check", "ruff_format"],
        "{}",
        target.stdout
    );
    assert!(
        codes(&report, "ruff_check").contains(&"pkg/core.py:UP006".to_string()),
        "{}",
        target.stdout
    );
}

/// A gate defined in YAML only: a fake linter that flags the words its
/// own `words.cfg` lists, declaring that file as its settings.
#[test]
fn a_yaml_gate_declares_its_settings_files_and_its_tool_counts_too() {
    let repo = GitRepo::new(&[("a.py", "x = 1  # draft\n"), ("words.cfg", "todo\n")]);
    let tools = tempfile::tempdir().unwrap();
    let linter = tools.path().join("wordlint");
    fs::write(
        &linter,
        "#!/bin/sh\nout=''\nfor f in \"$@\"; do\n  while read -r w; do\n    if grep -q \"$w\" \"$f\"; then out=\"$out${out:+,}{\\\"file\\\":\\\"$f\\\",\\\"line\\\":1,\\\"code\\\":\\\"$w\\\",\\\"message\\\":\\\"$w\\\"}\"; fi\n  done < words.cfg\ndone\necho \"[$out]\"\n[ -z \"$out\" ]\n",
    )
    .unwrap();
    fs::set_permissions(&linter, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = format!(
        r#"version: "1"
active_gates: [words, other]
artifact_logging: {{enabled: false}}
gates:
  words:
    execution: {{command: ["{linter}"]}}
    parsing:
      strategy: json_violations
      field_map: {{file: file, line: line, code: code, message: message}}
    capabilities: {{file_types: [".py"]}}
    tool_config: [{{file: words.cfg}}]
  other:
    execution: {{command: ["true"]}}
    parsing: {{strategy: exit_code}}
    capabilities: {{file_types: [".py"]}}
"#,
        linter = linter.display()
    );
    repo.write(".st3/quality.yaml", &config);
    repo.commit("qg config");
    assert_eq!(repo.run().code, 0);
    repo.write("words.cfg", "todo\ndraft\n");
    let run = repo.run();
    let report = run.json();
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(whole(&report), ["words"]);
    assert_eq!(codes(&report, "words"), ["a.py:draft"]);
    assert_eq!(status_of(&report, "other"), "skipped");
    // Back to what passed: nothing to check again.
    repo.write("words.cfg", "todo\n");
    assert_eq!(repo.run().code, 0);
    // The tool itself replaced (an upgrade): its gate alone checks everything.
    let text = fs::read_to_string(&linter).unwrap();
    fs::write(&linter, format!("{text}\n# 2.0\n")).unwrap();
    let upgraded = repo.run().json();
    assert_eq!(whole(&upgraded), ["words"], "{upgraded}");
    assert!(
        upgraded["scope"]["whole_project"]["words"]
            .as_str()
            .unwrap()
            .starts_with("its tool changed since the last green run"),
        "{upgraded}"
    );
    assert_eq!(status_of(&upgraded, "other"), "skipped");
}

/// The opt-in type checkers too: ty's settings (`[tool.ty]`, `ty.toml`)
/// and pyrefly's (`pyrefly.toml`, `[tool.pyrefly]`) each make their gate
/// alone check the whole project.
#[test]
fn ty_and_pyrefly_settings_make_their_gate_alone_check_the_whole_project() {
    let repo = GitRepo::new(&[
        (
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0\"\n",
        ),
        ("pkg/__init__.py", ""),
        (
            "pkg/core.py",
            "def double(x: int) -> int:\n    return x * 2\n",
        ),
    ]);
    let config = qg::config::EMBEDDED_DEFAULT.replace(
        "active_gates: [ruff_format, ruff_check, mypy, pyright]",
        "active_gates: [ty, pyrefly]",
    );
    repo.write(".st3/quality.yaml", &config);
    repo.commit("ty and pyrefly");
    assert_eq!(repo.run().code, 0);
    repo.write("ty.toml", "[rules]\nunresolved-import = \"warn\"\n");
    let ty = repo.run().json();
    assert_eq!(whole(&ty), ["ty"], "{ty}");
    assert_eq!(status_of(&ty, "pyrefly"), "skipped");
    assert_eq!(repo.run().code, 0);
    repo.write("pyrefly.toml", "project-includes = [\"pkg\"]\n");
    let pyrefly = repo.run().json();
    assert_eq!(whole(&pyrefly), ["pyrefly"], "{pyrefly}");
    assert_eq!(status_of(&pyrefly, "ty"), "skipped");
}

/// What a mypy plugin imports is config too: django-stubs imports the
/// settings module `[tool.django-stubs] django_settings_module` names (and
/// through it the project's apps). An edit to it makes mypy alone check
/// its whole project, reading no cache (mypy's does not key on what a
/// plugin imports: a cached run gave 1 error where a fresh one gave 31),
/// and `qg trust` covers its content: trust given before the edit is gone.
#[test]
fn a_settings_module_a_plugin_imports_is_mypys_settings_and_trust_covers_it() {
    let tools =
        "[tool.mypy]\n\n[tool.django-stubs]\ndjango_settings_module = \"site_conf.settings\"\n";
    let mut repo = green_project(tools);
    let store = tempfile::tempdir().unwrap();
    let store_file = store.path().join("trust.json");
    repo.set_env("QG_TRUST_FILE", &store_file.display().to_string());
    repo.write("site_conf/__init__.py", "");
    repo.write("site_conf/settings.py", "DEBUG = True\n");
    repo.commit("settings");
    assert_eq!(repo.run().code, 0);
    let trust_line = |repo: &GitRepo| -> Value {
        let doctor = repo.qg(&["doctor", "--format", "json"]).json();
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "trust")
            .unwrap()
            .clone()
    };
    assert_eq!(repo.qg(&["trust"]).code, 0);
    let trusted = trust_line(&repo);
    assert_eq!(trusted["status"], "ok", "{trusted}");
    assert!(
        trusted["detail"]
            .as_str()
            .unwrap()
            .contains("site_conf/settings.py, which Mypy's plugin imports"),
        "{trusted}"
    );

    repo.write("site_conf/settings.py", "DEBUG = False\n");
    let run = repo.qg(&["run", "--format", "json", "--verbose"]);
    let report = run.json();
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(whole(&report), ["mypy"], "{report}");
    assert!(
        report["scope"]["whole_project"]["mypy"]
            .as_str()
            .unwrap()
            .contains("its settings in site_conf/settings.py changed"),
        "{report}"
    );
    assert!(
        run.stderr.contains("mypy --output=json --no-incremental"),
        "{}",
        run.stderr
    );
    assert_eq!(trust_line(&repo)["status"], "warning");
}
