//! A temp git repository driven by the `git` CLI, for scenario tests that
//! commit, stash and switch branches as a user would.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::Run;

/// A repository on `main`, with `qg` run in it with the real tools.
pub struct GitRepo {
    dir: tempfile::TempDir,
    /// Variables every `qg` run here gets, after `VIRTUAL_ENV` (the real
    /// tools' virtualenv unless this overrides it).
    env: Vec<(String, String)>,
}

impl GitRepo {
    /// A repo on `main` with `files` committed, no config (the default).
    pub fn new(files: &[(&str, &str)]) -> GitRepo {
        let repo = GitRepo {
            dir: tempfile::Builder::new()
                .prefix("qg-repo-")
                .tempdir()
                .unwrap(),
            env: Vec::new(),
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

    /// Every later `qg` run (and [`GitRepo::env`]) gets `key=value`.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.push((key.to_string(), value.to_string()));
    }

    /// The variables a `qg` run here gets: `VIRTUAL_ENV`, then those set.
    pub fn env(&self) -> Vec<(String, String)> {
        let venv = super::tools_venv().display().to_string();
        let mut env = vec![("VIRTUAL_ENV".to_string(), venv)];
        env.extend(self.env.iter().cloned());
        env
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
                .envs(self.env())
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
