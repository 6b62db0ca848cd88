//! `text_violations`: a regex whose named groups (`file`, `line`, `message`, …)
//! pick violation fields out of free text, plus literal `defaults` that may
//! interpolate groups as `{group}`.

use std::collections::BTreeMap;

use regex::{Captures, Regex, RegexBuilder};

use std::io::Read;

use super::{shift, OutputSource, SpecError};
use super::{Field, OutputStream};
use crate::paths::PathContext;
use crate::violation::{Severity, Violation};

/// Compiled `text_violations` settings: one or more rules, each a regex
/// over one of the tool's streams, applied in order; every match of every
/// rule is one violation.
#[derive(Debug, Clone)]
pub struct TextSpec {
    rules: Vec<TextRule>,
    severity_default: Severity,
    line_offset: i64,
    column_offset: i64,
}

/// One `pattern` with its `defaults`, read from one stream.
#[derive(Debug, Clone)]
struct TextRule {
    source: OutputStream,
    pattern: Regex,
    /// Fields the regex captures directly (group name = field name).
    captured: Vec<Field>,
    defaults: BTreeMap<Field, Template>,
}

/// Raw settings, as read from the config.
pub(crate) struct TextSettings<'a> {
    /// The rules; `key` is where each sits under `parsing` (`""` for the
    /// single `pattern` form, `patterns[1].` for the list form).
    pub(crate) rules: Vec<RuleSettings<'a>>,
    pub(crate) severity_default: Option<Severity>,
    pub(crate) line_offset: i64,
    pub(crate) column_offset: i64,
}

/// One rule's raw settings.
pub(crate) struct RuleSettings<'a> {
    /// Key prefix for errors: `""` or `patterns[N].`.
    pub(crate) key: String,
    pub(crate) source: OutputStream,
    pub(crate) pattern: &'a str,
    pub(crate) defaults: Option<&'a BTreeMap<Field, String>>,
}

impl TextSpec {
    /// Compiles every rule's regex (multi-line: `^`/`$` match at line
    /// ends) and checks that every `{placeholder}` names one of its groups.
    pub(crate) fn new(settings: TextSettings<'_>) -> Result<TextSpec, SpecError> {
        let rules = settings
            .rules
            .iter()
            .map(TextRule::new)
            .collect::<Result<Vec<_>, _>>()?;
        if rules.is_empty() {
            return Err(SpecError::new(
                "patterns",
                "lists no pattern; give at least one",
            ));
        }
        Ok(TextSpec {
            rules,
            severity_default: settings.severity_default.unwrap_or(Severity::Error),
            line_offset: settings.line_offset,
            column_offset: settings.column_offset,
        })
    }

    /// Every match of every rule is one violation. Text that no rule
    /// matches is simply not a violation (the caller checks the exit code).
    pub(crate) fn parse(
        &self,
        output: &dyn OutputSource,
        paths: &PathContext,
    ) -> std::io::Result<Vec<Violation>> {
        let mut violations = Vec::new();
        for rule in &self.rules {
            // A regex may span lines, so a stream is matched as a whole.
            let mut bytes = Vec::new();
            output.open(rule.source)?.read_to_end(&mut bytes)?;
            let text = String::from_utf8_lossy(&bytes);
            violations.extend(
                rule.pattern
                    .captures_iter(&text)
                    .map(|caps| self.violation(rule, &caps, paths)),
            );
        }
        Ok(violations)
    }

    fn violation(&self, rule: &TextRule, caps: &Captures<'_>, paths: &PathContext) -> Violation {
        let text = |field: Field| rule.field_text(caps, field);
        let number = |field: Field| text(field).and_then(|t| t.trim().parse::<i64>().ok());
        let severity = text(Field::Severity)
            .map(|w| Severity::from_tool_word(&w).unwrap_or(Severity::Error))
            .unwrap_or(self.severity_default);
        Violation {
            file: text(Field::File).map(|f| paths.normalize(&f)),
            line: shift(number(Field::Line), self.line_offset),
            column: shift(number(Field::Column), self.column_offset),
            end_line: shift(number(Field::EndLine), self.line_offset),
            end_column: shift(number(Field::EndColumn), self.column_offset),
            code: text(Field::Code),
            message: text(Field::Message).unwrap_or_else(|| caps[0].trim().to_string()),
            severity,
            fixable: text(Field::Fixable).map(|t| is_yes(&t)),
            hint: text(Field::Hint),
            url: text(Field::Url),
            cell: number(Field::Cell)
                .and_then(|c| u64::try_from(c).ok())
                .filter(|c| *c >= 1),
            tracking: Default::default(),
        }
        .settle_positions()
    }
}

