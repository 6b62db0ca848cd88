//! Code actions: "Fix <rule> (gate)", "Fix all <gate> findings in this
//! file", and `source.fixAll.qg` for fix-on-save. Each edit is what the
//! gate's fixer makes of the editor's text — unsaved changes included — in
//! a temporary copy of the file with the fixer's config files beside it
//! as in the project; the editor applies it, so undo works.

use std::path::Path;

use serde_json::{json, Value};

use super::documents;
use super::session::Session;
use crate::config::{Config, Gate};
use crate::exec::ExecContext;
use crate::process::Cancel;

/// The code action kind of qg's fix-on-save.
const FIX_ALL_KIND: &str = "source.fixAll.qg";

/// What one action fixes.
struct Fix {
    /// The gates whose fixers run, in config order.
    gates: Vec<String>,
    /// One rule only (`rule_args`), or all the gates' fixes.
    rule: Option<String>,
}

/// Answers `textDocument/codeAction`.
pub(crate) fn code_actions(session: &Session, params: &Value) -> Value {
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
            if let Ok(resolved) = resolve(session, action) {
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

fn action(title: &str, kind: &str, uri: &str, fix: Fix, diagnostics: Vec<Value>) -> Value {
    json!({
        "title": title,
        "kind": kind,
        "diagnostics": diagnostics,
        "data": {"uri": uri, "gates": fix.gates, "rule": fix.rule},
    })
}

/// Answers `codeAction/resolve`: the action with its edit.
pub(crate) fn resolve(session: &Session, action: &Value) -> Result<Value, String> {
    let data = &action["data"];
    let uri = data["uri"].as_str().ok_or("the action has no document")?;
    let gates: Vec<String> = data["gates"]
        .as_array()
        .map(|g| {
            g.iter()
                .filter_map(|g| g.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let rule = data["rule"].as_str();
    let (config, root) = {
        let state = session.state();
        (state.config.clone(), state.root.clone())
    };
    let (Some(config), Some(root)) = (config, root) else {
        return Err("qg has no project config loaded".to_string());
    };
    let file = documents::relative(&root, uri)
        .ok_or_else(|| format!("{uri} is not a file of the project at {}", root.display()))?;
    let text = match session.state().documents.get(&file) {
        Some(document) => document.text.clone(),
        None => std::fs::read_to_string(root.join(&file)).map_err(|e| format!("{file}: {e}"))?,
    };
    let gates: Vec<&Gate> = gates
        .iter()
        .filter_map(|id| config.gates.get(id))
        .filter(|g| g.fix.is_some())
        .collect();
    let fixed = fixed_text(&root, &config, &file, &text, &gates, rule)?;
    let mut resolved = action.clone();
    resolved["edit"] = json!({"changes": {uri: edits(&text, &fixed, session.state().encoding)}});
    Ok(resolved)
}

/// What the gates' fixers make of `text` as `file`'s content.
fn fixed_text(
    root: &Path,
    config: &Config,
    file: &str,
    text: &str,
    gates: &[&Gate],
    rule: Option<&str>,
) -> Result<String, String> {
    let tree = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let copy = crate::file_name::join(tree.path(), file);
    let io = |e: std::io::Error| format!("cannot copy {file}: {e}");
    if let Some(dir) = copy.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(&copy, text).map_err(io)?;
    let cancel = Cancel::default();
    let ctx = ExecContext::from_env(root, &config.artifact_logging, &cancel);
    for gate in gates {
        let fix = gate.fix.as_ref().expect("only gates with a fixer");
        copy_config_files(root, tree.path(), file, &fix.config_files).map_err(io)?;
        let mut argv = fix.command.clone();
        if let Some(rule) = rule {
            argv.extend(fix.rule_args.iter().map(|a| a.replace("{code}", rule)));
        }
        let runs = crate::exec::run_on_copies(&ctx, gate, &argv, &[file.to_string()], tree.path())?;
        crate::fix::fixer_succeeded(gate, &argv, &runs, false)?;
    }
    std::fs::read_to_string(&copy).map_err(io)
}

/// Copies each of `names` found in `file`'s directory or one above it (up
/// to the root) to the same place in `tree`.
fn copy_config_files(
    root: &Path,
    tree: &Path,
    file: &str,
    names: &[String],
) -> std::io::Result<()> {
    let mut dir = Path::new(file).parent();
    while let Some(relative) = dir {
        for name in names {
            let source = root.join(relative).join(name);
            if source.is_file() {
                let target = tree.join(relative).join(name);
                std::fs::create_dir_all(tree.join(relative))?;
                std::fs::copy(&source, &target)?;
            }
        }
        dir = relative.parent();
    }
    Ok(())
}

/// The edit from `before` to `after`: the changed lines between the
/// common first and last ones, as one replacement (the cursor and marks
/// elsewhere stay put).
fn edits(before: &str, after: &str, encoding: crate::config::PositionEncoding) -> Value {
    if before == after {
        return json!([]);
    }
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let replaced_end = old.len() - tail;
    let end = match replaced_end {
        // The replaced lines run to the end of a text without a final newline.
        n if n > 0 && n == old.len() && !old[n - 1].ends_with('\n') => {
            let units = crate::warm::lsp::diagnostics::units(old[n - 1], encoding);
            json!({"line": n - 1, "character": units})
        }
        n => json!({"line": n, "character": 0}),
    };
    let text: String = new[head..new.len() - tail].concat();
    json!([{
        "range": {"start": {"line": head, "character": 0}, "end": end},
        "newText": text,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PositionEncoding;

    fn apply(before: &str, edits: &Value) -> String {
        let edit = &edits[0];
        let lines: Vec<&str> = before.split_inclusive('\n').collect();
        let offset = |p: &Value| -> usize {
            let line = p["line"].as_u64().unwrap() as usize;
            let character = p["character"].as_u64().unwrap() as usize;
            lines[..line.min(lines.len())]
                .iter()
                .map(|l| l.len())
                .sum::<usize>()
                + character
        };
        let (start, end) = (
            offset(&edit["range"]["start"]),
            offset(&edit["range"]["end"]),
        );
        format!(
            "{}{}{}",
            &before[..start],
            edit["newText"].as_str().unwrap(),
            &before[end..]
        )
    }

    #[test]
    fn one_edit_covers_the_changed_lines_only() {
        let before = "import os\nimport sys\n\nprint(sys)\n";
        let after = "import sys\n\nprint(sys)\n";
        let edits = edits(before, after, PositionEncoding::Utf16);
        assert_eq!(edits[0]["range"]["start"]["line"], 0);
        assert_eq!(edits[0]["range"]["end"]["line"], 1);
        assert_eq!(apply(before, &edits), after);
        // At the end of a text without a final newline.
        let (before, after) = ("x = 1\ny=2", "x = 1\ny = 2\n");
        assert_eq!(apply(before, &edits_of(before, after)), after);
        assert_eq!(edits_of("same\n", "same\n"), json!([]));
    }

    fn edits_of(before: &str, after: &str) -> Value {
        edits(before, after, PositionEncoding::Utf16)
    }
}
