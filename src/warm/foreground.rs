//! Runs the user waits for, announced to the project's daemons: while one
//! is under way, their background comparisons (self-checks, samples,
//! confirmations) stand still, so the two cores are the run's. One file per
//! run in `.st3/foreground/`, named by its process id; a daemon pauses its
//! comparison while any such process lives, and a file whose process died
//! (killed before it could remove it) counts for nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where runs announce themselves, relative to the root.
pub(crate) const FOREGROUND_DIR: &str = ".st3/foreground";

/// A run announced; dropped, it is not any more.
pub(crate) struct Announced {
    path: Option<PathBuf>,
}

impl Drop for Announced {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Announces a run in the project at `root` — only where daemons may run:
/// a project without any costs the run one look at a directory.
pub(crate) fn announce(root: &Path) -> Announced {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    if !root.join(super::slot::DAEMONS_DIR).is_dir() {
        return Announced { path: None };
    }
    let dir = root.join(FOREGROUND_DIR);
    let name = format!(
        "{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    let made = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, b""));
    Announced {
        path: made.is_ok().then_some(path),
    }
}

/// Whether a run is under way in the project at `root` (files of runs
/// that died are removed).
pub(crate) fn running(root: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(root.join(FOREGROUND_DIR)) else {
        return false;
    };
    let mut any = false;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        match pid {
            Some(pid) if super::procfs::alive(pid) => any = true,
            _ => {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_counts_while_announced_and_a_dead_one_never() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let quiet = announce(root);
        assert!(quiet.path.is_none(), "no daemons: nothing announced");
        std::fs::create_dir_all(root.join(super::super::slot::DAEMONS_DIR)).unwrap();
        assert!(!running(root));
        let run = announce(root);
        assert!(running(root));
        drop(run);
        assert!(!running(root));
        // A run killed before it could say it ended: its process is gone.
        let dead = root.join(FOREGROUND_DIR).join("999999999-0");
        std::fs::write(&dead, b"").unwrap();
        assert!(!running(root));
        assert!(!dead.exists(), "a dead run's file is removed");
    }
}
