//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it: one run
//! per gate (distinct `tool.driver.name`), every reported code in `rules`,
//! root-relative URIs under `%SRCROOT%`, 1-based regions, stable
//! `partialFingerprints`, and each gate's health in `invocations`.

use std::collections::BTreeMap;

use percent_encoding::{percent_encode, AsciiSet, CONTROLS};
use serde_json::{json, Value};

use super::RunReport;
use super::{findings, rule_id, Finding};
use crate::outcome::{GateResult, GateStatus};
use crate::violation::{Severity, Violation};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const ROOT_ID: &str = "%SRCROOT%";

/// Characters a URI path may not carry raw (RFC 3986): everything but
/// unreserved characters, `/` and sub-delims that are safe in paths.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Emits `--format sarif`: the whole log (pretty-printed: SARIF files are read by people too).
pub(crate) struct SarifEmitter;

impl super::Emitter for SarifEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let all = findings(report);
        let runs: Vec<Value> = report
            .gates
            .iter()
            .enumerate()
            .map(|(index, gate)| {
                let mine: Vec<&Finding<'_>> = all.iter().filter(|f| f.gate.id == gate.id).collect();
                // The run's own warnings travel with the first run.
                let run_warnings = if index == 0 {
                    &report.warnings[..]
                } else {
                    &[]
                };
                run(report, gate, &mine, run_warnings)
            })
            .collect();
        let log = json!({"$schema": SCHEMA, "version": "2.1.0", "runs": runs});
        serde_json::to_writer_pretty(&mut *out, &log)?;
        out.write_all(b"\n")
    }
}

fn run(
    report: &RunReport,
    gate: &GateResult,
    mine: &[&Finding<'_>],
    run_warnings: &[String],
) -> Value {
    let mut rules: BTreeMap<&str, Rule<'_>> = BTreeMap::new();
    for finding in mine {
        let v = finding.violation;
        let rule = rules.entry(rule_id(gate, v)).or_insert(Rule {
            url: None,
            example: &v.message,
            fixable: false,
        });
        rule.url = rule.url.or(v.url.as_deref());
        rule.fixable |= v.fixable == Some(true);
    }
    let index: BTreeMap<&str, usize> = rules.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    let rules: Vec<Value> = rules
        .iter()
        .map(|(id, rule)| rule.descriptor(gate, id))
        .collect();
    let results: Vec<Value> = mine
        .iter()
        .map(|f| result(gate, f, index[rule_id(gate, f.violation)]))
        .collect();
    let mut driver = json!({
        "name": format!("qg/{}", gate.id),
        "fullName": gate.name,
        "rules": rules,
    });
    // The tool's own version, when qg knows it; never qg's in its place.
    if let Some(line) = &gate.tool_version {
        driver["version"] = json!(crate::tools::version::number(line));
    }
    let mut run = json!({
        "tool": {"driver": driver},
        "automationDetails": {"id": format!("qg/{}/", gate.id)},
        "originalUriBaseIds": {ROOT_ID: {"uri": root_uri(report)}},
        "invocations": [invocation(gate, run_warnings)],
        "results": results,
    });
    // A workspace member's run: which member, and the gate it is a run of.
    if let Some(member) = &gate.member {
        run["properties"] = json!({"member": member.dir, "runOf": member.of});
    }
    run
}

/// What the findings of one rule say about it: qg knows a rule only by
/// what its tool reported.
struct Rule<'a> {
    /// The tool's documentation of the rule, when it gives one.
    url: Option<&'a str>,
    /// The message of its first finding.
    example: &'a str,
    /// Whether the tool can fix some of its findings itself.
    fixable: bool,
}

impl Rule<'_> {
    /// The `reportingDescriptor`, with the descriptions and help GitHub
    /// Advanced Security requires of every rule.
    fn descriptor(&self, gate: &GateResult, id: &str) -> Value {
        let example = self.example.lines().next().unwrap_or_default();
        let full = format!(
            "{} rule {id}. As the tool reported it: {example}",
            gate.name
        );
        let fix = match self.fixable {
            true => "`qg fix` applies the tool's own fix.",
            false => "Fix the code the finding points at, then run `qg run` again.",
        };
        let (text, markdown) = match self.url {
            Some(url) => (
                format!("{full}\nDocumentation: {url}\n{fix}"),
                format!("{full}\n\n[{id} documentation]({url})\n\n{fix}"),
            ),
            None => (format!("{full}\n{fix}"), format!("{full}\n\n{fix}")),
        };
        let mut rule = json!({
            "id": id,
            "shortDescription": {"text": format!("{} {id}", gate.name)},
            "fullDescription": {"text": full},
            "help": {"text": text, "markdown": markdown},
        });
        if let Some(url) = self.url {
            rule["helpUri"] = json!(url);
        }
        rule
    }
}

