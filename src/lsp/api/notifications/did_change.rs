//! `textDocument/didChange`: the document's unsaved text, for fixes (full
//! sync: the last change holds the whole text).

use serde_json::Value;

use super::super::NotificationHandler;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct DidChange;

impl NotificationHandler for DidChange {
    const METHOD: &'static str = "textDocument/didChange";

    fn run(session: &Session, params: &Value) {
        let Some((_, file)) = session.document_file(params) else {
            return;
        };
        let Some(text) = params["contentChanges"]
            .as_array()
            .and_then(|c| c.last())
            .and_then(|c| c["text"].as_str())
        else {
            return;
        };
        let version = params["textDocument"]["version"].as_i64().unwrap_or(0) as i32;
        session
            .state()
            .documents
            .change(&file, text.to_string(), version);
    }
}
