//! `--format github`: GitHub Actions workflow commands, escaped exactly as
//! the Actions toolkit (`@actions/core`) escapes them.

use super::summary::summary_line;
use super::RunReport;
use super::{config_path, findings, rule_id};
use crate::violation::{BaselineState, Severity};

/// Emits `--format github`: one annotation per finding (a `notice` for one
/// the baseline knows), and one per errored gate.
pub(crate) struct GithubEmitter;

impl super::Emitter for GithubEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "{}", summary_line(report))?;
        for finding in findings(report) {
            let v = &*finding.by_file_line();
            let mut properties: Vec<(&str, String)> = Vec::new();
            if let Some(file) = &v.file {
                properties.push(("file", crate::file_name::display_json(file).into_owned()));
                if let Some(line) = v.line {
                    properties.push(("line", line.to_string()));
                    let end_line = v.end_line.unwrap_or(line);
                    // Columns only make sense on a single-line range.
                    if end_line == line {
                        if let Some(col) = v.column {
                            properties.push(("col", col.to_string()));
                        }
                        if let Some(end_col) = v.end_column {
                            properties.push(("endColumn", end_col.to_string()));
                        }
                    } else {
                        properties.push(("endLine", end_line.to_string()));
                    }
                }
            }
            // A finding the committed baseline holds does not fail the run:
            // an `error` annotation on it would tell a reviewer the opposite.
            let known = v.tracking.baseline_state == Some(BaselineState::Unchanged);
            let mut title = format!("{} ({})", rule_id(finding.gate, v), finding.gate.name);
            if known {
                title.push_str(" [known]");
            }
            properties.push(("title", title));
            let command = match (known, v.severity) {
                (true, _) | (false, Severity::Info) => "notice",
                (false, Severity::Error) => "error",
                (false, Severity::Warning) => "warning",
            };
            writeln!(
                out,
                "{}",
                workflow_command(command, &properties, &v.message)
            )?;
        }
        for gate in &report.gates {
            if let Some(error) = &gate.error {
                let properties = [
                    ("file", config_path(report).to_string()),
                    ("title", format!("qg: gate {} errored", gate.name)),
                ];
                writeln!(
                    out,
                    "{}",
                    workflow_command("error", &properties, &error.message)
                )?;
            }
        }
        for (gate, warning) in report.all_warnings() {
            let title = match gate {
                Some(gate) => format!("qg: {}", gate.name),
                None => "qg".to_string(),
            };
            let properties = [("title", title)];
            writeln!(out, "{}", workflow_command("warning", &properties, warning))?;
        }
        Ok(())
    }
}

/// `::command key=value,…::message`.
pub(crate) fn workflow_command(
    command: &str,
    properties: &[(&str, String)],
    message: &str,
) -> String {
    let props: Vec<String> = properties
        .iter()
        .map(|(k, v)| format!("{k}={}", escape_property(v)))
        .collect();
    let props = if props.is_empty() {
        String::new()
    } else {
        format!(" {}", props.join(","))
    };
    format!("::{command}{props}::{}", escape_data(message))
}

/// `escapeData` of @actions/core: `%`, CR, LF.
pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// `escapeProperty` of @actions/core: `escapeData` plus `:` and `,`.
pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_matches_the_actions_toolkit() {
        assert_eq!(
            escape_data("100% done\r\nnext: a, b"),
            "100%25 done%0D%0Anext: a, b"
        );
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(
            workflow_command(
                "error",
                &[("file", "a,b.py".into()), ("line", "3".into())],
                "x%y"
            ),
            "::error file=a%2Cb.py,line=3::x%25y"
        );
    }
}
