//! The tools' own caches in a run (a gate's `tool_cache`): put back from
//! the store before the tool runs where the checkout has none, from the
//! nearest commit along HEAD's first parents that left one; kept after the
//! tool checked the gate's whole project, once per commit. The tool checks
//! what it reads, so either way its verdict is its own.

use std::path::{Path, PathBuf};

use crate::cache::shared::Shared;
use crate::cache::tool_cache::{archive_path, pack, unpack};
use crate::cache::Store;
use crate::config::Gate;
use crate::outcome::ToolCacheUse;

/// How far back along HEAD's first parents an archive is looked for.
const LOOK_BACK: usize = 32;

/// Where the tool's cache lives for one gate's run, and the commits an
/// archive of it is looked for at.
pub(super) struct ToolCache<'s> {
    /// The directory the tool keeps it in.
    dir: PathBuf,
    /// The gate's key's identity (its tool, version, settings, environment).
    identity: &'s str,
    /// HEAD and its first-parent ancestors, nearest first.
    commits: &'s [String],
    store: &'s Store,
    shared: Option<&'s Shared>,
}

/// HEAD's commit and its first-parent ancestors a run looks for archives
/// at (none outside git or on an unborn branch).
pub(super) fn commits(workspace: &crate::workspace::Workspace) -> Vec<String> {
    workspace
        .repo
        .as_ref()
        .map(|repo| repo.first_parents(LOOK_BACK))
        .unwrap_or_default()
}

impl<'s> ToolCache<'s> {
    /// The gate's tool cache, when it names one and the run is at a commit.
    pub(super) fn of(
        root: &Path,
        gate: &Gate,
        identity: &'s str,
        commits: &'s [String],
        stores: (&'s Store, Option<&'s Shared>),
    ) -> Option<ToolCache<'s>> {
        if commits.is_empty() {
            return None;
        }
        Some(ToolCache {
            dir: cache_dir(root, gate)?,
            identity,
            commits,
            store: stores.0,
            shared: stores.1,
        })
    }

    /// Puts the nearest commit's archive in place when the tool has no
    /// cache here; what it did, or why it could not (the tool then starts
    /// without one, as it would have).
    pub(super) fn restore(&self) -> Option<Result<ToolCacheUse, String>> {
        if self.dir.exists() {
            return None;
        }
        let paths: Vec<String> = self
            .commits
            .iter()
            .map(|commit| archive_path(self.identity, commit))
            .collect();
        let (back, bytes) = self.nearest(&paths)?;
        let done = unpack(&bytes, &self.dir).map(|()| ToolCacheUse {
            restored_from: Some(self.commits[back].clone()),
            commits_back: Some(back),
            stored: false,
        });
        Some(done.map_err(|why| {
            format!(
                "the archive of the tool's own cache ({}) cannot be put back: {why}; the tool starts without it",
                paths[back]
            )
        }))
    }

    /// The nearest archive: this machine's store first, then the team's
    /// (kept here once fetched).
    fn nearest(&self, paths: &[String]) -> Option<(usize, Vec<u8>)> {
        if let Some(back) = paths.iter().position(|p| self.store.holds(p)) {
            return Some((back, self.store.blob(&paths[back])?));
        }
        let shared = self.shared?;
        let held = shared.holding(paths);
        let back = paths.iter().position(|p| held.contains(p))?;
        let (_, bytes) = shared.fetch(&paths[back..=back]).into_iter().next()?;
        let _ = self.store.put_blob(&paths[back], &bytes);
        Some((back, bytes))
    }

    /// Keeps the tool's cache as HEAD's archive, unless the store holds one
    /// (a writing run also gives it to the team's store when that lacks
    /// it); whether one was written.
    pub(super) fn keep(&self) -> bool {
        let path = archive_path(self.identity, &self.commits[0]);
        let shared = self.shared.filter(|s| s.writes());
        let shared_lacks =
            || shared.is_some_and(|s| !s.absent(std::slice::from_ref(&path)).is_empty());
        if self.store.holds(&path) && !shared_lacks() {
            return false;
        }
        let bytes = match self.store.blob(&path) {
            Some(bytes) => bytes,
            None => {
                if !self.dir.is_dir() {
                    return false;
                }
                let Ok(Some(bytes)) = pack(&self.dir) else {
                    return false;
                };
                if self.store.put_blob(&path, &bytes).is_err() {
                    return false;
                }
                bytes
            }
        };
        if let Some(shared) = shared {
            shared.upload(vec![(path, bytes)]);
        }
        true
    }
}

/// Where the gate's tool keeps its cache: the environment variable (the
/// run's or the gate's), else the key of its config, else the default;
/// relative to the directory it runs in.
fn cache_dir(root: &Path, gate: &Gate) -> Option<PathBuf> {
    let spec = gate.tool_cache.as_ref()?;
    let runs_in = gate.config_dir(root);
    let from_env = spec.env.as_ref().and_then(|name| {
        gate.env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    });
    let from_config = || {
        let key = spec.key.as_ref()?;
        let sources = &gate.selection.as_ref()?.config;
        let found = crate::tool_config::first_section(&runs_in, sources).ok()??;
        match found.section.strings(key)? {
            crate::tool_config::Strings::One(dir) => Some(dir),
            crate::tool_config::Strings::List(_) => None,
        }
    };
    let dir = from_env
        .or_else(from_config)
        .unwrap_or_else(|| spec.dir.clone());
    Some(runs_in.join(dir))
}
