//! Which changed paths make a pass: the project's files as `project_scope`
//! selects them (git-ignored and excluded ones do not count, nor do qg's
//! own state files, nor a tool's cache), the config files qg and the gates'
//! tools read, `.gitignore` files, and a directory moved in or away whole
//! (which sends no event for the files in it).

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::Config;
use crate::git::Repo;
use crate::globs::GlobFilter;
use crate::workspace::Workspace;

/// Decides which changed paths matter.
pub(crate) struct Filter {
    project: GlobFilter,
    configs: BTreeSet<String>,
    repo: Option<Repo>,
}

impl Filter {
    /// The filter of a project, with its config (`explicit`: `--config`).
    pub(crate) fn new(workspace: &Workspace, config: &Config, explicit: Option<&Path>) -> Filter {
        let mut configs: BTreeSet<String> = config
            .gates
            .values()
            .filter_map(|g| g.selection.as_ref())
            .flat_map(|s| s.config.iter().map(|c| c.file.clone()))
            .chain(
                config
                    .import_graph
                    .iter()
                    .flat_map(|g| g.config_files.clone()),
            )
            .collect();
        configs.insert(crate::config::PROJECT_CONFIG.to_string());
        configs.insert(crate::config::PYPROJECT.to_string());
        if let Some(relative) = explicit
            .and_then(|p| dunce::canonicalize(workspace.cwd.join(p)).ok())
            .and_then(|p| workspace.relative(&p))
        {
            configs.insert(relative);
        }
        Filter {
            project: config.project_scope.clone(),
            configs,
            repo: crate::git::discover(&workspace.root).ok().flatten(),
        }
    }

    /// The root-relative paths of an event that should make a pass: one
    /// that can change what a file holds or where it is (a tool reading
    /// the files, or their access times, does not).
    pub(super) fn relevant_paths(&self, root: &Path, event: &notify::Event) -> Vec<String> {
        use notify::event::{EventKind, MetadataKind, ModifyKind};
        let changes = match event.kind {
            EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any => true,
            EventKind::Modify(ModifyKind::Metadata(kind)) => {
                matches!(kind, MetadataKind::Permissions | MetadataKind::Any)
            }
            EventKind::Modify(_) => true,
            EventKind::Access(_) | EventKind::Other => false,
        };
        if !changes {
            return Vec::new();
        }
        let moved = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
        );
        event
            .paths
            .iter()
            .filter_map(|path| self.relevant(root, path, moved))
            .collect()
    }

    /// The root-relative path of `path` when its change should make a
    /// pass; a directory counts only when it was `moved` (or created or
    /// removed) as a whole.
    pub(crate) fn relevant(&self, root: &Path, path: &Path, moved: bool) -> Option<String> {
        let relative = crate::paths::to_slash(path.strip_prefix(root).ok()?);
        if relative.is_empty() || relative == ".git" || relative.starts_with(".git/") {
            return None;
        }
        if self.configs.contains(&relative) {
            return Some(relative);
        }
        if relative.starts_with(".st3/") || self.project.is_excluded(&relative) {
            return None;
        }
        if self.repo.as_ref().is_some_and(|r| r.is_ignored(&relative)) {
            return None;
        }
        // The ignore rules decide which files are the project's (a tool's
        // cache ignores itself, its own `.gitignore` included).
        let ignore_rules = relative == ".gitignore" || relative.ends_with("/.gitignore");
        if self.project.is_included(&relative) || ignore_rules {
            return Some(relative);
        }
        // A directory moved in, or away, as a whole: what it holds matters
        // (a cache directory a tool creates holds no project file).
        let gone = !path.exists() && path.extension().is_none();
        let holds_files = || path.is_dir() && self.holds_project_files(root, path);
        (moved && (gone || holds_files())).then_some(relative)
    }

    /// Whether a directory holds a file the project's globs select (and
    /// git does not ignore).
    fn holds_project_files(&self, root: &Path, dir: &Path) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|entry| {
            let path = entry.path();
            let Some(relative) = path.strip_prefix(root).ok().map(crate::paths::to_slash) else {
                return false;
            };
            let ignored = self.project.is_excluded(&relative)
                || self.repo.as_ref().is_some_and(|r| r.is_ignored(&relative));
            match entry.file_type() {
                _ if ignored => false,
                Ok(kind) if kind.is_dir() => self.holds_project_files(root, &path),
                _ => self.project.is_included(&relative),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_configs_count_caches_state_and_ignored_files_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        crate::git::init(&root);
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
        let workspace = Workspace::discover(&root).unwrap();
        let config = crate::config::parse(crate::config::EMBEDDED_DEFAULT, "default").unwrap();
        let filter = Filter::new(&workspace, &config, None);
        use notify::event::{
            AccessKind, CreateKind, DataChange, EventKind, MetadataKind, ModifyKind,
        };
        let event = |kind: EventKind, path: &str| {
            let event = notify::Event::new(kind).add_path(root.join(path));
            filter.relevant_paths(&root, &event)
        };
        let written = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let relevant = |path: &str| event(written, path).pop();
        assert_eq!(relevant("pkg/a.py").as_deref(), Some("pkg/a.py"));
        assert_eq!(
            relevant("pyproject.toml").as_deref(),
            Some("pyproject.toml")
        );
        assert_eq!(
            relevant(".st3/quality.yaml").as_deref(),
            Some(".st3/quality.yaml")
        );
        assert_eq!(
            relevant("pkg/.gitignore").as_deref(),
            Some("pkg/.gitignore")
        );
        std::fs::create_dir_all(root.join(".tool_cache")).unwrap();
        std::fs::write(root.join(".tool_cache/.gitignore"), "*\n").unwrap();
        assert_eq!(
            relevant(".tool_cache/.gitignore"),
            None,
            "a cache ignoring itself"
        );
        let created = EventKind::Create(CreateKind::Folder);
        assert!(event(created, "pkg/sub").is_empty(), "an empty directory");
        std::fs::write(root.join("pkg/sub/m.py"), "x = 1\n").unwrap();
        assert_eq!(event(created, "pkg/sub"), ["pkg/sub"], "a package moved in");
        std::fs::create_dir_all(root.join(".ruff_cache/0.17")).unwrap();
        std::fs::write(root.join(".ruff_cache/0.17/123"), "").unwrap();
        assert!(event(created, ".ruff_cache").is_empty(), "a tool's cache");
        let removed = EventKind::Remove(notify::event::RemoveKind::Folder);
        assert_eq!(
            event(removed, "pkg/gone"),
            ["pkg/gone"],
            "a directory moved away"
        );
        assert!(
            relevant("pkg/sub").is_none(),
            "a directory whose entries changed"
        );
        // A tool reading a file, or touching its times, changes nothing.
        let read = EventKind::Access(AccessKind::Read);
        assert!(event(read, "pkg/a.py").is_empty());
        let touched = EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime));
        assert!(event(touched, "pkg/a.py").is_empty());
        for ignored in [
            ".git/index",
            ".st3/state.json",
            ".st3/daemons/mypy/daemon.log",
            ".mypy_cache/3.11/pkg/a.data.json",
            "build/lib/pkg/a.py",
            ".venv/lib/python3.11/site-packages/x.py",
            "notes.txt",
        ] {
            assert_eq!(relevant(ignored), None, "{ignored}");
        }
    }
}
