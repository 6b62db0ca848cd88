//! What runs and daemons say to each other: one JSON request per
//! connection, one JSON reply, each on a line of its own, over the slot's
//! [local socket](super::transport).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::record::{Comparison, Record};
use super::transport::{self, Connection};
use crate::violation::Violation;

/// The version of what runs and daemons say; part of the socket's name.
pub(crate) const PROTOCOL: u32 = 3;

/// A run's (or a control command's) request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Request {
    /// Check the gate's files as the run resolved them, if the daemon's key
    /// is `key`.
    Check {
        /// The digest of the key the run computed.
        key: String,
        /// The files whose findings are reported (a language server is
        /// asked for these; a command daemon checks the whole program).
        files: Vec<String>,
        /// The run compares the answer with a cold run's (`--verify`, a
        /// self-check): answered while the daemon is being checked too.
        #[serde(default)]
        verify: bool,
        /// The importers the run left out (`interface_aware_importers`):
        /// a sample of this answer checks them too.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        left_out: Vec<String>,
    },
    /// Reply once the first full pass is made (or has failed).
    WaitReady,
    /// Say what the daemon is doing.
    Status,
    /// Stop: the tool, then the daemon.
    Stop,
    /// How a comparison of the daemon's answer with a cold run came out.
    Compared(Comparison),
    /// Confirm an answer given for `key` with a cold run, in the
    /// background: the job written at `path` (see `run::confirm::Job`).
    Confirm {
        /// The digest of the key the run asked with.
        key: String,
        /// The job's id.
        job: String,
        /// Where it is written.
        path: String,
    },
}

/// A daemon's reply.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reply {
    /// A language server's findings in the reported files.
    Diagnostics {
        /// Violation records, as a cold run's parser makes them.
        violations: Vec<Violation>,
        /// Time the check took in the daemon.
        ms: u64,
        /// A warm answer given earlier was found wrong since (told once).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notice: Option<String>,
    },
    /// The output of the daemon's check command.
    Output(Box<CommandOutput>),
    /// No warm answer: the run answers cold, and says why when it matters.
    Unavailable {
        /// Why (not ready yet, another key, the tool crashed…).
        reason: String,
        /// Whether the run should warn (a crash, a hang) or not (warming up).
        warn: bool,
        /// A warm answer given earlier was found wrong since (told once).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notice: Option<String>,
    },
    /// The first full pass is made, and the answers agree with a cold run.
    Ready {
        /// How long the first full pass took.
        first_pass_ms: u64,
        /// How long the comparison with a cold run took (none: the key was
        /// checked before).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checked_ms: Option<u64>,
    },
    /// The first full pass is made, but the answers differ from a cold run.
    Untrusted {
        /// What differed.
        distrust: super::record::Distrust,
    },
    /// The first full pass failed.
    Failed {
        /// Why.
        reason: String,
    },
    /// What the daemon is doing.
    Status(Box<Status>),
    /// A confirmation is under way (started now, or already).
    Confirming,
    /// The same answer on the same tree was confirmed already.
    Confirmed,
    /// The daemon is stopping (or restarting its tool).
    Ok,
}

/// What a command-protocol check printed, whole.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CommandOutput {
    /// The argv that ran (program resolved), for the artifact log.
    pub(crate) argv: Vec<String>,
    /// Its exit code, if it exited.
    pub(crate) exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub(crate) signal: Option<i32>,
    /// Whether it ran past the gate's timeout.
    pub(crate) timed_out: bool,
    /// Its standard output.
    pub(crate) stdout: Bytes,
    /// Its standard error.
    pub(crate) stderr: Bytes,
    /// Wall time in the daemon.
    pub(crate) ms: u64,
    /// A warm answer given earlier was found wrong since (told once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) notice: Option<String>,
}

/// Output bytes: text when they are UTF-8 (nearly always), else the bytes
/// themselves, so nothing is lost on the way.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Bytes {
    /// Valid UTF-8.
    Text(String),
    /// Anything else.
    Raw(Vec<u8>),
}

