//! A violation's stable identity: what it is (gate, rule, path, the flagged
//! line's content, the message with its volatile parts normalized), never
//! where it is, so an edit elsewhere in the file keeps it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::outcome::GateResult;
use crate::violation::{hex, Fingerprint, Violation};

/// ANSI escape sequences some tools put in messages.
static ANSI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap());
/// Line numbers inside a message (`defined on line 12`, `a.py:12:5`).
static LINE_NUMBERS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(lines?) \d+|(\.pyi?|\.ipynb):\d+(:\d+)?").unwrap());

/// A Python file's path written with backslashes (`pkg\b.py`), as tools
/// on Windows write it.
static BACKSLASHED_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\w.\-]+(\\[\w.\-]+)+\.pyi?\b").unwrap());

/// The message as it is compared: no ANSI, no absolute root prefix, no
/// line numbers, paths with `/` whatever the platform, whitespace runs
/// collapsed. Borrowed when that changes
/// nothing, as for most messages.
pub(crate) fn normalize_message<'m>(message: &'m str, root: &str) -> Cow<'m, str> {
    let volatile = message.contains('\x1b')
        || message.contains('\\')
        || message.bytes().any(|b| b.is_ascii_digit())
        || (!root.is_empty() && message.contains(root));
    if !volatile {
        return collapse_whitespace(message);
    }
    let plain = ANSI.replace_all(message, "");
    // Either separator: a tool on Windows may write `C:\x\a.py` or `C:/x/a.py`.
    let relative = match !root.is_empty() && plain.contains(root) {
        true => plain
            .replace(&format!("{root}/"), "")
            .replace(&format!("{root}\\"), ""),
        false => plain.into_owned(),
    };
    let relative = BACKSLASHED_PATH.replace_all(&relative, |caps: &regex::Captures<'_>| {
        caps[0].replace('\\', "/")
    });
    let unnumbered = LINE_NUMBERS.replace_all(&relative, |caps: &regex::Captures<'_>| {
        match (caps.get(1), caps.get(2)) {
            (Some(word), _) => format!("{} #", word.as_str()),
            (None, Some(suffix)) => format!("{}:#", suffix.as_str()),
            (None, None) => String::new(),
        }
    });
    match collapse_whitespace(&unnumbered) {
        Cow::Borrowed(same) if same == message => Cow::Borrowed(message),
        other => Cow::Owned(other.into_owned()),
    }
}

/// `text` with each run of whitespace one space, trimmed.
fn collapse_whitespace(text: &str) -> Cow<'_, str> {
    let tidy = !text.starts_with(char::is_whitespace)
        && !text.ends_with(char::is_whitespace)
        && !text
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_whitespace() && w[1].is_ascii_whitespace())
        && !text.bytes().any(|b| b.is_ascii_whitespace() && b != b' ');
    match tidy {
        true => Cow::Borrowed(text),
        false => Cow::Owned(text.split_whitespace().collect::<Vec<_>>().join(" ")),
    }
}

/// Hash of a source line with every whitespace byte removed (so
/// re-indenting or reformatting the line keeps it); `""` for an empty line.
pub(crate) fn line_hash(line: &[u8]) -> String {
    let mut hasher = sha1_smol::Sha1::new();
    let mut any = false;
    for part in line
        .split(|b| b.is_ascii_whitespace())
        .filter(|p| !p.is_empty())
    {
        hasher.update(part);
        any = true;
    }
    match any {
        true => hex(&hasher.digest().bytes()[..8]),
        false => String::new(),
    }
}

/// The fingerprint of a violation, the `occurrence`-th (from 0) among
/// violations sharing all its identity parts: SHA-1 (stable across
/// platforms and releases) of the parts, each ended by a NUL.
fn fingerprint(gate: &str, v: &Violation, occurrence: usize) -> Fingerprint {
    let mut hasher = sha1_smol::Sha1::new();
    for part in [
        "qg/v2",
        gate,
        v.file.as_deref().unwrap_or(""),
        v.code.as_deref().unwrap_or(""),
        &v.tracking.line_hash,
        v.normalized_message(),
    ] {
        hasher.update(part.as_bytes());
        hasher.update(b"\0");
    }
    hasher.update(occurrence.to_string().as_bytes());
    Fingerprint(hasher.digest().bytes())
}

