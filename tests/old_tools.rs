//! The tools projects pin, older than the current pins (the ruff and mypy
//! of requirements-tools-old.txt, in `.venv/old`): each gate runs them its
//! older way (`older_versions` in the default config) and gives the tool's
//! own verdict, and `qg doctor` says what works differently.
// Unix: the tools are the Linux builds in the test virtualenv.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::repo::GitRepo;
use common::shapes::{editable_venv_with, tool};
use common::{old_tools_venv, Project};
use serde_json::Value;

/// A project with one file of each kind ruff format treats differently:
/// formatted, unformatted, unparseable, Markdown with a Python block (which
/// ruff formats from 0.16 only), and an unformatted file its settings
/// exclude.
fn format_project() -> Project {
    let project = Project::empty();
    project.write("ok.py", "x = 1\n");
    project.write("bad.py", "x=  1\n");
    project.write("syn.py", "def f(:\n");
    project.write("README.md", "# T\n\n```python\nx=1\n```\n");
    project.write("gen/skip.py", "y=  2\n");
    project.write(
        "pyproject.toml",
        "[project]\nname = \"p\"\nversion = \"0\"\n\n[tool.ruff]\nexclude = [\"gen\"]\n",
    );
    project.git_init();
    project
}

/// The files a report's gate has findings in, each with its codes.
fn findings(gate: &Value) -> BTreeSet<(String, String)> {
    gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let file = v["file"].as_str().unwrap().to_string();
            (file, v["code"].as_str().unwrap().to_string())
        })
        .collect()
}

/// What `ruff format --check .` itself says, read from its text.
fn rufs_own_check(project: &Project) -> BTreeSet<(String, String)> {
    let out = Command::new(old_tools_venv().join("bin/ruff"))
        .args(["format", "--check", "."])
        .current_dir(project.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "bad.py to reformat, syn.py unparseable"
    );
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    text.lines()
        .filter_map(|line| {
            if let Some(file) = line.strip_prefix("Would reformat: ") {
                return Some((file.to_string(), "unformatted".to_string()));
            }
            let rest = line.strip_prefix("error: Failed to parse ")?;
            let file = rest.split(':').next()?;
            Some((file.to_string(), "invalid-syntax".to_string()))
        })
        .collect()
}

/// `qg run --scope project --gate ruff_format` with the tools of `venv`,
/// which must fail: the ruff_format gate's JSON.
fn failed_ruff_format_of_the_project(project: &Project, venv: &std::path::Path) -> Value {
    let run = project.qg_with_venv(
        venv,
        &[
            "run",
            "--scope",
            "project",
            "--gate",
            "ruff_format",
            "--format",
            "json",
        ],
    );
    run.assert_code(1);
    let gate = run.gate("ruff_format");
    assert_eq!(gate["status"], "failed", "{gate}");
    gate
}

#[test]
fn ruff_format_older_than_0_16_is_read_from_its_text_with_its_own_verdict() {
    let project = format_project();
    let venv = old_tools_venv();
    let own = rufs_own_check(&project);
    assert_eq!(
        own,
        BTreeSet::from([
            ("bad.py".to_string(), "unformatted".to_string()),
            ("syn.py".to_string(), "invalid-syntax".to_string())
        ])
    );

    let gate = failed_ruff_format_of_the_project(&project, &venv);
    assert_eq!(findings(&gate), own);
    let syntax = gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["code"] == "invalid-syntax")
        .unwrap();
    assert_eq!((&syntax["line"], &syntax["column"]), (&1.into(), &7.into()));

    // Named files: the Markdown file is not one this ruff formats, and the
    // excluded one stays excluded; the unformatted one is found.
    let files_run = project.qg_with_venv(
        &venv,
        &[
            "run",
            "--gate",
            "ruff_format",
            "--format",
            "json",
            "README.md",
            "gen/skip.py",
            "ok.py",
            "bad.py",
        ],
    );
    files_run.assert_code(1);
    let gate = files_run.gate("ruff_format");
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("bad.py".to_string(), "unformatted".to_string())]),
        "{gate}"
    );

    // Fixed, the gate passes: its text says nothing, exit 0.
    project.write("bad.py", "x = 1\n");
    project.write("syn.py", "def f():\n    pass\n");
    let clean = project.qg_with_venv(
        &venv,
        &["run", "--scope", "project", "--gate", "ruff_format"],
    );
    clean.assert_code(0);
}

