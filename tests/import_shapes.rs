//! The import graph resolves imports the way the type checkers do, over
//! the shapes real projects have: namespace packages spread over source
//! roots (named by mypy_path and pyright's execution environments, by
//! pyright's extraPaths alone, by $MYPYPATH alone), nested namespace
//! packages, a source root found only through an editable install, a flat
//! layout, relative imports in a namespace package, `import a.b as c`,
//! re-exports through `__init__.py`, imports under `if TYPE_CHECKING:`, and
//! stubs beside their sources or in a stub directory.
//!
//! For each: after a green run, an edit that breaks only an unchanged
//! importer fails `qg run` (auto), cold and warm, and its new findings are
//! exactly what the tools' own project runs (`mypy` / `mypy .`, `pyright`)
//! add between before and after. Real ruff, mypy and pyright, in temp git
//! repos; they fail (never skip) when the tools are missing.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::repo::GitRepo;
use common::shapes::{editable_venv, new_findings, own_findings, Key, NAMESPACE_CONFIG};

/// A project shape and the edit that breaks its importer.
struct Shape<'a> {
    /// Files committed before the first run.
    files: &'a [(&'a str, &'a str)],
    /// The arguments of the project's own mypy run: `.` unless its config
    /// names the files.
    mypy_args: &'static [&'static str],
    /// The file edited, and its new content (it breaks only importers).
    edit: (&'static str, &'static str),
    /// Variables the project's tools run with (and qg with them).
    env: &'static [(&'static str, &'static str)],
}

/// The same roots without the tests directory, for the shapes that have none.
const PACKAGES_CONFIG: &str = r#"[tool.mypy]
files = ["packages"]
mypy_path = "packages/a/src:packages/b/src"
explicit_package_bases = true

[tool.pyright]
include = ["packages"]
executionEnvironments = [
  {root = "packages/a/src"},
  {root = "packages/b/src", extraPaths = ["packages/a/src"]},
]
"#;

const CORE: &str = "def value() -> int:\n    return 21\n";
const CORE_BROKEN: &str = "def value() -> str:\n    return \"21\"\n";
const USE: &str =
    "from acme.a.core import value\n\n\ndef twice() -> int:\n    return value() * 2\n";
const TEST_USE: &str =
    "from acme.b.use import twice\n\n\ndef test_twice() -> None:\n    assert twice() == 42\n";

/// The three files of the namespace monorepo under `config`.
const fn monorepo(config: &'static str) -> [(&'static str, &'static str); 4] {
    [
        ("pyproject.toml", config),
        ("packages/a/src/acme/a/core.py", CORE),
        ("packages/b/src/acme/b/use.py", USE),
        ("tests/test_use.py", TEST_USE),
    ]
}

const BREAK_CORE: (&str, &str) = ("packages/a/src/acme/a/core.py", CORE_BROKEN);

// ------------------------------------------------------------ the proof

/// Runs the proof for `shape` in `repo` (already holding its files).
fn prove(repo: &GitRepo, shape: &Shape<'_>) {
    let before = own_findings(repo, shape.mypy_args);
    if !before.is_empty() {
        // The project's findings before the edit are agreed to: only what
        // the edit adds is new.
        repo.qg(&["baseline", "write"]).assert_code(0);
        repo.commit("baseline");
    }
    let green = repo.qg(&["run", "--no-daemon", "--format", "json"]);
    green.assert_code(0);
    repo.write(shape.edit.0, shape.edit.1);
    let expected = added(&before, &own_findings(repo, shape.mypy_args));
    assert!(
        !expected.is_empty(),
        "the edit must break an importer in the tools' own runs"
    );
    let cold = repo.qg(&["run", "--no-daemon", "--format", "json"]);
    cold.assert_code(1);
    assert_eq!(
        new_findings(&cold.json()),
        expected,
        "cold: {}",
        cold.stdout
    );
    let _daemons = Daemons::start(repo);
    let warm = repo.qg(&["run", "--format", "json"]);
    warm.assert_code(1);
    let report = warm.json();
    assert_eq!(
        common::warm_gate_ids(&report),
        ["mypy", "pyright"],
        "answered warm: {}",
        warm.stdout
    );
    assert_eq!(new_findings(&report), expected, "warm: {}", warm.stdout);
}

fn prove_shape(shape: &Shape<'_>) -> GitRepo {
    let mut repo = GitRepo::new(shape.files);
    for (key, value) in shape.env {
        repo.set_env(key, value);
    }
    prove(&repo, shape);
    repo
}

