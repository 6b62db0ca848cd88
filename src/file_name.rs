//! Repository-relative file names, kept as `String`s without losing a byte.
//!
//! Every stage passes file names around as `/`-separated `String`s: globs
//! match them, state.json stores them, reports print them. A Unix file name
//! is bytes, though, and need not be UTF-8. Refusing such a file would leave
//! it unchecked, and a lossy name would hand tools a file that does not
//! exist, so qg maps each byte that is not part of valid UTF-8 to a reserved
//! private-use character, `U+10FF00 + byte` (bytes `0x80..=0xFF` only: every
//! ASCII byte is valid UTF-8). [`to_os_str`] reverses it exactly, so a tool
//! receives the real name in its argv. To keep the mapping one-to-one, a
//! valid name that happens to contain a reserved character has that
//! character's bytes escaped too.
//!
//! Such a name is never printed raw: [`display`] quotes it the way git does
//! (`"caf\xE9.py"`). Tools print undecodable bytes as U+FFFD, and
//! [`Reclaimer`] maps those lossy names back to the real ones.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;

/// `byte` (`0x80..=0xFF`) is stored as `char::from_u32(RESERVED_BASE + byte)`.
const RESERVED_BASE: u32 = 0x10_FF00;

fn reserved(byte: u8) -> char {
    char::from_u32(RESERVED_BASE + u32::from(byte)).expect("U+10FF80..=U+10FFFF are scalar values")
}

/// The byte a reserved character stands for, if `c` is one.
fn raw_byte(c: char) -> Option<u8> {
    let offset = (c as u32).checked_sub(RESERVED_BASE)?;
    (0x80..=0xFF).contains(&offset).then_some(offset as u8)
}

fn is_reserved(c: char) -> bool {
    raw_byte(c).is_some()
}

/// The name for raw file-name bytes (see the module docs).
pub fn from_bytes(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes) {
        if !text.chars().any(is_reserved) {
            return text.to_owned();
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match is_reserved(c) {
                true => escape_bytes(&mut out, c.encode_utf8(&mut [0; 4]).as_bytes()),
                false => out.push(c),
            }
        }
        escape_bytes(&mut out, chunk.invalid());
    }
    out
}

/// [`from_bytes`] for bytes the caller owns: a UTF-8 name keeps its buffer.
pub(crate) fn from_vec(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) if !text.chars().any(is_reserved) => text,
        Ok(text) => from_bytes(text.as_bytes()),
        Err(e) => from_bytes(e.as_bytes()),
    }
}

fn escape_bytes(out: &mut String, bytes: &[u8]) {
    out.extend(bytes.iter().map(|&b| reserved(b)));
}

/// The name for an OS path component or relative path.
#[cfg(unix)]
pub(crate) fn from_os_str(os: &OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    from_bytes(os.as_bytes())
}

/// The name for an OS path component or relative path.
#[cfg(not(unix))]
pub(crate) fn from_os_str(os: &OsStr) -> String {
    os.to_string_lossy().into_owned()
}

/// The exact bytes the name stands for.
pub fn to_bytes(name: &str) -> Cow<'_, [u8]> {
    if !is_raw(name) {
        return Cow::Borrowed(name.as_bytes());
    }
    let mut out = Vec::with_capacity(name.len());
    for c in name.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Cow::Owned(out)
}

/// The name as an OS string, byte for byte: what goes into argv.
#[cfg(unix)]
pub(crate) fn to_os_str(name: &str) -> Cow<'_, OsStr> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    match to_bytes(name) {
        Cow::Borrowed(bytes) => Cow::Borrowed(OsStr::from_bytes(bytes)),
        Cow::Owned(bytes) => Cow::Owned(std::ffi::OsString::from_vec(bytes)),
    }
}

/// The name as an OS string, byte for byte: what goes into argv.
#[cfg(not(unix))]
pub(crate) fn to_os_str(name: &str) -> Cow<'_, OsStr> {
    Cow::Borrowed(OsStr::new(name))
}

/// The name as a relative path, for joining onto the root.
pub(crate) fn to_path(name: &str) -> Cow<'_, Path> {
    match to_os_str(name) {
        Cow::Borrowed(os) => Cow::Borrowed(Path::new(os)),
        Cow::Owned(os) => Cow::Owned(os.into()),
    }
}

/// `root` joined with the name: the file on disk.
pub(crate) fn join(root: &Path, name: &str) -> std::path::PathBuf {
    root.join(to_path(name))
}

/// True when the name holds bytes that are not UTF-8.
pub(crate) fn is_raw(name: &str) -> bool {
    name.chars().any(is_reserved)
}

/// The name as a tool prints it: undecodable bytes become U+FFFD.
pub(crate) fn lossy(name: &str) -> String {
    String::from_utf8_lossy(&to_bytes(name)).into_owned()
}

