//! JSON-RPC 2.0 over a language server's stdio, framed as the Language
//! Server Protocol says (`Content-Length` headers): requests qg sends and
//! the replies it waits for, with a reader thread that routes replies to
//! their callers and hands the server's own requests and notifications to
//! a handler.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};

/// Why a call has no result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// No reply in time.
    Timeout,
    /// The server's output ended (it exited or crashed).
    Closed,
    /// The server replied with an error.
    Server {
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The request could not be written.
    Io(std::io::Error),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Timeout => write!(f, "no reply in time"),
            CallError::Closed => write!(f, "the server's output ended"),
            CallError::Server { code, message } => write!(f, "error {code}: {message}"),
            CallError::Io(e) => write!(f, "cannot write to the server: {e}"),
        }
    }
}

/// `ContentModified`: the server asks for the request to be sent again.
pub(crate) const CONTENT_MODIFIED: i64 = -32801;
/// `ServerCancelled`: likewise, when the server cancelled it itself.
pub(crate) const SERVER_CANCELLED: i64 = -32802;
/// `MethodNotFound`: what qg answers to a request it does not serve.
const METHOD_NOT_FOUND: i64 = -32601;
/// `ParseError`: what qg answers to a frame whose body is not JSON.
const PARSE_ERROR: i64 = -32700;
/// `InvalidRequest`: what qg answers to JSON that is no JSON-RPC message.
const INVALID_REQUEST: i64 = -32600;

/// What the peer asked of qg, or told it.
pub(crate) enum Incoming<'a> {
    /// A request: the handler's answer is the result or an error (code and
    /// message); `None` says qg does not serve the method.
    Request(&'a str, &'a Value),
    /// A notification (nothing is answered).
    Notification(&'a str, &'a Value),
}

/// A request's answer: its result, or an error's code and message.
pub(crate) type Answer = Result<Value, (i64, String)>;

/// Answers the peer's requests and hears its notifications.
pub(crate) type Handler = Box<dyn Fn(Incoming<'_>) -> Option<Answer> + Send>;

type Reply = Result<Value, CallError>;

/// A connection to a language server.
pub(crate) struct Rpc {
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    pending: Arc<Mutex<HashMap<i64, Sender<Reply>>>>,
    next_id: AtomicI64,
    closed: Arc<AtomicBool>,
}

/// A request on its way: its reply, when it comes.
pub(crate) struct Pending(Receiver<Reply>);

impl Pending {
    /// Waits for the reply until `deadline`.
    pub(crate) fn wait(self, deadline: Instant) -> Reply {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.0.recv_timeout(left) {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Timeout) => Err(CallError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(CallError::Closed),
        }
    }
}

impl Rpc {
    /// Starts reading the server's output on a thread of its own.
    pub(crate) fn start(
        input: Box<dyn Write + Send>,
        output: Box<dyn Read + Send>,
        handler: Handler,
    ) -> Rpc {
        let rpc = Rpc {
            writer: Arc::new(Mutex::new(input)),
            pending: Arc::new(Mutex::new(HashMap::new())),
            next_id: AtomicI64::new(1),
            closed: Arc::new(AtomicBool::new(false)),
        };
        let reader = Reader {
            writer: Arc::clone(&rpc.writer),
            pending: Arc::clone(&rpc.pending),
            closed: Arc::clone(&rpc.closed),
            handler,
        };
        std::thread::spawn(move || reader.run(BufReader::new(output)));
        rpc
    }

    /// Whether the server's output has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) -> std::io::Result<()> {
        send(
            &self.writer,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        )
    }

    /// Sends a request; its reply arrives through the returned [`Pending`].
    pub(crate) fn request(&self, method: &str, params: Value) -> Result<Pending, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = mpsc::channel();
        lock(&self.pending).insert(id, tx);
        if self.is_closed() {
            lock(&self.pending).remove(&id);
            return Err(CallError::Closed);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        send(&self.writer, &message).map_err(|e| {
            lock(&self.pending).remove(&id);
            CallError::Io(e)
        })?;
        Ok(Pending(rx))
    }

    /// Sends a request and waits for its reply until `deadline`.
    pub(crate) fn call(&self, method: &str, params: Value, deadline: Instant) -> Reply {
        self.request(method, params)?.wait(deadline)
    }
}

