//! Replacing a file so that readers see the old content or the new, never a
//! torn mix, and a crash loses neither.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// An exclusive advisory lock on a file of its own, held until dropped
/// (or until the process dies): one read-modify-write at a time.
pub(crate) struct Lock {
    _file: File,
}

impl Lock {
    /// Waits for the lock at `path` (created when missing).
    pub(crate) fn acquire(path: &Path) -> std::io::Result<Lock> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        file.lock()?;
        Ok(Lock { _file: file })
    }
}

/// Writes `bytes` to a temp file beside `path` (`.<name>.XXXXXX.tmp`),
/// fsyncs it, renames it over `path`, and fsyncs the directory. The file
/// keeps its permissions; a new one is `rw-r--r--` like any file a user
/// creates (some are committed), not the temp file's private `rw-------`.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, true)
}

/// [`write`] for a cache — what a crash may lose, as its readers take an
/// unreadable file for none: still never torn for a reader, but not synced
/// to disk (two fsyncs were a fifth of a no-op run's own time).
pub(crate) fn write_cache(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, false)
}

fn replace(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The replaced file keeps its mode; a new one gets the usual 0644
    // (tempfile's own default is 0600). Windows has no modes to keep.
    #[cfg(unix)]
    builder.permissions(
        std::fs::metadata(path)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| std::os::unix::fs::PermissionsExt::from_mode(0o644)),
    );
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if durable {
        temp.as_file().sync_all()?;
    }
    persist(temp, path)?;
    if durable {
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

/// Renames `temp` over `path`. On Windows a virus scanner or an indexer
/// that holds `path` open for a moment makes the rename fail with a
/// sharing violation or "access denied": tried again for up to about two
/// seconds, as git for Windows does, before the error is returned.
fn persist(temp: tempfile::NamedTempFile, path: &Path) -> std::io::Result<()> {
    let mut temp = temp;
    let mut patience = Patience::new();
    loop {
        match temp.persist(path) {
            Ok(_) => return Ok(()),
            Err(e) if patience.waited_out(&e.error) => temp = e.file,
            Err(e) => return Err(e.error),
        }
    }
}

/// Opens `path` with `options`, waiting out another process that holds it
/// without sharing for a moment (Windows), as [`persist`] does: a lock
/// file a scanner is reading must not stop a daemon.
pub(crate) fn open_patiently(
    options: &std::fs::OpenOptions,
    path: &Path,
) -> std::io::Result<std::fs::File> {
    let mut patience = Patience::new();
    loop {
        match options.open(path) {
            Err(e) if patience.waited_out(&e) => {}
            other => return other,
        }
    }
}

/// Ten tries with a doubling pause (5 ms up to 500 ms) for failures that
/// another process holding a file causes.
struct Patience {
    pause: std::time::Duration,
    tries: u32,
}

impl Patience {
    fn new() -> Patience {
        Patience {
            pause: std::time::Duration::from_millis(5),
            tries: 0,
        }
    }

    /// Sleeps and returns true when `error` is worth another try.
    fn waited_out(&mut self, error: &std::io::Error) -> bool {
        if self.tries >= 10 || !is_transient(error) {
            return false;
        }
        self.tries += 1;
        std::thread::sleep(self.pause);
        self.pause = (self.pause * 2).min(std::time::Duration::from_millis(500));
        true
    }
}

/// A failure another process holding the file causes for a moment.
fn is_transient(error: &std::io::Error) -> bool {
    // ERROR_ACCESS_DENIED (5), ERROR_SHARING_VIOLATION (32),
    // ERROR_LOCK_VIOLATION (33).
    cfg!(windows) && matches!(error.raw_os_error(), Some(5 | 32 | 33))
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(unix)]
    fn a_new_file_is_readable_by_all_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        super::write(&path, b"one").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        super::write(&path, b"two").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }

    /// A reader holding the file open (a scanner, an editor) does not stop
    /// its replacement — on Windows the rename is retried until it lets go.
    #[test]
    fn a_file_held_open_by_a_reader_is_replaced_once_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        super::write(&path, b"one").unwrap();
        let held = open_without_delete_sharing(&path);
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(held);
        });
        super::write(&path, b"two").unwrap();
        release.join().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }

    /// A lock file another process holds without sharing (Windows) is
    /// opened once it lets go, not refused.
    #[test]
    fn a_lock_file_held_without_sharing_opens_once_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alive.lock");
        std::fs::write(&path, b"").unwrap();
        let held = open_sharing(&path, 0);
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(held);
        });
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true);
        let opened = super::open_patiently(&options, &path);
        release.join().unwrap();
        assert!(opened.is_ok(), "{opened:?}");
    }

    /// Opens `path` for reading the way a scanner does on Windows: without
    /// `FILE_SHARE_DELETE`, so it cannot be replaced while open.
    fn open_without_delete_sharing(path: &std::path::Path) -> std::fs::File {
        // FILE_SHARE_READ | FILE_SHARE_WRITE
        open_sharing(path, 0x1 | 0x2)
    }

    /// Opens `path` for reading, sharing it (on Windows) only as `mode` says.
    fn open_sharing(path: &std::path::Path, mode: u32) -> std::fs::File {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(windows)]
        std::os::windows::fs::OpenOptionsExt::share_mode(&mut options, mode);
        #[cfg(not(windows))]
        let _ = mode;
        options.open(path).unwrap()
    }
}
