//! Artifact logs: every executed gate's command, resolved program, exit,
//! duration and whole stdout/stderr, one file per gate run, rotated; and
//! whole reports an answer had to shorten (the MCP server's cap).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use crate::config::ArtifactLogging;
use crate::process::{Finished, Termination};

/// What one log file records.
pub(crate) struct LogEntry<'a> {
    /// Gate id.
    pub(crate) gate_id: &'a str,
    /// Gate name.
    pub(crate) gate_name: &'a str,
    /// Full argv as run (program first).
    pub(crate) argv: &'a [String],
    /// `NAME=value` of each variable qg set for this run beyond the gate's
    /// own (a partial run's search paths).
    pub(crate) env: &'a [String],
    /// Resolved executable.
    pub(crate) program: &'a Path,
    /// Working directory.
    pub(crate) cwd: &'a Path,
    /// The finished process.
    pub(crate) finished: &'a Finished,
}

/// Writes the log under `<root>/<output_dir>` (the run rotates the
/// directory once its gates are done: see [`rotate_logs`]). Returns the
/// root-relative path of the new file.
pub(crate) fn write(
    root: &Path,
    settings: &ArtifactLogging,
    entry: &LogEntry<'_>,
) -> std::io::Result<String> {
    let dir = root.join(&settings.output_dir);
    create_log_dir(&dir)?;
    let name = unique_name(entry.gate_id, "log");
    let path = dir.join(&name);
    // Buffered: the header alone is two dozen small writes.
    let mut file = std::io::BufWriter::new(fs::File::create(&path)?);
    write_header(&mut file, entry)?;
    writeln!(
        file,
        "===== stdout ({} bytes) =====",
        entry.finished.stdout.len()
    )?;
    entry.finished.stdout.copy_to(&mut file)?;
    writeln!(
        file,
        "\n===== stderr ({} bytes) =====",
        entry.finished.stderr.len()
    )?;
    entry.finished.stderr.copy_to(&mut file)?;
    file.flush()?;
    Ok(crate::paths::to_slash(&settings.output_dir.join(name)))
}

/// Writes a whole report that an answer shortened (`<time>-…-report.json`)
/// beside the logs, rotated with them; returns its root-relative path.
pub(crate) fn write_report(
    root: &Path,
    settings: &ArtifactLogging,
    bytes: &[u8],
) -> std::io::Result<String> {
    let dir = root.join(&settings.output_dir);
    create_log_dir(&dir)?;
    let name = unique_name("report", "json");
    crate::atomic_file::write(&dir.join(&name), bytes)?;
    rotate(&dir, settings.max_files);
    Ok(crate::paths::to_slash(&settings.output_dir.join(name)))
}

/// Writes `text` (`<time>-…-<what>.log`) beside the logs, rotated with
/// them; returns its root-relative path.
pub(crate) fn write_text(
    root: &Path,
    settings: &ArtifactLogging,
    what: &str,
    text: &str,
) -> std::io::Result<String> {
    let dir = root.join(&settings.output_dir);
    create_log_dir(&dir)?;
    let name = unique_name(what, "log");
    crate::atomic_file::write(&dir.join(&name), text.as_bytes())?;
    rotate(&dir, settings.max_files);
    Ok(crate::paths::to_slash(&settings.output_dir.join(name)))
}

/// `<time>-<pid>-<sequence>-<what>.<extension>`: sorts by time, and two
/// runs in one process (concurrent MCP calls) never share a name.
fn unique_name(what: &str, extension: &str) -> String {
    static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let sequence = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // A member's gate id names its directory (`mypy@packages/a`).
    let what = what.replace(['/', '\\'], "+");
    format!(
        "{}-{}-{sequence}-{what}.{extension}",
        file_stamp(SystemTime::now()),
        std::process::id(),
    )
}

/// Creates the directory with a `.gitignore` of `*`, as ruff does for its
/// cache, so logs never show up as untracked files.
fn create_log_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        fs::write(
            ignore,
            "# Created by qg: artifact logs are not source.\n*\n",
        )?;
    }
    Ok(())
}

