//! `json_violations`: violation objects found in a JSON document (at a JSON
//! Pointer) or in JSON Lines, with fields picked by `/`-separated paths.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_stream::for_each_at;
use super::{shift, ParseFailure, Parsed, SpecError};
use super::{Field, OutputStream};
use crate::paths::PathContext;
use crate::violation::{Severity, Violation};

/// Compiled `json_violations` settings.
#[derive(Debug, Clone)]
pub struct JsonSpec {
    pub(crate) source: OutputStream,
    violations_pointer: String,
    json_lines: bool,
    /// Field → JSON Pointer inside one violation object.
    fields: BTreeMap<Field, String>,
    fixable_when: Option<Condition>,
    line_offset: i64,
    column_offset: i64,
    severity_default: Severity,
}

/// Raw settings, as read from the config.
pub(crate) struct JsonSettings<'a> {
    pub(crate) source: OutputStream,
    pub(crate) violations_path: Option<&'a str>,
    pub(crate) json_lines: bool,
    pub(crate) field_map: &'a BTreeMap<Field, String>,
    pub(crate) fixable_when: Option<&'a str>,
    pub(crate) line_offset: i64,
    pub(crate) column_offset: i64,
    pub(crate) severity_default: Option<Severity>,
}

impl JsonSpec {
    /// Validates and compiles the settings.
    pub(crate) fn new(settings: JsonSettings<'_>) -> Result<JsonSpec, SpecError> {
        let violations_pointer = to_pointer(settings.violations_path.unwrap_or(""))
            .map_err(|m| SpecError::new("violations_path", m))?;
        for required in [Field::File, Field::Message] {
            if !settings.field_map.contains_key(&required) {
                return Err(SpecError::new(
                    "field_map",
                    format!(
                        "needs a `{}` entry naming where the tool puts it",
                        required.name()
                    ),
                ));
            }
        }
        let mut fields = BTreeMap::new();
        for (field, path) in settings.field_map {
            let pointer = to_pointer(path)
                .map_err(|m| SpecError::new(format!("field_map.{}", field.name()), m))?;
            fields.insert(*field, pointer);
        }
        let fixable_when = settings
            .fixable_when
            .map(Condition::parse)
            .transpose()
            .map_err(|m| SpecError::new("fixable_when", m))?;
        Ok(JsonSpec {
            source: settings.source,
            violations_pointer,
            json_lines: settings.json_lines,
            fields,
            fixable_when,
            line_offset: settings.line_offset,
            column_offset: settings.column_offset,
            severity_default: settings.severity_default.unwrap_or(Severity::Error),
        })
    }

    /// Parses `bytes` (see [`JsonSpec::parse_reader`]).
    #[cfg(test)]
    pub(crate) fn parse(&self, bytes: &[u8], paths: &PathContext) -> Result<Parsed, ParseFailure> {
        self.parse_reader(bytes, paths)
    }

