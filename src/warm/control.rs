//! Starting, stopping and listing a project's daemons (`qg daemon`, and
//! `qg watch` for the daemons it owns). A start is made under the slot's
//! `start.lock`, so two starts make one daemon; a daemon whose key no
//! longer holds is stopped and started anew.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::key::DaemonKey;
use super::record::Phase;
use super::slot::{self, Slot};
use super::wire::{self, Reply, Request, Status};
use crate::config::{Config, Gate};
use crate::error::QgError;
use crate::process::tree;
use crate::tools::Toolbox;

/// What a start asks for.
#[derive(Debug, Clone)]
pub(crate) struct StartRequest {
    /// The project directory.
    pub(crate) cwd: PathBuf,
    /// `--config`.
    pub(crate) config: Option<PathBuf>,
    /// The gates (empty: every active gate with a `daemon` section).
    pub(crate) gates: Vec<String>,
    /// The process whose death stops the daemons (`qg watch`).
    pub(crate) owner: Option<u32>,
    /// Overrides each gate's idle timeout.
    pub(crate) idle_timeout: Option<Duration>,
    /// Overrides each gate's `verify_every`.
    pub(crate) verify_every: Option<usize>,
    /// How many daemons may run at once: the gates past it (in config
    /// order) get none. A workspace of many members has a gate per member,
    /// and each pyright server holds its own program in memory.
    pub(crate) at_most: usize,
}

/// The default of [`StartRequest::at_most`].
pub(crate) const DEFAULT_AT_MOST: usize = 8;

/// One gate's daemon after a start.
#[derive(Debug)]
pub(crate) struct Started {
    /// The gate.
    pub(crate) gate: String,
    /// Its daemon, ready, or why it is not.
    pub(crate) outcome: Outcome,
}

/// What became of one gate's daemon.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It runs, checked against a cold run.
    Ready(Ready),
    /// None was started: this many run at most (its runs are cold).
    HeldBack(usize),
    /// It could not start, and why.
    Failed(String),
    /// None was started: the installed tool is too old for the daemon's
    /// way (`older_versions`), and why; its runs are cold.
    Cold(String),
}

/// A daemon that made its first full pass, and whose answers agree with
/// a cold run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ready {
    /// The daemon's process id.
    pub(crate) pid: u32,
    /// How long its first full pass took.
    pub(crate) first_pass_ms: u64,
    /// How long the comparison with a cold run took (none: this key was
    /// compared before).
    pub(crate) checked_ms: Option<u64>,
    /// Whether it was already running (this start started nothing).
    pub(crate) already: bool,
}

/// The gates `requested` (each must have a `daemon` section), or every
/// active gate that has one.
pub(crate) fn warm_gates<'c>(
    config: &'c Config,
    requested: &[String],
) -> Result<Vec<&'c Gate>, QgError> {
    if requested.is_empty() {
        return Ok(config
            .select_gates(&[])?
            .into_iter()
            .filter(|g| g.daemon.is_some())
            .collect());
    }
    let gates = config.select_gates(requested)?;
    if let Some(cold) = gates.iter().find(|g| g.daemon.is_none()) {
        if let Some(adapted) = cold.adapted.as_ref().filter(|a| a.cold) {
            return Err(QgError::Usage(format!(
                "gate `{}` cannot be kept warm with {}: {} (it needs {}); upgrade the tool, or let the gate answer cold",
                cold.id, adapted.version, adapted.why, adapted.below
            )));
        }
        return Err(QgError::Usage(format!(
            "gate `{}` has no `daemon` section in {}: it cannot be kept warm",
            cold.id, config.origin
        )));
    }
    Ok(gates)
}

/// Starts the daemons of `request`'s gates (those alive with the current
/// key are kept), then waits for each one's first full pass.
pub(crate) fn start(request: &StartRequest) -> Result<Vec<Started>, QgError> {
    let ws = crate::workspace::Workspace::discover(&request.cwd)?;
    let mut config = crate::members::load_config(&ws, request.config.as_deref())?;
    // A tool too old for its daemon's way answers cold: none is started.
    let tools = crate::tools::Toolbox::from_env(&ws.root);
    crate::tools::version::adapt_to_versions(&mut config, &tools, true, &request.gates);
    let mut gates = warm_gates(&config, &request.gates)?;
    // A project gate whose every file is a workspace member's has nothing
    // to keep warm (its tool's whole program would be the members').
    if gates.iter().any(|g| !g.left_to_members.is_empty()) {
        let files = crate::scope::project_files(&ws, &config)?;
        gates.retain(|g| {
            g.left_to_members.is_empty()
                || files
                    .iter()
                    .any(|f| g.owns(f) && g.handles_file_type(f) && g.scope.matches(f))
        });
    }
    let held_back = gates.split_off(gates.len().min(request.at_most));
    let qg = std::env::current_exe().map_err(|e| QgError::io("cannot find qg itself", e))?;
    let launched: Vec<(&Gate, Result<bool, String>)> = gates
        .iter()
        .map(|gate| (*gate, launch(&ws.root, &config, gate, request, &qg)))
        .collect();
    let started = launched.into_iter().map(|(gate, launched)| Started {
        gate: gate.id.clone(),
        outcome: match launched.and_then(|already| wait_ready(&ws.root, gate, already)) {
            Ok(ready) => Outcome::Ready(ready),
            Err(why) => Outcome::Failed(why),
        },
    });
    let held_back = held_back.into_iter().map(|gate| Started {
        gate: gate.id.clone(),
        outcome: Outcome::HeldBack(request.at_most),
    });
    Ok(started
        .chain(held_back)
        .chain(too_old_for_daemons(&config, request))
        .collect())
}

