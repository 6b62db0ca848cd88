//! Whether a tool's settings changed: the digest of what a config file
//! holds for the tool — its sections (`[tool.mypy]`, `[mypy-*]`, a
//! plugin's `[tool.pydantic-mypy]`), parsed, so that an edit elsewhere in
//! the file (a dependency added to `pyproject.toml`), a comment or a
//! reordering changes nothing, while any change to a value does.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::config::{Gate, ToolConfigFile};

/// The digest of the tool's settings in `file` (root-relative) whose
/// content is `bytes` (`None`: the file is absent), by the `tool_config`
/// entries that name the file. Entries without sections take the whole
/// file; a file that does not parse is taken whole too (the tool fails on
/// it, or reads it otherwise: either way its verdict may change).
pub(crate) fn digest(file: &str, bytes: Option<&[u8]>, entries: &[&ToolConfigFile]) -> String {
    let Some(bytes) = bytes else {
        return "absent".to_string();
    };
    let whole = || format!("file:{}", crate::git::hash_blob(bytes));
    if entries.iter().any(|e| e.sections.is_empty()) {
        return whole();
    }
    let patterns: Vec<&str> = entries
        .iter()
        .flat_map(|e| e.sections.iter().map(String::as_str))
        .collect();
    let Ok(text) = std::str::from_utf8(bytes) else {
        return whole();
    };
    match sections(file, text, &patterns) {
        // A file holding none of the sections the tool reads is, to the
        // tool, no file: a new `pyproject.toml` of a package's metadata
        // alone changes no tool's settings.
        Some(found) if found.is_empty() => "absent".to_string(),
        Some(found) => {
            let canonical = serde_json::to_vec(&found).unwrap_or_default();
            format!("sections:{}", crate::git::hash_blob(&canonical))
        }
        None => whole(),
    }
}

/// The digest of the tool's settings in each settings file at the root
/// (`tool_config` entries naming one file; a pattern such as ruff's
/// `**/ruff.toml` is left to the tool's own watching).
pub(crate) fn root_digests(root: &Path, gate: &Gate) -> Vec<(String, Option<String>)> {
    gate.tool_config
        .iter()
        .filter(|entry| !entry.file.contains(['*', '?', '[', '{']))
        .map(|entry| {
            let content = std::fs::read(root.join(&entry.file)).ok();
            let digest = digest(&entry.file, content.as_deref(), &[entry]);
            (entry.file.clone(), Some(digest))
        })
        .collect()
}

/// Every section of `text` whose dotted name matches one of `patterns`,
/// by name, each canonical (keys sorted at every level); `None` when the
/// file does not parse.
fn sections(file: &str, text: &str, patterns: &[&str]) -> Option<BTreeMap<String, Value>> {
    let mut found = BTreeMap::new();
    let name = file.rsplit('/').next().unwrap_or(file);
    let tree = if name.ends_with(".toml") {
        let table: toml::Table = text.parse().ok()?;
        serde_json::to_value(table).ok()?
    } else if name.ends_with(".json") {
        serde_json::from_str(&super::strip_json_comments(text)).ok()?
    } else {
        // INI: flat section names that hold dots themselves
        // (`mypy.plugins.django-stubs`, `mypy-pkg.*`), matched whole.
        for (section, keys) in ini_sections(text)? {
            if patterns.iter().any(|p| matches(p, &section)) {
                found.insert(section, serde_json::to_value(keys).ok()?);
            }
        }
        return Some(found);
    };
    for pattern in patterns {
        let parts: Vec<&str> = pattern.split('.').collect();
        collect(&tree, &parts, String::new(), &mut found);
    }
    Some(found)
}

/// An INI file's sections (names lowercased, as configparser reads them),
/// each with its keys and values in order.
fn ini_sections(text: &str) -> Option<BTreeMap<String, BTreeMap<String, Option<String>>>> {
    let mut ini = configparser::ini::Ini::new();
    ini.set_multiline(true);
    ini.set_inline_comment_symbols(Some(&[]));
    let map = ini.read(text.to_string()).ok()?;
    Some(
        map.into_iter()
            .map(|(name, keys)| (name, keys.into_iter().collect()))
            .collect(),
    )
}

/// Walks the `parts` of a dotted pattern through `value`'s tables, adding
/// each table the whole pattern reaches (canonical) under its dotted name.
fn collect(value: &Value, parts: &[&str], name: String, found: &mut BTreeMap<String, Value>) {
    let Some((first, rest)) = parts.split_first() else {
        found.insert(name, canonical(value));
        return;
    };
    let Value::Object(map) = value else {
        return;
    };
    for (key, inner) in map {
        if matches(first, key) {
            let name = match name.is_empty() {
                true => key.clone(),
                false => format!("{name}.{key}"),
            };
            collect(inner, rest, name, found);
        }
    }
}