#[test]
fn doctor_says_how_each_gate_runs_an_older_tool_and_is_not_all_good() {
    let project = format_project();
    // The gates whose tools the old virtualenv has.
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [ruff_format, ruff_check, mypy, pyright]\n",
    );
    let doctor = project.qg_with_venv(&old_tools_venv(), &["doctor"]);
    let text = &doctor.stdout;
    assert!(!text.contains("all good"), "{text}");
    assert!(text.contains("no problems, "), "{text}");
    let line = |gate: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("! {gate} ")))
            .unwrap_or_else(|| panic!("no warning for {gate}:\n{text}"))
            .to_string()
    };
    let ruff = line("ruff_format");
    assert!(
        ruff.contains("(ruff 0.14.5): older than 0.16, ruff format has no stable --output-format"),
        "{ruff}"
    );
    assert!(
        ruff.contains("the gate runs `ruff format --check --force-exclude`"),
        "{ruff}"
    );
    let mypy = line("mypy");
    assert!(mypy.contains("older than 2.1, dmypy prints text, not JSON, after an update; mypy has no --output=json: the gate answers cold (no daemon), runs `mypy --show-column-numbers"), "{mypy}");
    assert!(
        text.contains("upgrade: ") && text.contains("'mypy>=2.1'"),
        "{text}"
    );
    let pyright = line("pyright");
    assert!(
        pyright.contains("(pyright 1.1.380): older than 1.1.397, pyright's language server answers no textDocument/diagnostic: the gate answers cold (no daemon)"),
        "{pyright}"
    );
    // `qg explain` shows the gate as it runs with this ruff, and why
    // (it showed `--output-format=json`, which ruff 0.14 does not take).
    let explained = project.qg_with_venv(&old_tools_venv(), &["explain", "ruff_format"]);
    let text = &explained.stdout;
    assert!(
        text.contains("  command:  ruff format --check --force-exclude FILES…\n"),
        "{text}"
    );
    assert!(
        text.contains("older than 0.16: ruff format has no stable --output-format"),
        "{text}"
    );
    let json = project.qg_with_venv(
        &old_tools_venv(),
        &["explain", "ruff_format", "--format", "json"],
    );
    common::assert_fits_schema("explain.json", &json.json());
    assert_eq!(json.json()["parser"], "text_violations", "{}", json.stdout);
}

/// pyright 1.1.380's language server answers "Unhandled method" to the
/// request the pyright daemon sends: such a pyright is not kept warm, the
/// start says so in one line (it once took 120 s and said "No such file or
/// directory"), and the run answers cold with pyright's own verdict.
#[test]
fn a_pyright_whose_language_server_cannot_be_asked_is_not_kept_warm_and_answers_cold() {
    let project = Project::empty();
    project.write("a.py", "def f() -> int:\n    return 1\n");
    project.write("b.py", "from a import f\n\nx: str = f()\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [pyright]\n",
    );
    project.git_init();
    let venv = old_tools_venv();
    let start = project.qg_with_venv(&venv, &["daemon", "start", "--gate", "pyright"]);
    start.assert_fails_with(
        2,
        "gate `pyright` cannot be kept warm with pyright 1.1.380: pyright's language server answers no textDocument/diagnostic (it needs 1.1.397)",
    );
    let run = project.qg_with_venv(&venv, &["run", "--scope", "project", "--format", "json"]);
    run.assert_code(1);
    let gate = run.gate("pyright");
    assert_eq!(gate["warm"], false, "{gate}");
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("b.py".to_string(), "reportAssignmentType".to_string())])
    );
}

