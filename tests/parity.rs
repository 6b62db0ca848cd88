//! `--scope project` checks what each tool checks when the project runs it
//! itself — `ruff check .`, `ruff format --check .`, `mypy .` (bare `mypy`
//! when its config names files), `pyright` — and partial scopes never pass a
//! tool a file its own configuration leaves out. Real tools on
//! fixtures/parity: stubs beside sources, a tool-configured file selection,
//! notebooks and Markdown.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::process::Command;

use common::{violation_keys, Project};
use serde_json::Value;

/// The error+warning count of each tool's own project-wide run, from the root.
fn native_counts(project: &Project) -> Vec<(String, usize)> {
    let bin = common::tools_venv().join("bin");
    let run = |args: &[&str]| {
        let out = Command::new(bin.join(args[0]))
            .args(&args[1..])
            .current_dir(project.path())
            .env("VIRTUAL_ENV", common::tools_venv())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap()
    };
    let json_len = |text: String| -> usize {
        let start = text.find('[').unwrap();
        let end = text.rfind(']').unwrap();
        serde_json::from_str::<Vec<Value>>(&text[start..=end])
            .unwrap()
            .len()
    };
    let format = json_len(run(&[
        "ruff",
        "format",
        "--check",
        "--output-format=json",
        ".",
    ]));
    let check = json_len(run(&[
        "ruff",
        "check",
        "--no-fix",
        "--output-format=json",
        ".",
    ]));
    let mut mypy = run(&["mypy"]);
    if mypy.contains("Missing target module") {
        mypy = run(&["mypy", "."]);
    }
    let mypy = match mypy.split("Found ").nth(1) {
        Some(rest) => rest.split(' ').next().unwrap().parse().unwrap(),
        None => {
            assert!(mypy.contains("Success"), "{mypy}");
            0
        }
    };
    let pyright: Value = serde_json::from_str(&run(&["pyright", "--outputjson"])).unwrap();
    let summary = &pyright["summary"];
    let pyright =
        summary["errorCount"].as_u64().unwrap() + summary["warningCount"].as_u64().unwrap();
    vec![
        ("ruff_format".into(), format),
        ("ruff_check".into(), check),
        ("mypy".into(), mypy),
        ("pyright".into(), pyright as usize),
    ]
}

/// qg's error+warning count per gate on `--scope project`.
fn qg_counts(project: &Project) -> Vec<(String, usize)> {
    let run = project.qg_with_tools(&[
        "run",
        "--scope",
        "project",
        "--format",
        "json",
        "--no-state",
    ]);
    run.json()["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_ne!(g["status"], "error", "{g}");
            let n = g["violations"].as_array().map_or(0, |vs| {
                vs.iter().filter(|v| v["severity"] != "info").count()
            });
            (g["id"].as_str().unwrap().to_string(), n)
        })
        .collect()
}

fn counts(expected: &[(&str, usize)]) -> Vec<(String, usize)> {
    expected.iter().map(|(g, n)| (g.to_string(), *n)).collect()
}

/// A module shipped as `shapes.py` beside `shapes.pyi`: mypy's own
/// discovery takes the stub (given both, it would stop at "Duplicate
/// module"); pyright checks both.
#[test]
fn stubs_beside_sources_are_checked_as_each_tool_would() {
    let project = Project::fixture("parity/stubs");
    let expected = counts(&[
        ("ruff_format", 0),
        ("ruff_check", 0),
        ("mypy", 1),
        ("pyright", 2),
    ]);
    assert_eq!(native_counts(&project), expected);
    assert_eq!(qg_counts(&project), expected);
    // A partial scope: the changed .py goes to pyright, not to mypy, which
    // checks what imports it instead.
    project.write("pkg/shapes.py", "def area(width, height):\n    return width * height\n\n\ndef broken() -> int:\n    return \"still not an int\"\n");
    let run = project.qg_with_tools(&["run", "pkg/shapes.py", "--format", "json", "--no-state"]);
    let mypy = run.gate("mypy");
    assert_eq!(mypy["files_checked"], 1, "{mypy}");
    assert_eq!(
        violation_keys(&mypy),
        [(
            "pkg/use.py".into(),
            Some(3),
            "assignment".into(),
            "error".into()
        )]
    );
    let pyright = run.gate("pyright");
    assert_eq!(pyright["files_checked"], 2, "{pyright}");
}

