//! Runs one tool: argv only (never a shell), stdin from /dev/null, stdout and
//! stderr streamed by the kernel into anonymous temp files (no pipe for a
//! stray grandchild to hold open, no quadratic buffer growth), in its own
//! process group so a timeout kills the whole tree.

pub(crate) mod batch;
pub(crate) mod termination;
pub(crate) mod tree;

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Termination {
    /// Exited with this code.
    Exited(i32),
    /// Killed by this signal (not by qg).
    Signaled(i32),
    /// Ran past its timeout; qg killed its process group.
    TimedOut,
}

/// Everything a finished tool left behind.
#[derive(Debug)]
pub(crate) struct Finished {
    /// How it ended.
    pub(crate) termination: Termination,
    /// Whole stdout, still in its capture file.
    pub(crate) stdout: Capture,
    /// Whole stderr, still in its capture file.
    pub(crate) stderr: Capture,
    /// Wall time.
    pub(crate) duration: Duration,
}

/// One captured stream, left on disk: readers stream it, so 100 MB of
/// output never has to sit in memory at once.
#[derive(Debug)]
pub(crate) struct Capture {
    file: File,
    len: u64,
}

impl Capture {
    /// The capture a process wrote to `file`.
    pub(crate) fn new(file: File) -> std::io::Result<Capture> {
        let len = file.metadata()?.len();
        Ok(Capture { file, len })
    }

    /// A capture of bytes obtained another way (a daemon's reply), kept
    /// in an anonymous temp file like a tool's own stream.
    pub(crate) fn from_bytes(bytes: &[u8]) -> std::io::Result<Capture> {
        use std::io::Write;
        let mut file = tempfile::tempfile()?;
        file.write_all(bytes)?;
        Capture::new(file)
    }

    /// Size in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// A reader from the start. Readers share one offset: use one at a time.
    pub(crate) fn reader(&self) -> std::io::Result<std::io::BufReader<File>> {
        let mut file = self.file.try_clone()?;
        file.rewind()?;
        Ok(std::io::BufReader::with_capacity(64 * 1024, file))
    }

    /// The whole stream in memory (text parsing, small outputs).
    pub(crate) fn read_all(&self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(self.len as usize);
        self.reader()?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// At most the last `max` bytes.
    pub(crate) fn tail(&self, max: u64) -> std::io::Result<Vec<u8>> {
        let mut file = self.file.try_clone()?;
        file.seek(std::io::SeekFrom::Start(self.len.saturating_sub(max)))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Copies the stream to `out` without holding it in memory.
    pub(crate) fn copy_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<u64> {
        std::io::copy(&mut self.reader()?, out)
    }
}

/// A running tool's process group, what it is, and the run it belongs to.
struct Running {
    group: u32,
    label: String,
    cancel: Cancel,
    /// Windows has no process groups to signal: the tool's tree is held in
    /// a Job Object of its own, which a kill terminates and which, closed
    /// when the tool is unregistered, kills whatever is left in it.
    #[cfg(windows)]
    job: Option<tree::Job>,
}

impl Running {
    /// Kills the tool's whole tree.
    fn kill(&self) {
        #[cfg(unix)]
        tree::kill_group(self.group);
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.terminate();
        }
    }
}

/// Process groups of running tools, so an interrupted qg can kill every
/// tree it started, and a cancelled run the trees it started.
static RUNNING: std::sync::Mutex<Vec<Running>> = std::sync::Mutex::new(Vec::new());

/// Set once qg is interrupted: no tool may start after that.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stops one run from outside it — an MCP client cancelling a call while
/// other calls go on: cancelling kills the process groups started under
/// this handle and refuses new ones. Clones share one state; the default
/// handle belongs to a run nobody cancels.
#[derive(Debug, Clone, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Kills this run's tools and forbids it to start more.
    pub fn cancel(&self) {
        let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        for tool in running.iter().filter(|r| r.cancel.same(self)) {
            tool.kill();
        }
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn same(&self, other: &Cancel) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Kills every running tool's process group and forbids new ones; returns
/// the labels of what was running.
pub(crate) fn kill_all_running() -> Vec<String> {
    let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    for tool in running.iter() {
        tool.kill();
    }
    running.iter().map(|r| r.label.clone()).collect()
}

/// Starts the child and records its group under one lock, so an interrupt
/// or a cancel either sees it registered or prevents it from starting.
fn start_registered(
    expression: &duct::Expression,
    label: &str,
    cancel: &Cancel,
) -> std::io::Result<duct::Handle> {
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) || cancel.is_cancelled() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "qg was interrupted",
        ));
    }
    let handle = expression.start()?;
    if let Some(group) = handle.pids().first() {
        running.push(Running {
            group: *group,
            label: label.to_string(),
            cancel: cancel.clone(),
            #[cfg(windows)]
            job: tree::Job::holding(*group),
        });
    }
    Ok(handle)
}