/// The findings `after` has that `before` had not (as multisets), sorted.
fn added(before: &[Key], after: &[Key]) -> Vec<Key> {
    let mut left: Vec<Key> = before.to_vec();
    let mut new = Vec::new();
    for key in after {
        match left.iter().position(|k| k == key) {
            Some(at) => {
                left.remove(at);
            }
            None => new.push(key.clone()),
        }
    }
    new.sort();
    new
}

// ------------------------------------------------------------ the tools' own runs

/// The project's daemons, stopped when dropped (a failing test included).
struct Daemons<'a>(&'a GitRepo);

impl<'a> Daemons<'a> {
    fn start(repo: &'a GitRepo) -> Daemons<'a> {
        let daemons = Daemons(repo);
        repo.qg(&["daemon", "start"]).assert_code(0);
        daemons
    }
}

impl Drop for Daemons<'_> {
    fn drop(&mut self) {
        self.0.qg(&["daemon", "stop"]);
    }
}

// ------------------------------------------------------------ the shapes

/// Issue 35 as reported: `mypy_path` and pyright's execution environments.
#[test]
fn a_namespace_package_across_roots_named_by_both_checkers() {
    prove_shape(&Shape {
        files: &monorepo(NAMESPACE_CONFIG),
        mypy_args: &[],
        edit: BREAK_CORE,
        env: &[],
    });
}

/// Only pyright's config names the roots: mypy cannot resolve the imports
/// before or after (its findings are the baseline's), pyright breaks.
#[test]
fn a_namespace_package_across_roots_named_by_pyright_extra_paths_alone() {
    const CONFIG: &str = "[tool.pyright]\nextraPaths = [\"packages/a/src\", \"packages/b/src\"]\n";
    prove_shape(&Shape {
        files: &monorepo(CONFIG),
        mypy_args: &["."],
        edit: BREAK_CORE,
        env: &[],
    });
}

/// Only `$MYPYPATH` names the roots (pyright cannot resolve them).
#[test]
fn a_namespace_package_across_roots_named_by_mypypath_alone() {
    const CONFIG: &str = "[tool.mypy]\nexplicit_package_bases = true\n";
    prove_shape(&Shape {
        files: &monorepo(CONFIG),
        mypy_args: &["."],
        edit: BREAK_CORE,
        env: &[("MYPYPATH", "packages/a/src:packages/b/src")],
    });
}

/// `acme.tools.fmt` and `acme.tools.cli`: namespace packages inside a
/// namespace package, each part in its own root.
#[test]
fn nested_namespace_packages_across_roots() {
    prove_shape(&Shape {
        files: &[
            ("pyproject.toml", PACKAGES_CONFIG),
            ("packages/a/src/acme/tools/fmt/core.py", CORE),
            (
                "packages/b/src/acme/tools/cli/use.py",
                "from acme.tools.fmt.core import value\n\n\ndef twice() -> int:\n    return value() * 2\n",
            ),
        ],
        mypy_args: &[],
        edit: ("packages/a/src/acme/tools/fmt/core.py", CORE_BROKEN),
        env: &[],
    });
}

/// A relative import between two modules of a namespace package.
#[test]
fn relative_imports_in_a_namespace_package() {
    prove_shape(&Shape {
        files: &[
            ("pyproject.toml", PACKAGES_CONFIG),
            ("packages/a/src/acme/a/core.py", CORE),
            (
                "packages/a/src/acme/a/use.py",
                "from .core import value\n\n\ndef twice() -> int:\n    return value() * 2\n",
            ),
        ],
        mypy_args: &[],
        edit: BREAK_CORE,
        env: &[],
    });
}

/// `import acme.a.core as a_core`.
#[test]
fn an_aliased_dotted_import() {
    prove_shape(&Shape {
        files: &[
            ("pyproject.toml", PACKAGES_CONFIG),
            ("packages/a/src/acme/a/core.py", CORE),
            (
                "packages/b/src/acme/b/use.py",
                "import acme.a.core as a_core\n\n\ndef twice() -> int:\n    return a_core.value() * 2\n",
            ),
        ],
        mypy_args: &[],
        edit: BREAK_CORE,
        env: &[],
    });
}

