//! A daemon's engine: the gate's tool kept running, whichever protocol it
//! speaks, and the process tree behind it — started through the [guard]
//! (super::guard) in a process group of its own, so stopping it, or the
//! daemon's death, leaves nothing behind.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use super::command::CommandDaemon;
use super::lsp::Server;
use super::program::Program;
use super::slot::Slot;
use super::wire::Reply;
use crate::config::{Config, DaemonSpec, Gate, Protocol};
use crate::tools::Toolbox;
use crate::workspace::Workspace;

/// What an engine needs to know about its project and gate.
pub(crate) struct Context<'a> {
    /// The project.
    pub(crate) ws: &'a Workspace,
    /// The config the daemon runs under.
    pub(crate) config: &'a Config,
    /// The gate.
    pub(crate) gate: &'a Gate,
    /// Its `daemon` section.
    pub(crate) spec: &'a DaemonSpec,
    /// The daemon's directory.
    pub(crate) slot: &'a Slot,
    /// Where the tools are found.
    pub(crate) tools: &'a Toolbox<'a>,
    /// This executable, which also runs the guard.
    pub(crate) qg: &'a Path,
}

impl Context<'_> {
    /// `{daemon_dir}` expanded.
    pub(crate) fn expand(&self, text: &str) -> String {
        text.replace(
            "{daemon_dir}",
            &self.slot.engine_dir().display().to_string(),
        )
    }

    /// The gate's working directory.
    pub(crate) fn cwd(&self) -> PathBuf {
        crate::process::working_dir(&self.ws.root, self.gate.working_dir.as_deref())
    }

    /// `program` resolved as the gate's tools are, with the environment that
    /// runs it as if its virtualenv were activated, plus the gate's own.
    pub(crate) fn resolve(
        &self,
        program: &str,
    ) -> Result<(PathBuf, Vec<(OsString, OsString)>), String> {
        let tool = self.tools.resolve_program(program).map_err(|_| {
            let install = self.tools.install_hint(self.gate);
            let hint = install
                .map(|i| format!(" (install: {i})"))
                .unwrap_or_default();
            format!("`{program}` not found{hint}")
        })?;
        let mut env = self.tools.activated(&tool);
        env.extend(self.gate.env.iter().map(|(k, v)| (k.into(), v.into())));
        Ok((tool.path, env))
    }

    /// The gate's whole program as it is now.
    pub(crate) fn program(&self) -> Result<Program, String> {
        super::program::whole_program(self.ws, self.config, self.gate)
    }
}

/// A running engine, and the project's files as its last check saw them.
pub(crate) struct Engine {
    kind: Kind,
    files: BTreeSet<String>,
}

/// The protocol an engine speaks.
enum Kind {
    /// A language server.
    Lsp(Server),
    /// A daemon driven through its own client.
    Command(CommandDaemon),
}

impl Engine {
    /// Starts the gate's tool and greets it (no checking yet).
    pub(crate) fn start(ctx: &Context<'_>, deadline: Instant) -> Result<Engine, String> {
        std::fs::create_dir_all(ctx.slot.engine_dir())
            .map_err(|e| format!("cannot create {}: {e}", ctx.slot.engine_dir().display()))?;
        let kind = match &ctx.spec.protocol {
            Protocol::Lsp(spec) => Kind::Lsp(Server::start(ctx, spec, deadline)?),
            Protocol::Command(spec) => Kind::Command(CommandDaemon::start(ctx, spec, deadline)?),
        };
        Ok(Engine {
            kind,
            files: BTreeSet::new(),
        })
    }

    /// The first full pass: the whole program checked once, so later
    /// checks only redo what changed.
    pub(crate) fn first_pass(
        &mut self,
        ctx: &Context<'_>,
        deadline: Instant,
    ) -> Result<(), String> {
        let program = ctx.program()?;
        self.files = program.listing.iter().cloned().collect();
        match &mut self.kind {
            Kind::Lsp(server) => server.first_pass(ctx, &program, deadline),
            Kind::Command(daemon) => daemon.first_pass(ctx, &program, deadline),
        }
    }

    /// Checks, reporting `report` (what a language server is asked for);
    /// a file added or removed that the tool does not follow
    /// (`restart_when_added_or_removed`) makes it start again first.
    pub(crate) fn check(
        &mut self,
        ctx: &Context<'_>,
        report: &[String],
        deadline: Instant,
    ) -> Result<Reply, String> {
        let program = ctx.program()?;
        let files: BTreeSet<String> = program.listing.iter().cloned().collect();
        let unfollowed = ctx.spec.restart_on.as_ref().and_then(|globs| {
            self.files
                .symmetric_difference(&files)
                .find(|f| globs.is_included(f))
                .cloned()
        });
        if let Some(file) = unfollowed {
            self.stop(ctx);
            *self = Engine::start(ctx, deadline)
                .map_err(|why| format!("restarting for {file}: {why}"))?;
            self.first_pass(ctx, deadline)?;
        }
        self.files = files;
        match &mut self.kind {
            Kind::Lsp(server) => server.check(ctx, &program, report, deadline),
            Kind::Command(daemon) => daemon.check(ctx, &program, deadline),
        }
    }

    /// Whether the tool still runs.
    pub(crate) fn running(&mut self) -> bool {
        match &mut self.kind {
            Kind::Lsp(server) => server.running(),
            Kind::Command(daemon) => daemon.running(),
        }
    }

    /// The tool's process group.
    pub(crate) fn group(&self) -> u32 {
        match &self.kind {
            Kind::Lsp(server) => server.group(),
            Kind::Command(daemon) => daemon.group(),
        }
    }

    /// Asks the tool to exit, then kills whatever is left of its tree.
    pub(crate) fn stop(&mut self, ctx: &Context<'_>) {
        match &mut self.kind {
            Kind::Lsp(server) => server.stop(),
            Kind::Command(daemon) => daemon.stop(ctx),
        }
    }
}

/// The tool's process tree: the guard, leading a process group.
pub(crate) struct Process {
    guard: Child,
    group: u32,
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
        use std::os::unix::process::CommandExt;
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
        let mut guard = Command::new(ctx.qg)
            .args(["daemon", "guard", "--"])
            .arg(launch.program)
            .args(&launch.args)
            .current_dir(&launch.cwd)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(stdin)
            .stdout(stdout)
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", launch.program.display()))?;
        let group = guard.id();
        let (stdin, stdout) = (guard.stdin.take(), guard.stdout.take());
        Ok((
            Process {
                guard,
                group,
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
                super::procfs::signal_group(self.group, libc::SIGKILL);
                self.reaped = true;
                false
            }
        }
    }

    /// The process group.
    pub(crate) fn group(&self) -> u32 {
        self.group
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
        super::procfs::signal_group(self.group, libc::SIGKILL);
        let _ = self.guard.wait();
        self.reaped = true;
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}
