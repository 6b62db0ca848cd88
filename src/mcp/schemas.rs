//! The tools' output schemas: the documents the CLI prints with `--format
//! json` (`schemas/*.json`, the one written contract for both), made
//! self-contained, as MCP clients resolve no reference outside a schema.

use std::sync::Arc;

use serde_json::{json, Map, Value};

/// A JSON object, as rmcp holds schemas.
pub(super) type JsonObject = Map<String, Value>;

const RUN_REPORT: &str = include_str!("../../schemas/run-report.json");
const FILES: &str = include_str!("../../schemas/files.json");
const FIX: &str = include_str!("../../schemas/fix.json");
const EXPLAIN: &str = include_str!("../../schemas/explain.json");
const HISTORY: &str = include_str!("../../schemas/history.json");

/// Where `fix.json` points at the run report.
const RUN_REPORT_REF: &str = "run-report.json";

fn parse(text: &str) -> JsonObject {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => object,
        _ => unreachable!("the schemas in schemas/ are JSON objects (a test reads each)"),
    }
}

/// The fields an answer adds when it lists fewer violations than the run
/// found: a count for each reason, and where the whole report is.
fn shortening_fields() -> JsonObject {
    let Value::Object(fields) = json!({
            "truncated": {
                "type": "integer", "minimum": 0,
                "description": "Violations not listed because of max_violations (errors are listed first)."
            },
            "known_not_listed": {
                "type": "integer", "minimum": 0,
                "description": "Violations the committed baseline knows, not listed because new_only."
            },
            "full_report": {
                "type": "string",
                "description": "Root-relative path of the whole JSON report, written when anything was not listed."
            }
    }) else {
        unreachable!("a JSON object literal")
    };
    fields
}

/// `run_gates`: the run report, plus the shortening fields.
pub(super) fn run_gates() -> Arc<JsonObject> {
    let mut schema = parse(RUN_REPORT);
    extend_properties(
        &mut schema,
        shortening_fields(),
        &["truncated", "known_not_listed"],
    );
    Arc::new(schema)
}

/// `list_scope`: `qg files --format json`.
pub(super) fn list_scope() -> Arc<JsonObject> {
    Arc::new(parse(FILES))
}

/// `fix`: `qg fix --format json` with the run report inlined, plus the
/// shortening fields.
pub(super) fn fix() -> Arc<JsonObject> {
    let mut schema = inline_run_report(parse(FIX));
    extend_properties(
        &mut schema,
        shortening_fields(),
        &["truncated", "known_not_listed"],
    );
    Arc::new(schema)
}

/// `explain_gate`: `qg explain --format json`.
pub(super) fn explain_gate() -> Arc<JsonObject> {
    Arc::new(parse(EXPLAIN))
}

/// `history`: `qg history --format json`.
pub(super) fn history() -> Arc<JsonObject> {
    Arc::new(parse(HISTORY))
}

/// Adds `fields` to the schema's properties, the ones in `required` too.
fn extend_properties(schema: &mut JsonObject, fields: JsonObject, required: &[&str]) {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.extend(fields);
    }
    if let Some(Value::Array(list)) = schema.get_mut("required") {
        list.extend(required.iter().map(|r| Value::from(*r)));
    }
}

/// Replaces each `{"$ref": "run-report.json"}` with a reference to the run
/// report under `$defs`, and merges the run report's own `$defs` (whose
/// names no other schema uses) into the root.
fn inline_run_report(mut schema: JsonObject) -> JsonObject {
    let mut report = parse(RUN_REPORT);
    let report_defs = match report.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => JsonObject::new(),
    };
    report.remove("$schema");
    let mut value = Value::Object(schema.clone());
    point_refs(&mut value);
    if let Value::Object(object) = value {
        schema = object;
    }
    let defs = schema
        .entry("$defs")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(defs) = defs {
        defs.extend(report_defs);
        defs.insert("run_report".into(), Value::Object(report));
    }
    schema
}

fn point_refs(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object.get("$ref").and_then(Value::as_str) == Some(RUN_REPORT_REF) {
                object.insert("$ref".into(), "#/$defs/run_report".into());
            }
            object.values_mut().for_each(point_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(point_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(r)) = object.get("$ref") {
                    found.push(r.clone());
                }
                object.values().for_each(|v| refs(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }

    /// Every reference stays inside its schema and names a definition
    /// that is there.
    #[test]
    fn every_output_schema_is_self_contained() {
        for schema in [run_gates(), list_scope(), fix(), explain_gate(), history()] {
            let value = Value::Object((*schema).clone());
            let mut found = Vec::new();
            refs(&value, &mut found);
            for reference in found {
                let pointer = reference
                    .strip_prefix('#')
                    .unwrap_or_else(|| panic!("{reference} leaves the schema"));
                assert!(value.pointer(pointer).is_some(), "{reference} is dangling");
            }
        }
    }

    #[test]
    fn shortened_answers_say_so_in_their_schema() {
        for schema in [run_gates(), fix()] {
            let required = schema["required"].as_array().unwrap();
            assert!(required.contains(&Value::from("truncated")));
            assert!(schema["properties"]["full_report"].is_object());
        }
        assert!(fix()["$defs"]["run_report"]["properties"]["gates"].is_object());
    }
}
