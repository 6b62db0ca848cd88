//! `workspace/didChangeWatchedFiles`: files changed outside the editor (a
//! `git checkout`, a formatter, a save in another tool). The project's own
//! files and configs count; an open document's own save arrives as
//! `didSave`.

use serde_json::{json, Value};

use super::super::NotificationHandler;
use crate::lsp::documents;
use crate::lsp::queue::Job;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct DidChangeWatchedFiles;

impl NotificationHandler for DidChangeWatchedFiles {
    const METHOD: &'static str = "workspace/didChangeWatchedFiles";

    fn run(session: &Session, params: &Value) {
        let Some(root) = session.state().root.clone() else {
            return;
        };
        let Some(changes) = params["changes"].as_array() else {
            return;
        };
        let state = session.state();
        let relevant = changes.iter().any(|change| {
            let Some(path) = change["uri"].as_str().and_then(documents::uri_path) else {
                return false;
            };
            // 1 created, 2 changed, 3 deleted.
            let moved = change["type"] != json!(2);
            let Some(file) = (match &state.filter {
                Some(filter) => filter.relevant(&root, &path, moved),
                // No config: any change may be the one that fixes it.
                None => documents::relative(&root, change["uri"].as_str().unwrap_or("")),
            }) else {
                return false;
            };
            let saved_here = !moved && state.documents.is_open(&file);
            !saved_here
        });
        drop(state);
        if relevant {
            session.queue.push(Job::Auto);
        }
    }
}