impl TextRule {
    fn new(settings: &RuleSettings<'_>) -> Result<TextRule, SpecError> {
        let key = |sub: &str| format!("{}{sub}", settings.key);
        // crlf: a tool on Windows ends its lines with \r\n; `$` matches
        // before either ending and `.` never takes the \r into a field.
        let pattern = RegexBuilder::new(settings.pattern)
            .multi_line(true)
            .crlf(true)
            .build()
            .map_err(|e| SpecError::new(key("pattern"), format!("invalid regex: {e}")))?;
        let groups: Vec<&str> = pattern.capture_names().flatten().collect();
        let captured: Vec<Field> = Field::ALL
            .into_iter()
            .filter(|f| groups.contains(&f.name()))
            .collect();
        let mut defaults = BTreeMap::new();
        for (field, text) in settings.defaults.into_iter().flatten() {
            let key = key(&format!("defaults.{}", field.name()));
            let template = Template::parse(text).map_err(|m| SpecError::new(&key, m))?;
            if let Some(missing) = template.groups().find(|g| !groups.contains(g)) {
                return Err(SpecError::new(
                    key,
                    format!(
                        "placeholder `{{{missing}}}` is not a named group of `pattern` (groups: {})",
                        list_or_none(&groups)
                    ),
                ));
            }
            defaults.insert(*field, template);
        }
        let rule = TextRule {
            source: settings.source,
            pattern,
            captured,
            defaults,
        };
        if !rule.provides(Field::File) {
            return Err(SpecError::new(
                key("pattern"),
                "needs a `(?P<file>...)` group or a `defaults.file` entry",
            ));
        }
        Ok(rule)
    }

    fn provides(&self, field: Field) -> bool {
        self.captured.contains(&field) || self.defaults.contains_key(&field)
    }

    /// A captured group wins over a default; an empty capture counts as absent.
    fn field_text(&self, caps: &Captures<'_>, field: Field) -> Option<String> {
        caps.name(field.name())
            .map(|m| m.as_str().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| self.defaults.get(&field).map(|t| t.render(caps)))
    }
}

fn is_yes(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "true" | "yes" | "1"
    )
}

fn list_or_none(groups: &[&str]) -> String {
    if groups.is_empty() {
        "none".to_string()
    } else {
        groups.join(", ")
    }
}

/// A default value: literal text with `{group}` placeholders (`{{`/`}}` escape).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Template(Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Group(String),
}