/// Forgets the tool `group` (on Windows closing its job: what is left in
/// it dies).
fn unregister(group: u32) {
    RUNNING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|r| r.group != group);
}

/// What to run.
pub(crate) struct Invocation<'a> {
    /// What it is, for messages (the gate id).
    pub(crate) label: &'a str,
    /// Resolved executable.
    pub(crate) program: &'a Path,
    /// Arguments after the program.
    pub(crate) args: &'a [OsString],
    /// Working directory.
    pub(crate) cwd: &'a Path,
    /// Extra environment.
    pub(crate) env: &'a [(OsString, OsString)],
    /// Wall-clock limit.
    pub(crate) timeout: Duration,
    /// The run it belongs to.
    pub(crate) cancel: &'a Cancel,
}

/// Runs the invocation to completion (or timeout).
pub(crate) fn run(invocation: &Invocation<'_>) -> std::io::Result<Finished> {
    let stdout = tempfile::tempfile()?;
    let stderr = tempfile::tempfile()?;
    let mut expression = duct::cmd(invocation.program, invocation.args)
        .dir(invocation.cwd)
        .stdin_null()
        .stdout_file(stdout.try_clone()?)
        .stderr_file(stderr.try_clone()?)
        .unchecked();
    for (key, value) in invocation.env {
        expression = expression.env(key, value);
    }
    let expression = in_own_process_group(expression);
    let started = Instant::now();
    let handle = start_registered(&expression, invocation.label, invocation.cancel)?;
    let group = handle.pids().first().copied();
    let output = handle.wait_timeout(invocation.timeout)?;
    let termination = match output {
        Some(output) => termination_of(&output.status),
        None => Termination::TimedOut,
    };
    // Kill the group after a timeout, and also after a normal exit so no
    // grandchild outlives the gate.
    if let Some(group) = group {
        kill_group(group);
    }
    if termination == Termination::TimedOut {
        handle.wait()?;
    }
    if let Some(group) = group {
        unregister(group);
    }
    let duration = started.elapsed();
    Ok(Finished {
        termination,
        stdout: Capture::new(stdout)?,
        stderr: Capture::new(stderr)?,
        duration,
    })
}

/// The tool leads a tree of its own ([`tree::lead`]): qg alone decides
/// when it stops, and a timeout kills all of it.
fn in_own_process_group(expression: duct::Expression) -> duct::Expression {
    expression.before_spawn(|command| {
        tree::lead(command);
        Ok(())
    })
}

/// Kills the tree of the running tool `group`.
fn kill_group(group: u32) {
    #[cfg(unix)]
    tree::kill_group(group);
    #[cfg(windows)]
    if let Some(tool) = RUNNING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|r| r.group == group)
    {
        tool.kill();
    }
}

/// How a finished process ended: its exit code, or the signal that ended it.
#[cfg(unix)]
pub(crate) fn termination_of(status: &std::process::ExitStatus) -> Termination {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Termination::Exited(code),
        (None, Some(signal)) => Termination::Signaled(signal),
        (None, None) => Termination::Exited(-1),
    }
}

#[cfg(not(unix))]
pub(crate) fn termination_of(status: &std::process::ExitStatus) -> Termination {
    Termination::Exited(status.code().unwrap_or(-1))
}

/// A readable name for a signal number.
pub(crate) fn signal_name(signal: i32) -> String {
    let name = match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    format!("{name} ({signal})")
}

/// How many threads can run at once here (the CPU count, within any
/// cgroup quota), asked once: the standard library reads the cgroup's
/// files on every call.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Absolute path of the working directory for a gate.
pub(crate) fn working_dir(root: &Path, relative: Option<&Path>) -> PathBuf {
    match relative {
        Some(dir) => root.join(dir),
        None => root.to_path_buf(),
    }
}