/// `[tool.mypy] files/exclude` and `[tool.pyright] include/exclude`: the
/// type checkers check src/ but not src/app/legacy.py nor scripts/, on the
/// project scope and on any other.
#[test]
fn a_tools_own_file_selection_is_respected_on_every_scope() {
    let project = Project::fixture("parity/selection");
    let expected = counts(&[
        ("ruff_format", 0),
        ("ruff_check", 0),
        ("mypy", 1),
        ("pyright", 1),
    ]);
    assert_eq!(native_counts(&project), expected);
    assert_eq!(qg_counts(&project), expected);
    let run = project.qg_with_tools(&[
        "run",
        "scripts/tool.py",
        "src/app/legacy.py",
        "--format",
        "json",
        "--no-state",
    ]);
    run.assert_code(0);
    for id in ["mypy", "pyright"] {
        let gate = run.gate(id);
        assert_eq!(gate["status"], "skipped", "{gate}");
        assert!(
            gate["skip_reason"]
                .as_str()
                .unwrap()
                .contains("pyproject.toml [tool."),
            "{gate}"
        );
    }
    assert_eq!(run.gate("ruff_check")["files_checked"], 2);
    // qg doctor says where each gate's files come from.
    let doctor = project.qg_with_tools(&["doctor", "--format", "json"]);
    let checks = doctor.json()["checks"].clone();
    let detail = |name: &str| {
        checks
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {checks}"))["detail"]
            .clone()
    };
    assert_eq!(
        detail("mypy files"),
        "the tool's own selection: pyproject.toml [tool.mypy]: files = src; exclude = ^src/app/legacy\\.py$"
    );
    assert_eq!(
        detail("pyright files"),
        "the tool's own selection: pyproject.toml [tool.pyright]: include = src; exclude = src/app/legacy.py"
    );
    assert_eq!(
        detail("ruff_check files"),
        "the tool's own selection: the tool's defaults (no config names its files)"
    );
}

