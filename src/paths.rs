//! Normalizes the paths tools print (absolute, relative to their working
//! directory, `./`-prefixed) to root-relative `/`-separated paths.

use std::path::{Component, Path, PathBuf};

/// Where a tool ran, so its relative paths can be resolved.
#[derive(Debug, Clone)]
pub struct PathContext {
    root: PathBuf,
    canonical_root: Option<PathBuf>,
    working_dir: PathBuf,
}

impl PathContext {
    /// `working_dir` is absolute (the tool's cwd); `root` is the project root.
    pub fn new(root: &Path, working_dir: &Path) -> PathContext {
        let canonical_root = dunce::canonicalize(root).ok().filter(|c| c != root);
        PathContext {
            root: root.to_path_buf(),
            canonical_root,
            working_dir: working_dir.to_path_buf(),
        }
    }

    /// Root-relative `/` path for `raw`; paths outside the root stay absolute.
    pub(crate) fn normalize(&self, raw: &str) -> String {
        let raw = raw.trim();
        if let Some(plain) = self.already_normal(raw) {
            // A tool reporting 100,000 findings names each file this way.
            return plain.to_string();
        }
        let joined = self.working_dir.join(platform_separators(raw));
        let absolute = lexical_normalize(&joined);
        let relative = strip_root(&absolute, &self.root).or_else(|| {
            let canonical = self.canonical_root.as_ref()?;
            strip_root(&absolute, canonical)
        });
        match relative {
            Some(rel) => to_slash(rel),
            None => to_slash(&absolute),
        }
    }
}

impl PathContext {
    /// `raw` itself when it needs no work: relative to a tool that ran at
    /// the root (or absolute under the root), with no `.`, `..` or empty
    /// component and no character the lossless file-name encoding reserves.
    fn already_normal<'r>(&self, raw: &'r str) -> Option<&'r str> {
        let relative = match raw.strip_prefix('/') {
            Some(_) => {
                let root = self.root.to_str()?;
                raw.strip_prefix(root)?.strip_prefix('/')?
            }
            None if self.working_dir == self.root => raw,
            None => return None,
        };
        let plain = !relative.is_empty()
            && relative
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
            && !relative.contains('\\')
            && !names_a_drive(relative)
            && relative.chars().all(|c| (c as u32) < 0xE000);
        plain.then_some(relative)
    }
}

#[cfg(windows)]
fn platform_separators(raw: &str) -> String {
    raw.replace('/', "\\")
}

#[cfg(not(windows))]
fn platform_separators(raw: &str) -> &str {
    raw
}

/// Whether `raw` is absolute on Windows by its drive (`c:/x/a.py`); a
/// colon is in no file name there.
fn names_a_drive(raw: &str) -> bool {
    cfg!(windows) && raw.contains(':')
}

/// `path` below `root`, if it is. Windows' file systems ignore case, and
/// its tools differ in it (`c:\proj` from one, `C:\Proj` from another):
/// there the components compare without it.
fn strip_root<'p>(path: &'p Path, root: &Path) -> Option<&'p Path> {
    if let Ok(relative) = path.strip_prefix(root) {
        return Some(relative);
    }
    if !cfg!(windows) {
        return None;
    }
    let mut rest = path.components();
    for expected in root.components() {
        let found = rest.next()?;
        let same = found.as_os_str().to_string_lossy().to_lowercase()
            == expected.as_os_str().to_string_lossy().to_lowercase();
        if !same {
            return None;
        }
    }
    Some(rest.as_path())
}

/// Resolves `.` and `..` without touching the filesystem (the file may be gone).
pub(crate) fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Joins path components with `/` whatever the platform, keeping bytes that
/// are not UTF-8 (see [`crate::file_name`]).
pub(crate) fn to_slash(path: &Path) -> String {
    let mut out = String::new();
    for component in path.components() {
        let text = crate::file_name::from_os_str(component.as_os_str());
        match component {
            // `C:`, or `//server/share` of a UNC path.
            Component::Prefix(_) => out.push_str(&text.replace('\\', "/")),
            Component::RootDir => out.push('/'),
            _ => {
                if !out.is_empty() && !out.ends_with('/') {
                    out.push('/');
                }
                out.push_str(&text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_path_agrees_with_the_full_normalization() {
        let root = Path::new("/proj");
        let here = PathContext::new(root, root);
        let below = PathContext::new(root, Path::new("/proj/sub"));
        for raw in [
            "a.py",
            "pkg/a.py",
            "/proj/pkg/a.py",
            "./a.py",
            "pkg/../b.py",
            "/elsewhere/x.py",
            "pkg//a.py",
            " a.py ",
        ] {
            for ctx in [&here, &below] {
                let slow = {
                    let joined = ctx.working_dir.join(raw.trim());
                    let absolute = lexical_normalize(&joined);
                    match absolute.strip_prefix(&ctx.root) {
                        Ok(rel) => to_slash(rel),
                        Err(_) => to_slash(&absolute),
                    }
                };
                assert_eq!(ctx.normalize(raw), slow, "{raw}");
            }
        }
    }

    fn ctx() -> PathContext {
        PathContext::new(Path::new("/repo"), Path::new("/repo"))
    }

    #[test]
    fn absolute_inside_root_becomes_relative() {
        assert_eq!(ctx().normalize("/repo/pkg/a.py"), "pkg/a.py");
    }

    #[test]
    fn relative_and_dot_prefixed_paths() {
        assert_eq!(ctx().normalize("pkg/a.py"), "pkg/a.py");
        assert_eq!(ctx().normalize("./-dash.py"), "-dash.py");
        assert_eq!(ctx().normalize("pkg/../b.py"), "b.py");
    }

    #[test]
    fn working_dir_is_applied_to_relative_paths() {
        let c = PathContext::new(Path::new("/repo"), Path::new("/repo/src"));
        assert_eq!(c.normalize("a.py"), "src/a.py");
        assert_eq!(c.normalize("../tests/t.py"), "tests/t.py");
    }

    #[test]
    fn outside_root_stays_absolute() {
        assert_eq!(ctx().normalize("/usr/lib/x.py"), "/usr/lib/x.py");
    }

    /// On Windows one file has many spellings; each becomes the same
    /// root-relative `/` path (a baseline written on Linux holds there).
    #[test]
    #[cfg(windows)]
    fn a_windows_path_in_any_case_and_either_separator_is_one_file() {
        let root = Path::new(r"C:\Proj");
        let c = PathContext::new(root, root);
        for raw in [
            r"C:\Proj\src\a.py",
            r"c:\proj\src\a.py",
            "c:/Proj/src/a.py",
            r"src\a.py",
            "src/a.py",
        ] {
            assert_eq!(c.normalize(raw), "src/a.py", "{raw}");
        }
        assert_eq!(c.normalize(r"D:\lib\x.py"), "D:/lib/x.py");
    }
}
