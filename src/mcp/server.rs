//! The MCP server: rmcp speaks the protocol over stdio; each `tools/call`
//! runs on a blocking thread of its own, so calls run side by side, a
//! cancelled call's tools are killed, and a call that panics is an error
//! answer — never the end of the server.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::tools::{self, Answer, Call, Failure, Project, TOOLS};
use crate::config::Gate;
use crate::exec::Observer;
use crate::outcome::{GateResult, GateStatus};
use crate::process::Cancel;

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "qg runs this project's quality gates (formatter, linter, type \
checkers, as its qg config names them) on the files that need checking. Call run_gates after \
each change: scope `auto` checks what changed since the last green run, and `overall_pass` says \
whether you may move on. Call fix to let the tools fix what they can, explain_gate to see what a \
gate runs, list_scope to see which files a run would check, history to see whether the runs are \
converging.";

/// The server: one project, any number of concurrent calls.
#[derive(Debug, Clone)]
pub(super) struct QgServer {
    project: Arc<Project>,
}

impl QgServer {
    /// A server for `project`.
    pub(super) fn new(project: Project) -> QgServer {
        QgServer {
            project: Arc::new(project),
        }
    }
}

impl ServerHandler for QgServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("qg", env!("CARGO_PKG_VERSION")).with_title("qg quality gates"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = TOOLS.iter().map(tools::Definition::tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(definition) = tools::find(&request.name) else {
            let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{}`; qg's tools are {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let cancel = Cancel::default();
        let on_cancel = {
            let (cancel, requested) = (cancel.clone(), context.ct.clone());
            tokio::spawn(async move {
                requested.cancelled().await;
                cancel.cancel();
            })
        };
        let (progress, forwarding) = match definition.runs_tools {
            true => forward_progress(&context),
            false => (None, None),
        };
        let project = self.project.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let observer = ProgressObserver { progress };
            let call = Call {
                project: &project,
                cancel,
                observer: &observer,
            };
            definition.call(&call, arguments)
        })
        .await;
        on_cancel.abort();
        // Every progress notification goes out before the answer.
        if let Some(forwarding) = forwarding {
            let _ = forwarding.await;
        }
        Ok(answer(outcome).into())
    }
}

/// The call's answer: its document as structured content (and, as the
/// protocol asks, as JSON text), or an error the client shows.
fn answer(outcome: Result<Result<Answer, Failure>, tokio::task::JoinError>) -> CallToolResult {
    let error = |text: String| CallToolResult::error(vec![ContentBlock::text(text)]);
    match outcome {
        Ok(Ok(answer)) => {
            let mut result = CallToolResult::structured(answer.value);
            result.content = vec![ContentBlock::text(answer.text)];
            result
        }
        Ok(Err(Failure::Arguments(why))) => error(format!("invalid arguments: {why}")),
        Ok(Err(Failure::Qg(e))) => error(e.to_string()),
        Err(join) => {
            let what = match join.try_into_panic() {
                Ok(payload) => panic_text(payload.as_ref()),
                Err(_) => "it was aborted".to_string(),
            };
            error(format!(
                "qg hit a bug in this call and stopped it ({what}); the server goes on. Please report it."
            ))
        }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// When the client asked for progress, a sender whose messages become
/// `notifications/progress`, and the task sending them (it ends when the
/// sender is dropped).
fn forward_progress(
    context: &RequestContext<RoleServer>,
) -> (
    Option<UnboundedSender<String>>,
    Option<tokio::task::JoinHandle<()>>,
) {
    let Some(token) = context.meta.get_progress_token() else {
        return (None, None);
    };
    let (sender, mut messages) = unbounded_channel::<String>();
    let peer = context.peer.clone();
    let task = tokio::spawn(async move {
        let mut step = 0.0;
        while let Some(message) = messages.recv().await {
            step += 1.0;
            let note = ProgressNotificationParam::new(token.clone(), step).with_message(message);
            // A client that went away stops hearing; the call goes on.
            let _ = peer.notify_progress(note).await;
        }
    });
    (Some(sender), Some(task))
}

/// Turns gates starting and finishing into progress messages.
struct ProgressObserver {
    progress: Option<UnboundedSender<String>>,
}

impl ProgressObserver {
    fn say(&self, message: String) {
        if let Some(progress) = &self.progress {
            let _ = progress.send(message);
        }
    }
}

impl Observer<GateResult> for ProgressObserver {
    fn gate_started(&self, gate: &Gate, files: usize, _argv: &[String]) {
        self.say(format!("{}: running on {files} files", gate.name));
    }

    fn gate_finished(&self, result: &GateResult) {
        let outcome = match result.status {
            GateStatus::Failed => format!("failed ({} violations)", result.violation_count()),
            status => status.as_str().to_string(),
        };
        let cached = match result.cache.as_ref().filter(|c| c.hits > 0) {
            Some(cache) => format!(", {} files from the cache", cache.hits),
            None => String::new(),
        };
        self.say(format!("{}: {outcome}{cached}", result.name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call that panics (a bug in qg) answers with an error; the server,
    /// which awaited it on another thread, goes on.
    #[test]
    fn a_call_that_panics_is_an_error_answer() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let outcome = runtime.block_on(async {
            tokio::task::spawn_blocking(|| -> Result<Answer, Failure> {
                panic!("an index out of bounds")
            })
            .await
        });
        let answer = answer(outcome);
        assert_eq!(answer.is_error, Some(true));
        let text = serde_json::to_string(&answer.content).unwrap();
        assert!(text.contains("an index out of bounds"), "{text}");
        assert!(text.contains("the server goes on"), "{text}");
    }

    #[test]
    fn failures_are_error_answers_with_their_message() {
        let answer = answer(Ok(Err(Failure::Qg(crate::error::QgError::Cancelled))));
        assert_eq!(answer.is_error, Some(true));
        let text = serde_json::to_string(&answer.content).unwrap();
        assert!(text.contains("cancelled"), "{text}");
    }
}
