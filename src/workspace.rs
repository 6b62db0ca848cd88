//! The project root and, when there is one, its git repository.

use std::path::{Path, PathBuf};

use crate::error::QgError;
use crate::git::{self, Repo};

/// Where qg runs: the git top-level of the current directory, or the current
/// directory itself outside git.
pub(crate) struct Workspace {
    /// Canonical absolute root.
    pub(crate) root: PathBuf,
    /// The repository, when the root is a git work tree.
    pub(crate) repo: Option<Repo>,
    /// Canonical current directory (user paths are relative to it).
    pub(crate) cwd: PathBuf,
}

impl Workspace {
    /// Discovers the workspace from `cwd`.
    pub(crate) fn discover(cwd: &Path) -> Result<Workspace, QgError> {
        // Without Windows' `\\?\` prefix where the path does not need it:
        // tools (and `/` joined to it) choke on it.
        let cwd = dunce::canonicalize(cwd)
            .map_err(|e| QgError::io(format!("cannot resolve {}", cwd.display()), e))?;
        let repo = git::discover(&cwd)?;
        let root = match &repo {
            Some(repo) => repo.workdir().to_path_buf(),
            None => cwd.clone(),
        };
        Ok(Workspace { root, repo, cwd })
    }

    /// Root-relative `/` path for an absolute canonical path inside the root.
    pub(crate) fn relative(&self, absolute: &Path) -> Option<String> {
        absolute
            .strip_prefix(&self.root)
            .ok()
            .map(crate::paths::to_slash)
    }
}