/// The name for one line of text output, unambiguously: a name with
/// undecodable bytes, control characters or bidi overrides, or one that
/// starts with `"`, is quoted like a C string (`"caf\xE9.py"`,
/// `"new\nline.py"`); every other name is printed as it is. Only quoted
/// names start with `"`, so no two names print the same.
pub fn display(name: &str) -> Cow<'_, str> {
    match name.starts_with('"') || name.chars().any(needs_escape) {
        true => Cow::Owned(quote(name)),
        false => Cow::Borrowed(name),
    }
}

/// The name for a JSON string, which escapes control characters itself:
/// only names with undecodable bytes, or starting with `"`, are quoted as
/// [`display`] quotes them.
pub fn display_json(name: &str) -> Cow<'_, str> {
    match name.starts_with('"') || is_raw(name) {
        true => Cow::Owned(quote(name)),
        false => Cow::Borrowed(name),
    }
}

/// Characters a name cannot show as they are: controls, bidi overrides and
/// undecodable bytes.
pub(crate) fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi_override(c) || is_reserved(c)
}

/// Characters that reorder the text around them (Trojan Source).
pub(crate) fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// How a character that cannot be shown as it is is written when quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// As the byte it is (an undecodable byte, or an ASCII control): `\xNN`.
    Byte(u8),
    /// As its code point (a C1 control or a bidi override).
    Char(char),
}

/// The escape `c` needs in a quoted name, if any (see [`needs_escape`]).
pub(crate) fn escape_of(c: char) -> Option<Escape> {
    match raw_byte(c) {
        Some(byte) => Some(Escape::Byte(byte)),
        None if c.is_ascii_control() => Some(Escape::Byte(c as u8)),
        None => needs_escape(c).then_some(Escape::Char(c)),
    }
}

fn quote(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => match escape_of(c) {
                Some(Escape::Byte(b)) => out.push_str(&format!("\\x{b:02X}")),
                Some(Escape::Char(c)) => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
                None => out.push(c),
            },
        }
    }
    out.push('"');
    out
}