/// A flat layout, no config: the package at the root.
#[test]
fn a_flat_layout() {
    prove_shape(&Shape {
        files: &[
            ("pkg/__init__.py", ""),
            ("pkg/core.py", CORE),
            (
                "pkg/use.py",
                "from pkg.core import value\n\n\ndef twice() -> int:\n    return value() * 2\n",
            ),
        ],
        mypy_args: &["."],
        edit: ("pkg/core.py", CORE_BROKEN),
        env: &[],
    });
}

/// `from pkg import value`, which `pkg/__init__.py` re-exports from
/// `pkg/core.py`: the importer depends on core through the package.
#[test]
fn a_re_export_through_init() {
    prove_shape(&Shape {
        files: &[
            ("pkg/__init__.py", "from pkg.core import value as value\n"),
            ("pkg/core.py", CORE),
            (
                "app.py",
                "from pkg import value\n\n\ndef twice() -> int:\n    return value() * 2\n",
            ),
        ],
        mypy_args: &["."],
        edit: ("pkg/core.py", CORE_BROKEN),
        env: &[],
    });
}

/// An import only the type checkers follow: under `if TYPE_CHECKING:`.
#[test]
fn an_import_under_type_checking() {
    prove_shape(&Shape {
        files: &[
            ("pkg/__init__.py", ""),
            ("pkg/core.py", "class Thing:\n    n: int = 1\n"),
            (
                "pkg/use.py",
                "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.core import Thing\n\n\ndef get(thing: Thing) -> int:\n    return thing.n\n",
            ),
        ],
        mypy_args: &["."],
        edit: ("pkg/core.py", "class Thing:\n    n: str = \"1\"\n"),
        env: &[],
    });
}

/// A stub beside its untyped source: the checkers read the stub, so
/// editing the stub breaks the importer.
#[test]
fn a_stub_beside_its_source() {
    prove_shape(&Shape {
        files: &[
            ("pkg/__init__.py", ""),
            ("pkg/core.py", "def value():\n    return 21\n"),
            ("pkg/core.pyi", "def value() -> int: ...\n"),
            (
                "pkg/use.py",
                "from pkg.core import value\n\n\ndef twice() -> int:\n    return value() * 2\n",
            ),
        ],
        mypy_args: &["."],
        edit: ("pkg/core.pyi", "def value() -> str: ...\n"),
        env: &[],
    });
}

/// A stub-only package in pyright's stub directory (`typings/`), beside
/// the untyped package it describes: pyright reads the stub first, the
/// import analyzer the source.
#[test]
fn a_stub_only_package_in_the_stub_directory() {
    prove_shape(&Shape {
        files: &[
            (
                "pyproject.toml",
                "[tool.mypy]\nfiles = [\"app.py\"]\nmypy_path = \"typings\"\n",
            ),
            ("ext/__init__.py", "def f():\n    return 21\n"),
            ("typings/ext/__init__.pyi", "def f() -> int: ...\n"),
            (
                "app.py",
                "from ext import f\n\n\ndef g() -> int:\n    return f()\n",
            ),
        ],
        mypy_args: &[],
        edit: ("typings/ext/__init__.pyi", "def f() -> str: ...\n"),
        env: &[],
    });
}

/// A source root named neither `src` nor in any config: the project is
/// installed editable (a `.pth` file naming `lib/`, as pip, uv, Hatch and
/// PDM write) in its own virtualenv, where the tools live too.
#[test]
fn a_source_root_found_only_through_an_editable_install() {
    let mut repo = GitRepo::new(&[
        (".gitignore", ".venv/\n"),
        ("pyproject.toml", "[tool.mypy]\nfiles = [\"lib\", \"tests\"]\n"),
        ("lib/mypkg/__init__.py", ""),
        ("lib/mypkg/core.py", CORE),
        (
            "tests/test_core.py",
            "from mypkg.core import value\n\n\ndef test_value() -> None:\n    number: int = value()\n    assert number == 21\n",
        ),
    ]);
    let venv = editable_venv(repo.path(), "lib", "_mypkg.pth");
    repo.set_env("VIRTUAL_ENV", &venv.display().to_string());
    let explained = repo.qg(&["explain", "pyright", "--format", "json"]);
    let roots = explained.json()["import_roots"].clone();
    let lib = roots
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "lib")
        .unwrap_or_else(|| panic!("lib is no import root: {roots}"));
    assert!(
        lib["from"].as_array().unwrap().iter().any(|f| f
            .as_str()
            .unwrap()
            .starts_with("editable install: .venv/lib/")),
        "{lib}"
    );
    prove(
        &repo,
        &Shape {
            files: &[],
            mypy_args: &[],
            edit: ("lib/mypkg/core.py", CORE_BROKEN),
            env: &[],
        },
    );
}

