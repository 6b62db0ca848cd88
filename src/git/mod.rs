//! Every git question qg asks, answered with libgit2 (never a `git`
//! process): where the repository is, HEAD, what changed since a commit,
//! which branch is the parent, which files git knows, and blob ids. No other
//! module touches git2.

mod diff;
#[cfg(test)]
mod fast_path_tests;
mod history;
mod index;
mod parent;
mod staged;
mod survey;
mod unstaged;
mod worktree;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{Oid, Repository, RepositoryOpenFlags, Status, StatusOptions};

use crate::error::QgError;
use crate::file_name;
pub(crate) use diff::Changes;
pub(crate) use history::{line_map, LineMap};
pub(crate) use parent::Parent;

/// Makes `root` a new, empty repository (for tests, which must not need a
/// `git` program: the Windows test binaries run where there is none).
#[cfg(test)]
pub(crate) fn init(root: &Path) {
    Repository::init(root).expect("a repository can be made in a temp dir");
}

/// The state key used for a detached HEAD.
pub(crate) const DETACHED_KEY: &str = "(detached HEAD)";

fn git_error(context: &str) -> impl Fn(git2::Error) -> QgError + '_ {
    move |e| QgError::Git(format!("{context}: {}", e.message()))
}

/// An open repository with a work tree.
pub(crate) struct Repo {
    repo: Repository,
    workdir: PathBuf,
    /// The working tree's survey [`Repo::named`] made (finding the members'
    /// configs), kept for this command's scope to take instead of walking
    /// again: on 30,000 files a second walk made a no-op run 1.5x slower.
    surveyed: Cell<Option<(Instant, survey::Survey)>>,
    /// Whether this command will ask what changed ([`Repo::expect_changes`]).
    changes_expected: Cell<bool>,
}

/// How long a survey kept by [`Repo::named`] stands for the working tree:
/// the scope that follows within one command takes it; a handle kept
/// longer walks again.
const WALK_KEPT: Duration = Duration::from_secs(2);

/// Opens the repository around `cwd`: `Ok(None)` outside git, an error for
/// a bare repository or one git refuses (dubious ownership).
pub(crate) fn discover(cwd: &Path) -> Result<Option<Repo>, QgError> {
    // libgit2 re-hashes every object it reads; git does not, and on a
    // large tree that is an eighth of a no-op run. qg only reads.
    git2::opts::strict_hash_verification(false);
    let ceilings: [&Path; 0] = [];
    match Repository::open_ext(cwd, RepositoryOpenFlags::empty(), ceilings) {
        Ok(repo) => {
            let Some(workdir) = repo.workdir() else {
                return Err(QgError::Git(format!(
                    "{} is inside a bare git repository; run qg in a work tree",
                    cwd.display()
                )));
            };
            let workdir = dunce::canonicalize(workdir)
                .map_err(|e| QgError::io(format!("cannot resolve {}", workdir.display()), e))?;
            Ok(Some(Repo {
                repo,
                workdir,
                surveyed: Cell::default(),
                changes_expected: Cell::default(),
            }))
        }
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) if e.code() == git2::ErrorCode::Owner => Err(QgError::Git(format!(
            "git refuses this repository (dubious ownership): {}; if you trust it, run: git config --global --add safe.directory {}",
            e.message(),
            cwd.display()
        ))),
        Err(e) => Err(QgError::Git(format!("cannot open git repository: {}", e.message()))),
    }
}

/// Where HEAD is.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    /// Branch name (the state key); [`DETACHED_KEY`] when detached.
    pub(crate) branch: String,
    /// The commit id, or `None` on an unborn branch (no commits yet).
    pub(crate) commit: Option<String>,
}

