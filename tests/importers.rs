//! Importers in scope: on a partial scope the type checkers also check every
//! project file that imports a changed (or deleted) one, so an edit that
//! breaks an unchanged importer fails the run that made it. Real ruff
//! (the analyzer), mypy and pyright, in temp git repos.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::fs;

use common::repo::GitRepo;
use common::{default_config_excluding, violation_keys};
use serde_json::Value;

/// What these tests ask of a repository besides running qg.
trait Inspect {
    fn files(&self) -> Value;
    fn baseline(&self) -> Value;
}

impl Inspect for GitRepo {
    fn files(&self) -> Value {
        let run = self.qg(&["files", "--format", "json"]);
        run.assert_code(0);
        run.json()
    }

    fn baseline(&self) -> Value {
        let text = fs::read_to_string(self.path().join(".st3/state.json")).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["quality_gates"]["branches"]["main"]
            ["baseline_sha"]
            .clone()
    }
}

fn key(file: &str, line: u64, code: &str) -> (String, Option<u64>, String, String) {
    (
        file.to_string(),
        Some(line),
        code.to_string(),
        "error".to_string(),
    )
}

/// `path → (reasons, depends_on)` of a `qg files` listing.
fn listed(files: &Value) -> Vec<(String, Value, Value)> {
    files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["reasons"].clone(),
                f["depends_on"].clone(),
            )
        })
        .collect()
}

/// What mypy says of `B` once `a.py` is `A_BROKEN`.
fn mypy_on_b_after_a_broke() -> [(String, Option<u64>, String, String); 2] {
    [
        key("pkg/b.py", 5, "return-value"),
        key("pkg/b.py", 5, "arg-type"),
    ]
}

/// A package of `a.py` and `b.py`, committed.
fn pkg(a: &str, b: &str) -> GitRepo {
    GitRepo::new(&[("pkg/__init__.py", ""), ("pkg/a.py", a), ("pkg/b.py", b)])
}

/// Whether a `qg files` listing has `importer`, there for importing `origin`.
fn lists_importer(files: &Value, importer: &str, origin: &str) -> bool {
    listed(files).contains(&(
        importer.to_string(),
        serde_json::json!(["imports_changed"]),
        serde_json::json!([origin]),
    ))
}

const A: &str = "def f(x: int) -> int:\n    return x\n";
const A_BROKEN: &str = "def f(x: str) -> str:\n    return x\n";
const B: &str = "from pkg.a import f\n\n\ndef g() -> int:\n    return f(1)\n";

/// The TDD loop: change `a.py` so that the unchanged `b.py` no
/// longer type-checks. The run fails on b.py's exact errors, the baseline
/// stays, the next run still reports them, and fixing b.py makes it green.
#[test]
fn an_edit_that_breaks_an_unchanged_importer_fails_until_it_is_fixed() {
    let repo = pkg(A, B);
    assert_eq!(repo.run().json()["overall_pass"], true);
    let green = repo.baseline();
    repo.write("pkg/a.py", A_BROKEN);
    let files = repo.files();
    assert_eq!(
        listed(&files),
        [
            (
                "pkg/a.py".to_string(),
                serde_json::json!(["changed"]),
                Value::Null
            ),
            (
                "pkg/b.py".to_string(),
                serde_json::json!(["imports_changed"]),
                serde_json::json!(["pkg/a.py"])
            ),
        ]
    );
    for attempt in ["first", "second"] {
        let run = repo.run();
        run.assert_code(1);
        assert_eq!(
            violation_keys(&run.gate("mypy")),
            mypy_on_b_after_a_broke(),
            "{attempt} run"
        );
        assert_eq!(
            violation_keys(&run.gate("pyright")),
            [
                key("pkg/b.py", 5, "reportReturnType"),
                key("pkg/b.py", 5, "reportArgumentType")
            ],
            "{attempt} run"
        );
        if attempt == "first" {
            // The linters are not type checkers: b.py is not theirs to check
            // (until it has failed once, when every gate re-checks it).
            assert_eq!(run.gate("ruff_check")["files_checked"], 1);
        }
        assert_eq!(
            repo.baseline(),
            green,
            "the baseline stays while b.py is broken"
        );
    }
    repo.write(
        "pkg/b.py",
        "from pkg.a import f\n\n\ndef g() -> str:\n    return f(\"1\")\n",
    );
    assert_eq!(repo.run().json()["overall_pass"], true);
    let text = fs::read_to_string(repo.path().join(".st3/state.json")).unwrap();
    let state: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        state["quality_gates"]["branches"]["main"]["failed_files"],
        serde_json::json!([])
    );
    let run = repo.run();
    assert!(run.json()["summary_line"]
        .as_str()
        .unwrap()
        .starts_with("⏭️ nothing to check"));
}

