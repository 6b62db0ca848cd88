//! A command daemon's check client started ahead of the check it answers
//! (`daemon.check_ahead`): a client slow to start — dmypy's imports mypy,
//! 0.2 s, as long as the check itself after a one-module edit — waits,
//! started, for its arguments (one line of JSON on stdin), so a run's warm
//! answer does not wait for an interpreter to start. One is started after
//! each check for the next; one that could not start (it exited before
//! being asked: its interpreter lacks the tool) is not used again, and the
//! check runs as `check` says.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::process::tree::{self, Tree};
use crate::process::{termination_of, Capture, Finished, Termination};

/// A started client, waiting for its arguments.
pub(crate) struct Ahead {
    child: Child,
    tree: Tree,
    stdout: File,
    stderr: File,
}

/// What a client started ahead needs: its argv (placeholders expanded),
/// where it runs, and its environment.
pub(crate) struct Launch<'a> {
    pub(crate) argv: &'a [String],
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a [(OsString, OsString)],
}

impl Ahead {
    /// Starts the client; `None` when it cannot start (its program is not
    /// there).
    pub(crate) fn start(launch: &Launch<'_>) -> Option<Ahead> {
        let program = existing(Path::new(launch.argv.first()?))?;
        let stdout = tempfile::tempfile().ok()?;
        let stderr = tempfile::tempfile().ok()?;
        let mut command = Command::new(program);
        command
            .args(&launch.argv[1..])
            .current_dir(launch.cwd)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(stdout.try_clone().ok()?)
            .stderr(stderr.try_clone().ok()?);
        tree::lead(&mut command);
        let child = command.spawn().ok()?;
        let tree = Tree::of(&child);
        Some(Ahead {
            child,
            tree,
            stdout,
            stderr,
        })
    }

    /// Whether it is still waiting (it did not fail to start).
    pub(crate) fn waiting(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Hands it the check's arguments and waits for it to end, at most
    /// `timeout` (then its tree is killed).
    pub(crate) fn answer(
        mut self,
        args: &[String],
        timeout: Duration,
    ) -> std::io::Result<Finished> {
        let started = Instant::now();
        let line = serde_json::to_string(args).map_err(std::io::Error::other)?;
        if let Some(mut stdin) = self.child.stdin.take() {
            stdin.write_all(format!("{line}\n").as_bytes())?;
        }
        let deadline = started + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break Some(status);
            }
            if Instant::now() >= deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        self.tree.kill();
        let termination = match status {
            Some(status) => termination_of(&status),
            None => {
                let _ = self.child.wait();
                Termination::TimedOut
            }
        };
        Ok(Finished {
            termination,
            stdout: Capture::new(self.stdout.try_clone()?)?,
            stderr: Capture::new(self.stderr.try_clone()?)?,
            duration: started.elapsed(),
        })
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        // A client never asked: its stdin closes with it, and its tree goes.
        self.tree.kill();
        let _ = self.child.try_wait();
    }
}

/// `program`, or the same with the platform's executable suffix, if either
/// is a file.
fn existing(program: &Path) -> Option<PathBuf> {
    if program.is_file() {
        return Some(program.to_path_buf());
    }
    let suffixed = PathBuf::from(format!(
        "{}{}",
        program.display(),
        std::env::consts::EXE_SUFFIX
    ));
    suffixed.is_file().then_some(suffixed)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_client_started_ahead_answers_with_the_arguments_it_is_handed() {
        let argv: Vec<String> = ["sh", "-c", "read line; echo \"got $line\"; exit 3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut launch_argv = argv.clone();
        launch_argv[0] = "/bin/sh".into();
        let launch = Launch {
            argv: &launch_argv,
            cwd: Path::new("/"),
            env: &[],
        };
        let mut ahead = Ahead::start(&launch).expect("started");
        assert!(ahead.waiting());
        let finished = ahead
            .answer(&["check".into(), ".".into()], Duration::from_secs(10))
            .unwrap();
        assert_eq!(finished.termination, Termination::Exited(3));
        let out = String::from_utf8(finished.stdout.read_all().unwrap()).unwrap();
        assert_eq!(out, "got [\"check\",\".\"]\n");
    }

    #[test]
    fn a_client_that_cannot_start_is_known_before_it_is_asked() {
        let argv: Vec<String> = vec!["/bin/sh".into(), "-c".into(), "exit 1".into()];
        let launch = Launch {
            argv: &argv,
            cwd: Path::new("/"),
            env: &[],
        };
        let mut ahead = Ahead::start(&launch).expect("started");
        std::thread::sleep(Duration::from_millis(200));
        assert!(!ahead.waiting());
        let missing: Vec<String> = vec!["/no/such/program".into()];
        let launch = Launch {
            argv: &missing,
            cwd: Path::new("/"),
            env: &[],
        };
        assert!(Ahead::start(&launch).is_none());
    }
}
