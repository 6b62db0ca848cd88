//! Reading a tool's own config the way the tool does: the first of its
//! config files (in the tool's order of precedence) that holds its section,
//! whatever the format — TOML (`pyproject.toml [tool.mypy]`, `ruff.toml`),
//! JSON with comments (`pyrightconfig.json`) or INI (`mypy.ini`,
//! `setup.cfg [mypy]`). The gate's YAML says where to look and which keys
//! to read; nothing here knows a tool. [`settings`] says whether a tool's
//! settings in a file changed.

pub(crate) mod settings;

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::config::ConfigSource;

/// One section of a tool's config file, whatever its format.
#[derive(Debug, Clone)]
pub(crate) enum Section {
    /// A TOML table or a JSON object (TOML is read into JSON values: the
    /// keys qg reads hold strings, lists and tables only).
    Tree(Map<String, Value>),
    /// An INI section: keys lowercased, values as written.
    Ini(HashMap<String, Option<String>>),
}

/// The section found in the first config source that holds it.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// `setup.cfg [mypy]`, `pyrightconfig.json`: for messages.
    pub(crate) label: String,
    /// The root-relative file.
    pub(crate) file: String,
    /// Its content.
    pub(crate) section: Section,
}

/// Reads the first of `sources` that exists and holds its section; `None`
/// when none does. `Err` names the file that could not be read (the tool
/// would fail on it too).
pub(crate) fn first_section(
    root: &Path,
    sources: &[ConfigSource],
) -> Result<Option<Found>, String> {
    for source in sources {
        let Ok(text) = std::fs::read_to_string(root.join(&source.file)) else {
            continue;
        };
        let section = match Section::parse(&source.file, &text, &source.section) {
            Ok(Some(section)) => section,
            Ok(None) => continue,
            Err(e) => return Err(format!("cannot read {}: {e}", source.file)),
        };
        let label = match source.section.as_str() {
            "" => source.file.clone(),
            name => format!("{} [{name}]", source.file),
        };
        return Ok(Some(Found {
            label,
            file: source.file.clone(),
            section,
        }));
    }
    Ok(None)
}

impl Section {
    /// The section `name` of `file` (`tool.mypy` in TOML, `mypy` in INI,
    /// `""` for a JSON or TOML file's root), or `None` when the file lacks it.
    pub(crate) fn parse(file: &str, text: &str, name: &str) -> Result<Option<Section>, String> {
        if file.ends_with(".toml") {
            let table: toml::Table = text
                .parse()
                .map_err(|e: toml::de::Error| e.message().to_string())?;
            let value = serde_json::to_value(table).map_err(|e| e.to_string())?;
            Ok(descend(value, name).map(Section::Tree))
        } else if file.ends_with(".json") {
            let value: Value =
                serde_json::from_str(&strip_json_comments(text)).map_err(|e| e.to_string())?;
            Ok(descend(value, name).map(Section::Tree))
        } else {
            let mut ini = configparser::ini::Ini::new();
            ini.set_multiline(true);
            // As Python's configparser: `#` or `;` start a comment only at
            // the start of a line (a regex may hold either).
            ini.set_inline_comment_symbols(Some(&[]));
            let mut map = ini.read(text.to_string())?;
            Ok(map.remove(&name.to_lowercase()).map(Section::Ini))
        }
    }

    /// The value of `key` as the strings it holds: a list's strings, or a
    /// string as written (an INI value; a TOML or JSON string).
    /// `None` when the key is absent or holds neither.
    pub(crate) fn strings(&self, key: &str) -> Option<Strings> {
        match self {
            Section::Tree(map) => Strings::of(map.get(key)?),
            Section::Ini(map) => map
                .get(&key.to_lowercase())?
                .as_deref()
                .map(|s| Strings::One(s.to_string())),
        }
    }

    /// The boolean `key` holds: a TOML or JSON boolean, or an INI value
    /// as Python's `configparser` reads one (`true`, `yes`, `on`, `1` and
    /// their opposites, in any case). `None` when absent or neither.
    pub(crate) fn flag(&self, key: &str) -> Option<bool> {
        match self {
            Section::Tree(map) => map.get(key)?.as_bool(),
            Section::Ini(map) => {
                let value = map.get(&key.to_lowercase())?.as_deref()?;
                match value.trim().to_lowercase().as_str() {
                    "1" | "yes" | "true" | "on" => Some(true),
                    "0" | "no" | "false" | "off" => Some(false),
                    _ => None,
                }
            }
        }
    }