fn write_header(file: &mut impl Write, entry: &LogEntry<'_>) -> std::io::Result<()> {
    let exit = match entry.finished.termination {
        Termination::Exited(code) => format!("exit code {code}"),
        Termination::Signaled(signal) => {
            format!("killed by {}", crate::process::signal_name(signal))
        }
        Termination::TimedOut => "timed out; process group killed".to_string(),
    };
    writeln!(file, "# qg artifact log")?;
    writeln!(file, "gate: {} ({})", entry.gate_id, entry.gate_name)?;
    writeln!(file, "program: {}", entry.program.display())?;
    writeln!(
        file,
        "argv: {}",
        serde_json::to_string(entry.argv).unwrap_or_default()
    )?;
    for variable in entry.env {
        writeln!(file, "env: {variable}")?;
    }
    writeln!(file, "working_dir: {}", entry.cwd.display())?;
    writeln!(file, "result: {exit}")?;
    writeln!(file, "duration_ms: {}", entry.finished.duration.as_millis())?;
    Ok(())
}

/// `20261122T073403.123Z`: sorts by time, safe in file names everywhere.
fn file_stamp(now: SystemTime) -> String {
    humantime::format_rfc3339_millis(now)
        .to_string()
        .replace(['-', ':'], "")
}

/// The moment a run's logs start: every log it writes sorts after it.
pub(crate) fn run_started() -> String {
    file_stamp(SystemTime::now())
}

/// Keeps the project's newest logs and reports, leaving room for the
/// `room` logs a run that started at `started` ([`run_started`]) is
/// writing: once per run, beside its gates (a directory read and a few
/// deletions cost a run a millisecond once it held its 200 files). Only
/// files older than the run are counted or removed.
pub(crate) fn rotate_logs(root: &Path, settings: &ArtifactLogging, started: &str, room: usize) {
    if settings.enabled {
        let dir = root.join(&settings.output_dir);
        rotate_older(&dir, settings.max_files.saturating_sub(room), started);
    }
}

/// Keeps the newest `max_files` logs and reports (names sort by time).
fn rotate(dir: &Path, max_files: usize) {
    rotate_older(dir, max_files, "~");
}

/// Keeps the newest `keep` logs and reports among those whose names sort
/// before `before`.
fn rotate_older(dir: &Path, keep: usize, before: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let before = before.as_bytes();
    let mut logs: Vec<std::ffi::OsString> = entries
        .flatten()
        .map(|e| e.file_name())
        .filter(|name| {
            let name = name.as_encoded_bytes();
            (name.ends_with(b".log") || name.ends_with(b".json")) && name < before
        })
        .collect();
    if logs.len() <= keep {
        return;
    }
    logs.sort_unstable();
    let excess = logs.len() - keep;
    for old in &logs[..excess] {
        // Another qg may have removed it already; that is fine.
        let _ = fs::remove_file(dir.join(old));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_sorts_and_has_no_colons() {
        let stamp = file_stamp(SystemTime::UNIX_EPOCH);
        assert_eq!(stamp, "19700101T000000.000Z");
    }

    #[test]
    fn rotation_keeps_newest() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..5 {
            fs::write(tmp.path().join(format!("2026010{i}-x.log")), "").unwrap();
        }
        fs::write(tmp.path().join("keep.txt"), "").unwrap();
        rotate(tmp.path(), 2);
        let mut left: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["20260103-x.log", "20260104-x.log", "keep.txt"]);
    }

    #[test]
    fn a_runs_rotation_leaves_room_and_spares_newer_logs() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..5 {
            fs::write(tmp.path().join(format!("2026010{i}-x.log")), "").unwrap();
        }
        let settings = ArtifactLogging {
            enabled: true,
            output_dir: tmp.path().to_path_buf(),
            max_files: 3,
        };
        // A run started on the 3rd writing two logs: one of the three older
        // logs may stay; the 3rd's and the 4th's, newer, are not counted.
        rotate_logs(tmp.path(), &settings, "20260103", 2);
        let mut left: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["20260102-x.log", "20260103-x.log", "20260104-x.log"]);
    }
}