/// ruff formats and lints notebooks and the Python blocks of Markdown, as
/// `ruff format --check .` and `ruff check .` do; notebook findings name
/// their cell, and lines count within it.
#[test]
fn notebooks_and_markdown_are_checked_by_ruff_with_cells() {
    let project = Project::fixture("parity/notebooks");
    let expected = counts(&[
        ("ruff_format", 2),
        ("ruff_check", 1),
        ("mypy", 0),
        ("pyright", 0),
    ]);
    assert_eq!(native_counts(&project), expected);
    assert_eq!(qg_counts(&project), expected);
    let run = project.qg_with_tools(&[
        "run",
        "nb/analysis.ipynb",
        "README.md",
        "--format",
        "json",
        "--no-state",
    ]);
    let lint = &run.gate("ruff_check")["violations"][0];
    assert_eq!(
        (
            lint["file"].as_str(),
            lint["cell"].as_u64(),
            lint["line"].as_u64()
        ),
        (Some("nb/analysis.ipynb"), Some(2), Some(1))
    );
    let format = run.gate("ruff_format");
    let cells: Vec<(String, Option<u64>)> = format["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["file"].as_str().unwrap().to_string(), v["cell"].as_u64()))
        .collect();
    assert_eq!(
        cells,
        [
            ("README.md".to_string(), None),
            ("nb/analysis.ipynb".to_string(), Some(3))
        ]
    );
    assert_eq!(run.gate("mypy")["status"], "skipped");
    let concise = project.qg_with_tools(&[
        "run",
        "nb/analysis.ipynb",
        "--format",
        "concise",
        "--no-state",
    ]);
    assert!(
        concise.stdout.contains(
            "\nnb/analysis.ipynb:cell 2:1:8: error: `os` imported but unused [ruff_check:F401]\n"
        ),
        "{}",
        concise.stdout
    );
    // Formats that know only file and line say which cell in the message.
    let github = project.qg_with_tools(&[
        "run",
        "nb/analysis.ipynb",
        "--format",
        "github",
        "--no-state",
    ]);
    assert!(
        github.stdout.contains("::error file=nb/analysis.ipynb,title=F401 (Ruff lint)::cell 2, line 1: `os` imported but unused"),
        "{}",
        github.stdout
    );
}

/// pyright walks from an include entry's part before its wildcard and
/// enters only the directories the entry matches: `packages/*/lib` finds
/// nothing (pyright's own run: "No source files found"), `packages/**/lib`
/// finds the modules. qg passes pyright exactly what its own run checks.
#[test]
fn pyright_include_wildcards_select_what_pyrights_own_walk_finds() {
    let project = Project::empty();
    project.write(
        "packages/a/lib/bad.py",
        "def f() -> int:\n    return \"not an int\"\n",
    );
    project.write(
        "packages/a/tools/worse.py",
        "def g() -> int:\n    return \"not an int\"\n",
    );
    for (include, found) in [
        ("packages/*/lib", 0),
        ("packages/**/lib", 1),
        ("packages/*", 2),
    ] {
        project.write(
            "pyproject.toml",
            &format!("[tool.pyright]\ninclude = [\"{include}\"]\n"),
        );
        let native = native_counts(&project);
        assert_eq!(native[3], ("pyright".to_string(), found), "{include}");
        let qg = qg_counts(&project);
        assert_eq!(qg[3], native[3], "{include}: --scope project");
        let named = project.qg_with_tools(&[
            "run",
            "packages/a/lib/bad.py",
            "packages/a/tools/worse.py",
            "--format",
            "json",
            "--no-state",
        ]);
        let pyright = named.gate("pyright");
        let reported = pyright["violations"].as_array().map_or(0, Vec::len);
        assert_eq!(reported, found, "{include}: named paths: {pyright}");
    }
}

/// ruff lints its own settings files too — `pyproject.toml`, `ruff.toml`,
/// `.ruff.toml` — (`RUF200`, and the preview rule on rule codes in
/// selectors): `ruff check .` fails on them, and so does qg, in project
/// scope and when such a file appears in a partial scope. They were once
/// "outside the scope", and a red project was green (platformdirs 4.3.6).
#[test]
fn ruff_findings_in_its_own_settings_files_fail_every_scope() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let settings = |ignore: &str| {
        format!("[tool.ruff.lint]\npreview = true\nselect = [\"RUF\"]\nignore = [\"{ignore}\"]\n")
    };
    project.write("pyproject.toml", &settings("E501"));
    // The built-in gates and files; ruff's lint alone runs (and moves state).
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [ruff_check]\n",
    );
    project.git_init();
    project.trust();
    let ruff_check_files = |project: &Project| -> Vec<String> {
        let out = Command::new(common::tools_venv().join("bin/ruff"))
            .args(["check", "--no-fix", "--output-format=json", "."])
            .current_dir(project.path())
            .output()
            .unwrap();
        let found: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        let root = project.path().to_string_lossy().into_owned() + "/";
        found
            .iter()
            .map(|v| v["filename"].as_str().unwrap().replace(&root, ""))
            .collect()
    };
    let qg_files = |run: &common::Run| -> Vec<String> {
        run.gate("ruff_check")["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["file"].as_str().unwrap().to_string())
            .collect()
    };
    let run = |scope: &str| project.qg_with_tools(&["run", "--scope", scope, "--format", "json"]);
    assert_eq!(ruff_check_files(&project), ["pyproject.toml"]);
    let project_run = run("project");
    assert_eq!(project_run.code, 1, "{}", project_run.stdout);
    assert_eq!(qg_files(&project_run), ["pyproject.toml"]);

    // Fixed, with a member's pyproject.toml that is no ruff settings file
    // (no [tool.ruff]): green, and the baseline moves.
    project.write("pyproject.toml", &settings("line-too-long"));
    project.write("member/pyproject.toml", "[project]\nname = \"member\"\n");
    common::git(project.path(), &["add", "-A"]);
    common::git(project.path(), &["commit", "-qm", "fixed"]);
    let green = run("auto");
    assert_eq!(green.code, 0, "{}", green.stdout);
    // It stops parsing: only ruff's own look at that one file finds it,
    // as no ruff setting changed.
    project.write("member/pyproject.toml", "[project]\nname = 1\n");
    assert_eq!(ruff_check_files(&project), ["member/pyproject.toml"]);
    let auto = run("auto");
    assert_eq!(auto.code, 1, "{}", auto.stdout);
    assert_eq!(auto.json()["scope"]["mode"], "auto", "{}", auto.stdout);
    assert_eq!(qg_files(&auto), ["member/pyproject.toml"]);
    assert_eq!(auto.gate("ruff_check")["violations"][0]["code"], "RUF200");
}

