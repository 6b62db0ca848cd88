//! Project shapes with the real tools: a project's own virtualenv with the
//! project installed editable (and the tools in it), and what the tools
//! report when the project runs them itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::repo::GitRepo;
use super::tools_venv;

/// One finding, as the tools' own runs and qg's report both give it.
pub type Key = (String, u64, String);

/// A violation of a qg report as its key: file, line, code.
pub fn key_of(v: &Value) -> Key {
    (
        v["file"].as_str().unwrap_or("").to_string(),
        v["line"].as_u64().unwrap_or(0),
        v["code"].as_str().unwrap_or("").to_string(),
    )
}

/// The type checkers' findings a qg report lists (new ones only, when a
/// baseline holds the rest), sorted.
pub fn new_findings(report: &Value) -> Vec<Key> {
    let mut keys: Vec<Key> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["id"] == "mypy" || g["id"] == "pyright")
        .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default())
        .filter(|v| v["baseline_state"] != "unchanged")
        .map(|v| key_of(&v))
        .collect();
    keys.sort();
    keys
}

/// What `mypy` (with the shape's arguments) and bare `pyright` report when
/// the project runs them itself, with qg's environment.
pub fn own_findings(repo: &GitRepo, mypy_args: &[&str]) -> Vec<Key> {
    let mut found = mypy_findings(repo, mypy_args);
    found.extend(pyright_findings(repo));
    found.sort();
    found
}

/// A tool of the project's environment, run as the project would (its
/// virtualenv activated).
pub fn tool(repo: &GitRepo, name: &str) -> Command {
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

pub fn mypy_findings(repo: &GitRepo, args: &[&str]) -> Vec<Key> {
    mypy_findings_in(repo, "", args)
}

/// What mypy reports run in `dir` (root-relative; "" for the root) with
/// `args`, its files named from the root.
pub fn mypy_findings_in(repo: &GitRepo, dir: &str, args: &[&str]) -> Vec<Key> {
    // A cache of its own: the tool's run never shares qg's.
    let output = tool(repo, "mypy")
        .current_dir(repo.path().join(dir))
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
            let file = v["file"].as_str().unwrap();
            (
                match dir {
                    "" => file.to_string(),
                    dir => format!("{dir}/{file}"),
                },
                v["line"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

pub fn pyright_findings(repo: &GitRepo) -> Vec<Key> {
    pyright_findings_in(repo, "")
}

/// What bare `pyright` reports run in `dir` (root-relative; "" for the
/// root), its files named from the root.
pub fn pyright_findings_in(repo: &GitRepo, dir: &str) -> Vec<Key> {
    let output = tool(repo, "pyright")
        .current_dir(repo.path().join(dir))
        .arg("--outputjson")
        .output()
        .unwrap();
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

/// The monorepo of issue 35: one namespace package, `acme`, spread over two
/// source roots that only the type checkers' configs name.
pub const NAMESPACE_CONFIG: &str = r#"[tool.mypy]
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

/// The project's own virtualenv with the project installed editable
/// (`src_dir` on `sys.path` through a `.pth` file) and the real tools in
/// it: mypy and dmypy run by its Python (so mypy sees the install), the
/// others linked.
pub fn editable_venv(root: &Path, src_dir: &str, pth_name: &str) -> PathBuf {
    editable_venv_with(root, src_dir, pth_name, &tools_venv())
}

/// [`editable_venv`] with the mypy and ruff of the virtualenv `tools`
/// (pyright from [`tools_venv`] where `tools` has none).
pub fn editable_venv_with(root: &Path, src_dir: &str, pth_name: &str, tools: &Path) -> PathBuf {
    let venv = root.join(".venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv failed");
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
        format!("{}\n", site(tools).display()),
    )
    .unwrap();
    std::fs::write(
        site_packages.join(pth_name),
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
        let own = tools.join("bin").join(name);
        let tool = match own.exists() {
            true => own,
            false => tools_venv().join("bin").join(name),
        };
        std::os::unix::fs::symlink(tool, venv.join("bin").join(name)).unwrap();
    }
    venv
}
