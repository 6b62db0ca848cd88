//! Workspaces: a repository of several Python projects, each with its own
//! tool configs, gets each project's own verdict. The reference is what
//! each member's own CI runs — `cd packages/a && mypy .`, `cd packages/b &&
//! pyright` — and, for the files no member configures a tool for, the
//! enclosing project's run. Real ruff, mypy and pyright in a temp git repo
//! shaped as `uv init` workspaces are (one shared `.venv`, every member
//! installed editable); they fail (never skip) when the tools are missing.
// Unix: the tools' virtualenv is built with `sh` shims (tests/common/shapes).
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;

use common::repo::GitRepo;
use common::shapes::{editable_venv, key_of, mypy_findings_in, pyright_findings_in, Key};
use serde_json::{json, Value};

/// The workspace: a root project with its own file and mypy settings, and
/// three members — `a` strict for mypy, `b` with its own mypy and pyright
/// settings, `c` with no tool config at all (the root's runs check it).
const FILES: &[(&str, &str)] = &[
    (".gitignore", ".venv/\n"),
    (
        "pyproject.toml",
        "[project]\nname = \"root\"\nversion = \"0\"\n\n\
         [tool.uv.workspace]\nmembers = [\"packages/*\"]\n\n\
         [tool.mypy]\nwarn_unused_ignores = true\n",
    ),
    (
        "scripts/report.py",
        "from c.util import label\n\n\ndef show(x):\n    return label(x)\n",
    ),
    (
        "packages/a/pyproject.toml",
        "[project]\nname = \"a\"\nversion = \"0\"\n\n[tool.mypy]\nstrict = true\n",
    ),
    ("packages/a/src/a/__init__.py", ""),
    ("packages/a/src/a/py.typed", ""),
    (
        "packages/a/src/a/core.py",
        "def value(x):\n    return x + 1\n\n\ndef typed(x: int) -> int:\n    return x\n",
    ),
    (
        "packages/b/pyproject.toml",
        "[project]\nname = \"b\"\nversion = \"0\"\n\n\
         [tool.mypy]\nwarn_return_any = true\n\n\
         [tool.pyright]\ntypeCheckingMode = \"strict\"\n",
    ),
    ("packages/b/src/b/__init__.py", ""),
    (
        "packages/b/src/b/use.py",
        "from a.core import typed\n\n\ndef use() -> int:\n    return typed(1)\n",
    ),
    (
        "packages/c/pyproject.toml",
        "[project]\nname = \"c\"\nversion = \"0\"\n",
    ),
    ("packages/c/src/c/__init__.py", ""),
    (
        "packages/c/src/c/util.py",
        "def label(x):\n    return str(x)\n",
    ),
];

/// The workspace with its shared `.venv`: every member installed editable,
/// as `uv sync` leaves it.
fn workspace() -> GitRepo {
    workspace_of(FILES, &[("b", "packages/b/src"), ("c", "packages/c/src")])
}

/// `files` as a workspace with a shared `.venv` in which `a` and each
/// `(name, source root)` of `installed` are installed editable.
fn workspace_of(files: &[(&str, &str)], installed: &[(&str, &str)]) -> GitRepo {
    let mut repo = GitRepo::new(files);
    let venv = editable_venv(repo.path(), "packages/a/src", "_a.pth");
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("site-packages");
    for (name, src) in installed {
        let src = repo.path().join(src);
        std::fs::write(
            site.join(format!("_{name}.pth")),
            format!("{}\n", src.display()),
        )
        .unwrap();
    }
    repo.set_env("VIRTUAL_ENV", &venv.display().to_string());
    repo
}

