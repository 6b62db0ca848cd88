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
        if let Some(plain) = self.already_normal(raw) {
            // A tool reporting 100,000 findings names each file this way.
            return plain.to_string();
        }
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
}
