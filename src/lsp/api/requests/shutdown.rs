//! `shutdown`: the run under way is cancelled; `exit` follows.

use serde_json::Value;

use super::super::RequestHandler;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct Shutdown;

impl RequestHandler for Shutdown {
    const METHOD: &'static str = "shutdown";

    fn run(session: &Session, _params: &Value) -> Result<Value, String> {
        session.state().shut_down = true;
        session.queue.cancel_current();
        Ok(Value::Null)
    }
}
