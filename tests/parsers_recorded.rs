//! The default config's parsers on raw outputs recorded from the pinned tools
//! (fixtures/recorded, made by fixtures/record.sh from fixtures/dirty).
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

use std::path::Path;

use qg::config::{self, EMBEDDED_DEFAULT};
use qg::parse::ToolOutput;
use qg::paths::PathContext;
use qg::violation::{Severity, Violation};

fn parse_recorded(gate: &str, file: &str) -> Vec<Violation> {
    let config = config::parse(EMBEDDED_DEFAULT, "<embedded default>").unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/recorded")
        .join(file);
    let stdout = std::fs::read(path).unwrap();
    let root = Path::new("/FIXTURE_ROOT");
    let output = ToolOutput {
        stdout: &stdout,
        stderr: b"",
    };
    let mut violations = config.gates[gate]
        .parser
        .parse(&output, &PathContext::new(root, root))
        .unwrap()
        .violations;
    violations.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    violations
}

fn summary(
    v: &Violation,
) -> (
    Option<&str>,
    Option<u64>,
    Option<u64>,
    Option<&str>,
    Severity,
) {
    (
        v.file.as_deref(),
        v.line,
        v.column,
        v.code.as_deref(),
        v.severity,
    )
}

#[test]
fn ruff_format_gives_one_violation_per_file_at_its_first_change() {
    let v = parse_recorded("ruff_format", "ruff_format.json");
    assert_eq!(
        v.iter().map(summary).collect::<Vec<_>>(),
        [(
            Some("pkg/badformat.py"),
            Some(1),
            Some(13),
            Some("unformatted"),
            Severity::Error
        )]
    );
    assert_eq!(v[0].fixable, Some(true));
    assert_eq!(v[0].message, "File would be reformatted");
}

#[test]
fn ruff_check_json_with_safe_fix_only_fixable() {
    let v = parse_recorded("ruff_check", "ruff_check.json");
    assert_eq!(
        v.iter().map(summary).collect::<Vec<_>>(),
        [
            (
                Some("pkg/lint.py"),
                Some(1),
                Some(8),
                Some("F401"),
                Severity::Error
            ),
            (
                Some("pkg/lint.py"),
                Some(6),
                Some(5),
                Some("F841"),
                Severity::Error
            ),
            (
                Some("pkg/warn.py"),
                Some(2),
                Some(5),
                Some("B015"),
                Severity::Error
            ),
        ]
    );
    // F401's fix is safe; F841's is unsafe; B015 has none.
    assert_eq!(
        v.iter().map(|v| v.fixable).collect::<Vec<_>>(),
        [Some(true), Some(false), Some(false)]
    );
    assert_eq!((v[0].end_line, v[0].end_column), (Some(1), Some(10)));
    assert_eq!(v[0].message, "`os` imported but unused");
    assert!(v[0].url.as_deref().unwrap().contains("unused-import"));
}

#[test]
fn mypy_json_lines_one_based_columns_and_notes_as_info() {
    let v = parse_recorded("mypy", "mypy.jsonl");
    assert_eq!(
        v.iter().map(summary).collect::<Vec<_>>(),
        [
            (
                Some("pkg/notes.py"),
                Some(4),
                Some(13),
                Some("misc"),
                Severity::Info
            ),
            (
                Some("pkg/typing_errors.py"),
                Some(2),
                Some(12),
                Some("return-value"),
                Severity::Error
            ),
            (
                Some("pkg/typing_errors.py"),
                Some(5),
                Some(14),
                Some("assignment"),
                Severity::Error
            ),
        ]
    );
    assert_eq!(v[0].message, "Revealed type is \"int\"");
}

#[test]
fn pyright_json_zero_based_ranges_become_one_based() {
    let v = parse_recorded("pyright", "pyright.json");
    assert_eq!(
        v.iter().map(summary).collect::<Vec<_>>(),
        [
            (
                Some("pkg/notes.py"),
                Some(4),
                Some(13),
                None,
                Severity::Info
            ),
            (
                Some("pkg/typing_errors.py"),
                Some(2),
                Some(12),
                Some("reportReturnType"),
                Severity::Error
            ),
            (
                Some("pkg/typing_errors.py"),
                Some(5),
                Some(14),
                Some("reportAssignmentType"),
                Severity::Error
            ),
            (
                Some("pkg/warn.py"),
                Some(2),
                Some(5),
                Some("reportUnusedExpression"),
                Severity::Warning
            ),
        ]
    );
    // Multi-line messages are kept whole, byte for byte (pyright indents
    // continuation lines with non-breaking spaces).
    assert_eq!(
        v[1].message,
        "Type \"int\" is not assignable to return type \"str\"\n\u{a0}\u{a0}\"int\" is not assignable to \"str\""
    );
    assert_eq!((v[1].end_line, v[1].end_column), (Some(2), Some(21)));
}

/// A file-level finding has no position at all: mypy's `line: -1,
/// end_column: 0` (here its blocking "Duplicate module", as mypy 2.4.1
/// prints it) must not become `line: null, end_column: 1`.
#[test]
fn a_file_level_finding_carries_no_position() {
    let config = config::parse(EMBEDDED_DEFAULT, "<embedded default>").unwrap();
    let stdout = br#"{"file": "b/conftest.py", "line": -1, "column": -1, "end_line": -1, "end_column": 0, "message": "Duplicate module named \"conftest\" (also at \"./a/conftest.py\")", "hint": null, "code": null, "severity": "error"}
"#;
    let root = Path::new("/FIXTURE_ROOT");
    let output = ToolOutput {
        stdout,
        stderr: b"",
    };
    let violations = config.gates["mypy"]
        .parser
        .parse(&output, &PathContext::new(root, root))
        .unwrap()
        .violations;
    assert_eq!(violations.len(), 1);
    let finding = &violations[0];
    assert!(finding
        .message
        .starts_with("Duplicate module named \"conftest\""));
    assert_eq!(finding.line, None);
    assert_eq!(finding.column, None);
    assert_eq!((finding.end_line, finding.end_column), (None, None));
}
