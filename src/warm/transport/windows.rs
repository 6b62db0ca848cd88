//! The Windows side: a named pipe, `\\.\pipe\qg-<pid>-<nanos>`, usable by
//! its owner only and by local clients only; the file at the slot's path
//! holds its name (written whole, then renamed into place, so a client
//! never reads half a name).

use std::io;
use std::path::Path;
use std::time::Duration;

use interprocess::local_socket::traits::Stream as _;
use interprocess::local_socket::{GenericNamespaced, ListenerOptions, Stream, ToNsName as _};
use interprocess::os::windows::local_socket::ListenerOptionsExt as _;
use interprocess::os::windows::security_descriptor::SecurityDescriptor;

/// One connection.
pub(crate) type Connection = Stream;

/// What tells one daemon's pipe from another's: its name.
pub(crate) type Identity = String;

/// A daemon's listening pipe.
pub(crate) struct Listener {
    inner: interprocess::local_socket::Listener,
    name: String,
}

/// Wakes a listener's accept loop from another thread.
#[derive(Debug, Clone)]
pub(crate) struct Waker(String);

/// Full access for the pipe's owner, nobody else (no inherited entries):
/// what a daemon answers is the project's code.
const OWNER_ONLY: &str = "D:P(A;;GA;;;OW)";

impl Listener {
    /// Creates the pipe and writes its name to `path` (replacing a stale
    /// one); the name is written once the pipe listens, so a client that
    /// reads it can connect.
    pub(crate) fn bind(path: &Path) -> io::Result<Listener> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let name = format!("qg-{}-{nanos}", std::process::id());
        let owner_only = widestring::U16CString::from_str(OWNER_ONLY).map_err(io::Error::other)?;
        let inner = ListenerOptions::new()
            .name(name.as_str().to_ns_name::<GenericNamespaced>()?)
            .security_descriptor(SecurityDescriptor::deserialize(&owner_only)?)
            .create_sync()?;
        crate::atomic_file::write(path, name.as_bytes())?;
        Ok(Listener { inner, name })
    }

    /// Waits for the next connection.
    pub(crate) fn accept(&self) -> io::Result<Connection> {
        interprocess::local_socket::traits::Listener::accept(&self.inner)
    }

    /// What wakes [`Listener::accept`] for good.
    pub(crate) fn waker(&self) -> Waker {
        Waker(self.name.clone())
    }
}

impl Waker {
    /// Ends the accept loop: one connection of its own, which the loop
    /// takes, sees the daemon stopping, and returns — the pipe is found by
    /// its name, so this works with the file gone too.
    pub(crate) fn wake(&self) {
        if let Ok(name) = self.0.as_str().to_ns_name::<GenericNamespaced>() {
            let _ = Stream::connect(name);
        }
    }
}

/// The identity of the daemon whose pipe the file at `path` names.
pub(crate) fn identity_at(path: &Path) -> Option<Identity> {
    std::fs::read_to_string(path).ok()
}

/// Sends `line` to the daemon whose pipe the file at `path` names and
/// returns its one-line reply, waiting up to `timeout` for it. Windows'
/// synchronous pipes have no I/O timeouts: the conversation runs on a
/// thread of its own, left behind if the daemon does not answer in time
/// (it ends when the daemon answers or its pipe closes).
pub(crate) fn exchange(path: &Path, line: &[u8], timeout: Duration) -> io::Result<Vec<u8>> {
    let name = std::fs::read_to_string(path)?;
    let stream = Stream::connect(name.as_str().to_ns_name::<GenericNamespaced>()?)?;
    let (sender, receiver) = std::sync::mpsc::channel();
    let line = line.to_vec();
    std::thread::spawn(move || {
        let _ = sender.send(super::line::converse(&stream, &line));
    });
    receiver
        .recv_timeout(timeout.max(Duration::from_millis(1)))
        .unwrap_or_else(|_| {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the daemon did not answer in time",
            ))
        })
}
