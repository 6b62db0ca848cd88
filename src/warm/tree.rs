//! The tool's process tree: the [guard](super::guard) leading a
//! [tree](crate::process::tree) of its own (a process group; a Job Object
//! on Windows, which the daemon holds), the tool under it — so stopping
//! it, or the daemon's death, leaves nothing behind.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use super::context::Context;
use crate::process::tree::{self, Tree};

/// The tool's process tree: the guard, leading it.
pub(crate) struct Process {
    guard: Child,
    tree: Tree,
    /// The guard is reaped: its group id may belong to someone else now.
    reaped: bool,
}

/// How to start a tool.
pub(crate) struct Launch<'a> {
    /// The resolved program.
    pub(crate) program: &'a Path,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// Where it runs.
    pub(crate) cwd: PathBuf,
    /// What it adds to the environment.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Whether qg talks to it over stdin/stdout (else they are the log).
    pub(crate) piped: bool,
}

impl Process {
    /// Starts the gate's `daemon.command` (placeholders expanded, resolved
    /// as the gate's tools are) under a guard; see [`Process::spawn`].
    pub(crate) fn spawn_daemon(
        ctx: &Context<'_>,
        piped: bool,
    ) -> Result<(Process, Option<ChildStdin>, Option<ChildStdout>), String> {
        let command: Vec<String> = ctx.spec.command.iter().map(|a| ctx.expand(a)).collect();
        let (program, env) = ctx.resolve(&command[0])?;
        let launch = Launch {
            program: &program,
            args: command[1..].to_vec(),
            cwd: ctx.cwd(),
            env,
            piped,
        };
        Process::spawn(ctx, launch)
    }

    /// Starts `launch` under a guard; with `piped`, returns its stdin and
    /// stdout. Its stderr (and the guard's) go to the daemon's log.
    pub(crate) fn spawn(
        ctx: &Context<'_>,
        launch: Launch<'_>,
    ) -> Result<(Process, Option<ChildStdin>, Option<ChildStdout>), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(ctx.slot.log_file())
            .map_err(|e| format!("cannot open {}: {e}", ctx.slot.log_file().display()))?;
        let (stdin, stdout) = match launch.piped {
            true => (Stdio::piped(), Stdio::piped()),
            false => (
                Stdio::null(),
                log.try_clone()
                    .map(Stdio::from)
                    .map_err(|e| format!("cannot share the log: {e}"))?,
            ),
        };
        let mut command = Command::new(ctx.qg);
        command
            .args(["daemon", "guard", "--"])
            .arg(launch.program)
            .args(&launch.args)
            .current_dir(&launch.cwd)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(stdin)
            .stdout(stdout)
            .stderr(log);
        tree::lead(&mut command);
        let mut guard = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", launch.program.display()))?;
        let tree = Tree::of(&guard);
        let (stdin, stdout) = (guard.stdin.take(), guard.stdout.take());
        Ok((
            Process {
                guard,
                tree,
                reaped: false,
            },
            stdin,
            stdout,
        ))
    }

    /// Whether the guard (and so the tool) still runs.
    pub(crate) fn running(&mut self) -> bool {
        if self.reaped {
            return false;
        }
        match self.guard.try_wait() {
            Ok(None) => true,
            _ => {
                // Whatever of the tree outlived its guard goes with it,
                // before the group id can be given to another process.
                self.tree.kill();
                self.reaped = true;
                false
            }
        }
    }

    /// The guard's process id (on Unix, its process group's too).
    pub(crate) fn group(&self) -> u32 {
        self.tree.leader()
    }

    /// Waits up to `patience` for the tool to exit by itself.
    pub(crate) fn wait_exit(&mut self, patience: Duration) -> bool {
        let until = Instant::now() + patience;
        while Instant::now() < until {
            if !self.running() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        !self.running()
    }

    /// Kills the whole group and reaps the guard.
    pub(crate) fn kill(&mut self) {
        if self.reaped {
            return;
        }
        self.tree.kill();
        let _ = self.guard.wait();
        self.reaped = true;
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}
