//! Human output: the summary line first, then every violation grouped by
//! file and sorted by position, then one line per gate.

use std::io::{self, Write};

use super::summary::{plural, summary_line};
use super::terminal::Palette;
use super::RunReport;
use crate::outcome::{GateResult, GateStatus};
use crate::quote::neutralize;
use crate::violation::BaselineState;
use crate::violation::{Severity, Violation};

/// Emits `--format human`; `color` turns ANSI styling on.
pub(crate) struct HumanEmitter {
    /// Whether to use ANSI colors.
    pub(crate) color: bool,
}

impl super::Emitter for HumanEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let color = self.color;
        let p = Palette::new(color);
        writeln!(out, "{}", p.bold(&summary_line(report)))?;
        for (_, said) in &report.contradicted {
            writeln!(out, "{} {}", p.yellow("warning:"), neutralize(said))?;
        }
        write_violations(out, report, &p)?;
        write_gates(out, report, &p)?;
        for warning in &report.warnings {
            writeln!(out, "{} {}", p.yellow("warning:"), neutralize(warning))?;
        }
        for work in &report.background {
            writeln!(
                out,
                "{}",
                p.dim(&format!(
                    "in the background: {} compares {} with a cold run ({:.1} s so far, at the lowest priority, standing still while a run is under way)",
                    report.gate_name(&work.gate),
                    work.what,
                    work.running_ms as f64 / 1000.0
                ))
            )?;
        }
        Ok(())
    }
}

/// How an unconfirmed warm answer says so on its gate's line.
fn unconfirmed_words(unconfirmed: &crate::outcome::Unconfirmed) -> String {
    let files = plural(unconfirmed.files, "file");
    match unconfirmed.confirming {
        true => format!("warm, unconfirmed: a cold run of its {files} confirms it in the background"),
        false => format!("warm, unconfirmed: no daemon could confirm its {files}; the next run checks them again"),
    }
}

fn write_violations(out: &mut dyn Write, report: &RunReport, p: &Palette) -> io::Result<()> {
    let mut all: Vec<(&GateResult, &Violation)> = report
        .gates
        .iter()
        .flat_map(|g| g.violations.iter().map(move |v| (g, v)))
        .collect();
    // Known findings of a legacy codebase would bury the new ones: they are
    // counted here and listed in every machine format.
    let before = all.len();
    all.retain(|(_, v)| v.tracking.baseline_state != Some(BaselineState::Unchanged));
    let known = before - all.len();
    if known > 0 {
        writeln!(
            out,
            "{}",
            p.dim(&format!(
                "{} known {} from the baseline {} not listed (`--format json` or `concise` lists them)",
                super::summary::thousands(known),
                match known {
                    1 => "violation",
                    _ => "violations",
                },
                match known {
                    1 => "is",
                    _ => "are",
                }
            ))
        )?;
    }
    if all.is_empty() {
        return Ok(());
    }
    all.sort_by(|a, b| {
        a.1.sort_key()
            .cmp(&b.1.sort_key())
            .then(a.0.id.cmp(&b.0.id))
    });
    let mut current: Option<Option<&str>> = None;
    for (gate, v) in all {
        if current != Some(v.file.as_deref()) {
            current = Some(v.file.as_deref());
            let file = v.file.as_deref().map_or("(no file)".to_string(), |f| {
                crate::file_name::display(&report.relative_to_cwd(f)).into_owned()
            });
            write!(out, "\n{}\n", p.bold(&p.cyan(&file)))?;
        }
        write_violation(out, gate, v, p)?;
    }
    Ok(())
}

fn write_violation(
    out: &mut dyn Write,
    gate: &GateResult,
    v: &Violation,
    p: &Palette,
) -> io::Result<()> {
    let cell = v.cell_prefix();
    let position = match (v.line, v.column) {
        (Some(l), Some(c)) => format!("{cell}{l}:{c}"),
        (Some(l), None) => format!("{cell}{l}"),
        _ if v.cell.is_some() => cell.trim_end_matches(':').to_string(),
        _ => "-".to_string(),
    };
    let severity = match v.severity {
        Severity::Error => p.red("error"),
        Severity::Warning => p.yellow("warning"),
        Severity::Info => p.dim("info"),
    };
    let code = v.code.as_deref().map(neutralize).unwrap_or_default();
    let mut tags = vec![gate.id.clone()];
    if v.fixable == Some(true) {
        tags.push("fixable".to_string());
    }
    let message = indent_continuation(&neutralize(&v.message), "      ");
    writeln!(
        out,
        "  {position:<8} {severity} {} {message} {}",
        p.bold(&code),
        p.dim(&format!("[{}]", tags.join(", ")))
    )?;
    if let Some(hint) = &v.hint {
        writeln!(
            out,
            "      {}",
            p.dim(&indent_continuation(&neutralize(hint), "      "))
        )?;
    }
    Ok(())
}

fn indent_continuation(text: &str, indent: &str) -> String {
    text.trim_end().replace('\n', &format!("\n{indent}"))
}