/// Every way Python code imports a module, src/ layout included; only the
/// files that depend on the change are added.
#[test]
fn importers_are_found_through_every_kind_of_import() {
    let repo = GitRepo::new(&[
        ("src/pkg/__init__.py", "from pkg.a import f as f\n"),
        ("src/pkg/a.py", A),
        ("src/pkg/reexported.py", "from pkg import f\n\nY = f(1)\n"),
        ("src/pkg/relative.py", "from . import a\n\nY = a.f(1)\n"),
        ("src/pkg/aliased.py", "import pkg.a as aa\n\nY = aa.f(1)\n"),
        ("src/pkg/sub/__init__.py", ""),
        ("src/pkg/sub/deep.py", "from ..a import f\n\nY = f(1)\n"),
        (
            "src/pkg/sub/twice.py",
            "from pkg.reexported import Y\n\nZ = Y\n",
        ),
        ("src/pkg/s.py", "def s():\n    return 1\n"),
        ("src/pkg/s.pyi", "def s() -> int: ...\n"),
        (
            "src/pkg/stubbed.py",
            "from pkg.s import s\n\nV: int = s()\n",
        ),
        ("src/pkg/unrelated.py", "X = 1\n"),
        (
            "tests/test_a.py",
            "from pkg.a import f\n\n\ndef test_f() -> None:\n    assert f(1) == 1\n",
        ),
    ]);
    // The first run (the whole project) builds the graph.
    repo.run();
    repo.write("src/pkg/a.py", A_BROKEN);
    let files = repo.files();
    let importers: Vec<(String, Value)> = listed(&files)
        .into_iter()
        .filter(|(_, reasons, _)| reasons == &serde_json::json!(["imports_changed"]))
        .map(|(path, _, depends_on)| (path, depends_on))
        .collect();
    let via_a = serde_json::json!(["src/pkg/a.py"]);
    assert_eq!(
        importers,
        [
            ("src/pkg/__init__.py".to_string(), via_a.clone()),
            ("src/pkg/aliased.py".to_string(), via_a.clone()),
            ("src/pkg/reexported.py".to_string(), via_a.clone()),
            ("src/pkg/relative.py".to_string(), via_a.clone()),
            ("src/pkg/sub/deep.py".to_string(), via_a.clone()),
            ("src/pkg/sub/twice.py".to_string(), via_a.clone()),
            ("tests/test_a.py".to_string(), via_a.clone()),
        ],
        "{files}"
    );
    // A stub is what importers see.
    repo.git(&["checkout", "--", "src/pkg/a.py"]);
    repo.write("src/pkg/s.pyi", "def s() -> str: ...\n");
    let files = repo.files();
    assert!(
        listed(&files)
            .iter()
            .any(|(p, r, _)| p == "src/pkg/stubbed.py"
                && r == &serde_json::json!(["imports_changed"])),
        "{files}"
    );
}

/// A deleted or renamed module breaks what imported it: those importers are
/// checked (from the graph as it was) and fail.
#[test]
fn a_deleted_or_renamed_module_breaks_its_importers() {
    for rename in [false, true] {
        let repo = pkg(A, B);
        assert_eq!(repo.run().json()["overall_pass"], true);
        if rename {
            repo.git(&["mv", "pkg/a.py", "pkg/a2.py"]);
        } else {
            repo.git(&["rm", "-q", "pkg/a.py"]);
        }
        let files = repo.files();
        assert!(
            lists_importer(&files, "pkg/b.py", "pkg/a.py"),
            "rename: {rename}: {files}"
        );
        let run = repo.run();
        run.assert_code(1);
        assert_eq!(
            violation_keys(&run.gate("mypy")),
            [key("pkg/b.py", 1, "import-not-found")]
        );
        assert_eq!(
            violation_keys(&run.gate("pyright")),
            [key("pkg/b.py", 1, "reportMissingImports")]
        );
        // Still failing next time, until b.py is fixed.
        assert_eq!(repo.run().json()["overall_pass"], false);
    }
}

