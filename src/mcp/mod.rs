//! `qg mcp`: qg as a Model Context Protocol server over stdio, so coding
//! agents call it as a tool with typed arguments and typed answers instead
//! of scraping a terminal. The tools ([`tools`]) answer with the documents
//! the CLI prints with `--format json`, whose schemas (`schemas/*.json`)
//! are their output schemas; run reports are shortened to fit a context
//! window, never silently ([`shorten`]).

mod schemas;
mod server;
mod shorten;
mod tools;

use rmcp::ServiceExt;

use crate::error::QgError;
pub use tools::Project;

/// Serves `project` on stdin/stdout until the client closes the
/// connection. Logs go to stderr only: stdout is the protocol's.
pub fn serve(project: Project) -> Result<(), QgError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| QgError::io("cannot start the MCP server's runtime", e))?;
    let served = runtime.block_on(async {
        let transport = rmcp::transport::io::stdio_pipes();
        let service = server::QgServer::new(project)
            .serve(transport)
            .await
            .map_err(|e| format!("the MCP connection could not start: {e}"))?;
        service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP connection ended abnormally: {e}"))
    });
    // A client that hung up mid-call has had its calls cancelled, so their
    // tools are being killed; what still runs gets a moment to finish.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    served.map_err(QgError::Usage)
}