/// The active gates whose daemon the installed tool is too old for (a
/// gate named in the request is an error instead, in [`warm_gates`]).
fn too_old_for_daemons(config: &Config, request: &StartRequest) -> Vec<Started> {
    if !request.gates.is_empty() {
        return Vec::new();
    }
    let active = config.select_gates(&[]).unwrap_or_default();
    active
        .into_iter()
        .filter_map(|gate| {
            let adapted = gate.adapted.as_ref().filter(|a| a.cold)?;
            Some(Started {
                gate: gate.id.clone(),
                outcome: Outcome::Cold(adapted.why_cold()),
            })
        })
        .collect()
}

/// Makes sure a daemon with the current key lives in `gate`'s slot;
/// `Ok(true)` when one already did.
fn launch(
    root: &Path,
    config: &Config,
    gate: &Gate,
    request: &StartRequest,
    qg: &Path,
) -> Result<bool, String> {
    let slot = Slot::new(root, &gate.id);
    let _starting = slot
        .lock_start()
        .map_err(|e| format!("cannot lock {}: {e}", slot.dir.display()))?;
    let tools = Toolbox::from_env(root);
    let spec = gate
        .daemon
        .as_ref()
        .expect("warm gates have a daemon section");
    if tools.resolve_for(gate, &spec.command[0]).is_err() {
        let hint = tools
            .install_hint(gate)
            .map(|i| format!(" (install: {i})"))
            .unwrap_or_default();
        return Err(format!("`{}` not found{hint}", spec.command[0]));
    }
    let digest = DaemonKey::now(root, config, gate, &tools).digest();
    if slot.is_alive() {
        match wire::ask(&slot.socket(), &Request::Status, Duration::from_secs(5)) {
            Ok(Reply::Status(status))
                if status.record.digest == digest && status.record.phase != Phase::Failed =>
            {
                return Ok(true);
            }
            _ => stop_slot(&slot),
        }
    }
    slot.clear();
    spawn(root, gate, request, qg, &slot)?;
    Ok(false)
}