/// Writes an executable script at `path` (its directories made).
fn executable(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `mypy` at `path` that touches `mark`, then runs the workspace's own.
fn marking_mypy(repo: &GitRepo, path: &std::path::Path, mark: &std::path::Path) {
    let workspace_mypy = repo.path().join(".venv/bin/mypy");
    executable(
        path,
        &format!(
            "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
            mark.display(),
            workspace_mypy.display()
        ),
    );
}

/// The workspace's own verdict: each member's own runs where it configures
/// the tool, the root's runs for every other file.
fn own_verdict(repo: &GitRepo) -> BTreeSet<Key> {
    let outside = |members: &[&str]| {
        let members: Vec<String> = members.iter().map(|m| format!("{m}/")).collect();
        move |key: &Key| !members.iter().any(|m| key.0.starts_with(m.as_str()))
    };
    let mut found = BTreeSet::new();
    found.extend(mypy_findings_in(repo, "packages/a", &["."]));
    found.extend(mypy_findings_in(repo, "packages/b", &["."]));
    let root_mypy = mypy_findings_in(repo, "", &["."]);
    found.extend(
        root_mypy
            .into_iter()
            .filter(outside(&["packages/a", "packages/b"])),
    );
    found.extend(pyright_findings_in(repo, "packages/b"));
    found.extend(
        pyright_findings_in(repo, "")
            .into_iter()
            .filter(outside(&["packages/b"])),
    );
    found
}

/// The type checkers' findings of a qg report (all of them, or the new ones).
fn findings(report: &Value, only_new: bool) -> BTreeSet<Key> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| {
            let id = g["id"].as_str().unwrap();
            id.starts_with("mypy") || id.starts_with("pyright")
        })
        .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default())
        .filter(|v| !only_new || v["baseline_state"] != "unchanged")
        .map(|v| key_of(&v))
        .collect()
}

fn gate_ids(report: &Value) -> Vec<String> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap().to_string())
        .collect()
}

/// The project's daemons, stopped when dropped (a failing test included).
struct Daemons<'a>(&'a GitRepo);

impl Drop for Daemons<'_> {
    fn drop(&mut self) {
        self.0.qg(&["daemon", "stop"]);
    }
}

#[test]
fn each_member_is_checked_as_its_own_run_checks_it_cold_and_warm() {
    let repo = workspace();
    let own = own_verdict(&repo);
    // The members' settings matter: a's strict mypy flags `value`, which
    // neither the root's settings nor b's would; the root's run flags none
    // of scripts/ or c (unannotated code, default settings).
    assert!(
        own.contains(&(
            "packages/a/src/a/core.py".into(),
            1,
            "no-untyped-def".into()
        )),
        "{own:?}"
    );
    let reports = tempfile::tempdir().unwrap();
    let report_to = |format: &str| format!("{format}={}", reports.path().join(format).display());
    let project = repo.qg(&[
        "run",
        "--scope",
        "project",
        "--no-daemon",
        "--format",
        "json",
        "--report",
        &report_to("sarif"),
        "--report",
        &report_to("junit"),
    ]);
    project.assert_code(1);
    let report = project.json();
    assert_eq!(findings(&report, false), own, "{}", project.stdout);
    let ids = gate_ids(&report);
    for id in [
        "mypy",
        "mypy@packages/a",
        "mypy@packages/b",
        "pyright",
        "pyright@packages/b",
    ] {
        assert!(ids.contains(&id.to_string()), "no gate {id}: {ids:?}");
    }
    // No member of its own for c (no config), nor for a's pyright.
    assert!(!ids
        .iter()
        .any(|id| id.ends_with("@packages/c") || id == "pyright@packages/a"));
    let a = project.gate("mypy@packages/a");
    assert_eq!(
        a["rerun_hint"], "cd packages/a && mypy src/a/core.py",
        "the hint reruns the member's own run: {a}"
    );
    // Each run says which member it is of, in every machine format.
    assert_eq!(a["member"], json!({"dir": "packages/a", "of": "mypy"}));
    assert!(project.gate("mypy").get("member").is_none());
    common::assert_fits_schema("run-report.json", &report);
    let render = |format: &str| std::fs::read_to_string(reports.path().join(format)).unwrap();
    let sarif: Value = serde_json::from_str(&render("sarif")).unwrap();
    let run = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tool"]["driver"]["name"] == "qg/mypy@packages/a")
        .expect("a's mypy run in the SARIF");
    assert_eq!(
        run["properties"],
        json!({"member": "packages/a", "runOf": "mypy"})
    );
    let junit = render("junit");
    assert!(
        junit.contains("<property name=\"member\" value=\"packages/a\"/>\n      <property name=\"run_of\" value=\"mypy\"/>"),
        "{junit}"
    );

    // The TDD loop: agree to today's findings, then break b through a.
    repo.qg(&["baseline", "write"]).assert_code(0);
    repo.commit("baseline");
    repo.qg(&["run", "--no-daemon"]).assert_code(0);
    repo.write(
        "packages/a/src/a/core.py",
        "def value(x):\n    return x + 1\n\n\ndef typed(x: int) -> str:\n    return str(x)\n",
    );
    let broken = own_verdict(&repo);
    let expected: BTreeSet<Key> = broken.difference(&own).cloned().collect();
    assert_eq!(
        expected,
        BTreeSet::from([
            (
                "packages/b/src/b/use.py".into(),
                5,
                "reportReturnType".into()
            ),
            ("packages/b/src/b/use.py".into(), 5, "return-value".into()),
        ]),
        "the edit breaks b in its own runs"
    );
    let cold = repo.qg(&["run", "--no-daemon", "--format", "json"]);
    cold.assert_code(1);
    assert_eq!(
        findings(&cold.json(), true),
        expected,
        "cold: {}",
        cold.stdout
    );
    // A partial run is handed the member's package bases, but its hint
    // sets none its file brings itself: the same form as a project run's.
    let b_hint = "cd packages/b && mypy src/b/use.py";
    assert_eq!(cold.gate("mypy@packages/b")["rerun_hint"], b_hint);

    let _daemons = Daemons(&repo);
    repo.qg(&["daemon", "start"]).assert_code(0);
    let warm = repo.qg(&["run", "--format", "json"]);
    warm.assert_code(1);
    let report = warm.json();
    assert_eq!(
        common::warm_gate_ids(&report),
        // a's files are the root's pyright's (a configures no pyright).
        [
            "mypy@packages/a",
            "mypy@packages/b",
            "pyright",
            "pyright@packages/b"
        ],
        "the members' runs answered warm: {}",
        warm.stdout
    );
    assert_eq!(findings(&report, true), expected, "warm: {}", warm.stdout);
    assert_eq!(warm.gate("mypy@packages/b")["rerun_hint"], b_hint);

    // Reverted: green again; then a's own settings loosened, and qg checks
    // all of a with them (the finding a's strictness made is fixed).
    repo.git(&["checkout", "--", "packages/a/src/a/core.py"]);
    repo.qg(&["run"]).assert_code(0);
    repo.write(
        "packages/a/pyproject.toml",
        "[project]\nname = \"a\"\nversion = \"0\"\n\n[tool.mypy]\nstrict = false\n",
    );
    let loosened = repo.qg(&["run", "--format", "json"]);
    loosened.assert_code(0);
    let a = loosened.gate("mypy@packages/a");
    assert_eq!(a["status"], "passed", "{}", loosened.stdout);
    assert!(
        a["files_checked"].as_u64().unwrap() >= 2,
        "a's whole project is checked after its settings changed: {a}"
    );
}

