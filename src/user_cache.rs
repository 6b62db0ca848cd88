//! Where qg's cache lives (the result store, the tools' versions): one
//! directory per user, shared by every clone and worktree on the machine,
//! as uv's and sccache's are.

use std::path::PathBuf;

/// The variable naming the cache directory.
pub(crate) const DIR_VARIABLE: &str = "QG_CACHE_DIR";

/// The variable that turns the cache off (any value but `0`, `false`, ``).
pub(crate) const OFF_VARIABLE: &str = "QG_NO_CACHE";

/// Whether `QG_NO_CACHE` turns the cache off.
pub(crate) fn off_by_environment() -> bool {
    std::env::var(OFF_VARIABLE)
        .map(|value| !matches!(value.trim(), "" | "0" | "false" | "no"))
        .unwrap_or(false)
}

/// The cache directory: `QG_CACHE_DIR`, else the platform's user cache
/// directory (`$XDG_CACHE_HOME/qg` or `~/.cache/qg`; `~/Library/Caches/qg`
/// on macOS; `%LOCALAPPDATA%\qg\cache` on Windows). `None` when no home is
/// known.
pub(crate) fn dir() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = set(DIR_VARIABLE) {
        return Some(PathBuf::from(dir));
    }
    if cfg!(windows) {
        return set("LOCALAPPDATA").map(|d| PathBuf::from(d).join("qg").join("cache"));
    }
    if cfg!(target_os = "macos") {
        return set("HOME").map(|h| PathBuf::from(h).join("Library/Caches/qg"));
    }
    match set("XDG_CACHE_HOME") {
        Some(dir) => Some(PathBuf::from(dir).join("qg")),
        None => set("HOME").map(|h| PathBuf::from(h).join(".cache").join("qg")),
    }
}
