//! A language server's diagnostics as the violation records a cold run's
//! parser makes of the same tool's command-line output: 1-based lines and
//! columns (counted as the cold run counts them), the rule as the code, the
//! severity the command line reports. Hints — unused or unreachable code,
//! deprecations shown greyed out — are not findings: command lines do not
//! report them.

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};

use crate::config::{LspSpec, PositionEncoding};
use crate::violation::{Severity, Violation};

/// The violation a cold run reports for `diagnostic` in `file`, or `None`
/// for a hint. `text` is the file's content, read only when a column must
/// be recounted (a line with characters outside ASCII).
pub(crate) fn to_violation(
    file: &str,
    diagnostic: &Diagnostic,
    spec: &LspSpec,
    server_encoding: PositionEncoding,
    text: &mut dyn FnMut() -> Option<std::rc::Rc<String>>,
) -> Option<Violation> {
    let severity = match diagnostic.severity {
        Some(DiagnosticSeverity::HINT) => return None,
        Some(DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(DiagnosticSeverity::INFORMATION) => Severity::Info,
        // Unset: the protocol leaves it to the client; never drop it.
        _ => Severity::Error,
    };
    let code = diagnostic.code.as_ref().map(|code| match code {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.clone(),
    });
    let message = match &spec.message {
        Some(template) => template
            .replace("{code}", code.as_deref().unwrap_or(""))
            .replace("{summary}", summary(&diagnostic.message))
            .replace("{message}", &diagnostic.message),
        None => diagnostic.message.clone(),
    };
    let range = diagnostic.range;
    let mut column = |position: lsp_types::Position| {
        let counted = recount(
            position,
            server_encoding,
            spec.position_encoding,
            &mut *text,
        );
        u64::from(counted) + 1
    };
    let (column, end_column) = (column(range.start), column(range.end));
    Some(Violation {
        file: Some(file.to_string()),
        line: Some(u64::from(range.start.line) + 1),
        column: Some(column),
        end_line: Some(u64::from(range.end.line) + 1),
        end_column: Some(end_column),
        code,
        message,
        severity,
        fixable: None,
        hint: None,
        url: None,
        cell: None,
        tracking: Default::default(),
    })
}

/// A message's first paragraph: what a command line shows of a message a
/// language server follows with notes after a blank line.
fn summary(message: &str) -> &str {
    message.split("\n\n").next().unwrap_or(message)
}

/// The column of `position` counted in `wanted` units instead of the
/// server's: the same for an ASCII line, else recounted from the text (a
/// position past the line's end means its end, as the protocol says).
fn recount(
    position: lsp_types::Position,
    server: PositionEncoding,
    wanted: PositionEncoding,
    text: &mut dyn FnMut() -> Option<std::rc::Rc<String>>,
) -> u32 {
    if server == wanted {
        return position.character;
    }
    let Some(text) = text() else {
        return position.character;
    };
    let Some(line) = text.lines().nth(position.line as usize) else {
        return position.character;
    };
    recount_column(line, position.character, server, wanted).min(units(line, wanted))
}

/// `column` of `line`, counted in `from` units, in `to` units; a column
/// past the line's end keeps its excess.
pub(crate) fn recount_column(
    line: &str,
    column: u32,
    from: PositionEncoding,
    to: PositionEncoding,
) -> u32 {
    if from == to || line.is_ascii() {
        return column;
    }
    let (mut seen, mut counted) = (0u32, 0u32);
    for c in line.chars() {
        if seen >= column {
            break;
        }
        seen += width(c, from);
        counted += width(c, to);
    }
    counted + column.saturating_sub(seen)
}

/// The length of `text` in `encoding` units.
pub(crate) fn units(text: &str, encoding: PositionEncoding) -> u32 {
    text.chars().map(|c| width(c, encoding)).sum()
}

/// How many units of `encoding` the character `c` takes.
fn width(c: char, encoding: PositionEncoding) -> u32 {
    match encoding {
        PositionEncoding::Utf16 => c.len_utf16() as u32,
        PositionEncoding::Utf32 => 1,
        PositionEncoding::Utf8 => c.len_utf8() as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};
    use std::rc::Rc;

    fn diagnostic(severity: Option<DiagnosticSeverity>, range: Range) -> Diagnostic {
        Diagnostic {
            range,
            severity,
            code: Some(NumberOrString::String("reportReturnType".into())),
            message: "Type \"int\" is not assignable".into(),
            ..Default::default()
        }
    }

    fn spec(message: Option<&str>, encoding: PositionEncoding) -> LspSpec {
        LspSpec {
            settings: serde_json::json!({}),
            initialization_options: None,
            message: message.map(str::to_string),
            position_encoding: encoding,
        }
    }

    fn range(line: u32, from: u32, to: u32) -> Range {
        Range::new(Position::new(line, from), Position::new(line, to))
    }

    #[test]
    fn positions_become_one_based_and_hints_are_dropped() {
        let spec = spec(None, PositionEncoding::Utf16);
        let mut no_text = || None;
        let d = diagnostic(Some(DiagnosticSeverity::ERROR), range(1, 11, 14));
        let v = to_violation("pkg/a.py", &d, &spec, PositionEncoding::Utf16, &mut no_text).unwrap();
        assert_eq!(
            (v.line, v.column, v.end_line, v.end_column),
            (Some(2), Some(12), Some(2), Some(15))
        );
        assert_eq!(v.code.as_deref(), Some("reportReturnType"));
        assert_eq!(v.severity, Severity::Error);
        let hint = diagnostic(Some(DiagnosticSeverity::HINT), range(0, 0, 1));
        assert!(
            to_violation("a.py", &hint, &spec, PositionEncoding::Utf16, &mut no_text).is_none()
        );
        let info = diagnostic(Some(DiagnosticSeverity::INFORMATION), range(0, 0, 1));
        let v = to_violation("a.py", &info, &spec, PositionEncoding::Utf16, &mut no_text).unwrap();
        assert_eq!(v.severity, Severity::Info);
        let unset = diagnostic(None, range(0, 0, 1));
        let v = to_violation("a.py", &unset, &spec, PositionEncoding::Utf16, &mut no_text).unwrap();
        assert_eq!(v.severity, Severity::Error);
    }

    #[test]
    fn a_message_template_words_it_as_the_cold_run_does() {
        let spec = spec(Some("{code}: {message}"), PositionEncoding::Utf16);
        let d = diagnostic(Some(DiagnosticSeverity::WARNING), range(0, 0, 1));
        let v = to_violation("a.py", &d, &spec, PositionEncoding::Utf16, &mut || None).unwrap();
        assert_eq!(
            v.message,
            "reportReturnType: Type \"int\" is not assignable"
        );
        assert_eq!(v.severity, Severity::Warning);
        let noted = Diagnostic {
            message: "Argument is incorrect\n\ninfo: a note\ninfo: another".into(),
            ..d
        };
        let summarized = LspSpec {
            message: Some("{code}: {summary}".into()),
            ..spec
        };
        let v = to_violation(
            "a.py",
            &noted,
            &summarized,
            PositionEncoding::Utf16,
            &mut || None,
        )
        .unwrap();
        assert_eq!(v.message, "reportReturnType: Argument is incorrect");
    }

    #[test]
    fn columns_are_recounted_in_the_cold_runs_units() {
        // "x = '😀' + 1": the emoji is 2 UTF-16 units, 1 scalar, 4 bytes.
        let text = Rc::new("s = 'é😀' + 1\n".to_string());
        let mut read = || Some(Rc::clone(&text));
        let d = diagnostic(Some(DiagnosticSeverity::ERROR), range(0, 4, 12));
        let scalars = spec(None, PositionEncoding::Utf32);
        let v = to_violation("a.py", &d, &scalars, PositionEncoding::Utf16, &mut read).unwrap();
        assert_eq!((v.column, v.end_column), (Some(5), Some(12)));
        let bytes = spec(None, PositionEncoding::Utf8);
        let v = to_violation("a.py", &d, &bytes, PositionEncoding::Utf16, &mut read).unwrap();
        assert_eq!((v.column, v.end_column), (Some(5), Some(16)));
    }
}
