//! `textDocument/didClose`: the document is forgotten (its findings stay).

use serde_json::Value;

use super::super::NotificationHandler;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct DidClose;

impl NotificationHandler for DidClose {
    const METHOD: &'static str = "textDocument/didClose";

    fn run(session: &Session, params: &Value) {
        if let Some((_, file)) = session.document_file(params) {
            session.state().documents.close(&file);
        }
    }
}