/// When the importers cannot be known, the gates that check them check the
/// whole project and the summary says why: never a narrower scope in silence.
#[test]
fn unknown_importers_mean_the_whole_project_named_in_the_summary() {
    let repo = GitRepo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", A),
        ("pkg/b.py", B),
        ("pkg/c.py", "C = 1\n"),
    ]);
    assert_eq!(repo.run().json()["overall_pass"], true);
    // No analyzer: a config whose import_graph names a missing program.
    let config = qg::config::EMBEDDED_DEFAULT.replace(
        "command: [\"ruff\", \"analyze\", \"graph\"",
        "command: [\"no-such-analyzer-qg\", \"analyze\", \"graph\"",
    );
    repo.write(".st3/quality.yaml", &config);
    repo.commit("config");
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", A_BROKEN);
    let run = repo.run();
    run.assert_code(1);
    let json = run.json();
    let summary = json["summary_line"].as_str().unwrap();
    let expected = format!(
        "(importers unknown: the import analyzer `no-such-analyzer-qg` is not installed (install: {}/bin/pip install ruff); the gates that check importers checked the whole project)",
        common::tools_venv().display()
    );
    assert!(summary.contains(&expected), "{summary}");
    assert_eq!(run.gate("mypy")["files_checked"], 4);
    assert_eq!(run.gate("ruff_check")["files_checked"], 1);
    assert_eq!(violation_keys(&run.gate("mypy")).len(), 2);
}

/// A file the analyzer cannot read may import anything: outside the scope,
/// the importers are unknown; the changed file itself being unparseable is
/// no reason (what imports *it* is read from the other files).
#[test]
fn an_unreadable_file_outside_the_scope_makes_importers_unknown() {
    let repo = pkg(A, B);
    repo.run();
    repo.write("pkg/a.py", "def f(:\n");
    let files = repo.files();
    assert!(files.get("importers_unknown").is_none(), "{files}");
    assert_eq!(listed(&files).len(), 2);
    // A committed file no gate checks (so it never fails and never enters
    // the scope) that the analyzer cannot parse: mypy's own config leaves it
    // out (qg's globs alone would not: mypy's own run, `mypy .`, would stop
    // at its syntax error).
    let config = qg::config::EMBEDDED_DEFAULT.replace(
        "active_gates: [ruff_format, ruff_check, mypy, pyright]",
        "active_gates: [mypy]",
    );
    repo.write(".st3/quality.yaml", &config);
    repo.write(
        "pyproject.toml",
        "[tool.mypy]\nexclude = [\"^pkg/unreadable\\\\.py$\"]\n",
    );
    repo.write("pkg/a.py", A);
    repo.write("pkg/unreadable.py", "def g(:\n");
    repo.commit("an unparseable file no gate checks");
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", A_BROKEN);
    let files = repo.files();
    assert_eq!(
        files["importers_unknown"],
        "the import analyzer could not read pkg/unreadable.py, so what it imports is unknown",
        "{files}"
    );
    let run = repo.run();
    run.assert_code(1);
    assert_eq!(run.gate("mypy")["files_checked"], 3);
}

/// No graph from before a deletion: what imported the deleted file is
/// unknown, and said so.
#[test]
fn a_deletion_the_graph_never_saw_makes_importers_unknown() {
    let repo = pkg(A, B);
    repo.run();
    std::fs::remove_file(repo.path().join(".st3/import-graph.json")).unwrap();
    repo.git(&["rm", "-q", "pkg/a.py"]);
    let files = repo.files();
    assert_eq!(
        files["importers_unknown"],
        "what imported the deleted pkg/a.py is unknown: the import graph never saw it",
        "{files}"
    );
    let run = repo.run();
    run.assert_code(1);
    assert_eq!(
        violation_keys(&run.gate("mypy")),
        [key("pkg/b.py", 1, "import-not-found")]
    );
}

#[test]
fn the_import_graph_cache_never_shows_in_git_status() {
    let repo = pkg(A, B);
    repo.qg(&["run", "--scope", "project", "--no-progress"]);
    repo.write("pkg/a.py", &format!("{A}\n"));
    repo.run();
    assert!(repo.path().join(".st3/import-graph.json").exists());
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "-uall"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), " M pkg/a.py\n");
}