/// pyright from 1.1.397 to 1.1.408 asks for its settings only once told
/// they changed (`workspace/didChangeConfiguration`), and until then
/// answers no pull: `qg daemon start` waited out the gate's whole timeout
/// (600 s) and failed "did not answer diagnostics … in time" on a project
/// pinning 1.1.401. Kept warm, its answers equal a cold run's.
#[test]
fn a_pyright_that_asks_for_its_settings_only_when_told_is_kept_warm() {
    let project = Project::empty();
    project.write("a.py", "def f() -> int:\n    return 1\n");
    project.write("b.py", "from a import f\n\nx: str = f()\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [pyright]\n",
    );
    project.git_init();
    let venv = old_tools_venv();
    // The old venv's pyright-python runs the pyright npm package it names.
    let pinned = [("PYRIGHT_PYTHON_FORCE_VERSION", "1.1.401")];
    let qg = |args: &[&str]| project.qg_with_venv_and(&venv, &pinned, args);
    let start = qg(&["daemon", "start", "--gate", "pyright"]);
    let stop = || qg(&["daemon", "stop"]);
    if start.code != 0 {
        stop();
        panic!("{}{}", start.stdout, start.stderr);
    }
    assert!(
        start.stdout.contains("its answers equal a cold run's"),
        "{}",
        start.stdout
    );
    project.write("b.py", "from a import f\n\nx: str = f()\ny: int = f()\n");
    let run = qg(&["run", "--scope", "project", "--format", "json"]);
    stop().assert_code(0);
    run.assert_code(1);
    let gate = run.gate("pyright");
    assert_eq!(gate["warm"], true, "{gate}");
    assert!(
        gate["tool_version"]
            .as_str()
            .unwrap_or_default()
            .contains("1.1.401"),
        "{gate}"
    );
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("b.py".to_string(), "reportAssignmentType".to_string())])
    );
}

#[test]
fn a_mypy_whose_daemon_answers_in_text_is_not_kept_warm_and_answers_cold() {
    let project = Project::empty();
    project.write("a.py", "def f() -> int:\n    return 1\n");
    project.write("b.py", "from a import f\n\nx: str = f()\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    let venv = old_tools_venv();

    let start = project.qg_with_venv(&venv, &["daemon", "start", "--gate", "mypy"]);
    start.assert_fails_with(
        2,
        "gate `mypy` cannot be kept warm with mypy 1.10.1 (compiled: yes): dmypy prints text, not JSON, after an update; mypy has no --output=json (it needs 2.1)",
    );

    // Asked for every warm gate, the start says which answer cold and why.
    let all = project.qg_with_venv(&venv, &["daemon", "start"]);
    all.assert_code(0);
    assert!(
        all.stdout
            .contains("no warm gates: 1 gate answers cold with the tools installed"),
        "{}",
        all.stdout
    );
    assert!(
        all.stdout.contains(
            "mypy  not started, its runs are cold: mypy 1.10.1 (compiled: yes) is older than 2.1"
        ),
        "{}",
        all.stdout
    );
    // Its status says the same (it said "stopped", never having started).
    let status = project.qg_with_venv(&venv, &["daemon", "status"]);
    assert!(
        status.stdout.contains(
            "  mypy  cold  its runs are cold: mypy 1.10.1 (compiled: yes) is older than 2.1"
        ),
        "{}",
        status.stdout
    );

    // The run answers cold, as mypy does: one error in b.py.
    let run = project.qg_with_venv(&venv, &["run", "--scope", "project", "--format", "json"]);
    run.assert_code(1);
    let gate = run.gate("mypy");
    assert_eq!(gate["warm"], false, "{gate}");
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("b.py".to_string(), "assignment".to_string())])
    );
}