#[test]
fn a_members_list_in_the_config_wins_and_a_wrong_one_is_a_usage_error() {
    let repo = GitRepo::new(FILES);
    repo.write(
        ".st3/quality.yaml",
        "active_gates: [mypy]\nmembers: [packages/a]\n",
    );
    let files = repo.qg(&["doctor", "--format", "json"]);
    let text = files.stdout.clone();
    assert!(text.contains("its own runs: mypy@packages/a"), "{text}");
    assert!(
        !text.contains("mypy@packages/b"),
        "only the listed member: {text}"
    );
    let explained = repo.qg(&["explain", "mypy@packages/a", "--format", "json"]);
    let explained = explained.json();
    assert_eq!(explained["working_dir"], "packages/a", "{explained}");
    // Where its files come from names the member's own config file.
    let files_from = explained["files_from"].as_str().unwrap();
    assert!(
        files_from.contains("packages/a/pyproject.toml"),
        "{explained}"
    );
    common::assert_fits_schema("explain.json", &explained);
    repo.write(
        ".st3/quality.yaml",
        "active_gates: [mypy]\nmembers: [packages/nowhere]\n",
    );
    let wrong = repo.qg(&["run", "--no-daemon"]);
    wrong.assert_fails_with(2, "`packages/nowhere` names no directory");
}

