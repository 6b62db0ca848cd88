//! `--format json`: compact, agent-oriented, the shape the book documents (docs/src/reference/output-formats.md).

use serde::Serialize;

use super::model::ReportScope;
use super::summary::summary_line;
use super::{RunReport, Summary};
use crate::outcome::GateResult;

/// The `--format json` document (its schema: `schemas/run-report.json`).
#[derive(Serialize)]
pub(crate) struct JsonReport<'a> {
    summary_line: String,
    overall_pass: bool,
    /// What the last warm answers got wrong, found by their confirmation
    /// after they were shown: right after the verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    contradicted: Vec<Contradiction<'a>>,
    /// What a shortened answer left out (`qg mcp`), right after the
    /// verdict; the CLI lists everything and never writes these fields.
    #[serde(flatten)]
    omitted: Option<&'a Omitted>,
    summary: Summary,
    scope: &'a ReportScope,
    gates: &'a [GateResult],
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a crate::baseline::BaselineSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    since_last_run: Option<crate::outcome::Progress>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<&'a crate::shard::ShardInfo>,
    timings: Timings<'a>,
}

/// A warm answer a cold run contradicted.
#[derive(Serialize)]
struct Contradiction<'a> {
    gate: &'a str,
    said: &'a str,
}

#[derive(Serialize)]
struct Timings<'a> {
    total_ms: u64,
    /// The daemons' comparisons with a cold run under way in the
    /// background (standing still while the run ran).
    #[serde(skip_serializing_if = "<[super::BackgroundWork]>::is_empty")]
    background: &'a [super::BackgroundWork],
}

/// What a shortened report left out of its violation lists: counts, and
/// where the whole report is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Omitted {
    /// Not listed because of a cap on how many are.
    pub(crate) truncated: usize,
    /// Known to the committed baseline, not listed.
    pub(crate) known_not_listed: usize,
    /// Root-relative path of the whole report, when anything was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) full_report: Option<String>,
}

/// The report as `--format json` writes it, for callers that serialize it
/// themselves (the MCP server).
pub(crate) fn document(report: &RunReport) -> JsonReport<'_> {
    document_with(report, &report.gates, None)
}

/// [`document`] whose gates list only some of their violations (`listed`,
/// a shortened copy of the report's gates), saying what they leave out;
/// the verdict and the counts still cover everything the run found.
pub(crate) fn document_with<'a>(
    report: &'a RunReport,
    listed: &'a [GateResult],
    omitted: Option<&'a Omitted>,
) -> JsonReport<'a> {
    JsonReport {
        summary_line: summary_line(report),
        overall_pass: report.overall_pass(),
        contradicted: report
            .contradicted
            .iter()
            .map(|(gate, said)| Contradiction { gate, said })
            .collect(),
        omitted,
        summary: report.summary(),
        scope: &report.scope,
        gates: listed,
        baseline: report.baseline.as_ref(),
        since_last_run: report.since_last_run,
        warnings: &report.warnings,
        shard: report.shard.as_ref(),
        timings: Timings {
            total_ms: report.total_ms,
            background: &report.background,
        },
    }
}

/// Emits `--format json`: the report as one line of JSON (and a newline).
pub(crate) struct JsonEmitter;

impl super::Emitter for JsonEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let json = document(report);
        let mut buffered = std::io::BufWriter::new(out);
        serde_json::to_writer(&mut buffered, &json).map_err(std::io::Error::from)?;
        std::io::Write::write_all(&mut buffered, b"\n")?;
        std::io::Write::flush(&mut buffered)
    }
}