impl Template {
    fn parse(text: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        return Err(format!(
                            "`{text}` has a malformed placeholder `{{{name}`; write `{{group}}`, or `{{{{` for a literal brace"
                        ));
                    }
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    pieces.push(Piece::Group(name));
                }
                '}' => {
                    return Err(format!(
                        "`{text}` has an unmatched `}}`; write `}}}}` for a literal brace"
                    ))
                }
                other => literal.push(other),
            }
        }
        pieces.push(Piece::Literal(literal));
        pieces.retain(|p| !matches!(p, Piece::Literal(l) if l.is_empty()));
        Ok(Template(pieces))
    }

    fn groups(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::Group(g) => Some(g.as_str()),
            Piece::Literal(_) => None,
        })
    }

    fn render(&self, caps: &Captures<'_>) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Literal(l) => l.as_str(),
                Piece::Group(g) => caps.name(g).map_or("", |m| m.as_str()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn spec(pattern: &str, defaults: &[(Field, &str)]) -> Result<TextSpec, SpecError> {
        let defaults: BTreeMap<Field, String> =
            defaults.iter().map(|(f, t)| (*f, t.to_string())).collect();
        TextSpec::new(TextSettings {
            rules: vec![RuleSettings {
                key: String::new(),
                source: OutputStream::Stdout,
                pattern,
                defaults: Some(&defaults),
            }],
            severity_default: Some(Severity::Warning),
            line_offset: 0,
            column_offset: 0,
        })
    }

    fn parse(spec: &TextSpec, stdout: &[u8], stderr: &[u8]) -> Vec<Violation> {
        let output = crate::parse::ToolOutput { stdout, stderr };
        spec.parse(&output, &root()).unwrap()
    }

    fn root() -> PathContext {
        PathContext::new(Path::new("/repo"), Path::new("/repo"))
    }

    #[test]
    fn lines_ended_with_crlf_parse_as_lines_ended_with_lf() {
        let s = spec(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<message>.*)$", &[]).unwrap();
        let crlf = parse(&s, b"a.py:3: broken\r\nb.py:9: odd\r\n", b"");
        let lf = parse(&s, b"a.py:3: broken\nb.py:9: odd\n", b"");
        assert_eq!(crlf.len(), 2);
        assert_eq!(crlf[1].message, "odd");
        assert_eq!(crlf, lf);
    }

    #[test]
    fn groups_and_interpolated_defaults() {
        let s = spec(
            r"^(?P<file>[^:]+):(?P<line>\d+): (?P<kind>\w+): (?P<message>.*)$",
            &[(Field::Code, "X-{kind}"), (Field::Hint, "{{literal}}")],
        )
        .unwrap();
        let v = parse(&s, b"a.py:3: bad: broken\nnoise\nb.py:9: odd: thing\n", b"");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].file.as_deref(), Some("a.py"));
        assert_eq!(v[0].line, Some(3));
        assert_eq!(v[0].code.as_deref(), Some("X-bad"));
        assert_eq!(v[0].hint.as_deref(), Some("{literal}"));
        assert_eq!(v[1].severity, Severity::Warning);
    }

    #[test]
    fn rules_read_their_own_streams_in_order() {
        let diff = BTreeMap::from([(Field::Code, "FORMAT".to_string())]);
        let syntax = BTreeMap::from([(Field::Code, "syntax-error".to_string())]);
        let s = TextSpec::new(TextSettings {
            rules: vec![
                RuleSettings {
                    key: "patterns[0].".into(),
                    source: OutputStream::Stdout,
                    pattern: r"^--- (?P<file>\S+)$",
                    defaults: Some(&diff),
                },
                RuleSettings {
                    key: "patterns[1].".into(),
                    source: OutputStream::Stderr,
                    pattern: r"^error: Failed to parse (?P<file>.+?):(?P<line>\d+):(?P<column>\d+): (?P<message>.+)$",
                    defaults: Some(&syntax),
                },
            ],
            severity_default: None,
            line_offset: 0,
            column_offset: 0,
        })
        .unwrap();
        let v = parse(
            &s,
            b"--- ugly.py\n+++ ugly.py\nerror: Failed to parse x.py:1:1: not on stdout\n",
            b"error: Failed to parse bad.py:1:7: Expected a parameter\n--- not.py\n",
        );
        let found: Vec<_> = v
            .iter()
            .map(|v| {
                (
                    v.file.as_deref().unwrap(),
                    v.line,
                    v.code.as_deref().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                ("ugly.py", None, "FORMAT"),
                ("bad.py", Some(1), "syntax-error")
            ]
        );
        assert_eq!(v[1].message, "Expected a parameter");
        let bad = TextSpec::new(TextSettings {
            rules: vec![RuleSettings {
                key: "patterns[3].".into(),
                source: OutputStream::Stdout,
                pattern: "(",
                defaults: None,
            }],
            severity_default: None,
            line_offset: 0,
            column_offset: 0,
        });
        assert_eq!(bad.unwrap_err().key, "patterns[3].pattern");
    }

    #[test]
    fn placeholder_without_group_is_rejected() {
        let err = spec(r"(?P<file>\S+)", &[(Field::Code, "{nope}")]).unwrap_err();
        assert_eq!(err.key, "defaults.code");
        assert!(err.message.contains("`{nope}`"), "{}", err.message);
        // The message lists the groups there are, to pick from.
        assert!(err.message.ends_with("(groups: file)"), "{}", err.message);
        let err = spec("x", &[(Field::File, "{nope}")]).unwrap_err();
        assert!(err.message.ends_with("(groups: none)"), "{}", err.message);
    }

    #[test]
    fn fixable_words_and_notebook_cells() {
        let s = spec(
            r"^(?P<file>\S+) cell (?P<cell>-?\d+): (?P<message>\w+) fix=(?P<fixable>\w+)$",
            &[],
        )
        .unwrap();
        let v = parse(
            &s,
            b"a.ipynb cell 2: one fix=yes\na.ipynb cell 0: two fix=no\na.ipynb cell 1: three fix=True\n",
            b"",
        );
        let read: Vec<_> = v.iter().map(|v| (v.cell, v.fixable)).collect();
        // Cells count from 1: a 0 is no cell.
        assert_eq!(
            read,
            [
                (Some(2), Some(true)),
                (None, Some(false)),
                (Some(1), Some(true))
            ]
        );
    }

    #[test]
    fn invalid_regex_and_missing_file_are_rejected() {
        assert_eq!(spec(r"(?P<file>", &[]).unwrap_err().key, "pattern");
        assert!(spec(r"(?P<message>.*)", &[])
            .unwrap_err()
            .message
            .contains("file"));
        assert!(spec(r"(?P<message>.*)", &[(Field::File, "setup.cfg")]).is_ok());
    }

    #[test]
    fn unmatched_braces_are_rejected() {
        assert!(Template::parse("a}b").is_err());
        assert!(Template::parse("{a b}").is_err());
        assert!(Template::parse("{{x}}").is_ok());
    }
}
