//! The project root and, when there is one, its git repository.

use std::path::{Path, PathBuf};

use git2::{Repository, RepositoryOpenFlags};

use crate::error::QgError;

/// Where qg runs: the git top-level of the current directory, or the current
/// directory itself outside git.
pub struct Workspace {
    /// Canonical absolute root.
    pub root: PathBuf,
    /// The repository, when the root is a git work tree.
    pub repo: Option<Repository>,
    /// Canonical current directory (user paths are relative to it).
    pub cwd: PathBuf,
}

impl Workspace {
    /// Discovers the workspace from `cwd`.
    pub fn discover(cwd: &Path) -> Result<Workspace, QgError> {
        // libgit2 re-hashes every object it reads; git does not, and on a
        // large tree that is an eighth of a no-op run. qg only reads.
        git2::opts::strict_hash_verification(false);
        let cwd = cwd
            .canonicalize()
            .map_err(|e| QgError::io(format!("cannot resolve {}", cwd.display()), e))?;
        let ceilings: [&Path; 0] = [];
        match Repository::open_ext(&cwd, RepositoryOpenFlags::empty(), ceilings) {
            Ok(repo) => {
                let Some(workdir) = repo.workdir() else {
                    return Err(QgError::Git(format!(
                        "{} is inside a bare git repository; run qg in a work tree",
                        cwd.display()
                    )));
                };
                let root = workdir
                    .canonicalize()
                    .map_err(|e| QgError::io(format!("cannot resolve {}", workdir.display()), e))?;
                Ok(Workspace {
                    root,
                    repo: Some(repo),
                    cwd,
                })
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(Workspace {
                root: cwd.clone(),
                repo: None,
                cwd,
            }),
            Err(e) if e.code() == git2::ErrorCode::Owner => Err(QgError::Git(format!(
                "git refuses this repository (dubious ownership): {}; if you trust it, run: git config --global --add safe.directory {}",
                e.message(),
                cwd.display()
            ))),
            Err(e) => Err(QgError::Git(format!("cannot open git repository: {}", e.message()))),
        }
    }

    /// Root-relative `/` path for an absolute canonical path inside the root.
    pub fn relative(&self, absolute: &Path) -> Option<String> {
        absolute
            .strip_prefix(&self.root)
            .ok()
            .map(crate::paths::to_slash)
    }
}
