//! Renderers of a [`RunReport`]. Each one is a pure function of the report;
//! ruff's `--output-format` set is the model for what each ecosystem expects.

pub(crate) mod concise;
pub(crate) mod github;
pub(crate) mod gitlab;
pub(crate) mod human;
pub(crate) mod json;
pub(crate) mod junit;
mod model;
pub(crate) mod sarif;
pub mod step_summary;
pub(crate) mod summary;
pub(crate) mod terminal;

use crate::outcome::GateResult;
use crate::violation::Violation;
pub(crate) use model::{BackgroundWork, ReportScope};
pub use model::{RunReport, Summary};
pub(crate) use summary::plural;

/// `--format` / `--report` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Summary line, then violations grouped by file, then gate statuses.
    Human,
    /// Compact JSON for agents and scripts.
    Json,
    /// `path:line:col: severity: message [code]`, one per line, for editors.
    Concise,
    /// GitHub Actions workflow-command annotations.
    Github,
    /// SARIF 2.1.0 for code-scanning upload.
    Sarif,
    /// GitLab Code Quality JSON.
    Gitlab,
    /// JUnit XML for GitLab, Jenkins and other test report viewers.
    Junit,
}

/// One output format: writes a report to `out` as it goes, so that no
/// format holds the whole report as one string (ruff's emitters).
pub(crate) trait Emitter {
    /// Writes `report` in this format.
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()>;
}

impl Format {
    /// The emitter for this format; `color` matters to the human one only.
    fn emitter(self, color: bool) -> Box<dyn Emitter> {
        match self {
            Format::Json => Box::new(json::JsonEmitter),
            Format::Human => Box::new(human::HumanEmitter { color }),
            Format::Concise => Box::new(concise::ConciseEmitter),
            Format::Github => Box::new(github::GithubEmitter),
            Format::Sarif => Box::new(sarif::SarifEmitter),
            Format::Gitlab => Box::new(gitlab::GitlabEmitter),
            Format::Junit => Box::new(junit::JunitEmitter),
        }
    }
}

/// Renders the report in `format` into a string (tests, small outputs).
pub fn render(report: &RunReport, format: Format, color: bool) -> String {
    let mut bytes = Vec::new();
    write(report, format, color, &mut bytes).expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("reports are UTF-8")
}

/// Writes the report in `format` to `out`, as it is produced: no format
/// holds the whole report as one string.
pub(crate) fn write(
    report: &RunReport,
    format: Format,
    color: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut buffered = std::io::BufWriter::new(out);
    format.emitter(color).emit(report, &mut buffered)?;
    std::io::Write::flush(&mut buffered)
}

/// A finding with its stable fingerprint.
pub(crate) struct Finding<'a> {
    /// The gate that reported it.
    pub(crate) gate: &'a GateResult,
    /// The violation.
    pub(crate) violation: &'a Violation,
    /// Stable identity: gate, rule, file, flagged line's content, normalized
    /// message and an occurrence index — no line numbers, so an unrelated
    /// edit that shifts lines keeps it.
    pub(crate) fingerprint: String,
}

impl<'a> Finding<'a> {
    /// The violation as formats that know only files and lines should show
    /// it: a finding in a notebook cell becomes a file-level finding whose
    /// message starts with `cell 2, line 5:` — its lines count within the
    /// cell, not within the `.ipynb` file such a format would point into.
    pub(crate) fn by_file_line(&self) -> std::borrow::Cow<'a, Violation> {
        let v = self.violation;
        let Some(cell) = v.cell else {
            return std::borrow::Cow::Borrowed(v);
        };
        let at = match v.line {
            Some(line) => format!("cell {cell}, line {line}"),
            None => format!("cell {cell}"),
        };
        std::borrow::Cow::Owned(Violation {
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            message: format!("{at}: {}", v.message),
            ..v.clone()
        })
    }
}

/// Every finding of the report, sorted, with the fingerprint the run gave
/// it (see `baseline::fingerprint`).
pub(crate) fn findings(report: &RunReport) -> Vec<Finding<'_>> {
    report
        .findings()
        .into_iter()
        .map(|(gate, violation)| Finding {
            gate,
            violation,
            fingerprint: violation
                .tracking
                .fingerprint
                .map(|f| f.to_string())
                .unwrap_or_default(),
        })
        .collect()
}

/// SHA-1 (as git computes a blob id): stable across platforms and versions.
fn stable_hash(text: &str) -> String {
    crate::git::hash_blob(text.as_bytes())
}

/// The path reports point at for findings that belong to no file (an
/// errored gate, an `exit_code` failure): the config that defines the gate.
pub(crate) fn config_path(report: &RunReport) -> &str {
    if report.config_origin.starts_with('<') {
        crate::config::PROJECT_CONFIG
    } else {
        &report.config_origin
    }
}

/// `code` or, for findings without one, the gate id.
pub(crate) fn rule_id<'a>(gate: &'a GateResult, violation: &'a Violation) -> &'a str {
    violation.code.as_deref().unwrap_or(&gate.id)
}
