//! The book's generated reference pages and the published config schema,
//! checked against what the code defines: a flag, key or default that
//! changes without its page changing fails this test. `QG_BLESS=1 cargo
//! test --lib reference` rewrites them.

use std::path::Path;

/// Compares `generated` with the file at `relative`, or rewrites it under
/// `QG_BLESS=1`.
fn check(relative: &str, generated: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var_os("QG_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{relative} is not what the code generates; run `QG_BLESS=1 cargo test --lib reference` and commit it"
    );
}

#[test]
fn the_config_schema_is_published() {
    check("schemas/config.json", &config_schema::json());
}

#[test]
fn the_configuration_reference_is_generated() {
    let schema: serde_json::Value = serde_json::from_str(&config_schema::json()).unwrap();
    check(
        "docs/src/reference/configuration.md",
        &config_page::render(&schema),
    );
}

#[test]
fn the_command_line_reference_is_generated() {
    check("docs/src/reference/cli.md", &cli_page::render());
}

mod config_schema {
    use crate::config::schema::RawConfig;

    /// The JSON Schema (draft 2020-12) of `.st3/quality.yaml` and of
    /// `[tool.qg]`, as the config structs define it.
    pub(super) fn json() -> String {
        let mut schema = schemars::schema_for!(RawConfig);
        schema.insert("title".into(), "qg configuration".into());
        let mut text = serde_json::to_string_pretty(&schema).unwrap();
        text.push('\n');
        text
    }
}

mod cli_page {
    /// Every command and flag, from the clap definitions.
    pub(super) fn render() -> String {
        let options = clap_markdown::MarkdownOptions::new()
            .title("Command-line reference".to_string())
            .show_footer(false)
            .show_table_of_contents(true);
        let mut text = clap_markdown::help_markdown_custom::<crate::cli::Cli>(&options);
        let header = "<!-- Generated from qg's clap definitions by `QG_BLESS=1 cargo test --lib reference`; do not edit. -->\n\n";
        text.insert_str(0, header);
        text
    }
}

mod config_page {
    use serde_json::Value;
    use std::fmt::Write;

    /// One page: a section per table, a row per key, with its type,
    /// default, description and the built-in default's value as example.
    pub(super) fn render(schema: &Value) -> String {
        let builtin: Value = serde_saphyr::from_str(crate::config::EMBEDDED_DEFAULT).unwrap();
        let mut page = Page {
            schema,
            builtin,
            out: String::new(),
            done: Vec::new(),
        };
        page.out.push_str(HEADER);
        page.table("", "(top level)", schema);
        page.out
    }

    const HEADER: &str = "<!-- Generated from the config schema (schemas/config.json) by `QG_BLESS=1 cargo test --lib reference`; do not edit. -->

# Configuration reference

Every key of `.st3/quality.yaml`, which is also every key of a `[tool.qg]`
table in `pyproject.toml` (there under `tool.qg.`). The JSON Schema is
`schemas/config.json` in qg's repository; editors that read JSON Schema (the YAML language server, Taplo/Even Better
TOML) complete and check the keys with it. *Example* shows the value in qg's
built-in configuration, where it sets the key.