#[test]
fn an_import_analyzer_older_than_its_flags_still_finds_the_importers() {
    let project = Project::empty();
    project.write("pkg/__init__.py", "");
    project.write("pkg/b.py", "def g() -> int:\n    return 1\n");
    project.write(
        "pkg/a.py",
        "from pkg.b import g\n\n\ndef f() -> int:\n    return g()\n",
    );
    project.write("main.py", "from pkg.a import f\n\nx: int = f()\n");
    project.write("other.py", "y: int = 2\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    let venv = old_tools_venv();
    project.qg_with_venv(&venv, &["run"]).assert_code(0);

    // b's return type changes: a breaks, and auto checks b with its
    // importers (a, main) — not the whole project, and without a word
    // about the analyzer.
    project.write("pkg/b.py", "def g() -> str:\n    return \"1\"\n");
    let run = project.qg_with_venv(&venv, &["run", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    let gate = run.gate("mypy");
    assert_eq!(gate["files_checked"], 3, "{report}");
    assert!(!report.to_string().contains("import analyzer"), "{report}");
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("pkg/a.py".to_string(), "return-value".to_string())])
    );
    let doctor = project.qg_with_venv(&venv, &["doctor"]);
    assert!(
        doctor.stdout.contains("(ruff 0.14.5): older than 0.14.6, ruff analyze graph has no --type-checking-imports: it runs `ruff analyze graph --direction dependencies`"),
        "{}",
        doctor.stdout
    );
}

#[test]
fn mypys_notes_in_other_files_are_shown_but_not_counted_as_its_errors() {
    let project = Project::empty();
    project.write("lib.py", "def f(a: int) -> int:\n    return a\n");
    project.write("use.py", "from lib import f\n\nf(b=1)\n");
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    let venv = old_tools_venv();
    let run = project.qg_with_venv(&venv, &["run", "--scope", "project", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(report["summary"]["total_violations"], 1, "{report}");
    assert_eq!(report["summary"]["notes"], 1, "{report}");
    // mypy 1.10 prints the "defined here" note as a finding of its own, in
    // the callee's file (when it checks that file: not from its cache); it
    // counts 1 error.
    let own = Command::new(venv.join("bin/mypy"))
        .args(["--no-incremental", "."])
        .current_dir(project.path())
        .output()
        .unwrap();
    let own = String::from_utf8_lossy(&own.stdout);
    assert!(own.contains("lib.py:1: note: \"f\" defined here"), "{own}");
    assert!(own.contains("Found 1 error in 1 file"), "{own}");

    let line = report["summary_line"].as_str().unwrap();
    assert!(line.contains("— 1 violation, 1 note: Mypy"), "{line}");
    // The note is still shown, where mypy points.
    let gate = run.gate("mypy");
    let files: Vec<&str> = gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["lib.py", "use.py"]);
}

/// mypy's text gives some findings no column (an unused `type: ignore`):
/// they are findings all the same, or the gate would pass where mypy fails.
#[test]
fn a_mypy_finding_without_a_column_is_still_a_finding() {
    let project = Project::empty();
    project.write("a.py", "x: int = 1  # type: ignore\n");
    project.write(
        "pyproject.toml",
        "[tool.mypy]\nwarn_unused_ignores = true\n",
    );
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [mypy]\n",
    );
    project.git_init();
    let run = project.qg_with_venv(
        &old_tools_venv(),
        &["run", "--scope", "project", "--format", "json"],
    );
    run.assert_code(1);
    let gate = run.gate("mypy");
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("a.py".to_string(), "unused-ignore".to_string())]),
        "{gate}"
    );
    assert_eq!(gate["violations"][0]["line"], 1, "{gate}");
}

