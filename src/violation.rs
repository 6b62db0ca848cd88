//! The one violation record every gate's output is normalized into.

use serde::{Deserialize, Serialize};

/// How serious a finding is. Ordered: `Info < Warning < Error`, so a gate's
/// `fail_on` threshold is a simple comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Notes and informational findings (mypy `note`, pyright `information`).
    Info,
    /// Warnings.
    Warning,
    /// Errors.
    Error,
}

impl Severity {
    /// Maps the many spellings tools use onto the three levels qg reports.
    /// Tool-agnostic on purpose: it knows words, not tools.
    pub(crate) fn from_tool_word(word: &str) -> Option<Severity> {
        match word.trim().to_ascii_lowercase().as_str() {
            "error" | "err" | "e" | "fatal" | "critical" | "blocker" | "major" | "high" => {
                Some(Severity::Error)
            }
            "warning" | "warn" | "w" | "minor" | "medium" => Some(Severity::Warning),
            "info" | "information" | "informational" | "note" | "hint" | "i" | "low"
            | "suggestion" => Some(Severity::Info),
            _ => None,
        }
    }

    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One finding, in the one shape every tool's output becomes (the book's "Output formats").
///
/// `file` is root-relative with `/` separators (absent only for findings that
/// belong to no file, such as an `exit_code` gate's failure); `line` and
/// `column` are 1-based; `end_column` is exclusive, as ruff reports it.
/// Serialized, it is a violation of the `--format json` report, and reads
/// back from one (`qg merge`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Root-relative path, `/`-separated.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::file_name::serialize_option",
        deserialize_with = "crate::file_name::deserialize_option"
    )]
    pub file: Option<String>,
    /// 1-based line, `null` for file-level findings.
    pub line: Option<u64>,
    /// 1-based column, `null` when unknown.
    pub column: Option<u64>,
    /// 1-based end line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// 1-based, exclusive end column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u64>,
    /// The tool's rule code (`F401`, `assignment`, `reportAssignmentType`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The tool's message, whole (may span lines).
    pub message: String,
    /// Normalized severity.
    pub severity: Severity,
    /// Whether the tool can fix it safely by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixable: Option<bool>,
    /// Extra guidance the tool attached (mypy's notes, for example).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Documentation link for the rule, when the tool gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For a notebook (`.ipynb`): the 1-based cell the finding is in;
    /// `line` and `column` are then within that cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u64>,
    /// Identity across runs and edits, and standing against the baseline
    /// (filled in after the tools ran; see the `baseline` module).
    #[serde(flatten)]
    pub(crate) tracking: Tracking,
}

/// What qg learns about a violation after its tool reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tracking {
    /// Stable fingerprint: gate, rule, path, the flagged line's content and
    /// the normalized message, plus an occurrence index (never the line
    /// number, so unrelated edits keep it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fingerprint: Option<Fingerprint>,
    /// `new` or `unchanged` when a baseline is in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_state: Option<BaselineState>,
    /// Hash of the flagged line with whitespace removed (`""` for a
    /// file-level finding or an unreadable line).
    #[serde(skip)]
    pub(crate) line_hash: String,
    /// The message as the baseline compares it, when that differs from
    /// the message (see `baseline::fingerprint::normalize_message`).
    #[serde(skip)]
    pub(crate) normalized_message: Option<String>,
}

/// A SHA-1 fingerprint, held as bytes (a run may hold 100,000) and
/// written as 40 hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Fingerprint(pub(crate) [u8; 20]);

impl Fingerprint {
    /// The first 8 bytes: enough to tell one file's findings apart.
    pub(crate) fn short(&self) -> u64 {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        u64::from_be_bytes(head)
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

/// Lower-case hex of `bytes` (fingerprints, line hashes): written out by
/// hand because the formatting machinery was a tenth of the cost of
/// fingerprinting 100,000 findings.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

impl Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::str::FromStr for Fingerprint {
    type Err = String;

    /// 40 hex digits, as [`Display`](std::fmt::Display) writes them.
    fn from_str(text: &str) -> Result<Fingerprint, String> {
        let bad = || format!("`{text}` is not a fingerprint (40 hex digits)");
        if text.len() != 40 || !text.is_ascii() {
            return Err(bad());
        }
        let mut bytes = [0u8; 20];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(Fingerprint(bytes))
    }
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A violation measured against the committed baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BaselineState {
    /// Not in the baseline: it fails the gate.
    New,
    /// Held by the baseline: reported as known, does not fail the gate.
    Unchanged,
}

impl BaselineState {
    /// The JSON / SARIF spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BaselineState::New => "new",
            BaselineState::Unchanged => "unchanged",
        }
    }
}

impl Violation {
    /// The message as fingerprints and the baseline compare it.
    pub(crate) fn normalized_message(&self) -> &str {
        self.tracking
            .normalized_message
            .as_deref()
            .unwrap_or(&self.message)
    }

    /// True when the violation sits at or above `threshold`.
    pub(crate) fn fails_at(&self, threshold: Severity) -> bool {
        self.severity >= threshold
    }

    /// True when it fails its gate: at or above the gate's `threshold`,
    /// and not a finding the committed baseline knows.
    pub(crate) fn fails_gate(&self, threshold: Severity) -> bool {
        self.fails_at(threshold) && self.tracking.baseline_state != Some(BaselineState::Unchanged)
    }

    /// Drops positions that mean nothing without the one they extend: no
    /// line means a file-level finding (no column, no end), and an end
    /// column needs a start column. (mypy's file-level findings carry
    /// `line: -1` with `end_column: 0`, which an offset turns into 1.)
    pub(crate) fn settle_positions(mut self) -> Violation {
        if self.line.is_none() {
            self.column = None;
            self.end_line = None;
            self.end_column = None;
        }
        if self.column.is_none() {
            self.end_column = None;
        }
        self
    }

    /// Sort key: file, then position (cell first), then code, so reports
    /// are stable.
    pub fn sort_key(&self) -> (Option<&str>, u64, u64, u64, Option<&str>) {
        (
            self.file.as_deref(),
            self.cell.unwrap_or(0),
            self.line.unwrap_or(0),
            self.column.unwrap_or(0),
            self.code.as_deref(),
        )
    }

    /// `cell 2:` for a finding in a notebook cell (as ruff prints it), else
    /// nothing: the prefix of a `line:column` position.
    pub(crate) fn cell_prefix(&self) -> String {
        self.cell.map(|c| format!("cell {c}:")).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_words_map_to_three_levels() {
        assert_eq!(Severity::from_tool_word("note"), Some(Severity::Info));
        assert_eq!(
            Severity::from_tool_word("information"),
            Some(Severity::Info)
        );
        assert_eq!(Severity::from_tool_word("Warning"), Some(Severity::Warning));
        assert_eq!(Severity::from_tool_word("error"), Some(Severity::Error));
        assert_eq!(Severity::from_tool_word("banana"), None);
        assert!(Severity::Error > Severity::Warning && Severity::Warning > Severity::Info);
    }
}