/// The reader thread's side of the connection.
struct Reader {
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    pending: Arc<Mutex<HashMap<i64, Sender<Reply>>>>,
    closed: Arc<AtomicBool>,
    handler: Handler,
}

impl Reader {
    fn run(self, mut output: impl BufRead) {
        while let Some(frame) = read_message(&mut output) {
            match frame {
                Frame::Message(message) => self.route(message),
                // JSON-RPC answers what it cannot read with an error whose
                // id is null; the connection goes on with the next frame.
                Frame::Unreadable(code, why) => {
                    let error = json!({"jsonrpc": "2.0", "id": null, "error": {
                        "code": code,
                        "message": why,
                    }});
                    let _ = send(&self.writer, &error);
                }
            }
        }
        self.closed.store(true, Ordering::SeqCst);
        // Dropping the senders wakes every waiting caller with `Closed`.
        lock(&self.pending).clear();
    }

    fn route(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        let params = message.get("params").unwrap_or(&Value::Null);
        match (method, id) {
            (Some(method), Some(id)) => {
                let reply = match (self.handler)(Incoming::Request(method, params)) {
                    Some(Ok(result)) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Some(Err((code, message))) => json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": code,
                        "message": message,
                    }}),
                    None => json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": METHOD_NOT_FOUND,
                        "message": format!("qg does not serve `{method}`"),
                    }}),
                };
                let _ = send(&self.writer, &reply);
            }
            (Some(method), None) => {
                (self.handler)(Incoming::Notification(method, params));
            }
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { return };
                let Some(caller) = lock(&self.pending).remove(&id) else {
                    return;
                };
                let reply = match message.get("error") {
                    Some(error) => Err(CallError::Server {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    }),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = caller.send(reply);
            }
            (None, None) => {
                let error = json!({"jsonrpc": "2.0", "id": null, "error": {
                    "code": INVALID_REQUEST,
                    "message": "a message with neither a method nor an id",
                }});
                let _ = send(&self.writer, &error);
            }
        }
    }
}

/// One frame read from the peer.
enum Frame {
    /// A JSON object.
    Message(Value),
    /// A body that is no JSON object: the JSON-RPC error code and why.
    Unreadable(i64, String),
}

/// Reads one framed message; `None` at the end of the output (or on a
/// frame whose headers or length cannot be read, which ends the connection
/// too: where the next frame starts is unknown).
fn read_message(output: &mut impl BufRead) -> Option<Frame> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    loop {
        line.clear();
        if output.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
    let length = length?;
    let mut body = vec![0; length];
    output.read_exact(&mut body).ok()?;
    Some(match serde_json::from_slice::<Value>(&body) {
        Ok(message) if message.is_object() => Frame::Message(message),
        Ok(_) => Frame::Unreadable(
            INVALID_REQUEST,
            "a message that is not a JSON object".into(),
        ),
        Err(e) => Frame::Unreadable(PARSE_ERROR, format!("the message is not JSON: {e}")),
    })
}

fn send(writer: &Mutex<Box<dyn Write + Send>>, message: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    let mut writer = lock(writer);
    write!(writer, "Content-Length: {}\r\n\r\n", body.len())?;
    writer.write_all(&body)?;
    writer.flush()
}

