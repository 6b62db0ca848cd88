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

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::repo::GitRepo;
use common::tools_venv;
use serde_json::Value;

/// One finding, as the tools' own runs and qg's report both give it.
type Key = (String, u64, String);

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

/// The monorepo of issue 35: one namespace package, `acme`, spread over two
/// source roots that only the type checkers' configs name.
const NAMESPACE_CONFIG: &str = r#"[tool.mypy]
files = ["packages", "tests"]
mypy_path = "packages/a/src:packages/b/src"
explicit_package_bases = true

[tool.pyright]
include = ["packages", "tests"]
executionEnvironments = [
  {root = "packages/a/src"},
  {root = "packages/b/src", extraPaths = ["packages/a/src"]},
  {root = "tests", extraPaths = ["packages/a/src", "packages/b/src"]},
]
"#;

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
    let before = own_findings(repo, shape);
    if !before.is_empty() {
        // The project's findings before the edit are agreed to: only what
        // the edit adds is new.
        repo.qg(&["baseline", "write"]).assert_code(0);
        repo.commit("baseline");
    }
    let green = repo.qg(&["run", "--no-daemon", "--format", "json"]);
    green.assert_code(0);
    repo.write(shape.edit.0, shape.edit.1);
    let expected = added(&before, &own_findings(repo, shape));
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

/// The type checkers' findings a qg report lists (new ones only, when a
/// baseline holds the rest), sorted.
fn new_findings(report: &Value) -> Vec<Key> {
    let mut keys: Vec<Key> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["id"] == "mypy" || g["id"] == "pyright")
        .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default())
        .filter(|v| v["baseline_state"] != "unchanged")
        .map(|v| {
            (
                v["file"].as_str().unwrap_or("").to_string(),
                v["line"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    keys.sort();
    keys
}

// ------------------------------------------------------------ the tools' own runs

/// What `mypy` (with the shape's arguments) and bare `pyright` report when
/// the project runs them itself, with qg's environment.
fn own_findings(repo: &GitRepo, shape: &Shape<'_>) -> Vec<Key> {
    let mut found = mypy_findings(repo, shape.mypy_args);
    found.extend(pyright_findings(repo));
    found.sort();
    found
}

/// A tool of the project's environment, run as the project would (its
/// virtualenv activated).
fn tool(repo: &GitRepo, name: &str) -> Command {
    let env = repo.env();
    let (_, venv) = env.iter().rfind(|(k, _)| k == "VIRTUAL_ENV").unwrap();
    let venv = PathBuf::from(venv);
    let mut command = Command::new(venv.join("bin").join(name));
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    command.current_dir(repo.path()).envs(env).env("PATH", path);
    command
}

fn mypy_findings(repo: &GitRepo, args: &[&str]) -> Vec<Key> {
    // A cache of its own: the tool's run never shares qg's.
    let output = tool(repo, "mypy")
        .args(["--output=json", "--cache-dir=/dev/null"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (
                v["file"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn pyright_findings(repo: &GitRepo) -> Vec<Key> {
    let output = tool(repo, "pyright").arg("--outputjson").output().unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("pyright printed no JSON ({e}): {output:?}"));
    let root = repo.path().canonicalize().unwrap();
    report["generalDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = Path::new(d["file"].as_str().unwrap());
            let relative = file.strip_prefix(&root).unwrap_or(file);
            (
                relative.display().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap() + 1,
                d["rule"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

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
    let venv = editable_venv(repo.path(), "lib");
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

/// The project's own virtualenv with the project installed editable
/// (`src_dir` on `sys.path` through a `.pth` file) and the real tools in
/// it: mypy and dmypy run by its Python (so mypy sees the install), the
/// others linked.
fn editable_venv(root: &Path, src_dir: &str) -> PathBuf {
    let venv = root.join(".venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv failed");
    let tools = tools_venv();
    let site = |venv: &Path| -> PathBuf {
        let lib = venv.join("lib");
        let python = std::fs::read_dir(&lib)
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with("python"))
            .unwrap();
        lib.join(python.file_name()).join("site-packages")
    };
    let site_packages = site(&venv);
    std::fs::write(
        site_packages.join("_tools.pth"),
        format!("{}\n", site(&tools).display()),
    )
    .unwrap();
    std::fs::write(
        site_packages.join("_mypkg.pth"),
        format!("{}\n", root.join(src_dir).display()),
    )
    .unwrap();
    let python = venv.join("bin/python");
    for (name, module) in [("mypy", "mypy"), ("dmypy", "mypy.dmypy")] {
        let script = venv.join("bin").join(name);
        std::fs::write(
            &script,
            format!("#!/bin/sh\nexec {} -m {module} \"$@\"\n", python.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for name in ["ruff", "pyright", "pyright-langserver"] {
        std::os::unix::fs::symlink(tools.join("bin").join(name), venv.join("bin").join(name))
            .unwrap();
    }
    venv
}

/// A type checker gate written without `search_paths` (a project's own
/// YAML): the roots its config names are unknown to the graph, so the
/// importer comes in through an assumed edge — checked, and the run says
/// so — never dropped.
#[test]
fn an_import_no_known_root_resolves_is_assumed_and_the_run_says_so() {
    let config = qg::config::EMBEDDED_DEFAULT
        .replace(
            "active_gates: [ruff_format, ruff_check, mypy, pyright]",
            "active_gates: [ruff_format, ruff_check, mypy]",
        )
        .replace(
            "    search_paths:\n      keys: [mypy_path]\n      env: [MYPYPATH]\n      always: [\".\"]\n      package_bases: true\n      config_dir_variable: MYPY_CONFIG_FILE_DIR\n",
            "",
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
            "1 import in 1 file could not be resolved by `ruff` but may name project modules"
        ),
        "{}",
        doctor.stdout
    );
}

fn key(file: &str, line: u64, code: &str) -> Key {
    (file.to_string(), line, code.to_string())
}