#[test]
fn the_baseline_names_a_members_finding_by_its_gate_and_a_members_rewrite_keeps_the_others() {
    let repo = workspace();
    repo.write(".st3/quality.yaml", "active_gates: [mypy]\n");
    repo.qg(&["baseline", "write"]).assert_code(0);
    let baseline = std::fs::read_to_string(repo.path().join(".st3/baseline.jsonl")).unwrap();
    let a = baseline
        .lines()
        .find(|l| l.contains("packages/a/src/a/core.py"))
        .unwrap_or_else(|| panic!("a's finding is held: {baseline}"));
    // `mypy`, not `mypy@packages/a`: the baseline outlives how the
    // workspace's configs split the gate.
    assert!(a.contains(r#""gate":"mypy""#), "{a}");
    repo.commit("baseline");
    repo.qg(&["run", "--scope", "project", "--no-daemon"])
        .assert_code(0);
    // Rewriting b's part of the baseline leaves a's entry alone.
    repo.qg(&["baseline", "write", "--gate", "mypy@packages/b"])
        .assert_code(0);
    let rewritten = std::fs::read_to_string(repo.path().join(".st3/baseline.jsonl")).unwrap();
    assert!(
        rewritten.contains("packages/a/src/a/core.py"),
        "{rewritten}"
    );
    repo.qg(&["run", "--scope", "project", "--no-daemon"])
        .assert_code(0);
}

#[test]
fn a_member_with_a_virtualenv_of_its_own_runs_its_tools_from_it() {
    let repo = workspace();
    repo.write(".st3/quality.yaml", "active_gates: [mypy]\n");
    // b's own `.venv`: its mypy leaves a mark, then runs the real one.
    let mark = repo.path().join("b-mypy-ran");
    marking_mypy(&repo, &repo.path().join("packages/b/.venv/bin/mypy"), &mark);
    let doctor = repo.qg(&["doctor"]);
    assert!(
        doctor.stdout.contains("packages/b/.venv/bin/mypy"),
        "mypy@packages/b resolves in b's .venv: {}",
        doctor.stdout
    );
    let run = repo.qg(&[
        "run",
        "--scope",
        "project",
        "--no-daemon",
        "--format",
        "json",
    ]);
    run.assert_code(1);
    assert!(mark.exists(), "b's own mypy ran: {}", run.stdout);
    assert_eq!(
        run.gate("mypy@packages/b")["status"],
        "passed",
        "{}",
        run.stdout
    );
}

/// A Poetry member set up on its own, its environment outside the tree:
/// `cd packages/b && poetry run mypy` runs the mypy Poetry keeps for b, and
/// so does b's run in qg. (A stand-in `poetry` answers `env info --path`.)
#[test]
fn a_member_whose_manager_keeps_its_environment_elsewhere_runs_its_tools_from_there() {
    let mut repo = workspace();
    repo.write(".st3/quality.yaml", "active_gates: [mypy]\n");
    let b = std::fs::read_to_string(repo.path().join("packages/b/pyproject.toml")).unwrap();
    repo.write(
        "packages/b/pyproject.toml",
        &format!("{b}\n[tool.poetry]\npackage-mode = false\n"),
    );
    let outside = tempfile::tempdir().unwrap();
    let kept = outside.path().join("b-py3.11");
    let mark = outside.path().join("b-mypy-ran");
    marking_mypy(&repo, &kept.join("bin/mypy"), &mark);
    std::fs::write(kept.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    let managers = outside.path().join("bin");
    executable(
        &managers.join("poetry"),
        &format!(
            "#!/bin/sh\n[ \"$*\" = 'env info --path' ] && [ \"$(basename \"$PWD\")\" = b ] && echo '{}' && exit 0\nexit 1\n",
            kept.display()
        ),
    );
    let path = format!("{}:{}", managers.display(), std::env::var("PATH").unwrap());
    repo.set_env("PATH", &path);
    let doctor = repo.qg(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("tools: the environment poetry keeps for it (`poetry env info --path`)"),
        "{}",
        doctor.stdout
    );
    let run = repo.qg(&[
        "run",
        "--scope",
        "project",
        "--no-daemon",
        "--format",
        "json",
    ]);
    run.assert_code(1);
    assert!(
        mark.exists(),
        "b's mypy ran from Poetry's environment: {}",
        run.stdout
    );
    assert_eq!(
        run.gate("mypy@packages/b")["status"],
        "passed",
        "{}",
        run.stdout
    );
    // Remembered in the workspace's .st3, beside the root's answer.
    let remembered = std::fs::read_to_string(repo.path().join(".st3/environment.json")).unwrap();
    assert!(
        remembered.contains(&kept.display().to_string()),
        "{remembered}"
    );
}

#[test]
fn at_most_max_daemons_start_and_the_rest_are_answered_cold() {
    let repo = workspace();
    let _daemons = Daemons(&repo);
    let start = repo.qg(&["daemon", "start", "--max", "2", "--format", "json"]);
    start.assert_code(0);
    let states: Vec<(String, String)> = start.json()["daemons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["gate"].as_str().unwrap().into(),
                d["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    let state = |s: &str| states.iter().filter(|(_, st)| st == s).count();
    assert_eq!((state("ready"), state("not_started")), (2, 3), "{states:?}");
    let run = repo.qg(&["run", "--scope", "project", "--format", "json"]);
    let warm = common::warm_gate_ids(&run.json());
    let ready: Vec<String> = states
        .iter()
        .filter(|(_, st)| st == "ready")
        .map(|(gate, _)| gate.clone())
        .collect();
    assert_eq!(warm, ready, "{}", run.stdout);
    // Every daemon started is found again and stopped (a member's slot
    // among them).
    let stop = repo.qg(&["daemon", "stop"]);
    assert!(
        stop.stdout
            .contains("stopped 2 daemons: mypy, mypy@packages/a"),
        "{}",
        stop.stdout
    );
}

#[test]
fn a_directory_the_project_s_own_run_leaves_out_is_no_member_for_its_config_alone() {
    // A test fixture with a mypy config of its own, which the project's
    // `mypy .` excludes: the project's verdict is `mypy .`'s, green.
    let repo = GitRepo::new(&[
        (
            "pyproject.toml",
            "[tool.mypy]\nexclude = \"^tests/fixtures/\"\n",
        ),
        ("pkg/__init__.py", ""),
        ("pkg/core.py", "def value() -> int:\n    return 1\n"),
        (
            "tests/fixtures/strict/pyproject.toml",
            "[tool.mypy]\nstrict = true\n",
        ),
        (
            "tests/fixtures/strict/case.py",
            "def untyped(x):\n    return x\n",
        ),
    ]);
    repo.write(".st3/quality.yaml", "active_gates: [mypy]\n");
    let run = repo.qg(&[
        "run",
        "--scope",
        "project",
        "--no-daemon",
        "--format",
        "json",
    ]);
    run.assert_code(0);
    assert_eq!(gate_ids(&run.json()), ["mypy"], "{}", run.stdout);
    // No member; named on doctor's `not members` line alone (a folder
    // with a config nothing checks could be a member not yet declared).
    let doctor = repo.qg(&["doctor"]);
    let naming: Vec<&str> = doctor
        .stdout
        .lines()
        .filter(|l| l.contains("tests/fixtures/strict ("))
        .collect();
    assert_eq!(naming.len(), 1, "{}", doctor.stdout);
    assert!(naming[0].contains("✓ not members"), "{}", doctor.stdout);
}

/// A member just made — its mypy config and code not yet `git add`ed — is
/// checked as its own run checks it, at once: before, its config counted
/// only once tracked, and the root's run checked its files with the root's
/// settings (green where `cd tools/new && mypy .` fails).
#[test]
fn a_member_not_yet_added_to_git_is_checked_with_its_own_config() {
    let repo = GitRepo::new(&[
        (
            "pyproject.toml",
            "[tool.mypy]\nwarn_unused_ignores = true\n",
        ),
        ("pkg/__init__.py", ""),
        ("pkg/core.py", "def value() -> int:\n    return 1\n"),
    ]);
    repo.write(".st3/quality.yaml", "active_gates: [mypy]\n");
    repo.git(&["add", ".st3/quality.yaml"]);
    repo.git(&["commit", "-q", "-m", "qg"]);
    repo.qg(&["run", "--no-daemon"]).assert_code(0);
    repo.write("tools/new/mypy.ini", "[mypy]\nstrict = true\n");
    repo.write("tools/new/x.py", "def untyped(x):\n    return x\n");
    let own: BTreeSet<Key> = mypy_findings_in(&repo, "tools/new", &["."])
        .into_iter()
        .collect();
    assert!(
        own.iter().any(|k| k.2 == "no-untyped-def"),
        "the member's own run fails: {own:?}"
    );
    for scope in ["auto", "project"] {
        let run = repo.qg(&[
            "run",
            "--scope",
            scope,
            "--no-daemon",
            "--no-state",
            "--format",
            "json",
        ]);
        run.assert_code(1);
        let report = run.json();
        assert_eq!(
            gate_ids(&report),
            ["mypy", "mypy@tools/new"],
            "{scope}: {report}"
        );
        assert_eq!(findings(&report, false), own, "{scope}: {report}");
    }
}

/// A CI matrix over the workspace: each member's run is a whole-program
/// unit of its own, placed on the shards as any gate is (largest first), so
/// the shards split the type checkers' work by member; merged, the shards
/// are the unsharded verdict.
#[test]
fn shards_split_the_workspace_by_member_and_merge_to_its_verdict() {
    let repo = workspace();
    let args = ["run", "--scope", "project", "--no-daemon", "--no-state"];
    let whole = repo.qg(&[&args[..], &["--format", "json"]].concat());
    whole.assert_code(1);
    let checked = |report: &Value| -> BTreeSet<String> {
        report["gates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["status"] != "skipped")
            .map(|g| g["id"].as_str().unwrap().to_string())
            .filter(|id| id.starts_with("mypy") || id.starts_with("pyright"))
            .collect()
    };
    let mut reports = Vec::new();
    let mut shares = Vec::new();
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let run = repo.qg(&[&args[..], &["--shard", &shard, "--format", "json"]].concat());
        assert!(run.code <= 1, "shard {shard}: {}", run.stderr);
        shares.push(checked(&run.json()));
        let name = format!("shard-{i}.json");
        std::fs::write(repo.path().join(&name), &run.stdout).unwrap();
        reports.push(name);
    }
    // Each checker run in exactly one shard, and both shards check.
    assert!(shares.iter().all(|s| !s.is_empty()), "{shares:?}");
    assert!(shares[0].is_disjoint(&shares[1]), "{shares:?}");
    let union: BTreeSet<String> = shares.iter().flatten().cloned().collect();
    assert_eq!(union, checked(&whole.json()));
    let merged = repo.qg(&["merge", "--format", "json", &reports[0], &reports[1]]);
    merged.assert_code(1);
    assert_eq!(
        findings(&merged.json(), false),
        findings(&whole.json(), false),
        "{}",
        merged.stdout
    );
}

/// A member inside a member, with mypy and pyright configs of its own:
/// `packages/a/plugins/p`, whose hook imports `a`.
const NESTED: &[(&str, &str)] = &[
    (
        "packages/a/plugins/p/pyproject.toml",
        "[project]\nname = \"p\"\nversion = \"0\"\n\n\
         [tool.mypy]\nwarn_return_any = true\n\n\
         [tool.pyright]\ntypeCheckingMode = \"strict\"\n",
    ),
    ("packages/a/plugins/p/p/__init__.py", ""),
    (
        "packages/a/plugins/p/p/hook.py",
        "from a.core import typed\n\n\ndef hook() -> int:\n    return typed(2)\n\n\ndef helper(x):\n    return x\n",
    ),
];

/// The nested workspace's own verdict: every file by the innermost
/// member's own run of each tool that configures it, the root's for the rest.
fn nested_own_verdict(repo: &GitRepo) -> BTreeSet<Key> {
    let owned_by = |member: &str, inner: &[&str]| {
        let inner: Vec<String> = inner.iter().map(|m| format!("{m}/")).collect();
        let member = match member {
            "" => String::new(),
            dir => format!("{dir}/"),
        };
        move |key: &Key| {
            key.0.starts_with(member.as_str())
                && !inner.iter().any(|m| key.0.starts_with(m.as_str()))
        }
    };
    let (a, b, p) = ("packages/a", "packages/b", "packages/a/plugins/p");
    let mut found = BTreeSet::new();
    let mut from = |keys: Vec<Key>, keep: &dyn Fn(&Key) -> bool| {
        found.extend(keys.into_iter().filter(|k| keep(k)));
    };
    from(mypy_findings_in(repo, "", &["."]), &owned_by("", &[a, b]));
    from(mypy_findings_in(repo, a, &["."]), &owned_by(a, &[p]));
    from(mypy_findings_in(repo, p, &["."]), &owned_by(p, &[]));
    from(mypy_findings_in(repo, b, &["."]), &owned_by(b, &[]));
    from(pyright_findings_in(repo, ""), &owned_by("", &[b, p]));
    from(pyright_findings_in(repo, b), &owned_by(b, &[]));
    from(pyright_findings_in(repo, p), &owned_by(p, &[]));
    found
}

/// Nested members, and the TDD loop across members: a signature change in
/// `a` breaks `b` and the member nested in `a`; the revert, a stash and its
/// pop, and a switch to a branch holding the break each give the tools'
/// own difference from the baseline — cold, then warm.
#[test]
fn nested_members_and_the_tdd_loop_across_members_equal_the_tools_own_runs_cold_and_warm() {
    let mut files = FILES.to_vec();
    files.extend_from_slice(NESTED);
    let repo = workspace_of(
        &files,
        &[
            ("b", "packages/b/src"),
            ("c", "packages/c/src"),
            ("p", "packages/a/plugins/p"),
        ],
    );

    let own = nested_own_verdict(&repo);
    let project = repo.qg(&[
        "run",
        "--scope",
        "project",
        "--no-daemon",
        "--format",
        "json",
    ]);
    project.assert_code(1);
    assert_eq!(findings(&project.json(), false), own, "{}", project.stdout);
    let ids = gate_ids(&project.json());
    for id in ["mypy@packages/a/plugins/p", "pyright@packages/a/plugins/p"] {
        assert!(ids.contains(&id.to_string()), "no gate {id}: {ids:?}");
    }
    // p's settings matter: its strict pyright flags `helper` (a's strict
    // mypy would too, were the file a's: the equality above says it is not).
    let hook = "packages/a/plugins/p/p/hook.py";
    assert!(own.iter().any(|k| k.0 == hook), "{own:?}");

    repo.qg(&["baseline", "write"]).assert_code(0);
    repo.commit("baseline");
    let core = "packages/a/src/a/core.py";
    let original = std::fs::read_to_string(repo.path().join(core)).unwrap();
    let broken_text = original.replace(
        "def typed(x: int) -> int:\n    return x\n",
        "def typed(x: int) -> str:\n    return str(x)\n",
    );
    repo.write(core, &broken_text);
    let broken: BTreeSet<Key> = nested_own_verdict(&repo)
        .difference(&own)
        .cloned()
        .collect();
    for file in ["packages/b/src/b/use.py", "packages/a/plugins/p/p/hook.py"] {
        assert!(
            broken.iter().any(|k| k.0 == file),
            "{file} breaks: {broken:?}"
        );
    }
    repo.git(&["checkout", "-q", "-b", "broken"]);
    repo.commit("the break");
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["checkout", "--", core]);
    let empty = BTreeSet::new();

    // Each step: what it does to the tree, and the tools' own difference.
    let play = |extra: &[&str], how: &str| {
        let run = |step: &str, expected: &BTreeSet<Key>| {
            let args = [&["run", "--format", "json"][..], extra].concat();
            let report = repo.qg(&args);
            report.assert_code(if expected.is_empty() { 0 } else { 1 });
            assert_eq!(
                &findings(&report.json(), true),
                expected,
                "{how}, {step}: {}",
                report.stdout
            );
            report.json()
        };
        run("green", &empty);
        repo.write(core, &broken_text);
        let red = run("a's signature changed", &broken);
        run("stashed", &{
            repo.git(&["stash", "-q"]);
            empty.clone()
        });
        run("popped", &{
            repo.git(&["stash", "pop", "-q"]);
            broken.clone()
        });
        run("reverted", &{
            repo.git(&["checkout", "--", core]);
            empty.clone()
        });
        run("on the branch with the break", &{
            repo.git(&["checkout", "-q", "broken"]);
            broken.clone()
        });
        run("back on main", &{
            repo.git(&["checkout", "-q", "main"]);
            empty.clone()
        });
        red
    };
    play(&["--no-daemon"], "cold");
    let _daemons = Daemons(&repo);
    repo.qg(&["daemon", "start"]).assert_code(0);
    let red = play(&[], "warm");
    let warm = common::warm_gate_ids(&red);
    for id in [
        "mypy@packages/a/plugins/p",
        "pyright@packages/a/plugins/p",
        "mypy@packages/b",
    ] {
        assert!(
            warm.contains(&id.to_string()),
            "{id} answered warm: {warm:?}"
        );
    }
}
