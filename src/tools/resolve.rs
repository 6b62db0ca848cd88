//! Finds the executable a gate's `command[0]` names: the project's virtualenv
//! first (`$VIRTUAL_ENV`, `<root>/.venv`, `<root>/venv`), then `PATH`.

use std::ffi::OsString;

use super::environment;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a tool was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedTool {
    /// Absolute path of the executable.
    pub(crate) path: PathBuf,
    /// The virtualenv `bin` directory it came from, if any (prepended to the
    /// child's PATH so the tool finds its siblings).
    pub(crate) venv_bin: Option<PathBuf>,
}

/// Identity of a resolved tool: a change of path, size or mtime means a
/// different tool, so the baseline no longer proves anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ToolStamp {
    /// Resolved executable, or `null` when it was not found.
    pub(crate) path: Option<String>,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub(crate) mtime_ns: u128,
}

/// Why a tool could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResolveError {
    /// No such program anywhere qg looked.
    NotFound { searched: Vec<PathBuf> },
    /// Found, but without execute permission.
    NotExecutable(PathBuf),
}

/// The identity of whatever `resolve` found (or did not find), for the
/// state file: a new path, size or mtime invalidates the baseline.
pub(crate) fn stamp(resolved: &Result<ResolvedTool, ResolveError>) -> ToolStamp {
    let path = resolved.as_ref().ok().map(|tool| tool.path.clone());
    let meta = path.as_ref().and_then(|p| std::fs::metadata(p).ok());
    let mtime_ns = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    ToolStamp {
        path: path.map(|p| p.display().to_string()),
        size: meta.map_or(0, |m| m.len()),
        mtime_ns,
    }
}

/// Resolves `program` for a project rooted at `root`.
///
/// A name with a path separator is taken relative to `root`; a bare name is
/// searched in the virtualenvs, then in `path_var`.
pub(crate) fn resolve(
    program: &str,
    root: &Path,
    virtual_env: Option<OsString>,
    path_var: Option<OsString>,
) -> Result<ResolvedTool, ResolveError> {
    if program.contains('/') || program.contains(std::path::MAIN_SEPARATOR) {
        let path = root.join(program);
        return check(&path).map(|path| ResolvedTool {
            path,
            venv_bin: None,
        });
    }
    let venv_bins = venv_bin_dirs(root, virtual_env, path_var.as_ref());
    let path_dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let mut not_executable = None;
    for (dir, is_venv) in venv_bins
        .iter()
        .map(|d| (d, true))
        .chain(path_dirs.iter().map(|d| (d, false)))
    {
        for candidate in candidates(dir, program) {
            match check(&candidate) {
                Ok(path) => {
                    return Ok(ResolvedTool {
                        path,
                        venv_bin: is_venv.then(|| dir.clone()),
                    })
                }
                Err(ResolveError::NotExecutable(p)) => {
                    not_executable.get_or_insert(p);
                }
                Err(ResolveError::NotFound { .. }) => {}
            }
        }
    }
    Err(match not_executable {
        Some(path) => ResolveError::NotExecutable(path),
        None => ResolveError::NotFound {
            searched: venv_bins.into_iter().chain(path_dirs).collect(),
        },
    })
}

/// The `bin` directory of the project's virtualenv — the first of
/// `$VIRTUAL_ENV`, `<root>/.venv`, `<root>/venv`, the project manager's
/// environment ([`environment::find`]) — where tools are looked for first
/// and should be installed.
pub(crate) fn project_venv_bin(
    root: &Path,
    virtual_env: Option<OsString>,
    path_var: Option<&OsString>,
) -> Option<PathBuf> {
    environment::find(root, virtual_env, path_var).map(|e| e.bin)
}

fn venv_bin_dirs(
    root: &Path,
    virtual_env: Option<OsString>,
    path_var: Option<&OsString>,
) -> Vec<PathBuf> {
    environment::find_all(root, virtual_env, path_var)
        .into_iter()
        .map(|e| e.bin)
        .collect()
}

#[cfg(windows)]
fn candidates(dir: &Path, program: &str) -> Vec<PathBuf> {
    let pathext = std::env::var("PATHEXT").unwrap_or_default();
    windows_candidates(dir, program, &pathext)
}

