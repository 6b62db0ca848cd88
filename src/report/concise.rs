//! `--format concise`: one finding per line, `path:line:col: severity:
//! message [gate:code]`, the shape compilers print and every editor's
//! problem matcher understands. File-level findings drop `line:col`. Newlines in
//! messages are shown as `\n` so each finding stays on one line.

use super::findings;
use super::summary::summary_line;
use super::RunReport;
use crate::quote::neutralize;

/// Emits `--format concise`: the summary line, then one line per finding.
pub(crate) struct ConciseEmitter;

impl super::Emitter for ConciseEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "{}", summary_line(report))?;
        for finding in findings(report) {
            let v = finding.violation;
            let file = v
                .file
                .as_deref()
                .map(|f| crate::file_name::display(&report.relative_to_cwd(f)).into_owned());
            // A notebook cell as ruff prints it: `nb.ipynb:cell 2:1:8:`.
            let cell = v.cell_prefix();
            let location = match (file, v.line, v.column) {
                (Some(file), Some(line), Some(col)) => format!("{file}:{cell}{line}:{col}:"),
                (Some(file), Some(line), None) => format!("{file}:{cell}{line}:"),
                (Some(file), None, _) => format!("{file}:{cell}"),
                (None, ..) => format!("qg: {}:", finding.gate.id),
            };
            let message = one_line(&v.message);
            // The gate goes with the code: mypy's and pyright's findings on one
            // line must stay distinguishable.
            let tag = match &v.code {
                Some(code) => format!("{}:{code}", finding.gate.id),
                None => finding.gate.id.clone(),
            };
            writeln!(
                out,
                "{} {}: {} [{}]",
                location,
                v.severity.as_str(),
                neutralize(&message),
                neutralize(&tag)
            )?;
        }
        for gate in &report.gates {
            if let Some(error) = &gate.error {
                writeln!(out, "qg: {}: error: {}", gate.id, one_line(&error.message))?;
            }
        }
        for (gate, warning) in report.all_warnings() {
            let source = gate.map_or("qg".to_string(), |g| format!("qg: {}", g.id));
            writeln!(out, "{source}: warning: {}", neutralize(&one_line(warning)))?;
        }
        Ok(())
    }
}

fn one_line(text: &str) -> String {
    text.trim_end().replace("\r\n", "\n").replace('\n', "\\n")
}
