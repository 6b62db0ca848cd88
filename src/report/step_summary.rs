//! The GitHub Actions job summary: markdown appended to the file named by
//! `GITHUB_STEP_SUMMARY`, kept within GitHub's 1 MiB limit per step.

use std::fmt::Write;

use super::findings;
use super::summary::summary_line;
use super::RunReport;
use crate::outcome::GateStatus;

/// GitHub's limit for one step's summary.
pub(crate) const LIMIT_BYTES: usize = 1024 * 1024;

/// Markdown for the run, at most `budget` bytes (the space the step's
/// summary file has left).
pub fn render(report: &RunReport, budget: usize) -> String {
    let mut out = format!("### {}\n\n", cell(&summary_line(report)));
    out.push_str("| Gate | Status | Violations | Files | Time |\n|---|---|---|---|---|\n");
    for gate in &report.gates {
        let status = match gate.status {
            GateStatus::Passed => "✅ passed".to_string(),
            GateStatus::Failed => "❌ failed".to_string(),
            GateStatus::Error => format!(
                "⚠️ error: {}",
                cell(gate.error.as_ref().map_or("", |e| e.short.as_str()))
            ),
            GateStatus::Skipped => "⏭️ skipped".to_string(),
        };
        let files = match gate.cache.as_ref().filter(|c| c.hits > 0) {
            Some(cache) => format!("{} ({} from the cache)", gate.files_checked, cache.hits),
            None => gate.files_checked.to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {status} | {} | {files} | {:.2} s |",
            cell(&gate.name),
            gate.violation_count(),
            gate.duration_ms as f64 / 1000.0
        );
    }
    // What the committed baseline holds fails nothing: counted, not listed
    // (286 known rows as "error" once made a 73 KB summary of a green run).
    let (all, known): (Vec<_>, Vec<_>) = findings(report).into_iter().partition(|f| {
        f.by_file_line().tracking.baseline_state != Some(crate::violation::BaselineState::Unchanged)
    });
    if !known.is_empty() {
        let _ = writeln!(
            out,
            "\n{} known finding{} (held by the committed baseline) not listed.",
            super::summary::thousands(known.len()),
            match known.len() {
                1 => "",
                _ => "s",
            }
        );
    }
    if all.is_empty() || out.len() >= budget {
        return truncate_to(out, budget);
    }
    out.push_str("\n#### New violations\n\n| File | Line | Severity | Code | Message | Gate |\n|---|---|---|---|---|---|\n");
    let mut shown = 0;
    for finding in &all {
        let v = &*finding.by_file_line();
        let row = format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(
                &v.file
                    .as_deref()
                    .map(crate::file_name::display)
                    .unwrap_or_default()
            ),
            v.line.map(|l| l.to_string()).unwrap_or_default(),
            v.severity.as_str(),
            cell(super::rule_id(finding.gate, v)),
            cell(&v.message),
            cell(&finding.gate.id)
        );
        // Leave room for the closing line.
        if out.len() + row.len() + 80 > budget {
            break;
        }
        out.push_str(&row);
        shown += 1;
    }
    if shown < all.len() {
        let _ = writeln!(
            out,
            "\n…and {} more: the full list is in the job log and the SARIF/JSON reports.",
            all.len() - shown
        );
    }
    truncate_to(out, budget)
}

/// A markdown table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace("\r\n", " ")
        .replace(['\n', '\r'], " ")
}

fn truncate_to(mut text: String, budget: usize) -> String {
    if text.len() > budget {
        let mut cut = budget;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}
