//! Optional colour for a terminal (untrusted text is made safe by
//! [`crate::quote::neutralize`] first).

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Palette {
    on: bool,
}

impl Palette {
    /// A palette that colours only when `on`.
    pub(crate) fn new(on: bool) -> Palette {
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
    pub(crate) fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
    /// Red.
    pub(crate) fn red(&self, text: &str) -> String {
        self.wrap("31", text)
    }
    /// Yellow.
    pub(crate) fn yellow(&self, text: &str) -> String {
        self.wrap("33", text)
    }
    /// Green.
    pub(crate) fn green(&self, text: &str) -> String {
        self.wrap("32", text)
    }
    /// Cyan.
    pub(crate) fn cyan(&self, text: &str) -> String {
        self.wrap("36", text)
    }
    /// Dim.
    pub(crate) fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }
}
