//! A temp git repository driven by the `git` CLI, for scenario tests that
//! commit, stash and switch branches as a user would.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::Run;

/// A repository on `main`, with `qg` run in it with the real tools.
pub struct GitRepo {
    dir: tempfile::TempDir,
}

impl GitRepo {
    /// A repo on `main` with `files` committed, no config (the default).
    pub fn new(files: &[(&str, &str)]) -> GitRepo {
        let repo = GitRepo {
            dir: tempfile::Builder::new()
                .prefix("qg-repo-")
                .tempdir()
                .unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        for (path, text) in files {
            repo.write(path, text);
        }
        repo.commit("initial");
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, relative: &str, contents: &str) {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    pub fn git(&self, args: &[&str]) {
        super::git(self.path(), args);
    }

    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    pub fn qg(&self, args: &[&str]) -> Run {
        Run::from(
            Command::new(env!("CARGO_BIN_EXE_qg"))
                .args(args)
                .current_dir(self.path())
                .env("VIRTUAL_ENV", super::tools_venv())
                .env("CI", "true")
                .output()
                .unwrap(),
        )
    }

    /// `qg run --format json` (auto).
    pub fn run(&self) -> Run {
        let run = self.qg(&["run", "--format", "json"]);
        assert!(
            run.code == 0 || run.code == 1,
            "{}{}",
            run.stdout,
            run.stderr
        );
        run
    }
}
