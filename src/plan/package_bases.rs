//! The package bases a gate's `search_paths.bases_env` hands its tool, and
//! the part of them a rerun hint must set.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::graph::roots;

/// The package bases of every file a gate checks — the directories a
/// type checker given all of them would search (see `run::bases`) — with
/// what its `bases_env` variable held before. Kept whole-project runs
/// too: they hand nothing (the tool's own `.` finds every base) but their
/// hints name files, as a partial run does.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PackageBases {
    /// The variable that hands them (`MYPYPATH`).
    variable: String,
    /// Each base, root-relative, with the absolute path handed over.
    bases: Vec<(String, PathBuf)>,
    /// What the variable held already: the gate's `env`, else qg's own.
    before: Vec<PathBuf>,
    /// The project's package directories, which say where a file's own
    /// base is.
    packages: Arc<HashSet<String>>,
}

impl PackageBases {
    /// The bases (root-relative) of `variable`, which held `before`, made
    /// absolute under `root`; `None` without bases.
    pub(crate) fn new(
        variable: &str,
        root: &Path,
        bases: Vec<String>,
        before: Option<OsString>,
        packages: Arc<HashSet<String>>,
    ) -> Option<PackageBases> {
        if bases.is_empty() {
            return None;
        }
        let bases = bases
            .into_iter()
            .map(|base| {
                let path = crate::file_name::join(root, &base);
                (base, path)
            })
            .collect();
        Some(PackageBases {
            variable: variable.to_string(),
            bases,
            before: before.iter().flat_map(std::env::split_paths).collect(),
            packages,
        })
    }

    /// The variable's name and its value for a run given some of the
    /// gate's files: every base ahead of what it held, as the project's own
    /// run searches its files' bases before `$MYPYPATH`. `None` when no
    /// directory can be handed over (a name holding the separator cannot;
    /// the run then searches what it would have without qg).
    pub(crate) fn for_run(&self) -> Option<(String, OsString)> {
        let all = self.bases.iter().map(|(_, path)| path.clone());
        let joinable: Vec<PathBuf> = all
            .chain(self.before.iter().cloned())
            .filter(|p| std::env::join_paths([p]).is_ok())
            .collect();
        let value = std::env::join_paths(joinable).ok()?;
        Some((self.variable.clone(), value))
    }

    /// The assignment a rerun hint naming `files` (root-relative) starts
    /// with (`MYPYPATH=/repo/src `; PowerShell's `$env:` on Windows), empty
    /// when it needs none: the bases other than the named files' own, which
    /// the tool finds itself by crawling up from them. So every run's hint
    /// for the same files has the same form — a project run's (which hands
    /// nothing) as an auto run's — and sets only what changes its verdict.
    ///
    /// The directories stay absolute, as the run had them — not shortened
    /// to the directory the hint runs from. mypy before 2 compares the paths
    /// it finds a module at as written: under `MYPYPATH=src` the package an
    /// editable install's `.pth` names (absolute) is no longer the installed
    /// one it silences, so a hint with relative paths reported errors in
    /// files the project excludes, which qg's run never did, and dropped
    /// the cache entries that kept them silent: the user's own next `mypy`
    /// rebuilt the modules that depend on them.
    pub(crate) fn shown_for<'f>(&self, files: impl Iterator<Item = &'f str>) -> String {
        let packages: HashSet<&str> = self.packages.iter().map(String::as_str).collect();
        let own: HashSet<&str> = files
            .map(|file| roots::package_base(file, &packages))
            .collect();
        let needed: Vec<&Path> = self
            .bases
            .iter()
            .filter(|(base, _)| !own.contains(base.as_str()))
            .map(|(_, path)| path.as_path())
            .collect();
        if needed.is_empty() {
            return String::new();
        }
        let dirs: Vec<String> = needed
            .into_iter()
            .chain(self.before.iter().map(PathBuf::as_path))
            .map(|dir| crate::file_name::from_os_str(dir.as_os_str()))
            .collect();
        let separator = if cfg!(windows) { ";" } else { ":" };
        shell_assignment(&self.variable, &dirs.join(separator))
    }
}

/// `name=value ` as the user's shell sets a variable for one command
/// (PowerShell's `$env:name='value'; ` on Windows).
fn shell_assignment(name: &str, value: &str) -> String {
    match cfg!(windows) {
        true => format!("$env:{name}='{}'; ", value.replace('\'', "''")),
        false => format!("{name}={} ", crate::quote::shell_quote(value)),
    }
}

// The expected assignment is a POSIX shell's.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn src_layout() -> PackageBases {
        let packages = Arc::new(["src/pkg".to_string(), "pkg2".to_string()].into());
        PackageBases::new(
            "MYPYPATH",
            Path::new("/repo"),
            vec!["src".into(), "tests".into()],
            None,
            packages,
        )
        .expect("bases")
    }

    #[test]
    fn a_hint_sets_only_the_bases_its_own_files_do_not_bring() {
        let bases = src_layout();
        assert_eq!(
            bases.shown_for(["tests/test_core.py"].into_iter()),
            "MYPYPATH=/repo/src "
        );
        assert_eq!(
            bases.shown_for(["src/pkg/core.py", "tests/test_core.py"].into_iter()),
            ""
        );
        assert_eq!(
            bases.for_run(),
            Some(("MYPYPATH".into(), "/repo/src:/repo/tests".into()))
        );
    }
}