/// Fills in every violation's line hash, normalized message and
/// fingerprint, reading each flagged file once. Notebook lines count within
/// a cell, so a notebook finding has no line hash (its message and rule
/// identify it), nor has the finding of a gate that does not match lines.
/// The hashing runs on every core: a run may report 100,000.
pub(crate) fn stamp(root: &Path, gates: &mut [GateResult]) {
    let root_text = root.to_string_lossy().into_owned();
    for gate in gates.iter_mut() {
        let match_lines = gate.match_lines;
        in_parallel(&mut gate.violations, |part| {
            let mut sources = Sources::new(root);
            for v in part {
                v.tracking.line_hash = match (&v.file, v.line, v.cell, match_lines) {
                    (Some(file), Some(line), None, true) => sources.line_hash(file, line),
                    _ => String::new(),
                };
                v.tracking.normalized_message = match normalize_message(&v.message, &root_text) {
                    Cow::Borrowed(_) => None,
                    Cow::Owned(changed) => Some(changed),
                };
            }
        });
        let occurrences = occurrences(&gate.violations);
        let mut numbered: Vec<(&mut Violation, usize)> =
            gate.violations.iter_mut().zip(occurrences).collect();
        let id = crate::config::baseline_gate(&gate.id);
        in_parallel(&mut numbered, |part| {
            for (v, occurrence) in part {
                v.tracking.fingerprint = Some(fingerprint(id, v, *occurrence));
            }
        });
    }
}

/// Each violation's index among the earlier ones that share its file,
/// rule, line hash and normalized message.
fn occurrences(violations: &[Violation]) -> Vec<usize> {
    let mut seen: rustc_hash::FxHashMap<(&str, &str, &str, &str), usize> = Default::default();
    violations
        .iter()
        .map(|v| {
            let key = (
                v.file.as_deref().unwrap_or(""),
                v.code.as_deref().unwrap_or(""),
                v.tracking.line_hash.as_str(),
                v.normalized_message(),
            );
            let count = seen.entry(key).or_insert(0);
            *count += 1;
            *count - 1
        })
        .collect()
}

/// Runs `work` on contiguous parts of `items`, one per core.
fn in_parallel<T: Send>(items: &mut [T], work: impl Fn(&mut [T]) + Sync) {
    let threads = crate::process::cores();
    if items.len() < 1000 || threads == 1 {
        work(items);
        return;
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for part in items.chunks_mut(chunk) {
            let work = &work;
            scope.spawn(move || work(part));
        }
    });
}

/// The project's files, read when first needed; a line is hashed only
/// when a violation points at it.
struct Sources<'r> {
    root: &'r Path,
    files: HashMap<String, Source>,
}

/// One file's bytes and where each line starts.
struct Source {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl<'r> Sources<'r> {
    fn new(root: &'r Path) -> Sources<'r> {
        Sources {
            root,
            files: HashMap::new(),
        }
    }

    /// The hash of 1-based `line` of root-relative `file` (`""` when the
    /// file or the line cannot be read).
    fn line_hash(&mut self, file: &str, line: u64) -> String {
        let root = self.root;
        let source = self.files.entry(file.to_string()).or_insert_with(|| {
            let bytes = std::fs::read(crate::file_name::join(root, file)).unwrap_or_default();
            let starts = std::iter::once(0)
                .chain(
                    bytes
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b == b'\n')
                        .map(|(i, _)| i + 1),
                )
                .collect();
            Source { bytes, starts }
        });
        let Some(index) = usize::try_from(line).ok().and_then(|l| l.checked_sub(1)) else {
            return String::new();
        };
        let Some(&start) = source.starts.get(index) else {
            return String::new();
        };
        let end = source
            .starts
            .get(index + 1)
            .map_or(source.bytes.len(), |e| e - 1);
        line_hash(&source.bytes[start..end.max(start)])
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
    fn a_message_written_on_windows_normalizes_as_on_linux() {
        let linux = normalize_message(
            "\"f\" in /home/u/proj/pkg/b.py:3 and \"\\n\"",
            "/home/u/proj",
        );
        let windows = normalize_message(
            "\"f\" in C:\\u\\proj\\pkg\\b.py:3 and \"\\n\"",
            "C:\\u\\proj",
        );
        assert_eq!(linux, "\"f\" in pkg/b.py:# and \"\\n\"");
        assert_eq!(windows, linux);
    }

    #[test]
    fn line_hash_ignores_whitespace_only() {
        assert_eq!(line_hash(b"  x = f( 1 )\r"), line_hash(b"x=f(1)"));
        assert_ne!(line_hash(b"x = f(1)"), line_hash(b"x = f(2)"));
        assert_eq!(line_hash(b"   \t"), "");
    }
}
