//! Parsers: turn a tool's raw output into [`Violation`]s.
//!
//! Each strategy has a *spec* compiled once from the config (so a bad regex or
//! pointer is a config error, not a runtime surprise) and a `parse` that is pure:
//! bytes in, violations out (and the lines that were not findings), or a
//! [`ParseFailure`] that makes the gate `error`.

pub(crate) mod json;
mod json_stream;
pub(crate) mod text;
mod vocabulary;

pub(crate) use vocabulary::{Field, OutputStream};

use crate::violation::Violation;

use crate::paths::PathContext;

/// A compiled parsing strategy.
#[derive(Debug, Clone)]
pub enum ParserSpec {
    /// `json_violations`: a JSON document (or JSON Lines) holding violation objects.
    Json(json::JsonSpec),
    /// `text_violations`: a regex with named groups applied to the text.
    Text(text::TextSpec),
    /// `exit_code`: only the exit status matters.
    ExitCode,
}

/// Why output could not be turned into violations. Makes the gate `error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure(pub String);

/// What a parser made of one run's output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The findings.
    pub violations: Vec<Violation>,
    /// Lines that are neither findings nor part of one (a tool's notes,
    /// such as mypy's `setup.cfg: note: unused section(s)`): they cost no
    /// finding, and are surfaced rather than dropped.
    pub(crate) unparsed: Unparsed,
}

/// Output lines a structured parser could not read as findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Unparsed {
    /// The first [`Unparsed::KEPT`] of them, with their 1-based line numbers.
    pub(crate) lines: Vec<(usize, String)>,
    /// How many there were in all.
    pub(crate) total: usize,
}

impl Unparsed {
    /// Lines kept for the report; the artifact log has every one.
    pub(crate) const KEPT: usize = 100;

    /// Records one line (its text without the line break).
    pub(crate) fn push(&mut self, number: usize, bytes: &[u8]) {
        self.total += 1;
        if self.lines.len() < Self::KEPT {
            let text = String::from_utf8_lossy(bytes);
            self.lines.push((number, text.trim_end().to_string()));
        }
    }
}

/// A problem in a parser's configuration, pointing at the sub-key to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpecError {
    /// Key under `parsing`, e.g. `pattern` or `field_map.line`.
    pub(crate) key: String,
    /// What is wrong.
    pub(crate) message: String,
}

impl SpecError {
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// Where a parser reads a tool's streams from: capture files in a real run
/// (streamed, never loaded whole for JSON), bytes in tests.
pub trait OutputSource {
    /// A reader over the chosen stream (`both`: stdout, a newline, stderr).
    fn open(&self, stream: OutputStream) -> std::io::Result<Box<dyn std::io::BufRead + '_>>;
}

/// A finished tool's streams, read from its capture files.
impl OutputSource for crate::process::Finished {
    fn open(&self, stream: OutputStream) -> std::io::Result<Box<dyn std::io::BufRead + '_>> {
        Ok(match stream {
            OutputStream::Stdout => Box::new(self.stdout.reader()?),
            OutputStream::Stderr => Box::new(self.stderr.reader()?),
            OutputStream::Both => {
                use std::io::Read;
                let both = (self.stdout.reader()?)
                    .chain(&b"\n"[..])
                    .chain(self.stderr.reader()?);
                Box::new(std::io::BufReader::new(both))
            }
        })
    }
}

/// Output held in memory.
pub struct ToolOutput<'a> {
    /// Whole stdout.
    pub stdout: &'a [u8],
    /// Whole stderr.
    pub stderr: &'a [u8],
}

impl OutputSource for ToolOutput<'_> {
    fn open(&self, stream: OutputStream) -> std::io::Result<Box<dyn std::io::BufRead + '_>> {
        use std::io::Read;
        Ok(match stream {
            OutputStream::Stdout => Box::new(self.stdout),
            OutputStream::Stderr => Box::new(self.stderr),
            OutputStream::Both => Box::new(std::io::BufReader::new(
                self.stdout.chain(&b"\n"[..]).chain(self.stderr),
            )),
        })
    }
}

impl ParserSpec {
    /// Parses one run's output. `ExitCode` never yields violations here; the
    /// caller synthesizes its finding from the exit status.
    pub fn parse(
        &self,
        output: &dyn OutputSource,
        paths: &PathContext,
    ) -> Result<Parsed, ParseFailure> {
        let unreadable = |e: std::io::Error| ParseFailure(format!("cannot read the output: {e}"));
        match self {
            ParserSpec::Json(spec) => {
                spec.parse_reader(output.open(spec.source).map_err(unreadable)?, paths)
            }
            ParserSpec::Text(spec) => Ok(Parsed {
                violations: spec.parse(output, paths).map_err(unreadable)?,
                unparsed: Unparsed::default(),
            }),
            ParserSpec::ExitCode => Ok(Parsed::default()),
        }
    }
}

/// Adds a signed offset to a 1-based position; anything below 1 means "unknown".
pub(crate) fn shift(value: Option<i64>, offset: i64) -> Option<u64> {
    value
        .and_then(|v| v.checked_add(offset))
        .filter(|v| *v >= 1)
        .map(|v| v as u64)
}