fn read_head(repo: &Repository) -> Result<Head, QgError> {
    match repo.head() {
        Ok(reference) => {
            let commit = reference
                .peel_to_commit()
                .map_err(git_error("cannot read HEAD"))?
                .id()
                .to_string();
            let branch = if reference.is_branch() {
                reference.shorthand().unwrap_or(DETACHED_KEY).to_string()
            } else {
                DETACHED_KEY.to_string()
            };
            Ok(Head {
                branch,
                commit: Some(commit),
            })
        }
        Err(e)
            if e.code() == git2::ErrorCode::UnbornBranch
                || e.code() == git2::ErrorCode::NotFound =>
        {
            let target = repo
                .find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target().map(str::to_string))
                .unwrap_or_default();
            let branch = target
                .strip_prefix("refs/heads/")
                .unwrap_or(&target)
                .to_string();
            Ok(Head {
                branch,
                commit: None,
            })
        }
        Err(e) => Err(git_error("cannot read HEAD")(e)),
    }
}

impl Repo {
    /// Whether the checkout ignores case (`core.ignorecase`: Windows and
    /// macOS file systems), where `pkg/A.py` and `pkg/a.py` are one file.
    pub(crate) fn ignores_case(&self) -> bool {
        self.repo
            .config()
            .and_then(|c| c.get_bool("core.ignorecase"))
            .unwrap_or(false)
    }

    /// Whether the root-relative `path` is in the index (tracked: a file
    /// force-added under an ignored directory is).
    pub(crate) fn is_tracked(&self, path: &str) -> bool {
        self.repo.index().is_ok_and(|index| {
            index
                .get_path(crate::file_name::to_path(path).as_ref(), 0)
                .is_some()
        })
    }

    /// The files (root-relative) whose file name is one of `names`,
    /// tracked or untracked and not ignored: where a tool's configs are. A
    /// config not yet `git add`ed counts, as the tool run in its directory
    /// reads it. Sorted.
    pub(crate) fn named(&self, names: &[&str]) -> Vec<String> {
        let named = |path: &[u8]| {
            let name = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
            names.iter().any(|n| n.as_bytes() == name)
        };
        let compare = self.changes_expected.get();
        let surveyed = worktree::ignores(&self.repo)
            .and_then(|ignores| survey::survey(&self.repo, &self.workdir, &ignores, compare));
        let mut found: Vec<String> = match surveyed {
            Some(surveyed) => {
                // What the walk found is tracked or untracked-not-ignored:
                // with the index's own entries, that is every such file.
                let index = &surveyed.index;
                let found = index
                    .entries()
                    .iter()
                    .map(|entry| index.path(entry))
                    .chain(surveyed.walked.iter().map(|found| found.path.as_slice()))
                    .filter(|path| named(path))
                    .map(file_name::from_bytes)
                    .collect();
                self.surveyed.set(Some((Instant::now(), surveyed)));
                found
            }
            None => self
                .libgit2_files()
                .unwrap_or_default()
                .into_iter()
                .filter(|path| named(path.as_bytes()))
                .collect(),
        };
        found.sort();
        found.dedup();
        found
    }

    /// Says this command will ask what changed ([`Repo::changes_since`]):
    /// a survey made before then ([`Repo::named`]) compares the index with
    /// the working tree beside its walk, for the scope to take. A command
    /// that only lists files does not, as it would make its walk share
    /// the cores for nothing.
    pub(crate) fn expect_changes(&self) {
        self.changes_expected.set(true);
    }

    /// The survey [`Repo::named`] kept, taken, when it is recent enough.
    fn kept_survey(&self) -> Option<survey::Survey> {
        let (when, surveyed) = self.surveyed.take()?;
        (when.elapsed() < WALK_KEPT).then_some(surveyed)
    }

    /// Whether git ignores the root-relative `path` (every ignore file
    /// git reads: `.gitignore`s, `info/exclude`, `core.excludesFile`).
    pub(crate) fn is_ignored(&self, path: &str) -> bool {
        self.repo
            .is_path_ignored(crate::file_name::to_path(path).as_ref())
            .unwrap_or(false)
    }