    /// Parses a stream without holding it in memory: JSON Lines line by
    /// line, a document by walking to `violations_path`.
    ///
    /// Text that cannot be a finding — a line that does not start like JSON
    /// (`{` or `[`), before, between or after the JSON — is kept in
    /// [`Parsed::unparsed`] and costs no finding. JSON that cannot be read,
    /// or holds no violations array, fails: that output should have been
    /// findings.
    pub(crate) fn parse_reader(
        &self,
        reader: impl std::io::BufRead,
        paths: &PathContext,
    ) -> Result<Parsed, ParseFailure> {
        let mut lines = Lines::new(reader);
        let mut parsed = Parsed::default();
        if self.json_lines {
            while lines.advance()? {
                let (number, line) = (lines.number, lines.current());
                if !starts_like_json(line) {
                    parsed.unparsed.push(number, line);
                    continue;
                }
                self.collect(line, paths, &mut parsed.violations)
                    .map_err(|e| {
                        ParseFailure(format!("output line {number} is not usable: {e}"))
                    })?;
            }
            return Ok(parsed);
        }
        loop {
            if !lines.advance()? {
                return Err(ParseFailure(
                    "output is not usable JSON: it holds no JSON document".to_string(),
                ));
            }
            if starts_like_json(lines.current()) {
                break;
            }
            parsed.unparsed.push(lines.number, lines.current());
        }
        let first = lines.current().to_vec();
        let mut counted = CountLines::new(std::io::Read::chain(&first[..], &mut lines.reader));
        self.collect(&mut counted, paths, &mut parsed.violations)
            .map_err(|e| ParseFailure(format!("output is not usable JSON: {e}")))?;
        let after = lines.number + counted.newlines;
        // The document may end mid-line: what follows on that line counts too.
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut counted, &mut rest)
            .map_err(|e| ParseFailure(format!("cannot read the output: {e}")))?;
        for (offset, line) in rest.split(|b| *b == b'\n').enumerate() {
            if !line.iter().all(u8::is_ascii_whitespace) {
                parsed.unparsed.push(after + offset, line);
            }
        }
        Ok(parsed)
    }

    /// Streams the violations of the JSON value `reader` starts with into `out`.
    fn collect(
        &self,
        reader: impl std::io::Read,
        paths: &PathContext,
        out: &mut Vec<Violation>,
    ) -> Result<(), String> {
        let found = for_each_at(reader, &self.violations_pointer, |item| {
            out.push(self.violation(&item, paths)?);
            Ok(())
        })?;
        if found {
            Ok(())
        } else {
            Err(format!(
                "nothing at violations_path `{}`",
                self.violations_pointer
            ))
        }
    }

    fn violation(&self, item: &Value, paths: &PathContext) -> Result<Violation, String> {
        if !item.is_object() {
            return Err(format!("a violation is {}, not an object", kind_of(item)));
        }
        let text = |field| self.get(item, field).and_then(value_text);
        let number = |field| self.get(item, field).and_then(value_number);
        let severity = text(Field::Severity)
            .map(|word| Severity::from_tool_word(&word).unwrap_or(Severity::Error))
            .unwrap_or(self.severity_default);
        Ok(Violation {
            file: text(Field::File).map(|f| paths.normalize(&f)),
            line: shift(number(Field::Line), self.line_offset),
            column: shift(number(Field::Column), self.column_offset),
            end_line: shift(number(Field::EndLine), self.line_offset),
            end_column: shift(number(Field::EndColumn), self.column_offset),
            code: text(Field::Code),
            message: text(Field::Message).unwrap_or_default(),
            severity,
            fixable: self.fixable(item),
            hint: text(Field::Hint),
            url: text(Field::Url),
            cell: number(Field::Cell)
                .and_then(|c| u64::try_from(c).ok())
                .filter(|c| *c >= 1),
            tracking: Default::default(),
        }
        .settle_positions())
    }

    /// `fixable_when` wins; else a mapped `fixable` field read as truthy.
    fn fixable(&self, item: &Value) -> Option<bool> {
        if let Some(condition) = &self.fixable_when {
            return Some(condition.holds(item));
        }
        self.get(item, Field::Fixable).map(truthy)
    }

    fn get<'v>(&self, item: &'v Value, field: Field) -> Option<&'v Value> {
        let pointer = self.fields.get(&field)?;
        item.pointer(pointer).filter(|v| !v.is_null())
    }
}

/// Whether a line is meant as JSON: its first non-blank byte opens an
/// object or an array (violations are never bare scalars).
fn starts_like_json(line: &[u8]) -> bool {
    matches!(
        line.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// A tool's output, line by line, with 1-based numbers; blank lines are skipped.
struct Lines<R> {
    reader: R,
    buffer: Vec<u8>,
    number: usize,
}

impl<R: std::io::BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines {
            reader,
            buffer: Vec::new(),
            number: 0,
        }
    }

    /// Moves to the next line that is not blank; false at the end.
    fn advance(&mut self) -> Result<bool, ParseFailure> {
        loop {
            self.buffer.clear();
            let read = self
                .reader
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| ParseFailure(format!("cannot read the output: {e}")))?;
            if read == 0 {
                return Ok(false);
            }
            self.number += 1;
            if !self.buffer.iter().all(u8::is_ascii_whitespace) {
                return Ok(true);
            }
        }
    }

    /// The current line, line break included.
    fn current(&self) -> &[u8] {
        &self.buffer
    }
}