/// A poisoned lock only means another thread panicked; the data is usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A server made of two pipes, answering from a script of its own.
    fn pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
        std::io::pipe().unwrap()
    }

    fn frame(value: Value) -> Vec<u8> {
        let body = serde_json::to_vec(&value).unwrap();
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend(body);
        out
    }

    fn next_message(written: &mut impl BufRead) -> Value {
        match read_message(written) {
            Some(Frame::Message(message)) => message,
            _ => panic!("qg wrote no message"),
        }
    }

    #[test]
    fn unreadable_frames_are_answered_with_errors_and_the_next_one_is_served() {
        let (to_peer_r, to_peer_w) = pipe();
        let (from_peer_r, mut from_peer_w) = pipe();
        let handler: Handler = Box::new(|_| Some(Ok(json!("served"))));
        let rpc = Rpc::start(Box::new(to_peer_w), Box::new(from_peer_r), handler);
        let garbage = b"{not json";
        from_peer_w
            .write_all(format!("Content-Length: {}\r\n\r\n", garbage.len()).as_bytes())
            .unwrap();
        from_peer_w.write_all(garbage).unwrap();
        from_peer_w.write_all(&frame(json!([1, 2]))).unwrap();
        from_peer_w
            .write_all(&frame(json!({"jsonrpc": "2.0"})))
            .unwrap();
        from_peer_w
            .write_all(&frame(json!({"jsonrpc": "2.0", "id": 7, "method": "a/b"})))
            .unwrap();
        let mut written = BufReader::new(to_peer_r);
        let codes: Vec<Value> = (0..3)
            .map(|_| next_message(&mut written))
            .inspect(|reply| assert_eq!(reply["id"], Value::Null))
            .map(|reply| reply["error"]["code"].clone())
            .collect();
        assert_eq!(
            codes,
            [
                json!(PARSE_ERROR),
                json!(INVALID_REQUEST),
                json!(INVALID_REQUEST)
            ]
        );
        assert_eq!(
            next_message(&mut written),
            json!({"jsonrpc": "2.0", "id": 7, "result": "served"})
        );
        drop(from_peer_w);
        drop(rpc);
    }

    #[test]
    fn replies_reach_their_callers_and_server_requests_are_answered() {
        let (to_server_r, to_server_w) = pipe();
        let (from_server_r, mut from_server_w) = pipe();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&heard);
        let handler: Handler = Box::new(move |incoming| match incoming {
            Incoming::Request("workspace/configuration", _) => Some(Ok(json!([{"a": 1}]))),
            Incoming::Request(..) => None,
            Incoming::Notification(method, _) => {
                lock(&seen).push(method.to_string());
                None
            }
        });
        let rpc = Rpc::start(Box::new(to_server_w), Box::new(from_server_r), handler);
        let pending = rpc.request("initialize", json!({})).unwrap();
        // The server: a notification, a request of its own, then the reply.
        from_server_w
            .write_all(&frame(
                json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}}),
            ))
            .unwrap();
        from_server_w
            .write_all(&frame(json!({"jsonrpc": "2.0", "id": "c1", "method": "workspace/configuration", "params": {}})))
            .unwrap();
        from_server_w
            .write_all(&frame(
                json!({"jsonrpc": "2.0", "id": "x", "method": "unknown/thing"}),
            ))
            .unwrap();
        from_server_w
            .write_all(&frame(
                json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}),
            ))
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let result = pending.wait(deadline).unwrap();
        assert_eq!(result, json!({"capabilities": {}}));
        assert_eq!(*lock(&heard), ["window/logMessage"]);
        // What qg wrote: the request, the answer, the refusal.
        let mut written = BufReader::new(to_server_r);
        let sent: Vec<Value> = (0..3).map(|_| next_message(&mut written)).collect();
        assert_eq!(sent[0]["method"], "initialize");
        assert_eq!(
            sent[1],
            json!({"jsonrpc": "2.0", "id": "c1", "result": [{"a": 1}]})
        );
        assert_eq!(sent[2]["error"]["code"], METHOD_NOT_FOUND);
        // An error reply, then the end of the output.
        let failing = rpc.request("textDocument/diagnostic", json!({})).unwrap();
        from_server_w
            .write_all(&frame(json!({"jsonrpc": "2.0", "id": 2, "error": {"code": SERVER_CANCELLED, "message": "again"}})))
            .unwrap();
        assert!(matches!(
            failing.wait(deadline),
            Err(CallError::Server {
                code: SERVER_CANCELLED,
                ..
            })
        ));
        let orphan = rpc.request("shutdown", Value::Null).unwrap();
        drop(from_server_w);
        assert!(matches!(orphan.wait(deadline), Err(CallError::Closed)));
        assert!(rpc.is_closed());
        assert!(matches!(
            rpc.request("x", Value::Null),
            Err(CallError::Closed)
        ));
    }
}