    /// The work tree's root (canonical).
    pub(crate) fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Where HEAD is.
    pub(crate) fn head(&self) -> Result<Head, QgError> {
        read_head(&self.repo)
    }

    /// HEAD's commit and up to `count - 1` of its first-parent ancestors,
    /// nearest first (none on an unborn branch): the line a branch was
    /// built along, back through the commit it started from.
    pub(crate) fn first_parents(&self, count: usize) -> Vec<String> {
        let mut line = Vec::new();
        let mut commit = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        while let Some(current) = commit.filter(|_| line.len() < count) {
            line.push(current.id().to_string());
            commit = current.parent(0).ok();
        }
        line
    }

    /// Whether `sha` names a commit this repository has.
    pub(crate) fn has_commit(&self, sha: &str) -> bool {
        Oid::from_str(sha).is_ok_and(|oid| self.repo.find_commit(oid).is_ok())
    }

    /// The best common ancestor of two commits, if they share history.
    pub(crate) fn merge_base(&self, a: &str, b: &str) -> Option<String> {
        let (a, b) = (Oid::from_str(a).ok()?, Oid::from_str(b).ok()?);
        self.repo.merge_base(a, b).ok().map(|oid| oid.to_string())
    }

    /// Everything that differs between commit `base` (or, with `None`, an
    /// empty tree) and the working tree (see [`Changes`]).
    pub(crate) fn changes_since(&self, base: Option<&str>) -> Result<Changes, QgError> {
        let tree = match base {
            Some(sha) => {
                let read = |e: git2::Error| {
                    QgError::Git(format!("cannot read commit {sha}: {}", e.message()))
                };
                let oid = Oid::from_str(sha).map_err(read)?;
                Some(
                    self.repo
                        .find_commit(oid)
                        .and_then(|c| c.tree())
                        .map_err(read)?
                        .id(),
                )
            }
            None => None,
        };
        diff::changes_since(&self.repo, &self.workdir, tree, self.kept_survey())
    }

    /// The parent branch (see [`parent`]): `Ok(Err)` says what was tried.
    pub(crate) fn resolve_parent(
        &self,
        explicit: Option<&str>,
        configured: Option<&str>,
        head_branch: &str,
    ) -> Result<Result<Parent, String>, QgError> {
        parent::resolve_parent(&self.repo, explicit, configured, head_branch)
    }

    /// Every regular file git knows of: tracked (and not deleted) plus
    /// untracked-not-ignored, symlinks and submodules left out, sorted.
    pub(crate) fn files(&self) -> Result<Vec<String>, QgError> {
        let Some(ignores) = worktree::ignores(&self.repo) else {
            return self.libgit2_files();
        };
        let (index, walked) = match self.kept_survey() {
            Some(surveyed) => (surveyed.index, surveyed.walked),
            None => {
                let Some(index) = index::Index::read(self.repo.path()) else {
                    return self.libgit2_files();
                };
                let walked =
                    worktree::walk(&self.workdir, &ignores, &index, crate::process::cores());
                (index, walked)
            }
        };
        let files = worktree::regular_files(&self.workdir, &index, walked);
        Ok(files.into_iter().map(file_name::from_vec).collect())
    }

    /// [`Repo::files`] with libgit2, for an index the fast path does not read.
    fn libgit2_files(&self) -> Result<Vec<String>, QgError> {
        let git_err = git_error("cannot list files");
        let index = self.repo.index().map_err(&git_err)?;
        const GITLINK: u32 = 0o160000;
        let mut files: std::collections::BTreeSet<String> = index
            .iter()
            .filter(|entry| entry.mode != GITLINK)
            .map(|entry| file_name::from_bytes(&entry.path))
            .collect();
        let mut options = StatusOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .exclude_submodules(true);
        let statuses = self.repo.statuses(Some(&mut options)).map_err(&git_err)?;
        for entry in statuses.iter() {
            let status = entry.status();
            let path = file_name::from_bytes(entry.path_bytes());
            if status.contains(Status::WT_NEW) {
                files.insert(path);
            } else if status.intersects(Status::WT_DELETED | Status::INDEX_DELETED) {
                files.remove(&path);
            }
        }
        let workdir = &self.workdir;
        Ok(files
            .into_iter()
            .filter(|p| {
                std::fs::symlink_metadata(file_name::join(workdir, p)).is_ok_and(|m| m.is_file())
            })
            .collect())
    }