/// A reader that counts the line breaks read through it.
struct CountLines<R> {
    inner: R,
    newlines: usize,
}

impl<R> CountLines<R> {
    fn new(inner: R) -> Self {
        CountLines { inner, newlines: 0 }
    }
}

impl<R: std::io::Read> std::io::Read for CountLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.newlines += buf[..read].iter().filter(|b| **b == b'\n').count();
        Ok(read)
    }
}

/// `location/row` → `/location/row`; `/` and `` both mean the whole value.
fn to_pointer(path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    if trimmed.is_empty() || trimmed == "/" {
        return Ok(String::new());
    }
    if trimmed.contains('~') && !valid_escapes(trimmed) {
        return Err(format!(
            "`{path}` has a `~` that is not `~0` or `~1` (JSON Pointer escapes)"
        ));
    }
    if trimmed.starts_with('/') {
        Ok(trimmed.to_string())
    } else {
        Ok(format!("/{trimmed}"))
    }
}

fn valid_escapes(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'~')
        .all(|(i, _)| matches!(bytes.get(i + 1), Some(b'0' | b'1')))
}

fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn value_number(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn truthy(value: &Value) -> bool {
    !matches!(value, Value::Null | Value::Bool(false))
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `fixable_when`: `path == 'literal'`, `path != 'literal'`, or a bare `path`
/// (true when present and not null/false).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    pointer: String,
    test: Test,
}

#[derive(Debug, Clone, PartialEq)]
enum Test {
    Truthy,
    Equals(Value),
    NotEquals(Value),
}

impl Condition {
    /// Parses the expression; errors name what is wrong with it.
    pub(crate) fn parse(expression: &str) -> Result<Condition, String> {
        let (path, test) = if let Some((left, right)) = expression.split_once("==") {
            (left, Test::Equals(literal(right)?))
        } else if let Some((left, right)) = expression.split_once("!=") {
            (left, Test::NotEquals(literal(right)?))
        } else {
            (expression, Test::Truthy)
        };
        let path = path.trim();
        if path.is_empty() || path.contains(char::is_whitespace) {
            return Err(format!(
                "`{expression}` is not `path == 'value'`, `path != 'value'` or `path`"
            ));
        }
        Ok(Condition {
            pointer: to_pointer(path)?,
            test,
        })
    }

    /// Evaluates the condition against one violation object.
    pub(crate) fn holds(&self, item: &Value) -> bool {
        let found = item.pointer(&self.pointer);
        match &self.test {
            Test::Truthy => found.is_some_and(truthy),
            Test::Equals(expected) => found == Some(expected),
            Test::NotEquals(expected) => found != Some(expected),
        }
    }
}

fn literal(text: &str) -> Result<Value, String> {
    let text = text.trim();
    let unquoted = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')));
    match unquoted {
        Some(inner) => Ok(Value::String(inner.to_string())),
        None => serde_json::from_str(text)
            .map_err(|_| format!("`{text}` is not a quoted string, number, true, false or null")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn spec(path: &str, map: &[(Field, &str)], lines: bool, col_offset: i64) -> JsonSpec {
        let field_map: BTreeMap<Field, String> =
            map.iter().map(|(f, p)| (*f, p.to_string())).collect();
        JsonSpec::new(JsonSettings {
            source: OutputStream::Stdout,
            violations_path: Some(path),
            json_lines: lines,
            field_map: &field_map,
            fixable_when: Some("fix/applicability == 'safe'"),
            line_offset: 0,
            column_offset: col_offset,
            severity_default: None,
        })
        .unwrap()
    }

    fn root() -> PathContext {
        PathContext::new(Path::new("/repo"), Path::new("/repo"))
    }

    #[test]
    fn reads_nested_fields_and_fixable() {
        let s = spec(
            "/",
            &[
                (Field::File, "filename"),
                (Field::Line, "location/row"),
                (Field::Message, "message"),
            ],
            false,
            0,
        );
        let out = br#"[{"filename":"/repo/a.py","location":{"row":3},"message":"m\nsecond","fix":{"applicability":"safe"}},
                       {"filename":"b.py","location":{"row":1},"message":"x","fix":null}]"#;
        let v = s.parse(out, &root()).unwrap().violations;
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].file.as_deref(), Some("a.py"));
        assert_eq!(v[0].line, Some(3));
        assert_eq!(v[0].message, "m\nsecond");
        assert_eq!(v[0].fixable, Some(true));
        assert_eq!(v[1].fixable, Some(false));
    }

    #[test]
    fn json_lines_with_zero_based_columns() {
        let s = spec(
            "",
            &[
                (Field::File, "file"),
                (Field::Line, "line"),
                (Field::Column, "column"),
                (Field::Message, "message"),
            ],
            true,
            1,
        );
        let out = b"{\"file\":\"a.py\",\"line\":1,\"column\":0,\"message\":\"x\"}\n\n{\"file\":\"b.py\",\"line\":2,\"column\":4,\"message\":\"y\"}\n";
        let v = s.parse(out, &root()).unwrap().violations;
        assert_eq!(
            v.iter().map(|v| v.column).collect::<Vec<_>>(),
            [Some(1), Some(5)]
        );
    }

    #[test]
    fn a_note_line_among_json_lines_costs_no_finding() {
        let s = spec(
            "",
            &[(Field::File, "file"), (Field::Message, "message")],
            true,
            0,
        );
        let out = b"{\"file\":\"a.py\",\"message\":\"x\"}\n{\"file\":\"b.py\",\"message\":\"y\"}\nsetup.cfg: note: unused section(s): [mypy-x.*]\n";
        let parsed = s.parse(out, &root()).unwrap();
        assert_eq!(parsed.violations.len(), 2);
        assert_eq!(
            parsed.unparsed.lines,
            [(
                3,
                "setup.cfg: note: unused section(s): [mypy-x.*]".to_string()
            )]
        );
        assert_eq!(parsed.unparsed.total, 1);
        // A line that starts like JSON is meant as a finding: it must parse.
        let truncated = b"{\"file\":\"a.py\",\"message\":\"x\"}\n{\"file\":\"b.py\",\"mess\n";
        let failure = s.parse(truncated, &root()).unwrap_err();
        assert!(
            failure.0.starts_with("output line 2 is not usable"),
            "{failure:?}"
        );
    }

    #[test]
    fn text_around_a_document_is_kept_and_the_findings_too() {
        let s = spec(
            "/items",
            &[(Field::File, "f"), (Field::Message, "m")],
            false,
            0,
        );
        let out = b"warning: a config key is deprecated\n\n{\"items\": [\n  {\"f\": \"a.py\", \"m\": \"x\"}\n]} done\nbye\n";
        let parsed = s.parse(out, &root()).unwrap();
        assert_eq!(parsed.violations.len(), 1);
        assert_eq!(
            parsed.unparsed.lines,
            [
                (1, "warning: a config key is deprecated".to_string()),
                (5, " done".to_string()),
                (6, "bye".to_string())
            ]
        );
    }

    #[test]
    fn only_the_first_hundred_unparsed_lines_are_kept_but_all_are_counted() {
        let s = spec(
            "",
            &[(Field::File, "file"), (Field::Message, "message")],
            true,
            0,
        );
        let out: String = (0..150).map(|i| format!("note {i}\n")).collect();
        let parsed = s.parse(out.as_bytes(), &root()).unwrap();
        assert_eq!(parsed.unparsed.lines.len(), 100);
        assert_eq!(parsed.unparsed.total, 150);
    }

    #[test]
    fn numbers_and_false_are_read_as_tools_write_them() {
        let s = spec(
            "",
            &[
                (Field::File, "file"),
                (Field::Message, "message"),
                (Field::Code, "code"),
                (Field::Severity, "severity"),
                (Field::Line, "line"),
            ],
            false,
            0,
        );
        let out = br#"[{"file":"a.py","message":"m","code":1234,"severity":2,"line":7},
                       {"file":"a.py","message":"m","code":"E1","severity":"warning"},
                       {"file":"a.py","message":"m","code":true,"line":" 12 "}]"#;
        let v = s.parse(out, &root()).unwrap().violations;
        assert_eq!(v[0].code.as_deref(), Some("1234"));
        assert_eq!(v[0].line, Some(7));
        // A flag as the code, a line written as a string: still read.
        assert_eq!(v[2].code.as_deref(), Some("true"));
        assert_eq!(v[2].line, Some(12));
        // A severity qg does not know (a number) counts as an error, never less.
        assert_eq!(v[0].severity, Severity::Error);
        assert_eq!(v[1].severity, Severity::Warning);
        let mut map = BTreeMap::new();
        map.insert(Field::File, "file".to_string());
        map.insert(Field::Message, "message".to_string());
        map.insert(Field::Fixable, "fixable".to_string());
        let with_fixable = JsonSpec::new(JsonSettings {
            source: OutputStream::Stdout,
            violations_path: None,
            json_lines: false,
            field_map: &map,
            fixable_when: None,
            line_offset: 0,
            column_offset: 0,
            severity_default: Some(Severity::Warning),
        })
        .unwrap();
        let out = br#"[{"file":"a.py","message":"m","fixable":false},{"file":"a.py","message":"m","fixable":true},{"file":"a.py","message":"m"}]"#;
        let v = with_fixable.parse(out, &root()).unwrap().violations;
        assert_eq!(
            v.iter().map(|v| v.fixable).collect::<Vec<_>>(),
            [Some(false), Some(true), None]
        );
        assert_eq!(v[2].severity, Severity::Warning, "severity_default applies");
    }

    #[test]
    fn garbage_and_missing_pointer_fail() {
        let s = spec(
            "/items",
            &[(Field::File, "f"), (Field::Message, "m")],
            false,
            0,
        );
        assert!(s.parse(b"not json", &root()).is_err());
        assert!(s.parse(b"{\"other\": []}", &root()).is_err());
        assert!(s.parse(b"", &root()).is_err());
        // The error says what the tool wrote instead of an object.
        let error = s.parse(b"{\"items\": [1]}", &root()).unwrap_err();
        assert!(
            error.0.contains("a violation is a number, not an object"),
            "{error:?}"
        );
        assert!(s.parse(b"{\"items\": [", &root()).is_err());
    }

    #[test]
    fn conditions() {
        let item: Value = serde_json::json!({"fix": {"applicability": "safe"}, "n": 0});
        assert!(Condition::parse("fix/applicability == 'safe'")
            .unwrap()
            .holds(&item));
        assert!(Condition::parse("fix/applicability != \"unsafe\"")
            .unwrap()
            .holds(&item));
        assert!(Condition::parse("fix").unwrap().holds(&item));
        assert!(!Condition::parse("missing").unwrap().holds(&item));
        assert!(Condition::parse("n == 0").unwrap().holds(&item));
        assert!(Condition::parse("a b == 'x'").is_err());
        assert!(Condition::parse("x == unquoted").is_err());
    }

    #[test]
    fn bad_pointer_escape_is_rejected() {
        assert!(to_pointer("a~2b").is_err());
        assert_eq!(to_pointer("a~1b").unwrap(), "/a~1b");
    }
}
