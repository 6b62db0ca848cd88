//! `--format gitlab`: GitLab Code Quality JSON (the `codequality` report of a
//! CI job). Every finding has a location; an errored gate is a `blocker` on
//! the config that defines it, so a broken tool cannot look like clean code.

use serde_json::{json, Value};

use super::RunReport;
use super::{config_path, findings, rule_id};
use crate::violation::Severity;

/// Emits `--format gitlab`: the Code Quality array.
pub(crate) struct GitlabEmitter;

impl super::Emitter for GitlabEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut issues: Vec<Value> = findings(report)
            .iter()
            .map(|f| {
                let v = &*f.by_file_line();
                let path = match v.file.as_deref() {
                    Some(file) => crate::file_name::display_json(file),
                    None => config_path(report).into(),
                };
                json!({
                    "description": description(&v.message, v.hint.as_deref()),
                    "check_name": format!("{}/{}", f.gate.id, rule_id(f.gate, v)),
                    "fingerprint": f.fingerprint,
                    "severity": severity(v.severity),
                    "location": {"path": path, "lines": {"begin": v.line.unwrap_or(1)}},
                })
            })
            .collect();
        for gate in &report.gates {
            if let Some(error) = &gate.error {
                let identity = format!("qg/v1/error\0{}", gate.id);
                issues.push(json!({
                    "description": format!("qg: gate {} errored: {}", gate.name, error.message),
                    "check_name": format!("{}/error", gate.id),
                    "fingerprint": super::stable_hash(&identity),
                    "severity": "blocker",
                    "location": {"path": config_path(report), "lines": {"begin": 1}},
                }));
            }
        }
        // Code Quality has no place for notes: each warning is an `info` issue
        // on the config, so it is seen rather than dropped.
        for (gate, warning) in report.all_warnings() {
            let id = gate.map_or("qg", |g| g.id.as_str());
            let identity = format!("qg/v1/warning\0{id}\0{warning}");
            issues.push(json!({
                "description": format!("qg: {id}: {warning}"),
                "check_name": format!("{id}/warning"),
                "fingerprint": super::stable_hash(&identity),
                "severity": "info",
                "location": {"path": config_path(report), "lines": {"begin": 1}},
            }));
        }
        serde_json::to_writer_pretty(&mut *out, &issues)?;
        out.write_all(b"\n")
    }
}

fn description(message: &str, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("{message}\n{hint}"),
        None => message.to_string(),
    }
}

/// GitLab's scale is info|minor|major|critical|blocker.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}
