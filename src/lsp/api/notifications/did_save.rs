//! `textDocument/didSave`: what changed is checked.

use serde_json::Value;

use super::super::NotificationHandler;
use crate::lsp::queue::Job;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct DidSave;

impl NotificationHandler for DidSave {
    const METHOD: &'static str = "textDocument/didSave";

    fn run(session: &Session, params: &Value) {
        if session.document_file(params).is_some() {
            session.queue.push(Job::Auto);
        }
    }
}
