//! A gate's daemon directory, `.st3/daemons/<gate>/` (git-ignored with the
//! rest of the state): the socket runs connect to, the record of the daemon
//! that lives there (`daemon.json`), its log, the scratch directory its
//! tool may use (`{daemon_dir}` in the gate's `daemon` section), and two
//! locks: `alive.lock`, held by the daemon for as long as it lives (the
//! kernel drops it when the process dies, `kill -9` included), and
//! `start.lock`, which makes two concurrent starts one.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::record::Record;

/// Where every gate's daemon directory lives, relative to the root.
pub(crate) const DAEMONS_DIR: &str = ".st3/daemons";

/// One gate's daemon directory.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    /// The gate.
    pub(crate) gate: String,
    /// `.st3/daemons/<gate>`, absolute (see [`dir_name`]).
    pub(crate) dir: PathBuf,
}

impl Slot {
    /// The slot of `gate` in the project at `root`.
    pub(crate) fn new(root: &Path, gate: &str) -> Slot {
        Slot {
            gate: gate.to_string(),
            dir: root.join(DAEMONS_DIR).join(dir_name(gate)),
        }
    }

    /// The Unix socket runs connect to. Its name carries the version of
    /// what is said over it: a qg speaking another finds no daemon.
    pub(crate) fn socket(&self) -> PathBuf {
        self.dir.join(format!("qg-{}.sock", super::wire::PROTOCOL))
    }

    /// `daemon.json`.
    pub(crate) fn record_file(&self) -> PathBuf {
        self.dir.join("daemon.json")
    }

    /// The daemon's log: its own messages and its tool's stderr.
    pub(crate) fn log_file(&self) -> PathBuf {
        self.dir.join("daemon.log")
    }

    /// The log's length now: where what a tool writes next begins.
    pub(crate) fn log_len(&self) -> u64 {
        std::fs::metadata(self.log_file()).map_or(0, |m| m.len())
    }

    /// The last lines the tool itself wrote to the log since `offset`
    /// (qg's own stamped lines left out), joined: its own reason for
    /// failing (`dmypy: follow-imports=silent not supported`).
    pub(crate) fn tool_words_since(&self, offset: u64) -> Option<String> {
        use std::io::{Read, Seek, SeekFrom};
        let mut log = File::open(self.log_file()).ok()?;
        log.seek(SeekFrom::Start(offset)).ok()?;
        let mut text = String::new();
        log.take(64 * 1024).read_to_string(&mut text).ok()?;
        let own: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !is_stamped(l))
            .collect();
        let last = &own[own.len().saturating_sub(3)..];
        (!last.is_empty()).then(|| last.join(" | "))
    }

    /// The tool's scratch directory (`{daemon_dir}`).
    pub(crate) fn engine_dir(&self) -> PathBuf {
        self.dir.join("engine")
    }

    /// The record, if there is a readable one.
    pub(crate) fn record(&self) -> Option<Record> {
        let bytes = std::fs::read(self.record_file()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes the record atomically.
    pub(crate) fn write_record(&self, record: &Record) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
        crate::atomic_file::write_cache(&self.record_file(), &bytes)
    }

    /// Takes `alive.lock` for the life of the returned file, waiting up to
    /// `patience` for a process that only tests it; `None` when another
    /// daemon holds it.
    pub(crate) fn hold_alive(&self, patience: Duration) -> std::io::Result<Option<File>> {
        self.create()?;
        let file = lock_file(&self.dir.join("alive.lock"))?;
        let until = Instant::now() + patience;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(file)),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }

    /// Whether a daemon lives in this slot (it holds `alive.lock`).
    pub(crate) fn is_alive(&self) -> bool {
        let Ok(file) = OpenOptions::new()
            .read(true)
            .open(self.dir.join("alive.lock"))
        else {
            return false;
        };
        // A shared lock is refused only while the daemon holds its own.
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    }

    /// Waits for `start.lock`: held while one process starts or stops this
    /// gate's daemon, so two `qg daemon start`s make one daemon.
    pub(crate) fn lock_start(&self) -> std::io::Result<File> {
        self.create()?;
        let file = lock_file(&self.dir.join("start.lock"))?;
        file.lock()?;
        Ok(file)
    }

    /// Creates the directory; `.st3`'s own `.gitignore` keeps it out of
    /// `git status` (and `git stash -u`, which would take it away).
    fn create(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        if let Some(st3) = self.dir.parent().and_then(Path::parent) {
            crate::state::ignore_state_files(st3);
        }
        Ok(())
    }

    /// Removes what a dead daemon left behind (its socket and record).
    pub(crate) fn clear(&self) {
        let _ = std::fs::remove_file(self.socket());
        let _ = std::fs::remove_file(self.record_file());
    }
}