/// The name [`display_json`] (or [`display`]) printed as `text`: a quoted
/// name is unquoted, escapes and all; any other text is the name itself.
/// `None` when a quoted text is not one `display` could have written.
pub(crate) fn parse_display(text: &str) -> Option<String> {
    let Some(inner) = text.strip_prefix('"') else {
        return Some(text.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'x' => {
                let digits: String = chars.by_ref().take(2).collect();
                let byte = u8::from_str_radix(&digits, 16)
                    .ok()
                    .filter(|_| digits.len() == 2)?;
                out.push(match byte {
                    0x80.. => reserved(byte),
                    _ => char::from(byte),
                });
            }
            'u' => {
                let rest = chars.as_str().strip_prefix('{')?;
                let (digits, after) = rest.split_once('}')?;
                out.push(char::from_u32(u32::from_str_radix(digits, 16).ok()?)?);
                chars = after.chars();
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Deserializes a name [`serialize`] wrote.
pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
    parse_display(&text)
        .ok_or_else(|| serde::de::Error::custom(format!("not a quoted file name: {text}")))
}

/// Deserializes an optional name [`serialize_option`] wrote.
pub(crate) fn deserialize_option<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    #[derive(serde::Deserialize)]
    struct Name(#[serde(deserialize_with = "deserialize")] String);
    let name = <Option<Name> as serde::Deserialize>::deserialize(deserializer)?;
    Ok(name.map(|n| n.0))
}

/// Serializes a name with [`display_json`] (for `#[serde(serialize_with)]`).
pub(crate) fn serialize<S: serde::Serializer>(
    name: &str,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&display_json(name))
}

/// Serializes an optional name with [`display_json`].
pub(crate) fn serialize_option<S: serde::Serializer>(
    name: &Option<String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match name {
        Some(name) => serialize(name, serializer),
        None => serializer.serialize_none(),
    }
}

/// Maps the lossy names a tool prints back to the files qg gave it.
#[derive(Debug, Default)]
pub(crate) struct Reclaimer {
    by_lossy: HashMap<String, Option<String>>,
}

impl Reclaimer {
    /// A reclaimer for `files`; cheap when none of them is raw.
    pub(crate) fn new<S: AsRef<str>>(files: &[S]) -> Reclaimer {
        let mut by_lossy: HashMap<String, Option<String>> = HashMap::new();
        for raw in files.iter().map(AsRef::as_ref).filter(|f| is_raw(f)) {
            by_lossy
                .entry(lossy(raw))
                .and_modify(|seen| *seen = None)
                .or_insert_with(|| Some(raw.to_string()));
        }
        // A real file with the lossy spelling makes the name ambiguous.
        let spelled_lossy: Vec<&str> = files
            .iter()
            .map(AsRef::as_ref)
            .filter(|f| by_lossy.contains_key(*f))
            .collect();
        for name in spelled_lossy {
            by_lossy.insert(name.to_string(), None);
        }
        Reclaimer { by_lossy }
    }

    /// True when no file needs reclaiming.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_lossy.is_empty()
    }

    /// The real name behind a name a tool printed, when exactly one file
    /// could have printed that way; otherwise the printed name is kept.
    pub(crate) fn reclaim(&self, printed: &mut String) {
        if let Some(Some(raw)) = self.by_lossy.get(printed.as_str()) {
            printed.clone_from(raw);
        }
    }
}

/// The root-relative `path` as the file system spells it (`pkg/a.py` for
/// `pkg/A.py` after a case-only rename), on a file system that ignores
/// case; `None` when no file answers to it.
pub(crate) fn on_disk_case(root: &Path, path: &str) -> Option<String> {
    let mut here = root.to_path_buf();
    let mut parts = Vec::new();
    for part in path.split('/') {
        let wanted = part.to_lowercase();
        let found = std::fs::read_dir(&here)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|name| *name == part)
            .or_else(|| {
                std::fs::read_dir(&here)
                    .ok()?
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .find(|name| name.to_lowercase() == wanted)
            })?;
        here.push(&found);
        parts.push(found);
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_names_are_unchanged() {
        for name in ["a.py", "dir with space/ü.py", "new\nline.py", "\u{FFFD}.py"] {
            assert_eq!(from_bytes(name.as_bytes()), name);
            assert_eq!(display_json(name), name);
        }
    }

    #[test]
    fn raw_bytes_round_trip() {
        let cases: [&[u8]; 5] = [
            b"caf\xe9.py",
            b"\xff\xfe",
            b"a/\xf0\x9f.py",
            "x\u{10FF80}y".as_bytes(),
            b"\xf4\x8f\xbe\x80\xe9",
        ];
        for bytes in cases {
            let name = from_bytes(bytes);
            assert!(is_raw(&name), "{bytes:?}");
            assert_eq!(to_bytes(&name).as_ref(), bytes);
        }
    }

    #[test]
    fn a_name_holding_a_reserved_character_does_not_collide() {
        let real = "x\u{10FFE9}.py";
        let raw = from_bytes(b"x\xe9.py");
        assert_ne!(from_bytes(real.as_bytes()), raw);
    }

    #[test]
    fn display_quotes_only_names_that_need_it() {
        assert_eq!(display("pkg/a b.py"), "pkg/a b.py");
        assert_eq!(display(r"back\slash.py"), r"back\slash.py");
        assert_eq!(display(&from_bytes(b"caf\xe9.py")), r#""caf\xE9.py""#);
        assert_eq!(display("new\nline.py"), r#""new\nline.py""#);
        assert_eq!(display("esc\u{1b}\t.py"), r#""esc\x1B\t.py""#);
        assert_eq!(display("dir/it's \"q\".py"), "dir/it's \"q\".py");
        assert_eq!(display("\u{202E}.py"), r#""\u{202E}.py""#);
        assert_eq!(display(r#""q".py"#), r#""\"q\".py""#);
        assert_eq!(display_json("new\nline.py"), "new\nline.py");
        assert_eq!(display_json(&from_bytes(b"\xe9")), r#""\xE9""#);
    }

    #[test]
    fn displayed_names_parse_back() {
        let names = [
            "pkg/a b.py".to_string(),
            from_bytes(b"caf\xe9.py"),
            "new\nline.py".to_string(),
            "esc\u{1b}\t\r.py".to_string(),
            "\u{202E}.py".to_string(),
            r#""q" \back.py"#.to_string(),
            from_bytes("x\u{10FF80}y".as_bytes()),
            from_bytes(b"\xf4\x8f\xbe\x80\xe9"),
        ];
        for name in names {
            assert_eq!(parse_display(&display(&name)).as_deref(), Some(&*name));
            assert_eq!(parse_display(&display_json(&name)).as_deref(), Some(&*name));
        }
        for bad in [r#""open"#, r#""\q""#, r#""\x4""#, r#""\u{110000}""#] {
            assert_eq!(parse_display(bad), None, "{bad}");
        }
    }

    #[test]
    fn reclaims_only_unambiguous_lossy_names() {
        let one = from_bytes(b"caf\xe9.py");
        let twin_a = from_bytes(b"x\xe9.py");
        let twin_b = from_bytes(b"x\xe8.py");
        let files = vec![one.clone(), twin_a, twin_b, "ok.py".to_string()];
        let reclaimer = Reclaimer::new(&files);
        let mut printed = "caf\u{FFFD}.py".to_string();
        reclaimer.reclaim(&mut printed);
        assert_eq!(printed, one);
        let mut ambiguous = "x\u{FFFD}.py".to_string();
        reclaimer.reclaim(&mut ambiguous);
        assert_eq!(ambiguous, "x\u{FFFD}.py");
    }

    #[test]
    fn a_path_is_found_as_the_file_system_spells_it() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("Pkg")).unwrap();
        std::fs::write(tmp.path().join("Pkg").join("a.py"), "").unwrap();
        assert_eq!(
            on_disk_case(tmp.path(), "pkg/A.py").as_deref(),
            Some("Pkg/a.py")
        );
        assert_eq!(
            on_disk_case(tmp.path(), "Pkg/a.py").as_deref(),
            Some("Pkg/a.py")
        );
        assert_eq!(on_disk_case(tmp.path(), "pkg/b.py"), None);
    }
}