/// Starts `qg daemon serve` for `gate`, detached from the terminal (a
/// session of its own), and waits until it listens.
fn spawn(
    root: &Path,
    gate: &Gate,
    request: &StartRequest,
    qg: &Path,
    slot: &Slot,
) -> Result<(), String> {
    keep_log_small(slot);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(slot.log_file())
        .map_err(|e| format!("cannot open {}: {e}", slot.log_file().display()))?;
    let mut command = std::process::Command::new(qg);
    command
        .args(["daemon", "serve", "--gate", &gate.id])
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    if let Some(config) = &request.config {
        let absolute = request.cwd.join(config);
        command.arg("--config").arg(absolute);
    }
    if let Some(owner) = request.owner {
        command.args(["--owner", &owner.to_string()]);
    }
    if let Some(idle) = request.idle_timeout {
        command.args(["--idle-timeout", &format!("{}s", idle.as_secs().max(1))]);
    }
    if let Some(every) = request.verify_every {
        command.args(["--verify-every", &every.to_string()]);
    }
    detach(&mut command);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the daemon: {e}"))?;
    let until = Instant::now() + Duration::from_secs(15);
    while !(slot.is_alive() && slot.socket().exists()) {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the daemon exited at once ({status}); {}",
                log_tail(slot)
            ));
        }
        if Instant::now() > until {
            return Err(format!(
                "the daemon did not start listening; {}",
                log_tail(slot)
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Reaped whenever it ends, so a long-lived starter (`qg watch`) keeps
    // no zombie; a short-lived one leaves it to init.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// A log past this size is moved aside (`daemon.log.old`) when a daemon
/// starts: a daemon is started again and again, and logs its tool's stderr.
const LOG_LIMIT: u64 = 1024 * 1024;

fn keep_log_small(slot: &Slot) {
    let log = slot.log_file();
    if std::fs::metadata(&log).is_ok_and(|m| m.len() > LOG_LIMIT) {
        let _ = std::fs::rename(&log, log.with_extension("log.old"));
    }
}

/// Waits for the first full pass of `gate`'s daemon and the comparison of
/// its answers with a cold run (which may take a cold run of the whole
/// program, at low priority, on top).
fn wait_ready(root: &Path, gate: &Gate, already: bool) -> Result<Ready, String> {
    let slot = Slot::new(root, &gate.id);
    let patience = gate.timeout * 2 + Duration::from_secs(30);
    match wire::ask(&slot.socket(), &Request::WaitReady, patience) {
        Ok(Reply::Ready {
            first_pass_ms,
            checked_ms,
        }) => Ok(Ready {
            pid: slot.record().map_or(0, |r| r.pid),
            first_pass_ms,
            checked_ms,
            already,
        }),
        Ok(Reply::Untrusted { distrust }) => Err(format!(
            "untrusted: {}; the gate runs cold",
            distrust.describe()
        )),
        Ok(Reply::Failed { reason }) => Err(reason),
        Ok(other) => Err(format!("unexpected reply: {other:?}")),
        Err(e) => Err(format!(
            "the daemon did not answer: {e}; {}",
            log_tail(&slot)
        )),
    }
}

/// One gate's daemon after a stop.
#[derive(Debug)]
pub(crate) struct Stopped {
    /// The gate.
    pub(crate) gate: String,
    /// Whether a daemon was running.
    pub(crate) was_running: bool,
}

/// The daemons a process started for itself ([`StartRequest::owner`]),
/// and the gates left without one.
#[derive(Debug, Default)]
pub(crate) struct Owned {
    /// Gates whose daemon this start launched (one already running is
    /// not the process's to stop).
    pub(crate) started: Vec<String>,
    /// Gate → why it has no daemon (it is answered cold).
    pub(crate) without: Vec<(String, String)>,
}

/// [`start`] for a process that owns the daemons it starts (`qg watch`,
/// `qg lsp`).
pub(crate) fn start_owned(request: &StartRequest) -> Result<Owned, QgError> {
    let mut owned = Owned::default();
    for started in start(request)? {
        match started.outcome {
            Outcome::Ready(ready) if !ready.already => owned.started.push(started.gate),
            Outcome::Ready(_) => {}
            Outcome::HeldBack(at_most) => owned.without.push((
                started.gate,
                format!("at most {at_most} daemons run at once"),
            )),
            Outcome::Failed(why) | Outcome::Cold(why) => owned.without.push((started.gate, why)),
        }
    }
    Ok(owned)
}

/// Those of `gates` whose daemon runs now (a quick look: its process is
/// alive; whether it serves these settings is [`start`]'s to find out).
pub(crate) fn running(root: &Path, gates: &[String]) -> Vec<String> {
    gates
        .iter()
        .filter(|gate| Slot::new(root, gate).is_alive())
        .cloned()
        .collect()
}

/// Stops the daemons of `gates` (empty: every daemon of the project).
pub(crate) fn stop(root: &Path, gates: &[String]) -> Vec<Stopped> {
    slot::all(root)
        .into_iter()
        .filter(|s| gates.is_empty() || gates.contains(&s.gate))
        .map(|slot| {
            let _starting = slot.lock_start();
            let was_running = slot.is_alive();
            if was_running {
                stop_slot(&slot);
            }
            slot.clear();
            Stopped {
                gate: slot.gate.clone(),
                was_running,
            }
        })
        .collect()
}

/// Asks the daemon to stop, and kills it (and its tool's group) if it
/// has not within a few seconds.
fn stop_slot(slot: &Slot) {
    let record = slot.record();
    let _ = wire::ask(&slot.socket(), &Request::Stop, Duration::from_secs(5));
    if wait_dead(slot, Duration::from_secs(10)) {
        return;
    }
    if let Some(record) = record {
        // Only what is still that daemon and its guard: pids are reused.
        let daemon = format!("daemon serve --gate {}", slot.gate);
        if super::procfs::is_qg(record.pid, &daemon) {
            tree::kill_process(record.pid);
        }
        let guard = record
            .engine_group
            .filter(|g| super::procfs::is_qg(*g, "daemon guard"));
        if let Some(group) = guard {
            tree::kill_led_by(group);
        }
    }
    wait_dead(slot, Duration::from_secs(5));
}

/// Detaches the daemon from the terminal that started it: a session of
/// its own on Unix (no SIGHUP when the terminal closes); on Windows no
/// console at all and a process group of its own (no Ctrl-C from it).
fn detach(command: &mut std::process::Command) {
    #[cfg(unix)]
    // SAFETY: setsid is async-signal-safe; it only detaches the child.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, || {
            libc::setsid();
            Ok(())
        });
    }
    #[cfg(windows)]
    {
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        std::os::windows::process::CommandExt::creation_flags(
            command,
            DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP,
        );
        keep_own_stdio_from_children();
    }
}

