//! Fix actions, whichever request offers or resolves them: what one
//! carries (the gates whose fixers run, and maybe one rule) and the edit it
//! makes — what the gates' fixers make of the editor's text, unsaved
//! changes included, in a temporary copy of the file with the fixers'
//! config files beside it as in the project. The editor applies the edit,
//! so undo works.

use std::path::Path;

use serde_json::{json, Value};

use super::documents;
use super::session::Session;
use crate::config::{Config, Gate};
use crate::exec::ExecContext;
use crate::process::Cancel;

/// The code action kind of qg's fix-on-save.
pub(crate) const FIX_ALL_KIND: &str = "source.fixAll.qg";

/// What one action fixes.
pub(crate) struct Fix {
    /// The gates whose fixers run, in config order.
    pub(crate) gates: Vec<String>,
    /// One rule only (`rule_args`), or all the gates' fixes.
    pub(crate) rule: Option<String>,
}

/// A code action that fixes `uri` as `fix` says, its edit made when it is
/// resolved.
pub(crate) fn action(
    title: &str,
    kind: &str,
    uri: &str,
    fix: Fix,
    diagnostics: Vec<Value>,
) -> Value {
    json!({
        "title": title,
        "kind": kind,
        "diagnostics": diagnostics,
        "data": {"uri": uri, "gates": fix.gates, "rule": fix.rule},
    })
}

/// The action with its edit.
pub(crate) fn resolve(session: &Session, action: &Value) -> Result<Value, String> {
    if let Some(why) = super::trust::refusal(session) {
        return Err(format!("no fixer runs here: {why}"));
    }
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