/// Where Windows would find `program` in `dir`: with each of `PATHEXT`'s
/// extensions, in order (`ruff.exe`, `pyright.cmd`); the bare name only
/// when it already has one of them. npm and pip also leave an extensionless
/// POSIX shell script beside the `.cmd` (`pyright`), which Windows cannot
/// start, so it must not win.
#[cfg_attr(not(windows), allow(dead_code, reason = "tested on every platform"))]
fn windows_candidates(dir: &Path, program: &str, pathext: &str) -> Vec<PathBuf> {
    let pathext = match pathext.trim() {
        "" => ".COM;.EXE;.BAT;.CMD",
        set => set,
    };
    let exts: Vec<&str> = pathext.split(';').filter(|e| !e.is_empty()).collect();
    let lower = program.to_ascii_lowercase();
    if exts
        .iter()
        .any(|e| lower.ends_with(&e.to_ascii_lowercase()))
    {
        return vec![dir.join(program)];
    }
    exts.iter()
        .map(|e| dir.join(format!("{program}{}", e.to_ascii_lowercase())))
        .collect()
}

#[cfg(not(windows))]
fn candidates(dir: &Path, program: &str) -> Vec<PathBuf> {
    vec![dir.join(program)]
}

fn check(path: &Path) -> Result<PathBuf, ResolveError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Err(ResolveError::NotFound {
            searched: vec![path.to_path_buf()],
        });
    };
    if !meta.is_file() {
        return Err(ResolveError::NotFound {
            searched: vec![path.to_path_buf()],
        });
    }
    if is_executable(&meta) {
        Ok(path.to_path_buf())
    } else {
        Err(ResolveError::NotExecutable(path.to_path_buf()))
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    true
}

#[cfg(test)]
mod windows_tests {
    use super::*;

    #[test]
    fn windows_finds_the_programs_it_can_start_never_a_shell_script() {
        let dir = Path::new("venv/Scripts");
        let names = |found: Vec<PathBuf>| -> Vec<String> {
            found
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        let pathext = ".COM;.EXE;.BAT;.CMD;.VBS;.JS";
        assert_eq!(
            names(windows_candidates(dir, "pyright", pathext)),
            [
                "pyright.com",
                "pyright.exe",
                "pyright.bat",
                "pyright.cmd",
                "pyright.vbs",
                "pyright.js"
            ]
        );
        assert_eq!(
            names(windows_candidates(dir, "ruff.EXE", pathext)),
            ["ruff.EXE"]
        );
        assert_eq!(
            names(windows_candidates(dir, "python", "")),
            ["python.com", "python.exe", "python.bat", "python.cmd"]
        );
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn make_tool(dir: &Path, name: &str, mode: u32) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn venv_wins_over_path_and_virtual_env_wins_over_dot_venv() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let on_path = make_tool(&root.join("path"), "tool", 0o755);
        let dot_venv = make_tool(&root.join(".venv/bin"), "tool", 0o755);
        let active = make_tool(&root.join("active/bin"), "tool", 0o755);
        let path_var = Some(root.join("path").into_os_string());
        let found = resolve("tool", root, None, path_var.clone()).unwrap();
        assert_eq!(found.path, dot_venv);
        let found = resolve("tool", root, Some(root.join("active").into()), path_var).unwrap();
        assert_eq!(found.path, active);
        std::fs::remove_dir_all(root.join(".venv")).unwrap();
        std::fs::remove_dir_all(root.join("active")).unwrap();
        let path_var = Some(root.join("path").into_os_string());
        assert_eq!(resolve("tool", root, None, path_var).unwrap().path, on_path);
    }

    #[test]
    fn missing_and_not_executable() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bin");
        make_tool(&dir, "plain", 0o644);
        let path_var = Some(dir.clone().into_os_string());
        assert!(matches!(
            resolve("nope", tmp.path(), None, path_var.clone()),
            Err(ResolveError::NotFound { .. })
        ));
        assert_eq!(
            resolve("plain", tmp.path(), None, path_var),
            Err(ResolveError::NotExecutable(dir.join("plain")))
        );
    }
}