fn write_gates(out: &mut dyn Write, report: &RunReport, p: &Palette) -> io::Result<()> {
    writeln!(out, "\n{}", p.bold("Gates"))?;
    let width = report
        .gates
        .iter()
        .map(|g| g.name.chars().count())
        .max()
        .unwrap_or(0);
    for gate in &report.gates {
        let glyph = mark(gate.status);
        let (mark, status) = match gate.status {
            GateStatus::Passed => (p.green(glyph), p.green("passed ")),
            GateStatus::Failed => (p.red(glyph), p.red("failed ")),
            GateStatus::Error => (p.yellow(glyph), p.yellow("error  ")),
            GateStatus::Skipped => (p.dim(glyph), p.dim("skipped")),
        };
        let detail = gate_detail(gate);
        writeln!(out, "  {mark} {:<width$}  {status}  {detail}", gate.name)?;
        if let Some(error) = &gate.error {
            writeln!(out, "      {}", neutralize(&error.message))?;
            if !error.stderr_tail.is_empty() {
                let tail = indent_continuation(&neutralize(&error.stderr_tail), "        ");
                writeln!(out, "      stderr:\n        {}", p.dim(&tail))?;
            }
        }
        for warning in &gate.warnings {
            writeln!(
                out,
                "      {} {}",
                p.yellow("warning:"),
                neutralize(warning)
            )?;
        }
        // Hints name root-relative files: from elsewhere they run from the root.
        let from_root = match report.cwd.is_empty() {
            true => String::new(),
            false => format!("cd {} && ", report.relative_to_cwd("")),
        };
        if let Some(hint) = &gate.fix_hint {
            writeln!(out, "      fix: {from_root}{}", neutralize(hint))?;
        }
        if let Some(hint) = &gate.rerun_hint {
            writeln!(out, "      re-run: {from_root}{}", neutralize(hint))?;
        }
        if let Some(log) = &gate.log {
            if gate.status != GateStatus::Passed {
                writeln!(out, "      log: {}", p.dim(log))?;
            }
        }
    }
    Ok(())
}

/// A gate line's first mark (the book's first run page shows the legend).
fn mark(status: GateStatus) -> &'static str {
    match status {
        GateStatus::Passed => "✓",
        GateStatus::Failed => "✗",
        GateStatus::Error => "!",
        GateStatus::Skipped => "-",
    }
}

fn gate_detail(gate: &GateResult) -> String {
    match gate.status {
        GateStatus::Skipped => gate.skip_reason.clone().unwrap_or_default(),
        _ => {
            let mut parts = Vec::new();
            if gate.violation_count() > 0 {
                parts.push(plural(gate.violation_count(), "violation"));
            }
            if gate.note_count() > 0 {
                parts.push(plural(gate.note_count(), "note"));
            }
            parts.push(plural(gate.files_checked, "file"));
            if let Some(share) = gate.cache.as_ref().filter(|c| c.hits > 0) {
                parts.push(format!("{} from the cache", share.hits));
            }
            if let Some(back) = gate
                .cache
                .as_ref()
                .and_then(|c| c.tool_cache.as_ref()?.commits_back)
            {
                parts.push(match back {
                    0 => "its tool's own cache from this commit".to_string(),
                    1 => "its tool's own cache from 1 commit back".to_string(),
                    n => format!("its tool's own cache from {n} commits back"),
                });
            }
            if gate.outside_scope > 0 {
                parts.push(format!(
                    "+{} outside the scope not reported",
                    gate.outside_scope
                ));
            }
            if let Some(p) = gate.since_last_run.filter(|p| p.fixed + p.new > 0) {
                parts.push(format!(
                    "{} fixed, {} new since the last run",
                    p.fixed, p.new
                ));
            }
            let known = gate
                .violations
                .iter()
                .filter(|v| v.tracking.baseline_state == Some(BaselineState::Unchanged))
                .count();
            if known > 0 {
                parts.push(format!("{known} known from the baseline"));
            }
            parts.push(format!("{} ms", gate.duration_ms));
            match (gate.warm, gate.verified, &gate.unconfirmed) {
                (true, true, _) => parts.push("warm, equal to a cold run".into()),
                (true, false, Some(unconfirmed)) => parts.push(unconfirmed_words(unconfirmed)),
                (true, false, None) => parts.push("warm".into()),
                // A daemon that failed has its warning; one starting or
                // busy is said here, so a cold time in a warm run is
                // explained where it shows.
                (false, _, _) if gate.answered_cold_warning().is_none() => {
                    if let Some(why) = &gate.cold_because {
                        parts.push(format!("cold: {why}"));
                    }
                }
                _ => {}
            }
            parts.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first run page's legend of the gate lines' marks is the one
    /// the report prints.
    #[test]
    fn the_books_legend_of_the_gate_marks_is_the_reports() {
        let page = include_str!("../../docs/src/getting-started/first-run.md");
        let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
        let legend = format!(
            "its status (`{}` passed, `{}` failed, `{}` error, `{}` skipped)",
            mark(GateStatus::Passed),
            mark(GateStatus::Failed),
            mark(GateStatus::Error),
            mark(GateStatus::Skipped)
        );
        assert!(page.contains(&legend), "first-run.md lacks: {legend}");
    }
}
