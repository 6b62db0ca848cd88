//! A gate's findings as the editor's diagnostics: the gate as `source`, the
//! rule as `code` (with its documentation link), the tool's message and
//! severity, the exact range in the client's position units; findings the
//! baseline knows shown quieter (or not at all), and marked in `data` so a
//! code action or a filter can tell them apart.

use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, Uri,
};
use serde_json::json;

use crate::config::PositionEncoding;
use crate::violation::{BaselineState, Severity, Violation};
use crate::warm::lsp::diagnostics::{recount_column, units};

/// How a finding the baseline knows is shown (`qg lsp --known`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum KnownSeverity {
    /// As an information.
    Information,
    /// As a hint (greyed out; kept out of most problem lists).
    #[default]
    Hint,
    /// Not shown.
    Hidden,
}

/// Where a finding comes from: its gate, and what a column of the gate's
/// tool counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin<'a> {
    /// The gate's id.
    pub(crate) gate: &'a str,
    /// What the tool's columns count.
    pub(crate) columns: PositionEncoding,
    /// Found by a warm answer not yet confirmed by a cold run.
    pub(crate) unconfirmed: bool,
}

/// What a diagnostic carries for code actions and filters: its gate,
/// whether the baseline knows it, whether it is fixable, its fingerprint —
/// and, for a warm answer a cold run has not confirmed yet, `unconfirmed`.
fn data(origin: Origin<'_>, violation: &Violation, is_known: bool) -> serde_json::Value {
    let mut data = json!({
        "gate": origin.gate,
        "baseline": if is_known { "known" } else { "new" },
        "fixable": violation.fixable.unwrap_or(false),
        "fingerprint": violation.tracking.fingerprint.map(|f| f.to_string()),
    });
    if origin.unconfirmed {
        data["unconfirmed"] = json!(true);
    }
    data
}

/// The diagnostic for `violation`, or `None` when known findings are
/// hidden. `line_text` gives a line of the file (0-based) for the
/// columns of a line that is not ASCII.
pub(crate) fn to_diagnostic(
    origin: Origin<'_>,
    violation: &Violation,
    known: KnownSeverity,
    client: PositionEncoding,
    line_text: &mut dyn FnMut(u32) -> Option<String>,
) -> Option<Diagnostic> {
    let is_known = violation.tracking.baseline_state == Some(BaselineState::Unchanged);
    let severity = match (is_known, known) {
        (true, KnownSeverity::Hidden) => return None,
        (true, KnownSeverity::Hint) => DiagnosticSeverity::HINT,
        (true, KnownSeverity::Information) => DiagnosticSeverity::INFORMATION,
        (false, _) => match violation.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        },
    };
    let range = range(violation, origin.columns, client, line_text);
    let href = violation.url.as_deref().and_then(|u| u.parse::<Uri>().ok());
    let message = match is_known {
        true => format!("{} [known]", violation.message),
        false => violation.message.clone(),
    };
    Some(Diagnostic {
        range,
        severity: Some(severity),
        code: violation.code.clone().map(NumberOrString::String),
        code_description: href.map(|href| CodeDescription { href }),
        source: Some(origin.gate.to_string()),
        message,
        related_information: None,
        tags: None,
        data: Some(data(origin, violation, is_known)),
    })
}

/// The finding's range: its line and columns as the tool counted them,
/// recounted in the client's units; a finding without a column covers its
/// line, one without a line the file's start.
fn range(
    violation: &Violation,
    columns: PositionEncoding,
    client: PositionEncoding,
    line_text: &mut dyn FnMut(u32) -> Option<String>,
) -> Range {
    let Some(line) = violation.line.map(|l| l.saturating_sub(1) as u32) else {
        return Range::default();
    };
    let mut at = |line: u32, column: Option<u64>| -> Position {
        let character = match column {
            Some(column) => recount(line, column.saturating_sub(1), columns, client, line_text),
            None => line_text(line).map_or(0, |text| units(&text, client)),
        };
        Position { line, character }
    };
    let start = at(line, violation.column.or(Some(1)));
    let end_line = violation
        .end_line
        .map_or(line, |l| l.saturating_sub(1) as u32);
    let end = match (violation.end_line, violation.end_column) {
        (_, Some(column)) => at(end_line, Some(column)),
        // No end: to the end of the line.
        _ => at(line, None),
    };
    Range {
        start,
        end: end.max(start),
    }
}

/// `column` (0-based, in `from` units) of `line`, in `to` units.
fn recount(
    line: u32,
    column: u64,
    from: PositionEncoding,
    to: PositionEncoding,
    line_text: &mut dyn FnMut(u32) -> Option<String>,
) -> u32 {
    let column = u32::try_from(column).unwrap_or(u32::MAX);
    if from == to {
        return column;
    }
    match line_text(line) {
        Some(text) => recount_column(&text, column, from, to),
        None => column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUFF: Origin<'static> = Origin {
        gate: "ruff_check",
        columns: PositionEncoding::Utf32,
        unconfirmed: false,
    };

    fn finding(line: u64, column: u64, end_column: u64, known: bool) -> Violation {
        let mut violation = Violation {
            file: Some("a.py".into()),
            line: Some(line),
            column: Some(column),
            end_line: Some(line),
            end_column: Some(end_column),
            code: Some("F401".into()),
            message: "unused".into(),
            severity: Severity::Error,
            fixable: Some(true),
            hint: None,
            url: Some("https://docs.astral.sh/ruff/rules/unused-import".into()),
            cell: None,
            tracking: Default::default(),
        };
        if known {
            violation.tracking.baseline_state = Some(BaselineState::Unchanged);
        }
        violation
    }

    #[test]
    fn columns_are_recounted_in_the_clients_units() {
        // "é😀x = 1": the tool counts characters, the client UTF-16 units.
        let mut text = |_| Some("é😀x = 1".to_string());
        let d = to_diagnostic(
            RUFF,
            &finding(2, 3, 4, false),
            KnownSeverity::Hint,
            PositionEncoding::Utf16,
            &mut text,
        )
        .unwrap();
        assert_eq!(
            d.range.start,
            Position {
                line: 1,
                character: 3
            }
        );
        assert_eq!(
            d.range.end,
            Position {
                line: 1,
                character: 4
            }
        );
        assert_eq!(d.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(d.source.as_deref(), Some("ruff_check"));
        assert_eq!(d.code, Some(NumberOrString::String("F401".into())));
        assert!(d.code_description.is_some());
        assert_eq!(d.data.unwrap()["baseline"], "new");
    }

    #[test]
    fn known_findings_are_quieter_or_hidden() {
        let mut text = |_| None;
        let known = finding(1, 1, 2, true);
        let hint = to_diagnostic(
            RUFF,
            &known,
            KnownSeverity::Hint,
            PositionEncoding::Utf16,
            &mut text,
        );
        let hint = hint.unwrap();
        assert_eq!(hint.severity, Some(DiagnosticSeverity::HINT));
        assert_eq!(hint.message, "unused [known]");
        assert_eq!(hint.data.unwrap()["baseline"], "known");
        let info = to_diagnostic(
            RUFF,
            &known,
            KnownSeverity::Information,
            PositionEncoding::Utf16,
            &mut text,
        );
        assert_eq!(
            info.unwrap().severity,
            Some(DiagnosticSeverity::INFORMATION)
        );
        assert!(to_diagnostic(
            RUFF,
            &known,
            KnownSeverity::Hidden,
            PositionEncoding::Utf16,
            &mut text
        )
        .is_none());
    }
}
