//! Making untrusted text safe for a terminal, and optional colour.

/// Replaces control characters (ESC, BEL, C1 controls, …) with visible
/// escapes so a tool message cannot move the cursor, set a hyperlink (OSC 8)
/// or write the clipboard (OSC 52). Newlines and tabs are kept.
pub fn neutralize(text: &str) -> String {
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

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    on: bool,
}

impl Palette {
    /// A palette that colours only when `on`.
    pub fn new(on: bool) -> Palette {
        Palette { on }
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Bold.
    pub fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
    /// Red.
    pub fn red(&self, text: &str) -> String {
        self.wrap("31", text)
    }
    /// Yellow.
    pub fn yellow(&self, text: &str) -> String {
        self.wrap("33", text)
    }
    /// Green.
    pub fn green(&self, text: &str) -> String {
        self.wrap("32", text)
    }
    /// Cyan.
    pub fn cyan(&self, text: &str) -> String {
        self.wrap("36", text)
    }
    /// Dim.
    pub fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_made_visible() {
        let hostile = "a\x1b[2Jb\x1b]8;;http://x\x07c\x1b]52;c;aGk=\x07\nnext\u{202E}";
        let safe = neutralize(hostile);
        assert!(!safe.contains('\x1b') && !safe.contains('\x07') && !safe.contains('\u{202E}'));
        assert!(safe.contains("\\u{1b}[2J") && safe.contains("\nnext"));
    }
}