/// A ruff older than 0.1.7 checks nothing when given no path ("No Python
/// files found", exit 0): on `--scope project` the gate names `.` as the
/// project's own run does, so its findings are found (before: a green that
/// checked no file, on humanize 4.9.0's pinned ruff 0.1.6).
#[test]
fn a_ruff_that_needs_a_path_is_given_the_project_on_its_own_run() {
    let project = Project::empty();
    project.write("a.py", "import os\n");
    project.fake_tool(
        "ruff",
        r#"[ "$1" = "--version" ] && echo "ruff 0.1.6" && exit 0
for arg in "$@"; do last=$arg; done
if [ "$last" != "." ]; then
  echo "warning: No Python files found under the given path(s)" >&2; echo "[]"; exit 0
fi
echo '[{"filename":"'"$PWD"'/a.py","code":"F401","message":"`os` imported but unused","location":{"row":1,"column":8},"end_location":{"row":1,"column":10},"fix":null,"url":null}]'
exit 1"#,
    );
    project.git_init();
    let run = project.qg(&[
        "run",
        "--scope",
        "project",
        "--gate",
        "ruff_check",
        "--format",
        "json",
    ]);
    run.assert_code(1);
    let gate = run.gate("ruff_check");
    assert_eq!(gate["violations"][0]["code"], "F401", "{gate}");
    assert_eq!(gate["violations"][0]["file"], "a.py", "{gate}");
}

