//! `textDocument/didOpen`: the document is kept; its findings are shown,
//! or checked first when no run has seen it. In a repository not trusted
//! now, what an earlier session found is not shown either (it may come
//! from commands that changed since): the worker asks the user first.

use serde_json::Value;

use super::super::NotificationHandler;
use crate::lsp::documents::Document;
use crate::lsp::queue::Job;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct DidOpen;

impl NotificationHandler for DidOpen {
    const METHOD: &'static str = "textDocument/didOpen";

    fn run(session: &Session, params: &Value) {
        let Some((uri, file)) = session.document_file(params) else {
            session.tell_outside(params["textDocument"]["uri"].as_str().unwrap_or(""));
            return;
        };
        let document = Document {
            uri,
            text: params["textDocument"]["text"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            version: params["textDocument"]["version"].as_i64().unwrap_or(0) as i32,
        };
        let mut state = session.state();
        state.documents.open(file.clone(), document);
        let root = state.root.clone().unwrap_or_default();
        let known = state.store.current(&root, &file).is_some();
        drop(state);
        match known && crate::lsp::trust::refusal(session).is_none() {
            true => session.publish(&[file]),
            false => session.queue.push(Job::Open(file)),
        }
    }
}
