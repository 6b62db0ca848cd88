//! `codeAction/resolve`: a fix action with its edit.

use serde_json::Value;

use super::super::RequestHandler;
use crate::lsp::fixes;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct CodeActionResolve;

impl RequestHandler for CodeActionResolve {
    const METHOD: &'static str = "codeAction/resolve";

    fn run(session: &Session, params: &Value) -> Result<Value, String> {
        fixes::resolve(session, params)
    }
}
