//! `[tool.qg]` in `pyproject.toml`: the same schema as the YAML, read with
//! the toml crate. Its errors carry byte spans, turned into line and column
//! here; any key path (`tool.qg.gates.mypy.parsing`) is located through
//! toml's spanned document, for the semantic errors found after
//! deserialization.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::yaml::{self, Position};
use crate::error::ConfigError;

/// The dotted path of qg's table: every key of a `[tool.qg]` config is
/// reported under it, as the user sees it in the file.
pub(super) const TABLE: &str = "tool.qg";

/// `pyproject.toml`'s outer tables, ignoring every other tool's.
#[derive(Deserialize)]
struct PyProject<T> {
    tool: Option<Tools<T>>,
}

#[derive(Deserialize)]
struct Tools<T> {
    qg: Option<T>,
}

/// Deserializes the `[tool.qg]` table of `text`, `None` when it has none;
/// an error names file, line, key and the fix.
pub(super) fn from_str<T: DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<Option<T>, ConfigError> {
    let document: PyProject<T> =
        toml::from_str(text).map_err(|e| located_error(&e, text, origin))?;
    Ok(document.tool.and_then(|tool| tool.qg))
}

/// The `[tool.qg]` table of `text` as a plain value, `None` when absent or
/// when the file is not TOML: the canonical form its hash is taken of, so
/// that editing another tool's table does not count as a change of qg's.
pub(super) fn table_text(text: &str) -> Option<String> {
    let document: toml::Table = toml::from_str(text).ok()?;
    let table = document.get("tool")?.get("qg")?.as_table()?;
    toml::to_string(table).ok()
}

/// Where the key `path` (`tool.qg.gates.mypy.parsing.pattern`,
/// `tool.qg.active_gates[2]`) sits, or its nearest ancestor that does.
pub(super) fn locate(text: &str, path: &str) -> Option<Position> {
    let keys = keys_of(text)?;
    let mut probe = path.to_string();
    loop {
        if let Some((_, position)) = keys.iter().find(|(p, _)| *p == probe) {
            return Some(*position);
        }
        let cut = probe.rfind(['.', '['])?;
        probe.truncate(cut);
    }
}

/// One located line from toml's error, with the key it concerns and "did
/// you mean" for an unknown key or value.
fn located_error(err: &toml::de::Error, text: &str, origin: &str) -> ConfigError {
    let position = err.span().map(|span| position_of(text, span.start));
    let message = err.message().trim();
    let at = position.and_then(|p| header_at(text, p).or_else(|| key_at(text, p)));
    let (key, message) = match message {
        "duplicate key" => (
            at.clone(),
            "is defined twice; keep one (TOML does not allow a key twice)".to_string(),
        ),
        // toml points at the table that lacks the key.
        _ if message.starts_with("missing field") => (at.clone(), message.to_string()),
        _ => yaml::explain(at, message),
    };
    // A missing key belongs to the table that lacks it: point there.
    let position = match message.starts_with("missing field") {
        true => key
            .as_deref()
            .and_then(|parent| locate(text, parent))
            .or(position),
        false => position,
    };
    ConfigError {
        file: origin.to_string(),
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
        key,
        message: message.replace('\n', " "),
    }
}

/// The table whose `[header]` starts at `position`: where toml points at
/// a table that lacks a key.
fn header_at(text: &str, position: Position) -> Option<String> {
    let line = text.lines().nth(position.0 - 1)?.trim();
    let name = line.strip_prefix('[')?.split(']').next()?;
    (position.1 == 1).then(|| name.trim_matches(['[', ' ']).replace(['"', '\'', ' '], ""))
}

/// The path of the last key at or before `position`, inside `[tool.qg]`.
fn key_at(text: &str, position: Position) -> Option<String> {
    keys_of(text)?
        .into_iter()
        .filter(|(path, p)| *p <= position && path.starts_with(TABLE))
        .max_by_key(|(_, p)| *p)
        .map(|(path, _)| path)
}

/// Every key (and array item) of a document with its dotted path and
/// position; `None` when the text is not TOML.
fn keys_of(text: &str) -> Option<Vec<(String, Position)>> {
    let root = DeTable::parse(text).ok()?;
    let mut keys = Vec::new();
    walk_table(text, root.get_ref(), "", &mut keys);
    Some(keys)
}

fn walk_table(text: &str, table: &DeTable<'_>, path: &str, out: &mut Vec<(String, Position)>) {
    for (key, value) in table {
        let child = match path {
            "" => key.get_ref().to_string(),
            _ => format!("{path}.{}", key.get_ref()),
        };
        out.push((child.clone(), position_of(text, key.span().start)));
        walk_value(text, value, &child, out);
    }
}

fn walk_value(
    text: &str,
    value: &Spanned<DeValue<'_>>,
    path: &str,
    out: &mut Vec<(String, Position)>,
) {
    match value.get_ref() {
        DeValue::Table(table) => walk_table(text, table, path, out),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let child = format!("{path}[{index}]");
                out.push((child.clone(), position_of(text, item.span().start)));
                walk_value(text, item, &child, out);
            }
        }
        _ => {}
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn position_of(text: &str, offset: usize) -> Position {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = "[project]\nname = \"x\"\n\n[tool.qg]\nversion = \"1\"\nactive_gates = [\"a\", \"b\"]\n\n[tool.qg.gates.a]\nexecution = {command = [\"x\"]}\n\n[tool.qg.gates.a.parsing]\npattern = \"x\"\n";

    #[test]
    fn finds_table_inline_and_array_keys_and_falls_back_to_ancestors() {
        assert_eq!(locate(TOML, "tool.qg.active_gates[1]"), Some((6, 22)));
        assert_eq!(
            locate(TOML, "tool.qg.gates.a.execution.command"),
            Some((9, 14))
        );
        assert_eq!(
            locate(TOML, "tool.qg.gates.a.parsing.pattern"),
            Some((12, 1))
        );
        assert_eq!(
            locate(TOML, "tool.qg.gates.a.parsing.nothing"),
            Some((11, 18))
        );
        assert_eq!(locate(TOML, "nothing"), None);
    }

    #[test]
    fn another_tools_table_is_not_qgs() {
        let text = "[tool.ruff]\nline-length = 100\n";
        let found: Option<toml::Table> = from_str(text, "pyproject.toml").unwrap();
        assert!(found.is_none());
        assert_eq!(table_text(text), None);
        let a = table_text("[tool.qg]\nversion = \"1\"\n[tool.ruff]\nx = 1\n");
        let b = table_text("[tool.ruff]\nx = 2\n\n[tool.qg]\nversion = '1'\n");
        assert!(a.is_some());
        assert_eq!(a, b, "only [tool.qg] counts, not its spelling");
    }

    #[test]
    fn duplicate_and_unknown_keys_are_located_errors() {
        let dup = "[tool.qg]\nversion = \"1\"\nversion = \"1\"\n";
        let err = from_str::<toml::Table>(dup, "pyproject.toml").unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
        assert!(err.message.contains("defined twice"), "{err}");
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Gate {
            fail_on: Option<String>,
        }
        let text = "[tool.qg.g]\nfial_on = \"x\"\n";
        let err = from_str::<std::collections::BTreeMap<String, Gate>>(text, "pyproject.toml")
            .unwrap_err();
        assert_eq!(err.line, Some(2), "{err}");
        assert_eq!(err.key.as_deref(), Some("tool.qg.g.fial_on"));
        assert_eq!(
            err.message,
            "unknown key `fial_on`; did you mean `fail_on`?"
        );
    }
}
