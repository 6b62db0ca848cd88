//! Making text safe to show and to paste: untrusted tool output shown on a
//! terminal, and file names pasted into a shell.

/// Replaces control characters (ESC, BEL, C1 controls, …) with visible
/// escapes so a tool message cannot move the cursor, set a hyperlink (OSC 8)
/// or write the clipboard (OSC 52). Newlines and tabs are kept.
pub(crate) fn neutralize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' || c == '\t' || !(c.is_control() || crate::file_name::is_bidi_override(c)) {
            out.push(c);
        } else {
            out.push_str(&c.escape_unicode().to_string());
        }
    }
    out
}

/// Quotes a word for the shell a user pastes into here: PowerShell on
/// Windows (see [`powershell_quote`]), else a POSIX shell.
pub(crate) fn shell_quote(word: &str) -> String {
    match cfg!(windows) {
        true => powershell_quote(word),
        false => posix_quote(word),
    }
}

/// Quotes a word for PowerShell when it needs it: a single-quoted string,
/// literal but for `'` itself, written twice (`-v` once printed POSIX
/// quoting on Windows, which PowerShell reads otherwise).
pub(crate) fn powershell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=+:@,\\".contains(c))
        && !word.starts_with('-');
    match safe {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', "''")),
    }
}

/// Quotes a word for POSIX shells when it needs it; a word with control
/// characters or undecodable bytes (see [`crate::file_name`]) becomes an
/// ANSI-C `$'...'` string, which bash, zsh and ksh read back byte for byte.
pub(crate) fn posix_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=+:@,%".contains(c));
    if safe {
        word.to_string()
    } else if word.chars().any(crate::file_name::needs_escape) {
        ansi_c_quote(word)
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn ansi_c_quote(word: &str) -> String {
    use crate::file_name::{escape_of, Escape};
    let mut out = String::from("$'");
    for c in word.chars() {
        match (c, escape_of(c)) {
            ('\'' | '\\', _) => {
                out.push('\\');
                out.push(c);
            }
            (_, Some(Escape::Byte(b))) => out.push_str(&format!("\\x{b:02X}")),
            (_, Some(Escape::Char(c))) => out.push_str(&format!("\\U{:08X}", c as u32)),
            (c, None) => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powershell_quoting_doubles_a_single_quote_and_keeps_backslashes() {
        assert_eq!(powershell_quote(r"pkg\a.py"), r"pkg\a.py");
        assert_eq!(powershell_quote("it's a.py"), "'it''s a.py'");
        assert_eq!(powershell_quote("$env.py"), "'$env.py'");
        assert_eq!(powershell_quote("-x.py"), "'-x.py'");
    }

    #[test]
    fn quoting() {
        assert_eq!(posix_quote("pkg/a.py"), "pkg/a.py");
        assert_eq!(posix_quote("my file.py"), "'my file.py'");
        assert_eq!(posix_quote("it's.py"), r"'it'\''s.py'");
        assert_eq!(posix_quote("--opt"), "--opt");
        let raw = crate::file_name::from_bytes(b"caf\xe9 it's.py");
        assert_eq!(posix_quote(&raw), r"$'caf\xE9 it\'s.py'");
        assert_eq!(posix_quote("new\nline.py"), r"$'new\x0Aline.py'");
    }

    #[test]
    fn escapes_are_made_visible() {
        let hostile = "a\x1b[2Jb\x1b]8;;http://x\x07c\x1b]52;c;aGk=\x07\nnext\u{202E}";
        let safe = neutralize(hostile);
        assert!(!safe.contains('\x1b') && !safe.contains('\x07') && !safe.contains('\u{202E}'));
        assert!(safe.contains("\\u{1b}[2J") && safe.contains("\nnext"));
    }
}
