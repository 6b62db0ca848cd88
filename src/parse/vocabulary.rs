//! The words a config uses to tell a parser what to read: which stream,
//! and which violation field a regex group or JSON path fills.

use serde::Deserialize;

/// Which of the tool's streams a parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    #[default]
    Stdout,
    Stderr,
    Both,
}

/// The violation fields a parser can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum Field {
    File,
    Line,
    Column,
    EndLine,
    EndColumn,
    Code,
    Message,
    Severity,
    Hint,
    Url,
    Fixable,
    Cell,
}

impl Field {
    /// The YAML spelling of the field.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Field::File => "file",
            Field::Line => "line",
            Field::Column => "column",
            Field::EndLine => "end_line",
            Field::EndColumn => "end_column",
            Field::Code => "code",
            Field::Message => "message",
            Field::Severity => "severity",
            Field::Hint => "hint",
            Field::Url => "url",
            Field::Fixable => "fixable",
            Field::Cell => "cell",
        }
    }

    /// Every field, for matching regex group names.
    pub(crate) const ALL: [Field; 12] = [
        Field::File,
        Field::Line,
        Field::Column,
        Field::EndLine,
        Field::EndColumn,
        Field::Code,
        Field::Message,
        Field::Severity,
        Field::Hint,
        Field::Url,
        Field::Fixable,
        Field::Cell,
    ];
}
