//! The editor's side of the files: `file://` URIs to root-relative paths
//! and back, and the documents it has open, with their unsaved text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A document the editor has open.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    /// Its URI, exactly as the editor spelled it (diagnostics go back to it).
    pub(crate) uri: String,
    /// Its text in the editor, saved or not.
    pub(crate) text: String,
    /// The editor's version of it.
    pub(crate) version: i32,
}

/// The open documents, by root-relative path.
#[derive(Debug, Default)]
pub(crate) struct Documents {
    open: BTreeMap<String, Document>,
}

impl Documents {
    /// Opens (or reopens) a document.
    pub(crate) fn open(&mut self, file: String, document: Document) {
        self.open.insert(file, document);
    }

    /// Replaces a document's text.
    pub(crate) fn change(&mut self, file: &str, text: String, version: i32) {
        if let Some(document) = self.open.get_mut(file) {
            document.text = text;
            document.version = version;
        }
    }

    /// Closes a document.
    pub(crate) fn close(&mut self, file: &str) {
        self.open.remove(file);
    }

    /// An open document.
    pub(crate) fn get(&self, file: &str) -> Option<&Document> {
        self.open.get(file)
    }

    /// Whether `file` is open.
    pub(crate) fn is_open(&self, file: &str) -> bool {
        self.open.contains_key(file)
    }

    /// Every open document's file.
    pub(crate) fn files(&self) -> Vec<String> {
        self.open.keys().cloned().collect()
    }
}

/// The path of a `file://` URI, percent-decoded; `None` for another scheme.
pub(crate) fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`).
    let path = match rest.strip_prefix("localhost") {
        Some(path) => path,
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    native_path(bytes)
}

/// A decoded URI path as this system's path: its bytes on Unix.
#[cfg(unix)]
fn native_path(bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// A decoded URI path as this system's path: UTF-8 on Windows, without
/// the slash before its drive.
#[cfg(windows)]
fn native_path(bytes: Vec<u8>) -> Option<PathBuf> {
    let text = String::from_utf8(bytes).ok()?;
    Some(PathBuf::from(windows_path(&text)))
}

/// `/C:/x/a.py` (a URI's path, decoded) as Windows names it: `C:/x/a.py`
/// (Windows takes `/` as a separator). A path without a drive is kept.
#[cfg_attr(not(windows), allow(dead_code, reason = "tested on every platform"))]
pub(crate) fn windows_path(decoded: &str) -> &str {
    let bytes = decoded.as_bytes();
    let has_drive =
        bytes.len() >= 3 && bytes[0] == b'/' && bytes[1].is_ascii_alphabetic() && bytes[2] == b':';
    if has_drive {
        &decoded[1..]
    } else {
        decoded
    }
}

pub(crate) use crate::warm::lsp::path_uri;

/// The root-relative path of a URI inside `root` (`None` outside it, or
/// for a URI that is not a file's).
pub(crate) fn relative(root: &Path, uri: &str) -> Option<String> {
    let path = uri_path(uri)?;
    // An editor may name the file through a symlinked directory.
    let path = dunce::canonicalize(&path).unwrap_or(path);
    let relative = path.strip_prefix(root).ok()?;
    let text = crate::paths::to_slash(relative);
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What VS Code on Windows sends and what qg writes back name one file:
    /// the drive's colon encoded or not, backslashes as slashes.
    #[test]
    fn windows_uris_and_paths_round_trip() {
        use crate::warm::lsp::windows_uri;
        let decode = |uri: &str| {
            let path = uri.strip_prefix("file://").unwrap();
            let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
            windows_path(&String::from_utf8(bytes).unwrap()).to_string()
        };
        assert_eq!(
            decode("file:///c%3A/Users/me/proj/a.py"),
            "c:/Users/me/proj/a.py"
        );
        assert_eq!(decode("file:///C:/x/caf%C3%A9.py"), "C:/x/café.py");
        let uri = windows_uri(r"C:\x\src\a b.py");
        assert_eq!(uri, "file:///C%3A/x/src/a%20b.py");
        assert_eq!(decode(&uri), "C:/x/src/a b.py");
        assert_eq!(windows_path("/no/drive"), "/no/drive");
    }

    #[test]
    fn uris_round_trip_with_encoded_bytes() {
        let path = Path::new("/work/my project/pkg/a b#1é.py");
        let uri = path_uri(path);
        assert_eq!(uri, "file:///work/my%20project/pkg/a%20b%231%C3%A9.py");
        assert_eq!(uri_path(&uri).unwrap(), path);
        assert_eq!(
            uri_path("file://localhost/tmp/x.py").unwrap(),
            Path::new("/tmp/x.py")
        );
        assert!(uri_path("untitled:Untitled-1").is_none());
        assert_eq!(
            relative(
                Path::new("/nonexistent/root"),
                "file:///nonexistent/root/a/b.py"
            ),
            Some("a/b.py".to_string())
        );
        assert_eq!(
            relative(Path::new("/nonexistent/root"), "file:///elsewhere/b.py"),
            None
        );
    }
}