    /// Every path in the index with its blob id (submodules left out). For
    /// a file a diff shows unchanged, that is its content's id, read without
    /// touching the file.
    pub(crate) fn index_blobs(&self) -> Result<Vec<(String, String)>, QgError> {
        const GITLINK: u32 = 0o160000;
        let index = self
            .repo
            .index()
            .map_err(git_error("cannot read the index"))?;
        Ok(index
            .iter()
            .filter(|entry| entry.mode != GITLINK)
            .map(|entry| (file_name::from_bytes(&entry.path), entry.id.to_string()))
            .collect())
    }

    /// HEAD's blobs, looked up by path (none on an unborn branch).
    pub(crate) fn head_blobs(&self) -> CommitBlobs<'_> {
        let tree = self
            .repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .and_then(|c| c.tree().ok());
        CommitBlobs { tree }
    }
}

/// The blob ids of one commit's tree, looked up by root-relative path.
pub(crate) struct CommitBlobs<'r> {
    tree: Option<git2::Tree<'r>>,
}

/// A file as git records it: its content and its executable bit (the only
/// mode git keeps for a regular file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeFile {
    /// Blob id of the content.
    pub(crate) blob: String,
    /// Whether git records it as executable (mode 100755).
    pub(crate) executable: bool,
}

impl CommitBlobs<'_> {
    /// The file the commit holds at `path`, if it holds one there.
    pub(crate) fn file(&self, path: &str) -> Option<TreeFile> {
        let entry = self
            .tree
            .as_ref()?
            .get_path(&file_name::to_path(path))
            .ok()?;
        (entry.kind() == Some(git2::ObjectType::Blob)).then(|| TreeFile {
            blob: entry.id().to_string(),
            executable: entry.filemode() == i32::from(git2::FileMode::BlobExecutable),
        })
    }
}

impl TreeFile {
    /// What `clean_blobs` remembers of a file that passed: its blob id, with
    /// `+x` when it is executable — the mode can decide a verdict (a rule
    /// that flags an executable file without a shebang), so content that
    /// passed with one mode has not passed with the other.
    pub(crate) fn clean_key(&self) -> String {
        match self.executable {
            true => format!("{}+x", self.blob),
            false => self.blob.clone(),
        }
    }
}

/// The file on disk as git would record it (`None` when it cannot be read).
pub(crate) fn worktree_file(path: &Path) -> Option<TreeFile> {
    Some(TreeFile {
        blob: blob_id(path)?,
        executable: is_executable(path),
    })
}

/// Git's rule for the executable bit of a file on disk: the owner may run it.
#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o100 != 0)
}

/// Windows file systems keep no executable bit: git for Windows runs with
/// `core.fileMode = false` and records files as not executable.
#[cfg(not(unix))]
fn is_executable(_path: &Path) -> bool {
    false
}

/// The blob id git would give the file's current content.
pub(crate) fn blob_id(path: &Path) -> Option<String> {
    Oid::hash_file(git2::ObjectType::Blob, path)
        .ok()
        .map(|oid| oid.to_string())
}

/// The blob id of `bytes`: a SHA-1 that is stable across platforms and
/// releases (config hashes, fingerprints, cache keys).
pub(crate) fn hash_blob(bytes: &[u8]) -> String {
    Oid::hash_object(git2::ObjectType::Blob, bytes)
        .map(|oid| oid.to_string())
        .unwrap_or_default()
}

/// Short form of a commit id for messages.
pub(crate) fn short(oid: &str) -> &str {
    &oid[..oid.len().min(7)]
}
