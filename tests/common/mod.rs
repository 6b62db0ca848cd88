//! Helpers shared by the integration tests: temp projects, git repos, fake
//! tools and running the real `qg` binary.
#![allow(dead_code)]

pub mod repo;
pub mod shapes;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The repository's own directory.
pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The virtualenv holding the pinned real tools. Tests that need it fail
/// loudly (never skip) when it is missing.
pub fn tools_venv() -> PathBuf {
    let venv = std::env::var_os("QG_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_dir().join(".venv"));
    for tool in ["ruff", "mypy", "pyright"] {
        assert!(
            venv.join("bin").join(tool).is_file(),
            "{tool} is not installed in {}; run scripts/test.sh (the README's test command)",
            venv.display()
        );
    }
    venv
}

/// The virtualenv of older tools projects still pin (ruff, mypy and
/// pyright of requirements-tools-old.txt), inside [`tools_venv`].
pub fn old_tools_venv() -> PathBuf {
    let venv = tools_venv().join("old");
    for tool in ["ruff", "mypy", "dmypy", "pyright", "pyright-langserver"] {
        assert!(
            venv.join("bin").join(tool).is_file(),
            "{tool} is not installed in {}; run scripts/test.sh (the README's test command)",
            venv.display()
        );
    }
    venv
}

/// A temporary project directory, and a trust store of its own (what it
/// trusts stays out of the user's data directory).
pub struct Project {
    pub dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Project {
    /// An empty project (not a git repo).
    pub fn empty() -> Project {
        Project {
            dir: tempfile::Builder::new()
                .prefix("qg-test-")
                .tempdir()
                .unwrap(),
            store: tempfile::tempdir().unwrap(),
        }
    }

    /// The trust store every `qg` a test starts for this project uses
    /// (`QG_TRUST_FILE`).
    pub fn trust_file(&self) -> PathBuf {
        self.store.path().join("trust.json")
    }

    /// `qg trust`: the test's own config may run in `qg mcp`, `qg lsp`
    /// and `qg watch`.
    pub fn trust(&self) {
        let out = Command::new(env!("CARGO_BIN_EXE_qg"))
            .arg("trust")
            .current_dir(self.path())
            .env("QG_TRUST_FILE", self.trust_file())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "qg trust: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A copy of `fixtures/<name>`, committed to a fresh git repo.
    pub fn fixture(name: &str) -> Project {
        let project = Project::empty();
        copy_dir(&repo_dir().join("fixtures").join(name), project.path());
        project.git_init();
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, relative: &str, contents: &str) -> PathBuf {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    /// A fake tool: an executable `#!/bin/sh` script under `bin/`.
    pub fn fake_tool(&self, name: &str, script: &str) -> PathBuf {
        let path = self.write(&format!("bin/{name}"), &format!("#!/bin/sh\n{script}\n"));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// `git init`, add everything, commit.
    pub fn git_init(&self) {
        let repo = git2::Repository::init(self.path()).unwrap();
        commit_all(&repo, "initial");
    }

    /// Runs `qg args...` in the project with the real tools' venv active.
    pub fn qg_with_tools(&self, args: &[&str]) -> Run {
        let venv = tools_venv();
        let mut cmd = qg_command(self.path(), args);
        cmd.env("VIRTUAL_ENV", &venv);
        Run::from(cmd.output().unwrap())
    }

    /// Runs `qg args...` in the project with `venv` active (`VIRTUAL_ENV`).
    pub fn qg_with_venv(&self, venv: &Path, args: &[&str]) -> Run {
        self.qg_with_venv_and(venv, &[], args)
    }

    /// [`Project::qg_with_venv`] with `vars` set too.
    pub fn qg_with_venv_and(&self, venv: &Path, vars: &[(&str, &str)], args: &[&str]) -> Run {
        let mut cmd = qg_command(self.path(), args);
        cmd.env("VIRTUAL_ENV", venv).envs(vars.iter().copied());
        Run::from(cmd.output().unwrap())
    }

    /// Runs `qg args...` with a PATH holding only the project's `bin/` and
    /// the system directories (no real tools, no virtualenv).
    pub fn qg(&self, args: &[&str]) -> Run {
        let mut cmd = qg_command(self.path(), args);
        cmd.env(
            "PATH",
            format!("{}:/usr/bin:/bin", self.path().join("bin").display()),
        );
        Run::from(cmd.output().unwrap())
    }
}

fn qg_command(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qg"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("VIRTUAL_ENV")
        .env_remove("NO_COLOR")
        .env("CI", "true");
    cmd
}

/// Starts `qg <server>` (`lsp`, `mcp`) in `project` with piped stdio.
pub fn qg_server(project: &Project, server: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_qg"))
        .arg(server)
        .current_dir(project.path())
        .env("QG_TRUST_FILE", project.trust_file())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `qg args...` in `dir`, with the environment the test inherited.
pub fn qg_in(dir: &Path, args: &[&str]) -> Run {
    Run::from(
        Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap(),
    )
}

/// Runs `git args...` in `dir` as a test user (no signing), asserting it
/// succeeds; returns its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=qg", "-c", "user.email=qg@example.invalid"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Adds every file and commits.
pub fn commit_all(repo: &git2::Repository, message: &str) {
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("qg test", "qg@example.invalid").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap();
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Reads a child's pipe to its end on a thread of its own, so that a
/// full pipe never stalls the child while the caller waits on it.
fn read_in_background(
    mut pipe: impl std::io::Read + Send + 'static,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// A finished qg process.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("qg exited normally"),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }
}

impl Run {
    /// Runs `cmd` to its end, or panics once `patience` has passed (the
    /// child killed): a test that waits on a daemon which never becomes
    /// ready — a mutant of its trust, a hang — fails in seconds instead of
    /// running into the harness's timeout.
    pub fn within(cmd: &mut Command, patience: Duration) -> Run {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = read_in_background(child.stdout.take().unwrap());
        let stderr = read_in_background(child.stderr.take().unwrap());
        let until = Instant::now() + patience;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{cmd:?} did not finish within {} s", patience.as_secs());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Run::from(Output {
            status,
            stdout: stdout.join().unwrap(),
            stderr: stderr.join().unwrap(),
        })
    }

    /// stdout parsed as JSON (for `--format json`).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The gate object with this id.
    pub fn gate(&self, id: &str) -> Value {
        let json = self.json();
        json["gates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["id"] == id)
            .unwrap_or_else(|| panic!("no gate {id} in {json}"))
            .clone()
    }

    /// Exits with `code` and says `text` on stderr.
    pub fn assert_fails_with(&self, code: i32, text: &str) {
        self.assert_code(code);
        assert!(
            self.stderr.contains(text),
            "stderr lacks {text:?}:\n{}",
            self.stderr
        );
    }

    pub fn assert_code(&self, expected: i32) -> &Run {
        assert_eq!(
            self.code, expected,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// `(file, line, code, severity)` for each violation of a gate object.
pub fn violation_keys(gate: &Value) -> Vec<(String, Option<u64>, String, String)> {
    gate["violations"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    (
                        v["file"].as_str().unwrap_or("").to_string(),
                        v["line"].as_u64(),
                        v["code"].as_str().unwrap_or("").to_string(),
                        v["severity"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// qg's embedded default config with `glob` added to
/// `project_scope.exclude_globs`.
pub fn default_config_excluding(glob: &str) -> String {
    let list = "  exclude_globs:\n";
    let config =
        qg::config::EMBEDDED_DEFAULT.replacen(list, &format!("{list}    - \"{glob}\"\n"), 1);
    assert_ne!(
        config,
        qg::config::EMBEDDED_DEFAULT,
        "no exclude_globs list to add to"
    );
    config
}

/// A minimal config with one gate running `command` (JSON list text).
pub fn one_gate_config(command: &str, extra_gate_yaml: &str) -> String {
    format!(
        r#"version: "1"
active_gates: [fake]
gates:
  fake:
    name: "Fake tool"
    execution:
      command: {command}
      timeout_seconds: 30
    parsing:
      strategy: json_violations
      violations_path: "/"
      field_map: {{file: file, line: line, code: code, message: message}}
{extra_gate_yaml}"#
    )
}

/// The ids of a report's gates that a daemon answered (`"warm": true`).
pub fn warm_gate_ids(report: &Value) -> Vec<String> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["warm"] == true)
        .map(|g| g["id"].as_str().unwrap().to_string())
        .collect()
}

/// The `path` of each entry of a `qg files --format json` listing.
pub fn scope_paths(files: &Value) -> Vec<String> {
    files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts `document` fits `schemas/<schema>` — the written contract of a
/// `--format json` output (and of the MCP tool answering with it).
pub fn assert_fits_schema(schema: &str, document: &Value) {
    let dir = repo_dir().join("schemas");
    let read = |name: &str| -> Value {
        serde_json::from_str(&fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let report = jsonschema::Resource::from_contents(read("run-report.json")).unwrap();
    let validator = jsonschema::options()
        .with_base_uri(format!("file:///schemas/{schema}"))
        .with_resource("file:///schemas/run-report.json", report)
        .build(&read(schema))
        .unwrap_or_else(|e| panic!("schemas/{schema} is not a valid schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{document}\ndoes not fit schemas/{schema}:\n{}",
        errors.join("\n")
    );
}
