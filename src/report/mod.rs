//! Renderers of a [`RunReport`]. Each one is a pure function of the report.

pub mod human;
pub mod json;
pub mod summary;
pub mod terminal;

use crate::run::RunReport;

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Summary line, then violations grouped by file, then gate statuses.
    Human,
    /// Compact JSON for agents and scripts.
    Json,
}

/// Renders the report in `format`. `color` applies to human output only.
pub fn render(report: &RunReport, format: Format, color: bool) -> String {
    match format {
        Format::Human => human::render(report, color),
        Format::Json => json::render(report),
    }
}