    /// Every value at `path`, a `/`-separated walk through tables where `*`
    /// stands for each item of a list (`executionEnvironments/*/root`), as
    /// the strings it holds; empty when nothing is there. In an INI
    /// section, the path is one key.
    pub(crate) fn strings_at(&self, path: &str) -> Vec<Strings> {
        let Section::Tree(map) = self else {
            return self.strings(path).into_iter().collect();
        };
        let mut here: Vec<&Value> = Vec::new();
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let Some(first) = parts.next() else {
            return Vec::new();
        };
        here.extend(map.get(first));
        for part in parts {
            here = here
                .into_iter()
                .flat_map(|value| -> Vec<&Value> {
                    match (part, value) {
                        ("*", Value::Array(items)) => items.iter().collect(),
                        (key, Value::Object(inner)) => inner.get(key).into_iter().collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
        }
        here.into_iter().filter_map(Strings::of).collect()
    }
}

/// What a key holds, as strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Strings {
    /// One string, which the reader may split (`a, b`; `a:b`).
    One(String),
    /// A list's strings (items of other types left out).
    List(Vec<String>),
}

impl Strings {
    fn of(value: &Value) -> Option<Strings> {
        match value {
            Value::String(s) => Some(Strings::One(s.clone())),
            Value::Array(items) => Some(Strings::List(
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            )),
            _ => None,
        }
    }

    /// The entries, a single string split where `split` says.
    pub(crate) fn entries(self, split: impl Fn(&str) -> Vec<String>) -> Vec<String> {
        match self {
            Strings::One(text) => split(&text),
            Strings::List(items) => items,
        }
    }
}

/// The table at the dotted `name` inside `value` (`""`: `value` itself).
fn descend(mut value: Value, name: &str) -> Option<Map<String, Value>> {
    for part in name.split('.').filter(|p| !p.is_empty()) {
        value = match value {
            Value::Object(mut map) => map.remove(part)?,
            _ => return None,
        };
    }
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// JSON with `//` and `/* */` comments (pyrightconfig.json allows them),
/// made plain JSON; strings are left alone.
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_reaches_every_list_item_in_toml_and_json() {
        let toml = "[tool.pyright]\nextraPaths = [\"lib\"]\nexecutionEnvironments = [\n  {root = \"a/src\"},\n  {root = \"b/src\", extraPaths = [\"a/src\", 3]},\n]\n";
        let section = Section::parse("pyproject.toml", toml, "tool.pyright")
            .unwrap()
            .unwrap();
        let lists = |path: &str| -> Vec<String> {
            section
                .strings_at(path)
                .into_iter()
                .flat_map(|s| s.entries(|t| vec![t.to_string()]))
                .collect()
        };
        assert_eq!(lists("extraPaths"), ["lib"]);
        assert_eq!(lists("executionEnvironments/*/root"), ["a/src", "b/src"]);
        assert_eq!(lists("executionEnvironments/*/extraPaths"), ["a/src"]);
        assert!(lists("executionEnvironments/root").is_empty());
        assert!(lists("missing/*/x").is_empty());
        let json = "{\n  // comment\n  \"executionEnvironments\": [{\"root\": \"x\"}] /* c */\n}";
        let section = Section::parse("pyrightconfig.json", json, "")
            .unwrap()
            .unwrap();
        assert_eq!(
            section.strings_at("executionEnvironments/*/root"),
            [Strings::One("x".into())]
        );
    }

    #[test]
    fn a_flag_reads_toml_booleans_and_ini_words() {
        let toml = Section::parse(
            "pyproject.toml",
            "[tool.mypy]\nexplicit_package_bases = true\n",
            "tool.mypy",
        );
        assert_eq!(
            toml.unwrap().unwrap().flag("explicit_package_bases"),
            Some(true)
        );
        for (written, read) in [
            ("True", Some(true)),
            ("off", Some(false)),
            ("1", Some(true)),
            ("maybe", None),
        ] {
            let text = format!("[mypy]\nexplicit_package_bases = {written}\n");
            let ini = Section::parse("mypy.ini", &text, "mypy").unwrap().unwrap();
            assert_eq!(ini.flag("Explicit_Package_Bases"), read, "{written}");
        }
    }

    #[test]
    fn an_ini_value_is_one_string_and_a_missing_section_is_none() {
        let ini = "[metadata]\nname = x\n[mypy]\nmypy_path = a:b, c\n";
        let section = Section::parse("setup.cfg", ini, "mypy").unwrap().unwrap();
        assert_eq!(
            section.strings_at("mypy_path"),
            [Strings::One("a:b, c".into())]
        );
        assert!(Section::parse("setup.cfg", ini, "tool").unwrap().is_none());
        assert!(Section::parse("pyproject.toml", "[tool.x]\n", "tool.ruff")
            .unwrap()
            .is_none());
    }

    #[test]
    fn the_first_source_holding_the_section_wins_and_a_broken_one_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let source = |file: &str, section: &str| ConfigSource {
            file: file.into(),
            section: section.into(),
        };
        let sources = [
            source("ruff.toml", ""),
            source("pyproject.toml", "tool.ruff"),
        ];
        std::fs::write(
            tmp.path().join("pyproject.toml"),
            "[tool.ruff]\nsrc = [\"x\"]\n",
        )
        .unwrap();
        let found = first_section(tmp.path(), &sources).unwrap().unwrap();
        assert_eq!(found.label, "pyproject.toml [tool.ruff]");
        std::fs::write(tmp.path().join("ruff.toml"), "src = [").unwrap();
        let why = first_section(tmp.path(), &sources).unwrap_err();
        assert!(why.starts_with("cannot read ruff.toml:"), "{why}");
    }
}
