//! The Unix side: a Unix domain socket at the slot's path, usable by its
//! owner only. A path too long for a socket address (108 bytes) is reached
//! through `/proc/self/fd` on Linux.

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Duration;

/// One connection.
pub(crate) type Connection = UnixStream;

/// What tells one daemon's socket from another's: the file's inode.
pub(crate) type Identity = u64;

/// A daemon's listening socket.
pub(crate) struct Listener(UnixListener);

/// Wakes a listener's accept loop from another thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waker(std::os::fd::RawFd);

impl Listener {
    /// Binds the listening socket at `path` (replacing a stale one).
    ///
    /// The socket is made under a temporary name and renamed into place
    /// once it listens and has its permissions: binding creates the file
    /// before `listen`, and a client that saw it then (`qg daemon start`
    /// waits for it) had its connection refused — a start that failed now
    /// and then under load.
    pub(crate) fn bind(path: &Path) -> std::io::Result<Listener> {
        use std::os::unix::fs::PermissionsExt;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        let listener = reachable(&temporary, |address| UnixListener::bind(address))?;
        let placed = std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600))
            .and_then(|()| std::fs::rename(&temporary, path));
        if let Err(e) = placed {
            let _ = std::fs::remove_file(&temporary);
            return Err(e);
        }
        Ok(Listener(listener))
    }

    /// Waits for the next connection.
    pub(crate) fn accept(&self) -> std::io::Result<Connection> {
        self.0.accept().map(|(stream, _)| stream)
    }

    /// What wakes [`Listener::accept`] for good.
    pub(crate) fn waker(&self) -> Waker {
        Waker(std::os::fd::AsRawFd::as_raw_fd(&self.0))
    }
}

impl Waker {
    /// Ends the accept loop: shutting the listening socket down wakes it
    /// even when the socket's file is gone. The listener must outlive
    /// every caller (the accept loop owns it and returns only after the
    /// daemon saw it is stopping).
    pub(crate) fn wake(&self) {
        // SAFETY: shutdown on a descriptor the listener still owns.
        unsafe {
            libc::shutdown(self.0, libc::SHUT_RDWR);
        }
    }
}

/// The identity of the socket file at `path`, if there is one.
pub(crate) fn identity_at(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}

/// Sends `line` to the daemon at `path` and returns its one-line reply,
/// waiting up to `timeout` for it (writing may take 10 s: a daemon busy
/// with a check reads its next request only then).
pub(crate) fn exchange(path: &Path, line: &[u8], timeout: Duration) -> std::io::Result<Vec<u8>> {
    let stream = reachable(path, |address| UnixStream::connect(address))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    stream.set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
    super::line::converse(&stream, line)
}

/// The longest path a socket address holds here, terminator excluded.
pub(super) const MAX_SOCKET_PATH: usize = 107;

/// Calls `f` with an address for `path` short enough for a socket: the
/// path itself, or on Linux `/proc/self/fd/N/<name>` with N an open handle
/// on its directory (the kernel resolves it).
fn reachable<T>(path: &Path, f: impl Fn(&Path) -> std::io::Result<T>) -> std::io::Result<T> {
    if path.as_os_str().len() <= MAX_SOCKET_PATH || !cfg!(target_os = "linux") {
        return f(path);
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return f(path);
    };
    let handle = std::fs::File::open(dir)?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&handle);
    let short = Path::new("/proc/self/fd").join(fd.to_string()).join(name);
    f(&short)
}