/// The rerun hint runs mypy as qg ran it, its bases absolute as the
/// editable install's `.pth` names them. mypy before 2 silences a module it
/// finds under a site-packages path (here `src/`, through the `.pth`)
/// comparing paths as written: the project's own `mypy` silences
/// `_hidden.py` (excluded, imported by the package), and a hint with
/// `MYPYPATH=src` found it as `src/...`, reported its error, and dropped
/// the cache entry that had kept it silent ("errors were previously
/// ignored"), so the user's own next `mypy` rebuilt it and all that
/// depends on it (130 modules of a real SDK: 0.6 s became 7 s, twice).
#[test]
fn the_rerun_hint_reports_what_qg_did_and_leaves_the_users_mypy_cache_alone() {
    let test = "from mypkg.core import value\n\n\ndef test_value() -> None:\n    number: int = value()\n    assert number == 21\n";
    let mut repo = GitRepo::new(&[
        (".gitignore", ".venv/\n"),
        (".st3/quality.yaml", "version: \"1\"\nactive_gates: [mypy]\n"),
        (
            "pyproject.toml",
            "[tool.mypy]\nfiles = [\"src\", \"tests\"]\nexclude = \"_hidden\\\\.py$\"\n",
        ),
        ("src/mypkg/__init__.py", ""),
        ("src/mypkg/_hidden.py", "HIDDEN: int = \"not checked\"\n"),
        (
            "src/mypkg/core.py",
            "from mypkg._hidden import HIDDEN\n\n\ndef value() -> int:\n    return 21 + len(str(HIDDEN))\n",
        ),
        ("tests/test_core.py", test),
    ]);
    let venv = editable_venv_with(
        repo.path(),
        "src",
        "__editable__.mypkg-0.1.pth",
        &old_tools_venv(),
    );
    repo.set_env("VIRTUAL_ENV", &venv.display().to_string());
    let own_mypy = |args: &[&str]| {
        let out = tool(&repo, "mypy").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    assert!(own_mypy(&["--version"]).contains("mypy 1."), "an old mypy");
    assert!(
        own_mypy(&[]).contains("Success"),
        "the project's own mypy passes"
    );
    repo.qg(&["run", "--no-daemon"]).assert_code(0);
    repo.write(
        "tests/test_core.py",
        &test.replace("number: int", "number: bytes"),
    );
    let run = repo.qg(&["run", "--no-daemon", "--format", "json"]);
    let hint = run.json()["gates"][0]["rerun_hint"]
        .as_str()
        .unwrap()
        .to_string();

    // As the user pastes it: their shell, the environment's tools on PATH.
    let pasted = tool(&repo, "mypy");
    let pasted = Command::new("sh")
        .arg("-c")
        .arg(&hint)
        .envs(pasted.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(repo.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&pasted.stdout);
    assert!(said.contains("tests/test_core.py:5"), "{hint}: {said}");
    assert!(
        !said.contains("_hidden"),
        "the hint says what qg did: {hint}: {said}"
    );

    let after = own_mypy(&["-v", "src/mypkg/core.py"]);
    let rebuilt: Vec<&str> = after
        .lines()
        .filter(|l| l.contains("Metadata abandoned") || l.contains("stale"))
        .collect();
    assert!(rebuilt.is_empty(), "{hint} made mypy rebuild: {rebuilt:?}");
}

/// A project's own `--strict` on the mypy gate's command reaches an older
/// mypy, run its older way: humanize's `mypy --strict` with mypy 1.7 once
/// lost it, and with it a `no-any-return` that mypy's own run reported.
#[test]
fn a_projects_own_arguments_reach_a_tool_run_its_older_way() {
    let project = Project::empty();
    project.write("a.py", "def f(x):\n    return x\n");
    // The default config with the gate's command as a project writes it.
    let own = "command: [\"mypy\", \"--output=json\"]";
    assert!(qg::config::EMBEDDED_DEFAULT.contains(own));
    let config = qg::config::EMBEDDED_DEFAULT
        .replace(
            own,
            "command: [\"mypy\", \"--output=json\", \"--strict\", \"--pretty\"]",
        )
        .replace(
            "active_gates: [ruff_format, ruff_check, mypy, pyright]",
            "active_gates: [mypy]",
        );
    project.write(".st3/quality.yaml", &config);
    project.git_init();
    let run = project.qg_with_venv(
        &old_tools_venv(),
        &["run", "--scope", "project", "--format", "json"],
    );
    run.assert_code(1);
    let gate = run.gate("mypy");
    assert_eq!(
        findings(&gate),
        BTreeSet::from([("a.py".to_string(), "no-untyped-def".to_string())]),
        "{gate}"
    );
}

/// A gate run by name (`--gate`) runs its tool's older way even when the
/// config leaves it inactive: it once ran ruff 0.5.7 with
/// `--output-format=json` and stopped at ruff's usage text.
#[test]
fn a_gate_asked_for_by_name_runs_an_older_tool_its_older_way_even_when_inactive() {
    let project = format_project();
    project.write(
        ".st3/quality.yaml",
        "version: \"1\"\nactive_gates: [ruff_check]\n",
    );
    let gate = failed_ruff_format_of_the_project(&project, &old_tools_venv());
    assert_eq!(findings(&gate), rufs_own_check(&project));
}

/// What each old tool says of the project when it runs itself (`ruff
/// format --check .`, `ruff check .`, `mypy .`, `pyright`): its findings'
/// files and codes, errors and warnings alone (notes are not verdicts).
fn old_tools_own_verdicts(project: &Project) -> [BTreeSet<(String, String)>; 4] {
    let bin = old_tools_venv().join("bin");
    let run = |args: &[&str]| {
        let out = Command::new(bin.join(args[0]))
            .args(&args[1..])
            .current_dir(project.path())
            .env("VIRTUAL_ENV", old_tools_venv())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let ruff_format = run(&["ruff", "format", "--check", "."])
        .lines()
        .filter_map(|l| l.strip_prefix("Would reformat: "))
        .map(|file| (file.to_string(), "unformatted".to_string()))
        .collect();
    let json = |text: String| -> Value {
        let start = text.find(['[', '{']).unwrap();
        serde_json::from_str(&text[start..]).unwrap()
    };
    let ruff_check = json(run(&["ruff", "check", "--output-format=json", "."]))
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let file = v["filename"].as_str().unwrap();
            let file = file.strip_prefix(&format!("{}/", project.path().display()));
            (
                file.unwrap().to_string(),
                v["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // mypy 1.10 has no JSON: `pkg/a.py:2: error: Message  [code]`.
    let mypy = run(&["mypy", "."])
        .lines()
        .filter(|l| l.contains(": error: "))
        .map(|l| {
            let file = l.split(':').next().unwrap().to_string();
            let code = l
                .rsplit_once("  [")
                .map_or("", |(_, c)| c.trim_end_matches(']'));
            (file, code.to_string())
        })
        .collect();
    let pyright = json(run(&["pyright", "--outputjson"]))["generalDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] != "information")
        .map(|d| {
            let file = d["file"].as_str().unwrap();
            let file = file.strip_prefix(&format!("{}/", project.path().display()));
            let rule = d["rule"].as_str().unwrap_or_default();
            (file.unwrap().to_string(), rule.to_string())
        })
        .collect();
    [ruff_format, ruff_check, mypy, pyright]
}

/// A report's findings per gate, in [`old_tools_own_verdicts`]' order,
/// notes left out.
fn verdicts_of(run: &common::Run) -> [BTreeSet<(String, String)>; 4] {
    ["ruff_format", "ruff_check", "mypy", "pyright"].map(|id| {
        let gate = run.gate(id);
        let none = Vec::new();
        let violations = gate["violations"].as_array().unwrap_or(&none);
        violations
            .iter()
            .filter(|v| v["severity"] != "info")
            .map(|v| {
                let file = v["file"].as_str().unwrap().to_string();
                (file, v["code"].as_str().unwrap().to_string())
            })
            .collect()
    })
}

/// The core of the end-to-end and warm tests, with the old tools: every
/// gate gives each old tool's own verdict on the project, cold; then the
/// TDD loop's steps (a type error added, fixed) warm — pyright 1.1.401's
/// language server kept warm, mypy 1.10 answering cold, as doctor says —
/// equal the cold run's and the tools' own at each step.
#[test]
fn the_end_to_end_and_warm_core_gives_the_old_tools_own_verdicts() {
    let project = Project::fixture("dirty");
    let venv = old_tools_venv();
    let pinned = [("PYRIGHT_PYTHON_FORCE_VERSION", "1.1.401")];
    let qg = |args: &[&str]| project.qg_with_venv_and(&venv, &pinned, args);
    let cold = qg(&[
        "run",
        "--scope",
        "project",
        "--no-state",
        "--format",
        "json",
    ]);
    cold.assert_code(1);
    let own = old_tools_own_verdicts(&project);
    assert!(own.iter().all(|findings| !findings.is_empty()), "{own:?}");
    assert_eq!(verdicts_of(&cold), own);

    qg(&["baseline", "write"]).assert_code(0);
    common::commit_all(&git2::Repository::open(project.path()).unwrap(), "baseline");
    let start = qg(&["daemon", "start"]);
    let stop = || qg(&["daemon", "stop"]);
    if start.code != 0 {
        stop();
        panic!("{}{}", start.stdout, start.stderr);
    }
    // A type error added, then fixed: warm (an auto run), cold (the same
    // without daemons or state), each step.
    let core = project.path().join("pkg/typing_errors.py");
    let original = std::fs::read_to_string(&core).unwrap();
    let steps = [
        format!("{original}\n\ndef broken() -> int:\n    return \"not an int\"\n"),
        original.clone(),
    ];
    for (step, text) in steps.iter().enumerate() {
        std::fs::write(&core, text).unwrap();
        let warm = qg(&["run", "--format", "json"]);
        let cold = qg(&["run", "--no-daemon", "--no-state", "--format", "json"]);
        assert_eq!(warm.code, cold.code, "step {step}: {}", warm.stdout);
        assert_eq!(warm.code, [1, 0][step], "step {step}: {}", warm.stdout);
        assert_eq!(verdicts_of(&warm), verdicts_of(&cold), "step {step}");
        assert_eq!(warm.gate("pyright")["warm"], true, "step {step}");
        assert_eq!(warm.gate("mypy")["warm"], false, "step {step}");
    }
    stop().assert_code(0);
    assert_eq!(
        verdicts_of(&qg(&[
            "run",
            "--scope",
            "project",
            "--no-state",
            "--format",
            "json"
        ])),
        old_tools_own_verdicts(&project)
    );
}
