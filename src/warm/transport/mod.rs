//! The local socket runs and daemons talk over, one per daemon at the
//! slot's socket path: a Unix domain socket on Unix ([`unix`]); on Windows
//! a named pipe whose name the file at that path holds ([`windows`]) —
//! what every Windows version (and wine) has, where `AF_UNIX` is recent.
//!
//! Either way the file at the path is the daemon's address and identity: a
//! daemon whose file is gone or replaced (`rm -rf .st3`, a newer daemon)
//! cannot be reached any more and stops.

mod line;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub(crate) use unix::{exchange, identity_at, Connection, Identity, Listener, Waker};
#[cfg(windows)]
pub(crate) use windows::{exchange, identity_at, Connection, Identity, Listener, Waker};