fn lock_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true).read(true);
    crate::atomic_file::open_patiently(&options, path)
}

/// Every gate that has a daemon directory under `root`, sorted.
pub(crate) fn all(root: &Path) -> Vec<Slot> {
    let Ok(entries) = std::fs::read_dir(root.join(DAEMONS_DIR)) else {
        return Vec::new();
    };
    let mut gates: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .map(|name| gate_of(&name))
        .collect();
    gates.sort();
    gates.iter().map(|gate| Slot::new(root, gate)).collect()
}

/// The slot directory's name for `gate`: one level, whatever the id holds
/// (a workspace member's `mypy@packages/a` is `mypy@packages%2Fa`), so that
/// [`all`] finds every slot.
fn dir_name(gate: &str) -> String {
    gate.replace('%', "%25").replace('/', "%2F")
}

/// The gate whose slot directory is `name` (the inverse of [`dir_name`]).
fn gate_of(name: &str) -> String {
    name.replace("%2F", "/").replace("%25", "%")
}

/// Whether a log line is one of qg's own (`2026-11-26T14:33:33Z qg daemon
/// mypy: ...`, see [`super::log`]), not the tool's.
fn is_stamped(line: &str) -> bool {
    let Some((stamp, rest)) = line.split_once(' ') else {
        return false;
    };
    let looks_like_time = stamp.len() == 20
        && stamp.ends_with('Z')
        && stamp.as_bytes().get(10) == Some(&b'T')
        && stamp[..4].bytes().all(|b| b.is_ascii_digit());
    looks_like_time && rest.contains(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_gate_s_slot_is_one_directory_found_again_by_its_gate() {
        for gate in ["mypy", "mypy@packages/a", "mypy@odd%2Fname/x"] {
            assert!(!dir_name(gate).contains('/'), "{gate}");
            assert_eq!(gate_of(&dir_name(gate)), gate);
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(Slot::new(tmp.path(), "mypy@packages/a").dir).unwrap();
        let found: Vec<String> = all(tmp.path()).into_iter().map(|s| s.gate).collect();
        assert_eq!(found, ["mypy@packages/a"]);
    }

    #[test]
    fn the_alive_lock_is_held_once_and_seen_from_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let slot = Slot::new(tmp.path(), "g");
        assert!(!slot.is_alive());
        let held = slot.hold_alive(Duration::ZERO).unwrap().unwrap();
        assert!(slot.is_alive());
        assert!(slot
            .hold_alive(Duration::from_millis(30))
            .unwrap()
            .is_none());
        drop(held);
        assert!(!slot.is_alive());
        assert!(slot.hold_alive(Duration::ZERO).unwrap().is_some());
    }

    #[test]
    fn a_tools_own_words_are_told_from_qgs_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let slot = Slot::new(tmp.path(), "mypy");
        std::fs::create_dir_all(&slot.dir).unwrap();
        std::fs::write(
            slot.log_file(),
            "2026-11-26T14:33:33Z qg daemon mypy: earlier\n",
        )
        .unwrap();
        let offset = slot.log_len();
        let more = "2026-11-26T14:33:34Z qg daemon mypy: starting the tool (started)\ndmypy: follow-imports=silent not supported\n2026-11-26T14:33:34Z qg daemon guard: dmypy ended (exit status: 1)\n";
        let mut text = std::fs::read_to_string(slot.log_file()).unwrap();
        text.push_str(more);
        std::fs::write(slot.log_file(), text).unwrap();
        assert_eq!(
            slot.tool_words_since(offset).as_deref(),
            Some("dmypy: follow-imports=silent not supported")
        );
        assert_eq!(slot.tool_words_since(slot.log_len()), None);
    }
}
