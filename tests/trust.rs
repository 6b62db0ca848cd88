//! Workspace trust from the command line: what counts as the repository's
//! own (its config, an executable inside it that git does not ignore, a
//! tool setting naming project code), what `qg trust` records and where,
//! and the automatic contexts refusing until then — each with a payload
//! that would create a file if it ran. The editor's side is in
//! tests/lsp/test_lsp.py, the agent's in tests/mcp.rs.
#![cfg(unix)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Run;

/// A repository, and a trust store of its own for every `qg` run in it.
struct Clone {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Clone {
    fn new(files: &[(&str, &str)]) -> Clone {
        let clone = Clone {
            dir: tempfile::Builder::new()
                .prefix("qg-trust-")
                .tempdir()
                .unwrap(),
            store: tempfile::tempdir().unwrap(),
        };
        for (path, text) in files {
            clone.write(path, text);
        }
        common::git(clone.path(), &["init", "-q", "-b", "main"]);
        common::git(clone.path(), &["add", "-A"]);
        common::git(clone.path(), &["commit", "-q", "-m", "cloned"]);
        clone
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    fn store_file(&self) -> PathBuf {
        self.store.path().join("trust.json")
    }

    fn qg(&self, args: &[&str]) -> Run {
        Run::from(
            Command::new(env!("CARGO_BIN_EXE_qg"))
                .args(args)
                .current_dir(self.path())
                .env("QG_TRUST_FILE", self.store_file())
                .env_remove("VIRTUAL_ENV")
                .env("CI", "true")
                .output()
                .unwrap(),
        )
    }

    /// What `qg doctor` says of trust.
    fn trust_line(&self) -> String {
        let doctor = self.qg(&["doctor"]);
        doctor
            .stdout
            .lines()
            .find(|l| l.contains(" trust "))
            .unwrap_or_else(|| panic!("no trust line:\n{}", doctor.stdout))
            .to_string()
    }
}

/// A gate that creates `marker` when it runs.
fn hostile_config(marker: &Path) -> String {
    format!(
        r#"version: "1"
active_gates: [lint]
gates:
  lint:
    execution: {{command: ["sh", "-c", "touch {}; echo '[]'"]}}
    parsing:
      strategy: json_violations
      field_map: {{file: file, line: line, code: code, message: message}}
"#,
        marker.display()
    )
}

fn new_marker() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    (dir, marker)
}

#[test]
fn watch_runs_nothing_of_an_untrusted_clone_until_it_is_trusted_as_it_is() {
    let (_keep, marker) = new_marker();
    let clone = Clone::new(&[
        ("a.py", "x = 1\n"),
        (".st3/quality.yaml", &hostile_config(&marker)),
    ]);
    let refused = clone.qg(&["watch", "--format", "json"]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("is not trusted: qg would run the gate commands of .st3/quality.yaml; read them, then run `qg trust` there"),
        "{}",
        refused.stderr
    );
    assert!(!marker.exists(), "an untrusted gate ran");
    assert!(
        clone.trust_line().contains("! trust"),
        "{}",
        clone.trust_line()
    );
    // The command line is the user's own act: it runs, trusted or not.
    clone.qg(&["run", "--scope", "project"]).assert_code(0);
    assert!(marker.exists());
    fs::remove_file(&marker).unwrap();
    let trusted = clone.qg(&["trust"]);
    trusted.assert_code(0);
    assert!(
        trusted.stdout.starts_with("✅ trusted "),
        "{}",
        trusted.stdout
    );
    let store = fs::read_to_string(clone.store_file()).unwrap();
    assert!(
        store.contains(&clone.path().display().to_string()),
        "{store}"
    );
    assert!(
        clone.trust_line().contains("✓ trust"),
        "{}",
        clone.trust_line()
    );
    // A pull that changes the gate's command takes the trust away.
    let (_keep2, other) = new_marker();
    clone.write(".st3/quality.yaml", &hostile_config(&other));
    assert!(
        clone.trust_line().contains("changed since it was trusted"),
        "{}",
        clone.trust_line()
    );
    clone.qg(&["watch", "--format", "json"]).assert_code(2);
    assert!(!other.exists(), "a changed gate ran without trust");
    // Revoked: nothing runs again.
    clone.qg(&["trust"]).assert_code(0);
    let revoked = clone.qg(&["trust", "--revoke"]);
    assert!(
        revoked.stdout.contains("is no longer trusted"),
        "{}",
        revoked.stdout
    );
    assert!(clone.trust_line().contains("! trust"));
    let listed = clone.qg(&["trust", "--list"]);
    assert!(
        listed.stdout.starts_with("no repository trusted"),
        "{}",
        listed.stdout
    );
}

#[test]
fn a_committed_executable_counts_as_the_repositorys_and_a_local_venv_does_not() {
    let (_keep, marker) = new_marker();
    let script = format!("#!/bin/sh\ntouch {}\necho '[]'\n", marker.display());
    let clone = Clone::new(&[("a.py", "x = 1\n"), (".gitignore", ".venv/\n")]);
    // A virtualenv the user made (git ignores it): the built-in config with
    // tools from outside the repository's word needs no trust.
    let local = clone.write(".venv/bin/ruff", &script);
    fs::set_permissions(&local, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert!(
        clone.trust_line().contains("✓ trust"),
        "{}",
        clone.trust_line()
    );
    // The same file committed (force-added): the repository's own.
    common::git(clone.path(), &["add", "-f", ".venv/bin/ruff"]);
    common::git(clone.path(), &["commit", "-q", "-m", "a tool of its own"]);
    let line = clone.trust_line();
    assert!(
        line.contains("! trust") && line.contains("the executable .venv/bin/ruff"),
        "{line}"
    );
    // (qg doctor, the user's own act, asked the tool its version.)
    let _ = fs::remove_file(&marker);
    clone.qg(&["watch", "--format", "json"]).assert_code(2);
    assert!(!marker.exists(), "a committed executable ran without trust");
    clone.qg(&["trust"]).assert_code(0);
    assert!(clone.trust_line().contains("✓ trust"));
    // Its content changed (a pull): untrusted again.
    fs::write(&local, format!("{script}# v2\n")).unwrap();
    assert!(
        clone.trust_line().contains("changed since it was trusted"),
        "{}",
        clone.trust_line()
    );
}

#[test]
fn a_mypy_plugin_of_the_project_needs_trust_even_with_the_built_in_config() {
    let clone = Clone::new(&[
        ("a.py", "x = 1\n"),
        (
            "pyproject.toml",
            "[tool.mypy]\nplugins = [\"tools.mypy_plugin\"]\n",
        ),
    ]);
    let line = clone.trust_line();
    assert!(
        line.contains("! trust")
            && line.contains("pyproject.toml [tool.mypy] plugins = tools.mypy_plugin"),
        "{line}"
    );
}

#[test]
fn a_corrupt_trust_store_trusts_nothing_and_names_itself() {
    let (_keep, marker) = new_marker();
    let clone = Clone::new(&[
        ("a.py", "x = 1\n"),
        (".st3/quality.yaml", &hostile_config(&marker)),
    ]);
    clone.qg(&["trust"]).assert_code(0);
    fs::write(clone.store_file(), "{\"version\": 1, \"trusted\": {").unwrap();
    let refused = clone.qg(&["watch", "--format", "json"]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains(&format!(
            "the trust store {} is not readable",
            clone.store_file().display()
        )),
        "{}",
        refused.stderr
    );
    assert!(!marker.exists());
    let again = clone.qg(&["trust"]);
    again.assert_code(2);
    assert!(again.stderr.contains("is not readable"), "{}", again.stderr);
}