/// mypy's `packages` and `modules` name its files by dotted name, found
/// under the current directory and `mypy_path` (with `files` too, mypy
/// stops: "May only specify one of"): bare `mypy` checks them alone. qg checks what it checks, in project
/// scope and in which changed files (and importers) go to mypy.
#[test]
fn mypys_packages_and_modules_choose_its_files_on_every_scope() {
    let project = Project::empty();
    project.write("pkg/__init__.py", "x: int = 1\n");
    project.write("pkg/sub/deep.py", "from pkg import x\n\nz: int = x\n");
    project.write("src/app/__init__.py", "a: int = 1\n");
    project.write("tool.py", "t: int = 1\n");
    project.write("extra.py", "from pkg import x\n\ny: int = \"no\"\n");
    project.write("files_only.py", "f: int = \"no\"\n");
    project.write(
        "pyproject.toml",
        "[tool.mypy]\npackages = [\"pkg\", \"app\"]\nmodules = [\"tool\"]\n\
         mypy_path = [\"$MYPY_CONFIG_FILE_DIR/src\"]\n",
    );
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    project.trust();
    let mypy = Command::new(common::tools_venv().join("bin/mypy"))
        .current_dir(project.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&mypy.stdout).into_owned();
    assert!(said.contains("Success: no issues found"), "{said}");
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--format", "json"];
        all.extend_from_slice(args);
        project.qg_with_tools(&all)
    };
    let whole = run(&["--scope", "project"]);
    assert_eq!(whole.code, 0, "{}", whole.stdout);
    // Green: the baseline moves. An edit outside the selection, and one
    // that breaks a module outside it that imports one inside.
    assert_eq!(run(&[]).code, 0);
    project.write("extra.py", "from pkg import x\n\ny: int = x + 1\n");
    project.write("pkg/__init__.py", "x: str = 'one'\n");
    let auto = run(&[]);
    let checked: Vec<String> = auto.json()["covered"]["mypy"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(auto.code, 1, "{}", auto.stdout);
    let gate = auto.gate("mypy");
    let found: Vec<&str> = gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        found,
        ["pkg/sub/deep.py"],
        "{} (checked {checked:?})",
        auto.stdout
    );
}

/// The project with ruff's two gates alone active, committed, trusted, and
/// green on its first run.
fn commit_green_with_ruffs_gates(project: &Project) {
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [ruff_format, ruff_check]\n",
    );
    project.git_init();
    project.trust();
    assert_eq!(project.qg_with_tools(&["run"]).code, 0);
}

