//! The dispatcher: the one place that knows every method qg answers. Each
//! request and notification has a handler of its own (`api/requests/`,
//! `api/notifications/`) behind [`RequestHandler`] or
//! [`NotificationHandler`]; the handlers read and change the plain
//! [session](super::session) below them, and nothing below knows them.

mod notifications;
mod requests;

use serde_json::Value;

use super::session::Session;
use crate::warm::lsp::rpc::{Answer, Incoming};

/// `InvalidParams`: a request qg understood but cannot serve as asked.
const INVALID_PARAMS: i64 = -32602;

/// A request qg answers.
pub(crate) trait RequestHandler {
    /// Its LSP method.
    const METHOD: &'static str;
    /// The answer to `params`, or why the request cannot be served as asked.
    fn run(session: &Session, params: &Value) -> Result<Value, String>;
}

/// A notification qg handles.
pub(crate) trait NotificationHandler {
    /// Its LSP method.
    const METHOD: &'static str;
    /// Handles `params`.
    fn run(session: &Session, params: &Value);
}

/// A handler's entry point, looked up by method.
type Request = fn(&Session, &Value) -> Result<Value, String>;
type Notification = fn(&Session, &Value);

/// Answers a request or handles a notification (on the reader thread).
pub(crate) fn handle(session: &Session, incoming: Incoming<'_>) -> Option<Answer> {
    match incoming {
        Incoming::Request(method, params) => {
            let run = request(method)?;
            Some(run(session, params).map_err(|message| (INVALID_PARAMS, message)))
        }
        Incoming::Notification(method, params) => {
            // `$/cancelRequest` among the unknown ones: a request is answered
            // as soon as it is read, before any cancellation of it can be.
            if let Some(run) = notification(method) {
                run(session, params);
            }
            None
        }
    }
}

fn request(method: &str) -> Option<Request> {
    use requests::*;
    let handlers: [(&str, Request); 5] = [
        (Initialize::METHOD, Initialize::run),
        (Shutdown::METHOD, Shutdown::run),
        (CodeAction::METHOD, CodeAction::run),
        (CodeActionResolve::METHOD, CodeActionResolve::run),
        (ExecuteCommand::METHOD, ExecuteCommand::run),
    ];
    handlers
        .into_iter()
        .find_map(|(name, run)| (name == method).then_some(run))
}

fn notification(method: &str) -> Option<Notification> {
    use notifications::*;
    let handlers: [(&str, Notification); 7] = [
        (Initialized::METHOD, Initialized::run),
        (Exit::METHOD, Exit::run),
        (DidOpen::METHOD, DidOpen::run),
        (DidChange::METHOD, DidChange::run),
        (DidClose::METHOD, DidClose::run),
        (DidSave::METHOD, DidSave::run),
        (DidChangeWatchedFiles::METHOD, DidChangeWatchedFiles::run),
    ];
    handlers
        .into_iter()
        .find_map(|(name, run)| (name == method).then_some(run))
}
