//! `exit`: the server ends.

use serde_json::Value;

use super::super::NotificationHandler;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct Exit;

impl NotificationHandler for Exit {
    const METHOD: &'static str = "exit";

    fn run(session: &Session, _params: &Value) {
        session.end();
    }
}
