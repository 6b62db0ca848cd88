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
        let canonical_root = root.canonicalize().ok().filter(|c| c != root);
        PathContext {
            root: root.to_path_buf(),
            canonical_root,
            working_dir: working_dir.to_path_buf(),
        }
    }

    /// Root-relative `/` path for `raw`; paths outside the root stay absolute.
    pub(crate) fn normalize(&self, raw: &str) -> String {
        let raw = raw.trim();
        let joined = self.working_dir.join(platform_separators(raw));
        let absolute = lexical_normalize(&joined);
        let relative = absolute.strip_prefix(&self.root).ok().or_else(|| {
            let canonical = self.canonical_root.as_ref()?;
            absolute.strip_prefix(canonical).ok()
        });
        match relative {
            Some(rel) => to_slash(rel),
            None => to_slash(&absolute),
        }
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
    let parts: Vec<String> = path
        .components()
        .map(|c| crate::file_name::from_os_str(c.as_os_str()))
        .collect();
    let joined = parts.join("/");
    // An absolute Unix path's root component is "/" itself.
    joined.replacen("//", "/", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
