//! `workspace/executeCommand`: qg's own commands, run on the worker.

use serde_json::Value;

use super::super::RequestHandler;
use crate::lsp::queue::Job;
use crate::lsp::session::Session;

/// Runs the project scope into the editor.
pub(crate) const RUN_PROJECT: &str = "qg.runProject";
/// Writes the baseline from the project's findings.
pub(crate) const BASELINE_WRITE: &str = "qg.baselineWrite";

/// The handler.
pub(crate) struct ExecuteCommand;

impl RequestHandler for ExecuteCommand {
    const METHOD: &'static str = "workspace/executeCommand";

    fn run(session: &Session, params: &Value) -> Result<Value, String> {
        match params["command"].as_str() {
            Some(RUN_PROJECT) => session.queue.push(Job::Project),
            Some(BASELINE_WRITE) => session.queue.push(Job::BaselineWrite),
            other => {
                return Err(format!(
                    "qg has no command {}; it has {RUN_PROJECT} and {BASELINE_WRITE}",
                    other.unwrap_or("(none)")
                ))
            }
        }
        Ok(Value::Null)
    }
}
