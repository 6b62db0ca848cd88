//! The errors that stop a run before any gate result exists (exit status 2).

use std::fmt;

/// A configuration problem, located as precisely as the YAML allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The config file as the user named it (or `<embedded default>`).
    pub(crate) file: String,
    /// 1-based line of the offending key, when known.
    pub(crate) line: Option<usize>,
    /// 1-based column of the offending key, when known.
    pub(crate) column: Option<usize>,
    /// Dotted key path, e.g. `gates.mypy.parsing.pattern`.
    pub(crate) key: Option<String>,
    /// What is wrong and, where possible, how to fix it.
    pub(crate) message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": ")?;
        // One line, always, and nothing a terminal would interpret: keys come
        // from the file (a quoted key may hold a newline or an escape).
        if let Some(key) = &self.key {
            write!(f, "{}: ", key.escape_debug())?;
        }
        let folded: Vec<&str> = self.message.split_whitespace().collect();
        write!(f, "{}", crate::quote::neutralize(&folded.join(" ")))
    }
}

/// Everything that makes qg refuse to run (as opposed to a gate that errors).
#[derive(Debug)]
pub enum QgError {
    /// Invalid or unreadable configuration.
    Config(ConfigError),
    /// Bad command-line usage: unknown gate, path outside the root, ...
    Usage(String),
    /// A git repository problem that makes the requested scope impossible.
    Git(String),
    /// An I/O failure, with what qg was doing when it happened.
    Io {
        /// What qg was doing (`cannot write .st3/state.json`).
        context: String,
        /// The failure itself.
        source: std::io::Error,
    },
    /// A bug in qg: a state it was built never to reach.
    Internal(String),
    /// The run was cancelled from outside (an MCP client): its tools were
    /// killed and nothing was recorded.
    Cancelled,
    /// An automatic context (`qg lsp`, `qg mcp`, `qg watch`) in a
    /// repository whose commands the user has not trusted: why, naming
    /// `qg trust`.
    Untrusted(String),
}

impl fmt::Display for QgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QgError::Config(e) => write!(f, "invalid config: {e}"),
            QgError::Usage(m) | QgError::Git(m) | QgError::Untrusted(m) => f.write_str(m),
            QgError::Io { context, source } => write!(f, "{context}: {source}"),
            QgError::Internal(m) => write!(f, "{m} (a bug in qg; please report it)"),
            QgError::Cancelled => {
                f.write_str("cancelled: the tools were stopped and nothing was recorded")
            }
        }
    }
}

impl std::error::Error for QgError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            QgError::Config(e) => Some(e),
            QgError::Io { source, .. } => Some(source),
            QgError::Usage(_)
            | QgError::Git(_)
            | QgError::Internal(_)
            | QgError::Cancelled
            | QgError::Untrusted(_) => None,
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for QgError {
    fn from(e: ConfigError) -> Self {
        QgError::Config(e)
    }
}

impl QgError {
    /// Wraps an I/O error with what qg was doing when it happened.
    pub(crate) fn io(context: impl fmt::Display, source: std::io::Error) -> QgError {
        QgError::Io {
            context: context.to_string(),
            source,
        }
    }
}