/// A glob on a name: `*` matches any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    globset::Glob::new(pattern)
        .map(|g| g.compile_matcher().is_match(name))
        .unwrap_or(pattern == name)
}

/// `value` with every object's keys in order, whatever order the file
/// wrote them in.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            serde_json::to_value(sorted).unwrap_or_default()
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::globs::GlobFilter;

    fn entry(file: &str, sections: &[&str]) -> ToolConfigFile {
        ToolConfigFile {
            runs: false,
            file: file.into(),
            matcher: GlobFilter::new(&[file.to_string()], &[]).unwrap(),
            sections: sections.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn of(file: &str, text: &str, sections: &[&str]) -> String {
        digest(file, Some(text.as_bytes()), &[&entry(file, sections)])
    }

    #[test]
    fn only_the_tools_tables_count_in_a_shared_toml_file() {
        let mypy = ["tool.mypy", "tool.*-mypy"];
        let before = "[project]\nname = \"x\"\n[tool.mypy]\nstrict = true\n";
        let elsewhere =
            "[project]\nname = \"y\"\ndependencies = [\"a\"]\n# c\n[tool.mypy]\nstrict = true\n";
        assert_eq!(
            of("pyproject.toml", before, &mypy),
            of("pyproject.toml", elsewhere, &mypy)
        );
        let changed = "[project]\nname = \"x\"\n[tool.mypy]\nstrict = false\n";
        assert_ne!(
            of("pyproject.toml", before, &mypy),
            of("pyproject.toml", changed, &mypy)
        );
        let plugin = format!("{before}[tool.pydantic-mypy]\ninit_typed = true\n");
        assert_ne!(
            of("pyproject.toml", before, &mypy),
            of("pyproject.toml", &plugin, &mypy)
        );
        let overrides = format!("{before}[[tool.mypy.overrides]]\nmodule = \"a\"\n");
        assert_ne!(
            of("pyproject.toml", before, &mypy),
            of("pyproject.toml", &overrides, &mypy)
        );
        assert_eq!(of("pyproject.toml", "[project]\n", &mypy), "absent");
    }

    #[test]
    fn key_order_and_comments_change_nothing() {
        let a = "[tool.ruff]\nline-length = 80\nsrc = [\"a\"]\n";
        let b = "[tool.ruff]\n# why\nsrc = [\"a\"]\nline-length = 80\n";
        assert_eq!(
            of("pyproject.toml", a, &["tool.ruff"]),
            of("pyproject.toml", b, &["tool.ruff"])
        );
        let json_a = "{\"include\": [\"src\"], \"strict\": [\"a\"]}";
        let json_b = "{\n  // c\n  \"strict\": [\"a\"],\n  \"include\": [\"src\"]\n}";
        assert_eq!(
            of("pyrightconfig.json", json_a, &["*"]),
            of("pyrightconfig.json", json_b, &["*"])
        );
    }

    #[test]
    fn ini_sections_match_whole_names_with_their_dots() {
        let sections = ["mypy", "mypy-*", "mypy.plugins.*"];
        let base = "[metadata]\nname = x\n[mypy]\nstrict = True\n";
        let module = format!("{base}[mypy-pkg.sub.*]\nignore_errors = True\n");
        let plugin = format!("{base}[mypy.plugins.django-stubs]\ndjango_settings_module = s\n");
        let other = "[metadata]\nname = y\n[mypy]\nstrict = True\n";
        let d = |t: &str| of("setup.cfg", t, &sections);
        assert_eq!(d(base), d(other));
        assert_ne!(d(base), d(&module));
        assert_ne!(d(base), d(&plugin));
        assert_ne!(d(&module), d(&plugin));
    }

    #[test]
    fn a_whole_file_an_absent_one_and_a_broken_one() {
        let whole = |t: &str| of("ruff.toml", t, &[]);
        assert_ne!(whole("a = 1\n"), whole("a = 1 # c\n"));
        let e = entry("ruff.toml", &[]);
        assert_eq!(digest("ruff.toml", None, &[&e]), "absent");
        let broken = of("pyproject.toml", "[tool.mypy\n", &["tool.mypy"]);
        assert!(broken.starts_with("file:"), "{broken}");
    }
}