/// A file ruff's settings exclude (`exclude`, honoured for named files by
/// `--force-exclude`) is one `ruff check .` and `ruff format --check .`
/// never look at: an edit to it passes both gates, checked by neither —
/// skipped with the setting that leaves it out when qg reads it, and never
/// an error because ruff format printed no JSON when ruff alone knows (a
/// nested config's, which qg leaves to ruff).
#[test]
fn an_edit_to_a_file_ruffs_settings_exclude_passes_unchecked() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.write("examples/ex.py", "y = 1\n");
    project.write("pyproject.toml", "[tool.ruff]\nexclude = [\"examples\"]\n");
    project.write("sub/gen/g.py", "z = 1\n");
    project.write("sub/ruff.toml", "extend-exclude = [\"gen\"]\n");
    commit_green_with_ruffs_gates(&project);
    project.write("examples/ex.py", "import os\ny  =  2\n");
    let run = project.qg_with_tools(&["run", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.json()["summary_line"],
        "⏭️ nothing to check — no gate applies to the 1 file in scope (auto)"
    );
    for gate in ["ruff_format", "ruff_check"] {
        let result = run.gate(gate);
        assert_eq!(result["status"], "skipped", "{result}");
        let why = result["skip_reason"].as_str().unwrap();
        assert!(why.contains("exclude = examples"), "{why}");
    }
    project.write("sub/gen/g.py", "import os\nz  =  2\n");
    let run = project.qg_with_tools(&["run", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for gate in ["ruff_format", "ruff_check"] {
        let result = run.gate(gate);
        assert_eq!(result["status"], "passed", "{result}");
        assert_eq!(result["files_checked"], 0, "{result}");
    }
    // What the tools say when the project runs them.
    assert_eq!(
        native_counts(&project)[..2],
        counts(&[("ruff_format", 0), ("ruff_check", 0)])
    );
}

/// ruff's `include` picks what `ruff check .` and `ruff format --check .`
/// look at, and a file named on ruff's command line is checked whatever it
/// says (`--force-exclude` applies only the excludes): a partial scope
/// passes ruff only what `include` takes — a `*` crossing `/`, `*.pyi`
/// matching anywhere — and a file under a directory with a ruff config of
/// its own is left to that config, as ruff does.
#[test]
fn ruffs_include_takes_only_its_files_on_every_scope() {
    let project = Project::empty();
    project.write(
        "pyproject.toml",
        "[tool.ruff]\ninclude = [\"src/*.py\"]\nextend-include = [\"tools/*.py\"]\n",
    );
    for file in [
        "src/pkg/a.py",
        "src/pkg/b.pyi",
        "top.py",
        "tools/t.py",
        "sub/x.py",
    ] {
        project.write(file, "x = 1\n");
    }
    project.write("sub/ruff.toml", "line-length = 100\n");
    commit_green_with_ruffs_gates(&project);
    // Outside `include`: what ruff's own run never looks at.
    let unused_and_unformatted = "import os\nx  =  1\n";
    project.write("src/pkg/b.pyi", unused_and_unformatted);
    project.write("top.py", unused_and_unformatted);
    let run = project.qg_with_tools(&["run", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for gate in ["ruff_format", "ruff_check"] {
        let result = run.gate(gate);
        assert_eq!(result["status"], "skipped", "{result}");
        let why = result["skip_reason"].as_str().unwrap();
        assert!(why.contains("include = src/*.py"), "{why}");
    }
    assert_eq!(
        native_counts(&project)[..2],
        counts(&[("ruff_format", 0), ("ruff_check", 0)])
    );
    // Inside it (deep under src/, and by `extend-include`), and under a
    // config of its own: every one ruff's own run reports.
    for file in ["src/pkg/a.py", "tools/t.py", "sub/x.py"] {
        project.write(file, unused_and_unformatted);
    }
    let native = native_counts(&project);
    assert_eq!(native[0], ("ruff_format".to_string(), 3));
    let run = project.qg_with_tools(&["run", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    for (gate, count) in &native[..2] {
        let violations = run.gate(gate)["violations"].as_array().unwrap().clone();
        assert_eq!(violations.len(), *count, "{gate}");
        let files: std::collections::BTreeSet<&str> = violations
            .iter()
            .map(|v| v["file"].as_str().unwrap())
            .collect();
        assert_eq!(
            files.into_iter().collect::<Vec<_>>(),
            ["src/pkg/a.py", "sub/x.py", "tools/t.py"],
            "{gate}"
        );
    }
    // The whole project: ruff's own run, and ruff's count of its files
    // (`ruff format --check .`: "3 files would be reformatted"; `ruff check
    // --show-files .` lists sub/ruff.toml too).
    let project_run = project.qg_with_tools(&["run", "--scope", "project", "--format", "json"]);
    for (gate, files) in [("ruff_format", 3), ("ruff_check", 4)] {
        assert_eq!(project_run.gate(gate)["files_checked"], files, "{gate}");
    }
}