/// Windows gives a child every inheritable handle of its parent, and this
/// process's own stdout and stderr are inheritable (it inherited them):
/// a daemon would hold the pipe of whoever ran `qg` open, and an editor
/// task or a script reading qg's output would wait for the daemon to end.
/// The flag is cleared on them; a child given them on purpose gets a
/// copy of its own (the standard library duplicates inherited stdio).
#[cfg(windows)]
fn keep_own_stdio_from_children() {
    use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE_FLAG_INHERIT};
    use windows_sys::Win32::System::Console::{
        GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: the process's own standard handles; a missing one is
        // null or invalid, and SetHandleInformation then fails harmlessly.
        unsafe {
            SetHandleInformation(GetStdHandle(which), HANDLE_FLAG_INHERIT, 0);
        }
    }
}

fn wait_dead(slot: &Slot, patience: Duration) -> bool {
    let until = Instant::now() + patience;
    while slot.is_alive() {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A gate's daemon as `qg daemon status` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct DaemonState {
    /// The gate.
    pub(crate) gate: String,
    /// `not started`, `stopped`, `cold` (its tool's version keeps no
    /// daemon), `unresponsive`, or the daemon's phase.
    pub(crate) state: String,
    /// Why the gate keeps no daemon with the installed tool (its version:
    /// `older_versions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cold: Option<String>,
    /// Whether its key is the one a run would compute now (a run asks
    /// only such a daemon).
    pub(crate) current: bool,
    /// What the daemon says, when it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<Status>,
    /// Why the gate answers cold for the key a run would compute now,
    /// remembered beyond its daemons (a drift, a tool that refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) standing: Option<super::standing::Standing>,
}

impl DaemonState {
    /// Whether a run now would be answered warm: a ready daemon with the
    /// current key.
    pub(crate) fn answers_warm(&self) -> bool {
        self.state == Phase::Ready.as_str() && self.current
    }
}

/// Every gate with a `daemon` section among the active ones, and every
/// daemon directory there is, with what each daemon says.
pub(crate) fn status(root: &Path, config: &Config) -> Vec<DaemonState> {
    let tools = Toolbox::from_env(root);
    // The gates as a start adapts them: a tool too old for its daemon
    // keeps none, and says why.
    let mut adapted = config.clone();
    crate::tools::version::adapt_to_versions(&mut adapted, &tools, true, &[]);
    let cold_because = |gate: &str| {
        adapted
            .gates
            .get(gate)
            .and_then(|g| g.adapted.as_ref())
            .filter(|a| a.cold)
            .map(|a| a.why_cold())
    };
    let mut gates: Vec<String> = warm_gates(config, &[])
        .unwrap_or_default()
        .into_iter()
        .map(|g| g.id.clone())
        .collect();
    for slot in slot::all(root) {
        if !gates.contains(&slot.gate) {
            gates.push(slot.gate);
        }
    }
    gates
        .into_iter()
        .map(|gate| {
            let slot = Slot::new(root, &gate);
            let digest = config
                .gates
                .get(&gate)
                .map(|g| DaemonKey::now(root, config, g, &tools).digest());
            let standing = digest
                .as_deref()
                .and_then(|key| super::standing::for_key(root, &gate, key));
            if !slot.is_alive() {
                let cold = cold_because(&gate);
                let state = match (&cold, slot.dir.exists()) {
                    (Some(_), _) => "cold",
                    (None, true) => "stopped",
                    (None, false) => "not started",
                };
                return DaemonState {
                    gate,
                    state: state.into(),
                    cold,
                    current: false,
                    status: None,
                    standing,
                };
            }
            match wire::ask(&slot.socket(), &Request::Status, Duration::from_secs(5)) {
                Ok(Reply::Status(status)) => DaemonState {
                    cold: None,
                    gate,
                    state: status.record.phase.as_str().into(),
                    current: digest.as_deref() == Some(status.record.digest.as_str()),
                    status: Some(*status),
                    standing,
                },
                _ => DaemonState {
                    cold: None,
                    gate,
                    state: "unresponsive".into(),
                    current: false,
                    status: None,
                    standing,
                },
            }
        })
        .collect()
}

/// The last lines of a daemon's log, for an error message.
fn log_tail(slot: &Slot) -> String {
    let text = std::fs::read_to_string(slot.log_file()).unwrap_or_default();
    let last: Vec<&str> = text.lines().rev().take(3).collect();
    match last.is_empty() {
        true => format!("see {}", slot.log_file().display()),
        false => format!(
            "its log ({}) ends: {}",
            slot.log_file().display(),
            last.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ),
    }
}