fn result(gate: &GateResult, finding: &Finding<'_>, rule_index: usize) -> Value {
    let v = &*finding.by_file_line();
    let mut result = json!({
        "ruleId": rule_id(gate, v),
        "ruleIndex": rule_index,
        "level": level(v.severity),
        "message": {"text": message_text(v)},
        "partialFingerprints": {"qgFindingHash/v2": finding.fingerprint},
    });
    if let Some(state) = v.tracking.baseline_state {
        result["baselineState"] = json!(state.as_str());
    }
    if let Some(file) = &v.file {
        let mut physical =
            json!({"artifactLocation": {"uri": encode_path(file), "uriBaseId": ROOT_ID}});
        if let Some(region) = region(v) {
            physical["region"] = region;
        }
        result["locations"] = json!([{"physicalLocation": physical}]);
    }
    if v.fixable == Some(true) {
        result["properties"] = json!({"fixable": true});
    }
    result
}

/// SARIF forbids an empty message; a hint (mypy's notes) travels with it.
fn message_text(v: &Violation) -> String {
    let text = if v.message.is_empty() {
        "(no message)"
    } else {
        &v.message
    };
    match &v.hint {
        Some(hint) => format!("{text}\n{hint}"),
        None => text.to_string(),
    }
}

/// 1-based region; none for file-level findings.
fn region(v: &Violation) -> Option<Value> {
    let line = v.line?;
    let mut region = json!({"startLine": line});
    if let Some(col) = v.column {
        region["startColumn"] = json!(col);
    }
    if let Some(end_line) = v.end_line.filter(|e| *e >= line) {
        region["endLine"] = json!(end_line);
    }
    if let (Some(end_col), Some(col)) = (v.end_column, v.column) {
        let same_line = v.end_line.is_none_or(|e| e == line);
        if !same_line || end_col >= col {
            region["endColumn"] = json!(end_col);
        }
    }
    Some(region)
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// Whether the tool ran properly, why not, and what else it said.
fn invocation(gate: &GateResult, run_warnings: &[String]) -> Value {
    let mut invocation = json!({"executionSuccessful": gate.status != GateStatus::Error});
    let mut notifications = Vec::new();
    if let Some(error) = &gate.error {
        if let Some(code) = error.exit_code {
            invocation["exitCode"] = json!(code);
        }
        notifications.push(json!({"level": "error", "message": {"text": error.message}}));
    }
    if let Some(reason) = &gate.skip_reason {
        notifications.push(json!({
            "level": "note",
            "message": {"text": format!("skipped: {reason}")},
        }));
    }
    for warning in gate.warnings.iter().chain(run_warnings) {
        notifications.push(json!({"level": "warning", "message": {"text": warning}}));
    }
    if !notifications.is_empty() {
        invocation["toolExecutionNotifications"] = json!(notifications);
    }
    invocation
}

/// Percent-encodes the name's exact bytes, so a name that is not UTF-8
/// survives (see [`crate::file_name`]).
fn encode_path(path: &str) -> String {
    percent_encode(&crate::file_name::to_bytes(path), PATH).to_string()
}

fn root_uri(report: &RunReport) -> String {
    let root = crate::paths::to_slash(&report.root);
    let root = root.trim_end_matches('/');
    let root = if root.starts_with('/') {
        root.to_string()
    } else {
        format!("/{root}")
    };
    format!("file://{}/", encode_path(&root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_percent_encoded() {
        assert_eq!(
            encode_path("dir with space/ü.py"),
            "dir%20with%20space/%C3%BC.py"
        );
        assert_eq!(encode_path("a#b%c.py"), "a%23b%25c.py");
    }
}
