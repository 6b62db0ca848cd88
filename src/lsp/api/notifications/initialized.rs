//! `initialized`: after the handshake, asks to hear about file changes,
//! starts the daemons when asked to, and checks what changed since the
//! last run.

use serde_json::{json, Value};

use super::super::NotificationHandler;
use crate::lsp::queue::Job;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct Initialized;

impl NotificationHandler for Initialized {
    const METHOD: &'static str = "initialized";

    fn run(session: &Session, _params: &Value) {
        if session.state().watches_files {
            let registration = json!({"registrations": [{
                "id": "qg-watched-files",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": [{"globPattern": "**/*"}]},
            }]});
            session.request_without_waiting("client/registerCapability", registration);
        }
        let settings = session.state().settings;
        if settings.start_daemons && !settings.no_daemon {
            session.queue.push(Job::StartDaemons);
        }
        session.queue.push(Job::Auto);
    }
}
