//! The command protocol: a tool whose daemon has a command-line client of
//! its own (mypy's `dmypy`). qg runs the daemon in the foreground (it owns
//! the process, so nothing outlives qg's daemon), waits for its ready file,
//! and runs the client's `check` with the tool's own-run arguments — the
//! whole program each time; the daemon redoes only what changed. The
//! output goes back whole, for the gate's own parser.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use super::ahead::{self, Ahead};
use super::context::Context;
use super::program::Program;
use super::tree::Process;
use super::wire::{Bytes, CommandOutput, Reply};
use crate::config::{CommandSpec, Gate};
use crate::process::{self, Termination};

/// A running command daemon.
pub(crate) struct CommandDaemon {
    process: Process,
    spec: CommandSpec,
    /// The next check's client, started ahead (`check_ahead`).
    ahead: Option<Ahead>,
    /// A client started ahead could not start: checks run as `check` says.
    ahead_failed: bool,
}

impl CommandDaemon {
    /// Starts the daemon and waits for its ready file.
    pub(crate) fn start(
        ctx: &Context<'_>,
        spec: &CommandSpec,
        deadline: Instant,
    ) -> Result<CommandDaemon, String> {
        let ready_file = spec.ready_file.as_deref().map(|f| ctx.expand(f));
        if let Some(file) = &ready_file {
            // A file left by an earlier daemon must not pass for this one's.
            let _ = std::fs::remove_file(file);
        }
        let (process, _, _) = Process::spawn_daemon(ctx, false)?;
        let command: Vec<String> = ctx.spec.command.iter().map(|a| ctx.expand(a)).collect();
        let command: Vec<String> = command
            .iter()
            .map(|a| crate::quote::shell_quote(a))
            .collect();
        let command = command.join(" ");
        let mut daemon = CommandDaemon {
            process,
            spec: spec.clone(),
            ahead: None,
            ahead_failed: false,
        };
        if let Some(file) = ready_file {
            while !std::path::Path::new(&file).exists() {
                if !daemon.process.running() {
                    return Err(format!("`{command}` exited before it was ready"));
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "`{command}` was not ready in time: {file} never appeared"
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(daemon)
    }

    /// One check of the whole program, whose exit code must be one the
    /// gate knows.
    pub(crate) fn first_pass(
        &mut self,
        ctx: &Context<'_>,
        program: &Program,
        deadline: Instant,
    ) -> Result<(), String> {
        let Reply::Output(output) = self.check(ctx, program, deadline)? else {
            return Ok(());
        };
        let gate = ctx.gate;
        let known = |code: i32| {
            gate.exit_codes_ok.contains(&code) || gate.exit_codes_violations.contains(&code)
        };
        match output.exit_code {
            Some(code) if known(code) && !output.timed_out => Ok(()),
            _ => {
                let stderr = String::from_utf8_lossy(output.stderr.as_slice());
                let last = stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                Err(format!(
                    "the first check ended with {} ({last})",
                    describe(&output)
                ))
            }
        }
    }

    /// Runs the client's check on the tool's own-run arguments.
    pub(crate) fn check(
        &mut self,
        ctx: &Context<'_>,
        program: &Program,
        deadline: Instant,
    ) -> Result<Reply, String> {
        if !self.process.running() {
            return Err(format!(
                "the daemon is not running (its log: {})",
                ctx.shown_log()
            ));
        }
        let argv: Vec<String> = self
            .spec
            .check
            .iter()
            .map(|a| ctx.expand(a))
            .chain(program.own_args.iter().cloned())
            .collect();
        let timeout = deadline.saturating_duration_since(Instant::now());
        let finished = match self.ready_client(ctx) {
            Some(client) => client
                .answer(&argv[1..], timeout)
                .map_err(|e| format!("cannot run `{}`: {e}", argv[0]))?,
            None => run(ctx, &argv, timeout)?,
        };
        self.start_ahead(ctx, &argv[0]);
        let (exit_code, signal) = match finished.termination {
            Termination::Exited(code) => (Some(code), None),
            Termination::Signaled(signal) => (None, Some(signal)),
            Termination::TimedOut => (None, None),
        };
        let read = |capture: &process::Capture| capture.read_all().map(Bytes::from_vec);
        let stdout = read(&finished.stdout)
            .map(|out| self.without_ignored(out))
            .map_err(|e| format!("cannot read the output: {e}"))?;
        let exit_code = exit_code.map(|code| self.cold_exit_code(ctx.gate, code, &stdout));
        let output = CommandOutput {
            argv,
            exit_code,
            signal,
            timed_out: finished.termination == Termination::TimedOut,
            stdout,
            stderr: read(&finished.stderr).map_err(|e| format!("cannot read the output: {e}"))?,
            ms: finished.duration.as_millis() as u64,
            notice: None,
        };
        if output.timed_out {
            return Err(format!(
                "`{}` did not answer within {} s (4 times its slowest whole-program pass, \
                 at most the gate's timeout)",
                output.argv.join(" "),
                timeout.as_secs()
            ));
        }
        Ok(Reply::Output(Box::new(output)))
    }

    /// The client started ahead for this check, if one waits; one that
    /// exited before it was asked could not start (its interpreter lacks
    /// the tool), and none is started again.
    fn ready_client(&mut self, ctx: &Context<'_>) -> Option<Ahead> {
        let mut client = self.ahead.take()?;
        if client.waiting() {
            return Some(client);
        }
        self.ahead_failed = true;
        ctx.log.line(
            "the check's client started ahead exited before it was asked; checks start their client again each time",
        );
        None
    }

    /// Starts the next check's client ahead (`check_ahead`), `{check_dir}`
    /// being the directory of `check`, the check's program, as resolved.
    fn start_ahead(&mut self, ctx: &Context<'_>, check: &str) {
        let Some(template) = self
            .spec
            .check_ahead
            .as_ref()
            .filter(|_| !self.ahead_failed)
        else {
            return;
        };
        let Ok((program, env)) = ctx.resolve(check) else {
            return;
        };
        let program = dunce::canonicalize(&program).unwrap_or(program);
        let dir = program
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let argv: Vec<String> = template
            .iter()
            .map(|a| ctx.expand(a).replace("{check_dir}", &dir))
            .collect();
        let cwd = ctx.cwd();
        let launch = ahead::Launch {
            argv: &argv,
            cwd: &cwd,
            env: &env,
        };
        self.ahead = Ahead::start(&launch);
    }

    /// The output without the lines the gate's `ignore_output` matches.
    fn without_ignored(&self, output: Bytes) -> Bytes {
        let Some(pattern) = &self.spec.ignore_output else {
            return output;
        };
        let text = String::from_utf8_lossy(output.as_slice());
        let kept: String = text
            .split_inclusive('\n')
            .filter(|line| !pattern.is_match(line.trim_end()))
            .collect();
        match output {
            Bytes::Text(_) => Bytes::Text(kept),
            raw => raw,
        }
    }

    /// The exit code a cold run gives for the check's `stdout`: a
    /// violations code on the tool's notes alone (`note_output`) is a clean
    /// run's. Empty output keeps its code: nothing says why it was given.
    fn cold_exit_code(&self, gate: &Gate, code: i32, stdout: &Bytes) -> i32 {
        let (Some(notes), Some(&clean)) = (&self.spec.note_output, gate.exit_codes_ok.first())
        else {
            return code;
        };
        if !gate.exit_codes_violations.contains(&code) {
            return code;
        }
        match notes_alone(notes, &String::from_utf8_lossy(stdout.as_slice())) {
            true => clean,
            false => code,
        }
    }

    /// Whether the daemon still runs.
    pub(crate) fn running(&mut self) -> bool {
        self.process.running()
    }

    /// Its process group.
    pub(crate) fn group(&self) -> u32 {
        self.process.group()
    }

    /// The polite stop, then whatever is left is killed.
    pub(crate) fn stop(&mut self, ctx: &Context<'_>) {
        self.ahead = None;
        if let Some(stop) = &self.spec.stop {
            if self.process.running() {
                let argv: Vec<String> = stop.iter().map(|a| ctx.expand(a)).collect();
                let _ = run(ctx, &argv, Duration::from_secs(5));
                self.process.wait_exit(Duration::from_secs(2));
            }
        }
        self.process.kill();
    }
}

/// Whether `text` holds a note and nothing but notes (blank lines aside).
fn notes_alone(notes: &regex::Regex, text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    lines.peek().is_some() && lines.all(|l| notes.is_match(l))
}

/// Runs one client command the way the gate's tool runs.
fn run(ctx: &Context<'_>, argv: &[String], timeout: Duration) -> Result<process::Finished, String> {
    let (program, env) = ctx.resolve(&argv[0])?;
    let args: Vec<OsString> = argv[1..].iter().map(OsString::from).collect();
    let invocation = process::Invocation {
        label: &ctx.gate.id,
        program: &program,
        args: &args,
        cwd: &ctx.cwd(),
        env: &env,
        timeout,
        cancel: &Default::default(),
    };
    process::run(&invocation).map_err(|e| format!("cannot run `{}`: {e}", argv[0]))
}

fn describe(output: &CommandOutput) -> String {
    match (output.exit_code, output.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "a timeout".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::notes_alone;

    #[test]
    fn only_an_output_of_notes_alone_is_notes_alone() {
        let notes = regex::Regex::new(r"^[^\s{].*: note: ").unwrap();
        let note = "pyproject.toml: note: unused section(s): module = ['run']\n";
        let finding = r#"{"file": "a.py", "line": 1, "severity": "error"}"#;
        assert!(notes_alone(&notes, note));
        assert!(notes_alone(&notes, &format!("\n{note}\n{note}")));
        // Nothing says why an empty output exited with violations.
        assert!(!notes_alone(&notes, ""));
        assert!(!notes_alone(&notes, "\n \n"));
        assert!(!notes_alone(&notes, &format!("{note}{finding}\n")));
        assert!(!notes_alone(&notes, "mypy: error: something\n"));
    }
}
