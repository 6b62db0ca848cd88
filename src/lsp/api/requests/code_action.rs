//! `textDocument/codeAction`: "Fix <rule> (gate)" and "Fix all <gate>
//! findings in this file" for each fixable diagnostic, and
//! `source.fixAll.qg` (fix-on-save) when the client asks for it.

use serde_json::{json, Value};

use super::super::RequestHandler;
use crate::config::Config;
use crate::lsp::documents;
use crate::lsp::fixes::{self, action, Fix, FIX_ALL_KIND};
use crate::lsp::session::Session;

/// The handler.
pub(crate) struct CodeAction;

impl RequestHandler for CodeAction {
    const METHOD: &'static str = "textDocument/codeAction";

    fn run(session: &Session, params: &Value) -> Result<Value, String> {
        Ok(code_actions(session, params))
    }
}

/// The actions for the request's document and diagnostics; resolved at
/// once for a client that does not resolve them later.
fn code_actions(session: &Session, params: &Value) -> Value {
    let uri = params["textDocument"]["uri"].as_str().unwrap_or("");
    let (config, root, resolve_later) = {
        let state = session.state();
        (
            state.config.clone(),
            state.root.clone(),
            state.resolve_edits,
        )
    };
    let (Some(config), Some(root)) = (config, root) else {
        return json!([]);
    };
    let Some(file) = documents::relative(&root, uri) else {
        return json!([]);
    };
    let mut actions = Vec::new();
    let only: Vec<&str> = params["context"]["only"]
        .as_array()
        .map(|kinds| kinds.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let wants = |kind: &str| only.is_empty() || only.iter().any(|o| kind.starts_with(o));
    if wants("quickfix") {
        actions.extend(quick_fixes(&config, params, uri));
    }
    if wants(FIX_ALL_KIND) && !only.is_empty() {
        let gates = fixing_gates(&config, &file);
        if !gates.is_empty() {
            actions.push(action(
                "Fix all qg findings in this file",
                FIX_ALL_KIND,
                uri,
                Fix { gates, rule: None },
                Vec::new(),
            ));
        }
    }
    if !resolve_later {
        for action in &mut actions {
            if let Ok(resolved) = fixes::resolve(session, action) {
                *action = resolved;
            }
        }
    }
    Value::Array(actions)
}

/// One "Fix <rule>" and one "Fix all <gate> findings" per fixable
/// diagnostic of a gate with a fixer.
fn quick_fixes(config: &Config, params: &Value, uri: &str) -> Vec<Value> {
    let mut actions = Vec::new();
    let mut whole_file_offered = std::collections::BTreeSet::new();
    let diagnostics = params["context"]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for diagnostic in diagnostics {
        let data = &diagnostic["data"];
        let Some(gate) = data["gate"].as_str().and_then(|g| config.gates.get(g)) else {
            continue;
        };
        let Some(fix) = &gate.fix else { continue };
        if data["fixable"] != json!(true) {
            continue;
        }
        let code = diagnostic["code"].as_str().map(str::to_string);
        let quick_fix = |title: String, rule: Option<String>| {
            let fix = Fix {
                gates: vec![gate.id.clone()],
                rule,
            };
            action(&title, "quickfix", uri, fix, vec![diagnostic.clone()])
        };
        if let (Some(code), false) = (&code, fix.rule_args.is_empty()) {
            actions.push(quick_fix(
                format!("Fix {code} ({})", gate.id),
                Some(code.clone()),
            ));
        }
        if whole_file_offered.insert(gate.id.clone()) {
            actions.push(quick_fix(
                format!("Fix all {} findings in this file", gate.id),
                None,
            ));
        }
    }
    actions
}

/// The active gates with a fixer for files like `file`. Not only those
/// that found something: fix-on-save asks about the editor's unsaved
/// text, which no run has seen.
fn fixing_gates(config: &Config, file: &str) -> Vec<String> {
    config
        .active_gates
        .iter()
        .filter(|id| {
            let gate = &config.gates[*id];
            gate.fix.is_some() && gate.handles_file_type(file)
        })
        .cloned()
        .collect()
}