";

    struct Page<'a> {
        schema: &'a Value,
        builtin: Value,
        out: String,
        /// Definitions already given a section (a type used in two places
        /// is described once).
        done: Vec<String>,
    }

    impl Page<'_> {
        fn table(&mut self, path: &str, title: &str, object: &Value) {
            let heading = if path.is_empty() {
                title.to_string()
            } else {
                format!("`{path}`")
            };
            let _ = writeln!(self.out, "## {heading}\n");
            if let Some(text) = object.get("description").and_then(Value::as_str) {
                let _ = writeln!(self.out, "{}\n", paragraph(text));
            }
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let Some(properties) = object.get("properties").and_then(Value::as_object) else {
                return;
            };
            let mut nested = Vec::new();
            for (key, property) in properties {
                let child = join(path, key);
                let (kind, target) = self.kind(property);
                let _ = write!(self.out, "- **`{key}`** ({kind}");
                if required.contains(&key.as_str()) {
                    let _ = write!(self.out, ", required");
                }
                let _ = writeln!(self.out, ")");
                if let Some(text) = self.description(property) {
                    let _ = writeln!(self.out, "  {}", paragraph(&text).replace('\n', "\n  "));
                }
                if let Some(default) = property.get("default").filter(|d| !d.is_null()) {
                    let _ = writeln!(self.out, "  Default: `{default}`.");
                }
                let example = target.is_none().then(|| self.example(&child)).flatten();
                if let Some(example) = example {
                    let _ = writeln!(self.out, "  Example: `{example}`.");
                }
                self.out.push('\n');
                if let Some((name, suffix)) = target {
                    nested.push((format!("{child}{suffix}"), name));
                }
            }
            for (child, name) in nested {
                if self.done.contains(&name) {
                    continue;
                }
                self.done.push(name.clone());
                let definition = &self.schema["$defs"][&name];
                if definition.get("properties").is_some() {
                    self.table(&child, &name, definition);
                }
            }
        }

        /// The key's type in words, and the definition it opens (with the
        /// path suffix of its entries: `.<id>` for a map of them).
        fn kind(&self, property: &Value) -> (String, Option<(String, &'static str)>) {
            if let Some(name) = reference(property) {
                return self.named(&name, "");
            }
            for union in ["anyOf", "oneOf"] {
                if let Some(options) = property.get(union).and_then(Value::as_array) {
                    let non_null: Vec<&Value> =
                        options.iter().filter(|o| o["type"] != "null").collect();
                    if non_null.len() == 1 {
                        return self.kind(non_null[0]);
                    }
                    if options.iter().all(|o| o.get("const").is_some()) {
                        let words: Vec<String> = options
                            .iter()
                            .map(|o| format!("`{}`", inline(&o["const"])))
                            .collect();
                        return (format!("one of {}", words.join(", ")), None);
                    }
                    let kinds: Vec<String> = non_null.iter().map(|o| self.kind(o).0).collect();
                    return (kinds.join(" or "), None);
                }
            }
            if let Some(values) = property.get("enum").and_then(Value::as_array) {
                let words: Vec<String> =
                    values.iter().map(|v| format!("`{}`", inline(v))).collect();
                return (format!("one of {}", words.join(", ")), None);
            }
            let types: Vec<&str> = match &property["type"] {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|t| *t != "null")
                    .collect(),
                _ => vec![],
            };
            match types.first().copied() {
                Some("array") => {
                    let (item, target) = self.kind(&property["items"]);
                    (format!("list of {item}"), target.map(|(n, _)| (n, "[]")))
                }
                Some("object") => match property.get("additionalProperties") {
                    Some(values) if values.is_object() => {
                        let (value, target) = self.kind(values);
                        (
                            format!("table of {value}"),
                            target.map(|(n, _)| (n, ".<id>")),
                        )
                    }
                    _ => ("table".to_string(), None),
                },
                Some("integer") => ("integer".to_string(), None),
                Some("number") => ("number".to_string(), None),
                Some("boolean") => ("boolean".to_string(), None),
                Some("string") => ("string".to_string(), None),
                _ => ("any value".to_string(), None),
            }
        }

        fn named(
            &self,
            name: &str,
            suffix: &'static str,
        ) -> (String, Option<(String, &'static str)>) {
            let definition = &self.schema["$defs"][name];
            if definition.get("properties").is_some() {
                return ("table, below".to_string(), Some((name.to_string(), suffix)));
            }
            (self.kind(definition).0, None)
        }

        /// The property's own description, else its type's.
        fn description(&self, property: &Value) -> Option<String> {
            if let Some(text) = property.get("description").and_then(Value::as_str) {
                return Some(text.to_string());
            }
            let name = reference(property).or_else(|| {
                property
                    .get("anyOf")?
                    .as_array()?
                    .iter()
                    .find_map(reference)
            })?;
            let definition = &self.schema["$defs"][&name];
            let text = definition.get("description")?.as_str()?;
            // A table's own description heads its section instead.
            (definition.get("properties").is_none()).then(|| text.to_string())
        }

        /// The built-in configuration's value at `path` (`<id>` and `[]`
        /// match any gate or item), short enough to show inline.
        fn example(&self, path: &str) -> Option<String> {
            let parts: Vec<&str> = path.split('.').collect();
            let text = lookup(&self.builtin, &parts)?.to_string();
            (text.len() <= 100).then_some(text)
        }
    }

    fn lookup<'v>(value: &'v Value, parts: &[&str]) -> Option<&'v Value> {
        let Some((first, rest)) = parts.split_first() else {
            return Some(value);
        };
        let (name, items) = match first.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (*first, false),
        };
        let found: Vec<&Value> = match name {
            "<id>" => value.as_object()?.values().collect(),
            _ => vec![value.get(name)?],
        };
        found.into_iter().find_map(|v| match items {
            true => v.as_array()?.iter().find_map(|item| lookup(item, rest)),
            false => lookup(v, rest),
        })
    }

    fn reference(value: &Value) -> Option<String> {
        let target = value.get("$ref")?.as_str()?;
        target.strip_prefix("#/$defs/").map(str::to_string)
    }

    fn join(path: &str, key: &str) -> String {
        match path {
            "" => key.to_string(),
            _ => format!("{path}.{key}"),
        }
    }

    /// JSON, as one line.
    fn inline(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// Rust doc text as Markdown: intra-doc links and line breaks dropped.
    fn paragraph(text: &str) -> String {
        text.replace("[`", "`")
            .replace("`]", "`")
            .trim()
            .to_string()
    }
}