/// A test of a src/ layout installed editable, edited alone: mypy is given
/// the test file, and must search `src/` as the project's own `mypy`
/// (given every file, so the package base `src/` too) does — not find the
/// package through the editable install in site-packages, an installed
/// package without `py.typed` (`import-untyped`, its own errors silenced).
/// qg hands the run the missing base in $MYPYPATH, and the log shows it;
/// with `explicit_package_bases` mypy's own bases are `mypy_path` alone,
/// which every run searches, and nothing is handed.
#[test]
fn a_test_of_an_editable_src_layout_edited_alone_is_checked_against_the_source() {
    let test = "from mypkg.core import value\n\n\ndef test_value() -> None:\n    number: int = value()\n    assert number == 21\n";
    // A longer line: mypy's cache takes a file of the same size and second
    // as unchanged.
    let broken = test.replace("number: int", "number: bytes");
    for (config, handed) in [
        ("[tool.mypy]\nfiles = [\"src\", \"tests\"]\n", true),
        (
            "[tool.mypy]\nfiles = [\"src\", \"tests\"]\nexplicit_package_bases = true\nmypy_path = \"src\"\n",
            false,
        ),
    ] {
        let mut repo = GitRepo::new(&[
            (".gitignore", ".venv/\n"),
            ("pyproject.toml", config),
            ("src/mypkg/__init__.py", ""),
            ("src/mypkg/core.py", CORE),
            ("tests/test_core.py", test),
        ]);
        let venv = editable_venv(repo.path(), "src", "__editable__.mypkg-0.1.pth");
        repo.set_env("VIRTUAL_ENV", &venv.display().to_string());
        repo.qg(&["run", "--no-daemon"]).assert_code(0);
        repo.write("tests/test_core.py", &broken);
        let own = own_findings(&repo, &[]);
        assert_eq!(
            own,
            [
                key("tests/test_core.py", 5, "assignment"),
                key("tests/test_core.py", 5, "reportAssignmentType")
            ],
            "{config}"
        );
        let run = repo.qg(&["run", "--no-daemon", "--format", "json"]);
        let report = run.json();
        assert_eq!(new_findings(&report), own, "{config}: {}", run.stdout);
        let mypy = report["gates"].as_array().unwrap().iter().find(|g| g["id"] == "mypy").unwrap();
        let log = std::fs::read_to_string(repo.path().join(mypy["log"].as_str().unwrap())).unwrap();
        let line = format!("env: MYPYPATH={0}/src:{0}/tests\n", repo.path().display());
        assert_eq!(log.contains(&line), handed, "{config}: {log}");
        // It shares the user's cache (tools.yaml says why): no cache dir.
        assert!(!log.contains("--cache-dir"), "{config}: {log}");
        let hint = mypy["rerun_hint"].as_str().unwrap();
        // The bases the hint's file does not bring itself, absolute as the
        // run had them (tests/old_tools.rs, the rerun hint, says why).
        let expected = match handed {
            true => format!("MYPYPATH={}/src mypy tests/test_core.py", repo.path().display()),
            false => "mypy tests/test_core.py".to_string(),
        };
        assert_eq!(hint, expected, "{config}");
        // A project run runs the tool's own `mypy` (no bases handed), and
        // its hint, naming the same file, has the same form.
        let project = repo.qg(&["run", "--no-daemon", "--scope", "project", "--format", "json"]);
        let report = project.json();
        let mypy = report["gates"].as_array().unwrap().iter().find(|g| g["id"] == "mypy").unwrap();
        let log = std::fs::read_to_string(repo.path().join(mypy["log"].as_str().unwrap())).unwrap();
        assert!(!log.contains("env: MYPYPATH"), "{config}: {log}");
        assert_eq!(mypy["rerun_hint"].as_str().unwrap(), expected, "{config}");
    }
}