/// The analyzer's own config decides what imports what (here ruff's
/// string-import detection): once it changes, every file is asked again,
/// so an unchanged file that now imports a module is checked with it.
#[test]
fn an_analyzer_config_change_asks_every_file_again() {
    let repo = pkg(A, "NAME = \"pkg.a\"\n");
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", A_BROKEN);
    assert_eq!(listed(&repo.files()).len(), 1, "b.py imports nothing yet");
    repo.write("pkg/a.py", A);
    repo.write(
        "pyproject.toml",
        "[tool.ruff.analyze]\ndetect-string-imports = true\nstring-imports-min-dots = 1\n",
    );
    repo.commit("b.py's string names a module now");
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", A_BROKEN);
    let files = repo.files();
    assert!(lists_importer(&files, "pkg/b.py", "pkg/a.py"), "{files}");
}

/// `--no-state` writes nothing: the import graph's cache neither, though the
/// run still checks the importers it finds.
#[test]
fn a_no_state_run_leaves_no_import_graph_behind() {
    let repo = pkg(A_BROKEN, B);
    let run = repo.qg(&["run", "--no-state", "--format", "json", "pkg/a.py"]);
    run.assert_code(1);
    assert_eq!(violation_keys(&run.gate("mypy")), mypy_on_b_after_a_broke());
    assert!(!repo.path().join(".st3/import-graph.json").exists());
}

/// A file the project excludes is never checked, not even as an importer
/// of a change.
#[test]
fn an_excluded_importer_is_not_checked() {
    let repo = GitRepo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", A),
        ("pkg/b.py", B),
        ("generated/client.py", B),
    ]);
    repo.write(
        ".st3/quality.yaml",
        &default_config_excluding("generated/**"),
    );
    repo.commit("config");
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", A_BROKEN);
    let paths: Vec<String> = listed(&repo.files())
        .into_iter()
        .map(|(p, _, _)| p)
        .collect();
    assert_eq!(paths, ["pkg/a.py", "pkg/b.py"]);
}

/// An import only the working tree has (an edit not yet committed, which
/// passed) is known: breaking what it imports fails the importer.
#[test]
fn an_uncommitted_import_is_known() {
    let repo = pkg(A, "B = 1\n");
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/b.py", B);
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", A_BROKEN);
    let run = repo.run();
    run.assert_code(1);
    assert_eq!(violation_keys(&run.gate("mypy")), mypy_on_b_after_a_broke());
}

