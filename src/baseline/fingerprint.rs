//! A violation's stable identity: what it is (gate, rule, path, the flagged
//! line's content, the message with its volatile parts normalized), never
//! where it is, so an edit elsewhere in the file keeps it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::outcome::GateResult;
use crate::violation::Violation;

/// ANSI escape sequences some tools put in messages.
static ANSI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap());
/// Line numbers inside a message (`defined on line 12`, `a.py:12:5`).
static LINE_NUMBERS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(lines?) \d+|(\.pyi?|\.ipynb):\d+(:\d+)?").unwrap());

/// The message as it is compared: no ANSI, no absolute root prefix, no
/// line numbers, whitespace runs collapsed.
pub(crate) fn normalize_message(message: &str, root: &str) -> String {
    let plain = ANSI.replace_all(message, "");
    let relative = match root.is_empty() {
        true => plain.into_owned(),
        false => plain.replace(&format!("{root}/"), ""),
    };
    let unnumbered = LINE_NUMBERS.replace_all(&relative, |caps: &regex::Captures<'_>| {
        match (caps.get(1), caps.get(2)) {
            (Some(word), _) => format!("{} #", word.as_str()),
            (None, Some(suffix)) => format!("{}:#", suffix.as_str()),
            (None, None) => String::new(),
        }
    });
    unnumbered.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Hash of a source line with every whitespace byte removed (so
/// re-indenting or reformatting the line keeps it); `""` for an empty line.
pub(crate) fn line_hash(line: &[u8]) -> String {
    let dense: Vec<u8> = line
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    match dense.is_empty() {
        true => String::new(),
        false => crate::git::hash_blob(&dense)[..16].to_string(),
    }
}

/// The fingerprint of a violation whose identity parts are these, the
/// `occurrence`-th (from 0) among violations sharing all of them.
fn fingerprint(gate: &str, v: &Violation, message: &str, occurrence: usize) -> String {
    let identity = format!(
        "qg/v2\0{gate}\0{}\0{}\0{}\0{message}\0{occurrence}",
        v.file.as_deref().unwrap_or(""),
        v.code.as_deref().unwrap_or(""),
        v.tracking.line_hash,
    );
    crate::git::hash_blob(identity.as_bytes())
}

/// Fills in every violation's line hash and fingerprint, reading each
/// flagged file once. Notebook lines count within a cell, so a notebook
/// finding has no line hash (its message and rule identify it).
pub(crate) fn stamp(root: &Path, gates: &mut [GateResult]) {
    let root_text = root.to_string_lossy().into_owned();
    let mut sources = Sources::new(root);
    for gate in gates.iter_mut() {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for v in &mut gate.violations {
            v.tracking.line_hash = match (&v.file, v.line, v.cell) {
                (Some(file), Some(line), None) => sources.line_hash(file, line),
                _ => String::new(),
            };
            let message = normalize_message(&v.message, &root_text);
            let key = format!(
                "{}\0{}\0{}\0{message}",
                v.file.as_deref().unwrap_or(""),
                v.code.as_deref().unwrap_or(""),
                v.tracking.line_hash
            );
            let occurrence = seen.entry(key).or_insert(0);
            v.tracking.fingerprint = Some(fingerprint(&gate.id, v, &message, *occurrence));
            *occurrence += 1;
        }
    }
}

/// The project's files, read when first needed, split into lines.
struct Sources<'r> {
    root: &'r Path,
    lines: HashMap<String, Vec<String>>,
}

impl<'r> Sources<'r> {
    fn new(root: &'r Path) -> Sources<'r> {
        Sources {
            root,
            lines: HashMap::new(),
        }
    }

    /// The hash of 1-based `line` of root-relative `file` (`""` when the
    /// file or the line cannot be read).
    fn line_hash(&mut self, file: &str, line: u64) -> String {
        let root = self.root;
        let lines = self.lines.entry(file.to_string()).or_insert_with(|| {
            let bytes = std::fs::read(crate::file_name::join(root, file)).unwrap_or_default();
            bytes.split(|b| *b == b'\n').map(line_hash).collect()
        });
        usize::try_from(line)
            .ok()
            .and_then(|l| lines.get(l.checked_sub(1)?))
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_parts_of_a_message_are_normalized() {
        let root = "/home/u/proj";
        assert_eq!(
            normalize_message(
                "\x1b[1m\"f\"\x1b[0m defined on line 12 in /home/u/proj/a.py",
                root
            ),
            "\"f\" defined on line # in a.py"
        );
        assert_eq!(
            normalize_message("see pkg/b.py:40:3  for   details", root),
            "see pkg/b.py:# for details"
        );
        assert_eq!(
            normalize_message("Expected 2 arguments", root),
            "Expected 2 arguments"
        );
    }

    #[test]
    fn line_hash_ignores_whitespace_only() {
        assert_eq!(line_hash(b"  x = f( 1 )\r"), line_hash(b"x=f(1)"));
        assert_ne!(line_hash(b"x = f(1)"), line_hash(b"x = f(2)"));
        assert_eq!(line_hash(b"   \t"), "");
    }
}
