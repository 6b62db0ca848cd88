//! The one-line verdict that opens every human report and JSON's `summary_line`.

use super::RunReport;
use crate::outcome::GateStatus;

/// Builds the summary line.
pub(crate) fn summary_line(report: &RunReport) -> String {
    let s = report.summary();
    let scope = scope_label(report);
    if s.errored > 0 {
        let details: Vec<String> = report
            .gates
            .iter()
            .filter_map(|g| g.error.as_ref().map(|e| format!("{}: {}", g.id, e.short)))
            .collect();
        let mut line = format!(
            "⚠️ {}/{} gates errored — {}",
            s.errored,
            s.gates,
            details.join("; ")
        );
        if s.failed > 0 {
            line.push_str(&format!(
                "; {} failed with {}{}",
                s.failed,
                violations(s.total_violations),
                notes(s.notes)
            ));
        }
        line.push_str(&fallback_suffix(report, &scope));
        line.push_str(&baseline_suffix(report));
        line.push_str(&progress_suffix(report));
        return line;
    }
    if s.failed > 0 {
        let names: Vec<&str> = report
            .gates
            .iter()
            .filter(|g| g.status == GateStatus::Failed)
            .map(|g| g.name.as_str())
            .collect();
        let fixable = if s.auto_fixable > 0 {
            format!(" ({} auto-fixable)", s.auto_fixable)
        } else {
            String::new()
        };
        let fallback =
            fallback_suffix(report, &scope) + &baseline_suffix(report) + &progress_suffix(report);
        return format!(
            "❌ {}/{} gates failed — {}{}{}: {}{}",
            s.failed,
            s.gates,
            violations(s.total_violations),
            fixable,
            notes(s.notes),
            names.join(", "),
            fallback
        );
    }
    if s.passed == 0 {
        let unmatched = &report.scope.unmatched;
        let files = report.scope.files_checked;
        let why = if files == 0 && !unmatched.is_empty() {
            let each: Vec<String> = unmatched.iter().map(|u| u.describe()).collect();
            each.join("; ")
        } else if files == 0 {
            "no files in scope".to_string()
        } else {
            format!("no gate applies to the {} in scope", plural(files, "file"))
        };
        return format!("⏭️ nothing to check — {why} ({scope})");
    }
    let skipped = if s.skipped > 0 {
        format!(", {} skipped", s.skipped)
    } else {
        String::new()
    };
    format!(
        "✅ {}/{} gates passed{} — {} checked ({}){}",
        s.passed,
        s.gates,
        skipped,
        plural(report.scope.files_checked, "file"),
        scope,
        importers_suffix(report) + &baseline_suffix(report) + &progress_suffix(report)
    )
}

/// ` (auto → project: why)` when the requested scope fell back, and
/// ` (importers unknown: why; …)` when the gates that check importers fell
/// back to the whole project: a fallback is always named on the first line.
fn fallback_suffix(report: &RunReport, scope: &str) -> String {
    let mut suffix = match report.scope.fallback_reason {
        Some(_) => format!(" ({scope})"),
        None => String::new(),
    };
    suffix.push_str(&importers_suffix(report));
    suffix
}

fn importers_suffix(report: &RunReport) -> String {
    let mut suffix = match &report.scope.importers_unknown {
        Some(why) => format!(
            " (importers unknown: {why}; the gates that check importers checked the whole project)"
        ),
        None => String::new(),
    };
    suffix.push_str(&whole_project_suffix(report));
    suffix
}

/// ` (whole project for Mypy: its settings in pyproject.toml changed since
/// the last green run)`: a gate that checked more than the changed files
/// says why on the first line.
fn whole_project_suffix(report: &RunReport) -> String {
    let ran: Vec<String> = report
        .gates
        .iter()
        .filter(|g| g.status != GateStatus::Skipped)
        .filter_map(|g| {
            let why = report.scope.whole_project.get(&g.id)?;
            Some(format!("{}: {why}", g.name))
        })
        .collect();
    match ran.is_empty() {
        true => String::new(),
        false => format!(" (whole project for {})", ran.join("; ")),
    }
}

/// `auto`, or `auto → project: why` after a fallback.
fn scope_label(report: &RunReport) -> String {
    let scope = &report.scope;
    match &scope.fallback_reason {
        Some(reason) => format!(
            "{} → {}: {}",
            scope.requested.as_str(),
            scope.mode.as_str(),
            reason
        ),
        None => scope.mode.as_str().to_string(),
    }
}

fn violations(n: usize) -> String {
    plural(n, "violation")
}

/// `, 3 notes` when findings below their gates' `fail_on` came with the
/// violations (the tool counts them apart: mypy's "Found 30 errors" beside
/// its 30 "defined here" notes).
fn notes(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(", {}", plural(n, "note")),
    }
}

/// `1 file`, `2 files`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `1,316`: counts as people read them.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// ` (baseline: +3 new, 1,316 known, 2 fixed)` when a baseline is in use.
fn baseline_suffix(report: &RunReport) -> String {
    let Some(b) = &report.baseline else {
        return String::new();
    };
    let mut parts = vec![
        format!("+{} new", thousands(b.new)),
        format!("{} known", thousands(b.known)),
    ];
    if b.fixed > 0 {
        parts.push(format!("{} fixed", thousands(b.fixed)));
    }
    format!(" (baseline: {})", parts.join(", "))
}

/// ` (2 fixed, 1 new since the last run)` when anything changed: a
/// developer or an agent fixing findings sees the progress.
fn progress_suffix(report: &RunReport) -> String {
    let Some(p) = report.since_last_run.filter(|p| p.fixed + p.new > 0) else {
        return String::new();
    };
    format!(
        " ({} fixed, {} new since the last run)",
        thousands(p.fixed),
        thousands(p.new)
    )
}