/// A source root named by a glob (ruff's `src = ["packages/*/src"]`, as a
/// monorepo writes it) is every directory the glob matches: each an import
/// root; a hidden directory and a file are none.
#[test]
fn a_glob_in_the_analyzers_src_names_every_matching_source_root() {
    let repo = GitRepo::new(&[
        (
            "pyproject.toml",
            "[tool.ruff]\nsrc = [\"packages/*/src\"]\n",
        ),
        ("packages/a/src/a/__init__.py", ""),
        ("packages/b/src/b/__init__.py", ""),
        ("packages/.cache/src/c/__init__.py", ""),
        ("packages/notes.txt", ""),
    ]);
    let explained = repo.qg(&["explain", "mypy", "--format", "json"]).json();
    let from_src: Vec<&str> = explained["import_roots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["from"].to_string().contains("[tool.ruff] `src`"))
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(from_src.contains(&"packages/a/src"), "{explained}");
    assert!(from_src.contains(&"packages/b/src"), "{explained}");
    assert!(
        !from_src.iter().any(|p| p.contains(".cache")),
        "{explained}"
    );
}

/// A repository of `files` whose config runs the type checkers with
/// `interface_aware_importers`, committed.
fn interface_aware_repo(files: &[(&str, &str)]) -> GitRepo {
    let config =
        "[tool.qg]\nactive_gates = [\"mypy\", \"pyright\"]\ninterface_aware_importers = true\n";
    let mut all = vec![("pyproject.toml", config)];
    all.extend_from_slice(files);
    GitRepo::new(&all)
}

/// A module whose importer sees its signatures, an attribute its
/// `__init__` assigns, and the inferred return type of `guess`.
const BOX: &str = "class Box:\n    def __init__(self) -> None:\n        self.size = 1\n\n    def grow(self) -> int:\n        return self.size + 1\n\n\ndef f(x: int) -> int:\n    return x\n\n\ndef guess(x: int):\n    return x\n";
const USES_BOX: &str = "from pkg.a import Box, f, guess\n\n\ndef g() -> int:\n    return f(1) + Box().grow() + guess(2) + Box().size\n";

/// `pkg/a.py` holds [`BOX`], `pkg/b.py` imports it ([`USES_BOX`]), with
/// interface-aware importers; after a green run.
fn green_box_repo() -> GitRepo {
    let repo = interface_aware_repo(&[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", BOX),
        ("pkg/b.py", USES_BOX),
    ]);
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo
}

/// With `interface_aware_importers`, an edit no importer can see (a body
/// behind a return annotation) checks the file alone, also when the last
/// green run checked it uncommitted; an inferred return type, an attribute
/// a method assigns and a signature still add the importer. After each
/// edit the run's verdict equals the project run's.
#[test]
fn with_interface_aware_importers_a_body_only_edit_checks_the_file_alone() {
    let repo = green_box_repo();
    let body = BOX.replace(
        "    return x\n\n\ndef guess",
        "    return x * 2\n\n\ndef guess",
    );
    // Each edit: what it is, a.py after it, and the parts of a.py's
    // interface it changes (none: the importer is not checked).
    let edits: [(&str, String, &[&str]); 5] = [
        ("a body behind a return annotation", body.clone(), &[]),
        (
            "another, after a green run of the first",
            body.replace("self.size + 1", "self.size + 2"),
            &[],
        ),
        (
            "an inferred return type",
            BOX.replace(
                "def guess(x: int):\n    return x",
                "def guess(x: int):\n    return str(x)",
            ),
            &["def guess"],
        ),
        (
            "an attribute a method assigns",
            BOX.replace("self.size = 1", "self.size = \"1\""),
            &["class Box"],
        ),
        (
            "a signature",
            BOX.replace(
                "def f(x: int) -> int:\n    return x",
                "def f(x: int) -> str:\n    return str(x)",
            ),
            &["def f"],
        ),
    ];
    for (what, a, parts) in edits {
        let importers = !parts.is_empty();
        repo.write("pkg/a.py", &a);
        let files = repo.files();
        assert_eq!(
            lists_importer(&files, "pkg/b.py", "pkg/a.py"),
            importers,
            "{what}: {files}"
        );
        let body_only = files["body_only"] == serde_json::json!(["pkg/a.py"]);
        assert_eq!(body_only, !importers, "{what}: {files}");
        if importers {
            assert_eq!(
                files["interface_changed"]["pkg/a.py"],
                serde_json::json!(parts),
                "{what}: {files}"
            );
        }
        let run = repo.run();
        let project = repo.qg(&[
            "run",
            "--scope",
            "project",
            "--no-state",
            "--format",
            "json",
        ]);
        for gate in ["mypy", "pyright"] {
            assert_eq!(
                violation_keys(&run.gate(gate)),
                violation_keys(&project.gate(gate)),
                "{what}: {gate} against the project run\n{}",
                run.stdout
            );
        }
        assert_eq!(
            run.json()["overall_pass"],
            !importers,
            "{what}: {}",
            run.stdout
        );
        if importers {
            // Back to green: the importer, failing, is checked again.
            repo.write("pkg/a.py", BOX);
            assert_eq!(repo.run().json()["overall_pass"], true, "{what}: reverted");
        }
    }
}

/// `--verify` runs a check that left out importers again with every
/// importer. Fault injection: an interface cache that lies (a signature
/// change's interface stored under the committed content's blob) makes qg
/// take the change for a body-only edit and leave the broken importer out —
/// a plain run is green, the silent green the lie makes — and `--verify`
/// turns each type checker into a `skipped_importers` error naming the
/// importer's finding. An honest body-only edit verifies equal.
#[test]
fn verify_runs_a_check_that_left_out_importers_again_with_every_importer() {
    let repo = green_box_repo();
    let verify = || repo.qg(&["run", "--verify", "--no-state", "--format", "json"]);
    let body = BOX.replace(
        "    return x\n\n\ndef guess",
        "    return x * 2\n\n\ndef guess",
    );
    repo.write("pkg/a.py", &body);
    assert_eq!(repo.files()["body_only"], serde_json::json!(["pkg/a.py"]));
    let honest = verify();
    assert_eq!(honest.json()["overall_pass"], true, "{}", honest.stdout);

    let signature = BOX.replace(
        "def f(x: int) -> int:\n    return x",
        "def f(x: int) -> str:\n    return str(x)",
    );
    repo.write("pkg/a.py", &signature);
    assert!(lists_importer(&repo.files(), "pkg/b.py", "pkg/a.py"));
    let committed = common::git(repo.path(), &["rev-parse", "HEAD:pkg/a.py"]);
    let changed = common::git(repo.path(), &["hash-object", "pkg/a.py"]);
    let cache_file = repo.path().join(".st3/interfaces.json");
    let mut cache: Value = serde_json::from_str(&fs::read_to_string(&cache_file).unwrap()).unwrap();
    let lie = cache["blobs"][changed.trim()].clone();
    assert!(
        lie.is_object(),
        "the changed content's interface is cached: {cache}"
    );
    cache["blobs"][committed.trim()] = lie;
    fs::write(&cache_file, cache.to_string()).unwrap();
    assert_eq!(repo.files()["body_only"], serde_json::json!(["pkg/a.py"]));
    let fooled = repo.qg(&["run", "--no-state", "--format", "json"]);
    assert_eq!(fooled.json()["overall_pass"], true, "{}", fooled.stdout);

    // Recorded, as a user's run is: the proof is kept.
    let caught = repo.qg(&["run", "--verify", "--format", "json"]);
    assert_eq!(caught.json()["overall_pass"], false, "{}", caught.stdout);
    for gate in ["mypy", "pyright"] {
        let result = caught.gate(gate);
        assert_eq!(result["status"], "error", "{gate}: {result}");
        assert_eq!(
            result["error"]["kind"], "skipped_importers",
            "{gate}: {result}"
        );
        let message = result["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("only the full walk: pkg/b.py:"),
            "{gate}: {message}"
        );
    }
    // One proof turns leaving importers out off in the project: the run
    // the lie fooled now checks the importer, and says why.
    assert_eq!(repo.files()["body_only"], Value::Null);
    let explained = repo.qg(&["explain", "mypy"]);
    assert!(
        explained
            .stdout
            .contains("every change adds them: leaving out a body-only edit's was proved wrong here (.st3/importers-off.json)"),
        "{}",
        explained.stdout
    );
    let after = repo.qg(&["run", "--no-state", "--format", "json"]);
    assert_eq!(after.json()["overall_pass"], false, "{}", after.stdout);
    assert!(
        after.json()["warnings"]
            .to_string()
            .contains("interface_aware_importers is off here"),
        "{}",
        after.stdout
    );
}

/// The walk goes on through every importer of a changed interface, not
/// only through those whose own interface might change with it: `d.py`
/// re-exports `a.f` and holds nothing else — no unannotated function, no
/// inferred assignment — yet `e.py`, which imports `f` from `d.py`, breaks
/// when `a.f`'s return type changes. A walk pruned at `d.py` would have
/// been green.
#[test]
fn a_signature_change_reaches_the_importer_of_a_re_export() {
    let repo = interface_aware_repo(&[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", "def f() -> int:\n    return 1\n"),
        ("pkg/d.py", "from pkg.a import f\n\n__all__ = [\"f\"]\n"),
        ("pkg/e.py", "from pkg.d import f\n\nx: int = f()\n"),
    ]);
    assert_eq!(repo.run().json()["overall_pass"], true);
    repo.write("pkg/a.py", "def f() -> str:\n    return \"1\"\n");
    let files = repo.files();
    assert!(lists_importer(&files, "pkg/e.py", "pkg/a.py"), "{files}");
    let run = repo.run();
    for gate in ["mypy", "pyright"] {
        let result = run.gate(gate);
        let found: Vec<&str> = result["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["file"].as_str())
            .collect();
        assert_eq!(found, ["pkg/e.py"], "{gate}: {}", run.stdout);
    }
}

/// A module with one of each thing an importer can observe: a protocol
/// method with a default body, an attribute `__init__` assigns, defaults,
/// annotated and unannotated functions, an async generator, a constant.
const LIB: &str = "from typing import AsyncIterator, Protocol\n\n\nclass Shape(Protocol):\n    def area(self) -> float:\n        return 0.0\n\n\nclass Box:\n    def __init__(self) -> None:\n        self.size = 1\n\n    def grow(self, by: int = 1) -> int:\n        return self.size + by\n\n\ndef scale(x: int) -> int:\n    return x * 2\n\n\ndef guess(x: int):\n    return x\n\n\nasync def ticks() -> AsyncIterator[int]:\n    yield 1\n\n\nLIMIT = 3\n";
const USES_LIB: &str = "from lib import LIMIT, Box, Shape, guess, scale, ticks\n\n\nclass Lazy(Shape):\n    pass\n\n\ndef total() -> int:\n    box = Box()\n    return box.grow() + box.size + scale(LIMIT) + guess(2) + int(Lazy().area())\n\n\nasync def first() -> int:\n    async for t in ticks():\n        return t\n    return 0\n";

/// The differential check of `interface_aware_importers` on each kind of
/// edit the interface rule distinguishes: from green, the `auto` run that
/// may leave the importer out finds exactly what `--scope project` finds
/// (mypy and pyright), and the body-only edits are the ones that left it
/// out.
#[test]
fn interface_aware_auto_finds_what_project_finds_after_each_kind_of_edit() {
    let repo = interface_aware_repo(&[("lib.py", LIB), ("use.py", USES_LIB)]);
    assert_eq!(repo.run().json()["overall_pass"], true, "green to start");
    let edit = |from: &str, to: &str| {
        assert!(LIB.contains(from), "{from}");
        LIB.replacen(from, to, 1)
    };
    // (what, lib.py after it, whether it is body-only)
    let cases = [
        ("a body", edit("return x * 2", "return x * 3"), true),
        (
            "a docstring",
            edit("return x * 2", "\"\"\"Twice.\"\"\"\n    return x * 2"),
            true,
        ),
        (
            "a comment",
            edit("LIMIT = 3", "# the limit\nLIMIT = 3"),
            true,
        ),
        (
            "a method body reading an attribute",
            edit("return self.size + by", "return by + self.size"),
            true,
        ),
        (
            "an inferred return type",
            edit(
                "def guess(x: int):\n    return x",
                "def guess(x: int):\n    return str(x)",
            ),
            false,
        ),
        (
            "an attribute __init__ assigns",
            edit("self.size = 1", "self.size = \"1\""),
            false,
        ),
        ("a default removed", edit("by: int = 1", "by: int"), false),
        (
            "a protocol method made trivial",
            edit("return 0.0", "..."),
            false,
        ),
        (
            "an async generator that no longer yields",
            edit("    yield 1\n", "    return None\n"),
            false,
        ),
        (
            "a constant's type",
            edit("LIMIT = 3", "LIMIT = \"3\""),
            false,
        ),
        (
            "a return annotation",
            edit(
                "def scale(x: int) -> int:\n    return x * 2",
                "def scale(x: int) -> str:\n    return str(x)",
            ),
            false,
        ),
        (
            "a syntax error in a body",
            edit("return x * 2", "return x *"),
            false,
        ),
    ];
    let checkers = |run: &common::Run| -> Vec<(String, Value, Vec<_>)> {
        ["mypy", "pyright"]
            .iter()
            .map(|gate| {
                let g = run.gate(gate);
                (gate.to_string(), g["status"].clone(), violation_keys(&g))
            })
            .collect()
    };
    for (what, lib, body_only) in cases {
        repo.write("lib.py", &lib);
        let files = repo.files();
        assert_eq!(
            files["body_only"] == serde_json::json!(["lib.py"]),
            body_only,
            "{what}: {files}"
        );
        assert_eq!(
            lists_importer(&files, "use.py", "lib.py"),
            !body_only,
            "{what}: {files}"
        );
        let auto = repo.qg(&["run", "--no-state", "--format", "json"]);
        let project = repo.qg(&[
            "run",
            "--scope",
            "project",
            "--no-state",
            "--format",
            "json",
        ]);
        assert_eq!(
            checkers(&auto),
            checkers(&project),
            "{what}: auto against project\nauto: {}\nproject: {}",
            auto.stdout,
            project.stdout
        );
        if !body_only {
            assert_ne!(
                project.code, 0,
                "{what} changes a verdict: {}",
                project.stdout
            );
        }
        repo.write("lib.py", LIB);
    }
}
