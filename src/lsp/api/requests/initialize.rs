//! `initialize`: takes the client's root and abilities, opens the project,
//! and says what qg serves.

use std::path::PathBuf;

use lsp_types::MessageType;
use serde_json::{json, Value};

use super::super::RequestHandler;
use super::execute_command::{BASELINE_WRITE, RUN_PROJECT};
use crate::config::PositionEncoding;
use crate::lsp::documents;
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct Initialize;

impl RequestHandler for Initialize {
    const METHOD: &'static str = "initialize";

    fn run(session: &Session, params: &Value) -> Result<Value, String> {
        let folder = params["workspaceFolders"][0]["uri"]
            .as_str()
            .or(params["rootUri"].as_str())
            .and_then(documents::uri_path)
            .or_else(|| params["rootPath"].as_str().map(PathBuf::from))
            .unwrap_or_else(|| session.options.cwd.clone());
        let capabilities = &params["capabilities"];
        let encoding = encoding(capabilities);
        let resolves_edits = capabilities["textDocument"]["codeAction"]["resolveSupport"]
            ["properties"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p == "edit"));
        let (settings, errors) = session
            .state()
            .settings
            .with_client_options(&params["initializationOptions"]);
        for error in errors {
            session.show(MessageType::ERROR, &format!("qg: {error}"));
        }
        {
            let mut state = session.state();
            state.settings = settings;
            state.encoding = encoding;
            state.progress = capabilities["window"]["workDoneProgress"] == json!(true);
            state.resolve_edits = resolves_edits;
            state.watches_files = capabilities["workspace"]["didChangeWatchedFiles"]
                ["dynamicRegistration"]
                == json!(true);
        }
        session.open_project(&folder);
        Ok(json!({
            "capabilities": {
                "positionEncoding": match encoding {
                    PositionEncoding::Utf32 => "utf-32",
                    _ => "utf-16",
                },
                "textDocumentSync": {
                    "openClose": true,
                    "change": 1,
                    "save": {"includeText": false},
                },
                "codeActionProvider": {
                    "codeActionKinds": ["quickfix", "source.fixAll.qg"],
                    "resolveProvider": true,
                },
                "executeCommandProvider": {"commands": [RUN_PROJECT, BASELINE_WRITE]},
            },
            "serverInfo": {"name": "qg", "version": env!("CARGO_PKG_VERSION")},
        }))
    }
}

/// Characters when the client counts them too (no recounting), else
/// UTF-16, the protocol's default.
fn encoding(capabilities: &Value) -> PositionEncoding {
    let offered = capabilities["general"]["positionEncodings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match offered.iter().any(|e| e == "utf-32") {
        true => PositionEncoding::Utf32,
        false => PositionEncoding::Utf16,
    }
}