/// A type checker gate written without `search_paths` (a project's own
/// YAML): the roots its config names are unknown to the graph, so the
/// importer comes in through an assumed edge — checked, and the run says
/// so — never dropped.
#[test]
fn an_import_no_known_root_resolves_is_assumed_and_the_run_says_so() {
    let config = qg::config::EMBEDDED_DEFAULT.replace(
        "active_gates: [ruff_format, ruff_check, mypy, pyright]",
        "active_gates: [ruff_format, ruff_check, mypy]",
    );
    let start = config
        .find("    search_paths:\n      keys: [mypy_path]\n")
        .unwrap();
    let end = config[start..]
        .find("config_dir_variable: MYPY_CONFIG_FILE_DIR\n")
        .unwrap();
    let config = format!(
        "{}{}",
        &config[..start],
        &config[start + end + "config_dir_variable: MYPY_CONFIG_FILE_DIR\n".len()..]
    );
    assert!(
        !config.contains("keys: [mypy_path]"),
        "mypy's search paths are out"
    );
    let mut files = monorepo(PACKAGES_CONFIG).to_vec();
    files.push((".st3/quality.yaml", &config));
    let repo = GitRepo::new(&files[..3]);
    repo.write(".st3/quality.yaml", &config);
    repo.commit("config");
    repo.qg(&["run", "--format", "json"]).assert_code(0);
    repo.write(BREAK_CORE.0, BREAK_CORE.1);
    let run = repo.qg(&["run", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    assert_eq!(
        new_findings(&report),
        [key("packages/b/src/acme/b/use.py", 5, "return-value")]
    );
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("packages/b/src/acme/b/use.py checked as an importer of the changes only through an import the import analyzer (ruff) could not resolve (`from acme.a.core import value` in packages/b/src/acme/b/use.py)"),
        "{warnings}"
    );
    let doctor = repo.qg(&["doctor"]);
    assert!(
        doctor.stdout.contains(
            "1 import in 1 file could not be resolved by `ruff` but name modules in the repository"
        ),
        "{}",
        doctor.stdout
    );
}

/// An import of a module that is neither in the repository nor installed,
/// though it shares its package's name with project modules (`from
/// app.missing import x`): no search root would resolve it, so doctor
/// asks for none — it says what the assumed edge costs, and stays all
/// good (issue 65: a warning names a fix that works, or there is none).
#[test]
fn doctor_asks_for_no_search_root_for_a_module_the_repository_does_not_hold() {
    let repo = GitRepo::new(&[
        ("app/__init__.py", ""),
        ("app/util.py", "def f() -> int:\n    return 1\n"),
        ("main.py", "from app.missing import thing\n\nprint(thing)\n"),
    ]);
    repo.qg(&["run", "--scope", "project", "--format", "json"]);
    let graph = std::fs::read_to_string(repo.path().join(".st3/import-graph.json")).unwrap();
    assert!(
        graph.contains("\"assumed\""),
        "the analyzer assumed it: {graph}"
    );
    let doctor = repo.qg(&["doctor", "--format", "json"]);
    let report = doctor.json();
    let graph_checks: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "import graph")
        .collect();
    let said = serde_json::to_string(&graph_checks).unwrap();
    assert!(!said.contains("add the source root"), "{said}");
    assert!(
        said.contains("1 import in 1 file name modules neither in the repository nor installed (e.g. `from app.missing import thing` in main.py)"),
        "{said}"
    );
    assert!(graph_checks.iter().all(|c| c["status"] == "ok"), "{said}");
}

fn key(file: &str, line: u64, code: &str) -> Key {
    (file.to_string(), line, code.to_string())
}

/// An import an installed package answers (`click`, in the environment)
/// is no missing search root, whatever copy the project vendors: doctor
/// does not ask to add one (it once suggested `mypy_path` for pip's
/// vendored `resolvelib`).
#[test]
fn doctor_suggests_no_search_root_for_an_installed_package_the_project_vendors() {
    // pip's shape: a copy inside the package (pip._vendor.click), not on
    // any search root, so the analyzer leaves `import click` unresolved.
    let repo = GitRepo::new(&[
        ("src/tool/__init__.py", ""),
        ("src/tool/_vendor/__init__.py", ""),
        (
            "src/tool/_vendor/click/__init__.py",
            "def echo(x: str) -> None: ...\n",
        ),
        ("src/tool/app.py", "import click\n\nclick.echo(\"hi\")\n"),
    ]);
    repo.qg(&["run", "--scope", "project", "--format", "json"]);
    let doctor = repo.qg(&["doctor"]);
    assert!(
        !doctor.stdout.contains("could not be resolved by `ruff`"),
        "{}",
        doctor.stdout
    );
    let graph = std::fs::read_to_string(repo.path().join(".st3/import-graph.json")).unwrap();
    assert!(
        graph.contains("\"assumed\""),
        "the analyzer assumed it: {graph}"
    );
}