impl Bytes {
    /// Wraps `bytes`.
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Bytes {
        match String::from_utf8(bytes) {
            Ok(text) => Bytes::Text(text),
            Err(e) => Bytes::Raw(e.into_bytes()),
        }
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Text(text) => text.as_bytes(),
            Bytes::Raw(bytes) => bytes,
        }
    }
}

/// A daemon's record and what it is doing right now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Status {
    /// What it says about itself.
    pub(crate) record: Record,
    /// Checks answered since it started.
    pub(crate) checks: u64,
    /// Seconds since the last check (or since it started).
    pub(crate) idle_s: u64,
    /// Resident memory of the daemon and its tool's processes, in KiB.
    pub(crate) rss_kib: u64,
    /// Comparisons with a cold run that agreed since it started.
    #[serde(default)]
    pub(crate) agreed: u64,
    /// When the last one did (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_agreed: Option<String>,
}

/// Sends `request` to the daemon at `socket` and waits up to `timeout` for
/// its reply.
pub(crate) fn ask(socket: &Path, request: &Request, timeout: Duration) -> std::io::Result<Reply> {
    let mut line = serde_json::to_vec(request).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let reply = transport::exchange(socket, &line, timeout)?;
    if reply.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the daemon closed the connection without a reply",
        ));
    }
    serde_json::from_slice(&reply).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the daemon's reply is not one qg understands: {e}"),
        )
    })
}

/// Reads one request from a connection.
pub(crate) fn read_request(stream: &Connection) -> std::io::Result<Request> {
    let mut line = Vec::new();
    BufReader::new(stream).read_until(b'\n', &mut line)?;
    serde_json::from_slice(&line).map_err(|e| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad request: {e}"))
    })
}

/// Writes one reply to a connection.
pub(crate) fn write_reply(mut stream: &Connection, reply: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn a_socket_deep_in_a_long_path_is_reached() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("d".repeat(60)).join("e".repeat(60));
        std::fs::create_dir_all(&deep).unwrap();
        let socket = deep.join("sock");
        assert!(socket.as_os_str().len() > 107);
        let listener = transport::Listener::bind(&socket).unwrap();
        // In place under its own name only, for its owner only.
        let names: Vec<_> = std::fs::read_dir(&deep)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["sock"]);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&socket).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        let server = std::thread::spawn(move || {
            let stream = listener.accept().unwrap();
            assert!(matches!(read_request(&stream).unwrap(), Request::Status));
            write_reply(&stream, &Reply::Ok).unwrap();
        });
        let reply = ask(&socket, &Request::Status, Duration::from_secs(5)).unwrap();
        assert!(matches!(reply, Reply::Ok));
        server.join().unwrap();
    }

    #[test]
    fn a_request_and_its_reply_cross_the_local_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let socket = tmp.path().join("qg.sock");
        let listener = transport::Listener::bind(&socket).unwrap();
        let server = std::thread::spawn(move || {
            let stream = listener.accept().unwrap();
            assert!(matches!(read_request(&stream).unwrap(), Request::Stop));
            write_reply(&stream, &Reply::Ok).unwrap();
        });
        let reply = ask(&socket, &Request::Stop, Duration::from_secs(5)).unwrap();
        assert!(matches!(reply, Reply::Ok));
        server.join().unwrap();
        assert!(transport::identity_at(&socket).is_some());
    }

    #[test]
    fn output_that_is_not_utf8_survives_the_trip() {
        let raw = vec![b'a', 0xff, b'\n'];
        let text = serde_json::to_string(&Bytes::from_vec(raw.clone())).unwrap();
        let back: Bytes = serde_json::from_str(&text).unwrap();
        assert_eq!(back.as_slice(), raw);
        let text = serde_json::to_string(&Bytes::from_vec(b"ok\n".to_vec())).unwrap();
        assert_eq!(text, "\"ok\\n\"");
    }
}
