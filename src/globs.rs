//! Include/exclude glob filters over root-relative `/`-separated paths.

use std::path::Path;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A path filter: a path passes when it matches some include glob (or the
/// include list is empty) and no exclude glob.
///
/// Globs use gitignore-like `**` semantics: `*` stays within one directory,
/// `src/**/*.py` matches `src/x.py` and `src/a/b/x.py`.
#[derive(Debug, Clone)]
pub(crate) struct GlobFilter {
    include: Option<GlobSet>,
    exclude: GlobSet,
    /// The patterns as written, for messages.
    include_patterns: Vec<String>,
    exclude_patterns: Vec<String>,
    /// A directory every included path must be under (a workspace
    /// member's gate), besides the include globs.
    within: Option<String>,
}

/// A glob that failed to compile: which list, which entry, and why.
#[derive(Debug)]
pub(crate) struct GlobError {
    /// `include_globs` or `exclude_globs`.
    pub(crate) list: &'static str,
    /// Index in that list.
    pub(crate) index: usize,
    /// The compiler's message.
    pub(crate) message: String,
}

impl GlobFilter {
    /// Compiles both lists. An empty include list means "everything".
    pub(crate) fn new(include: &[String], exclude: &[String]) -> Result<GlobFilter, GlobError> {
        let include_set = if include.is_empty() {
            None
        } else {
            Some(build_set(include, "include_globs")?)
        };
        let exclude_set = build_set(exclude, "exclude_globs")?;
        Ok(GlobFilter {
            include: include_set,
            exclude: exclude_set,
            include_patterns: include.to_vec(),
            exclude_patterns: exclude.to_vec(),
            within: None,
        })
    }

    /// This filter for the paths under `dir` (when given) and outside each
    /// of `without`: a workspace member's gate, which leaves the members
    /// inside it to their own runs. Directories are root-relative.
    pub(crate) fn for_member(
        &self,
        dir: Option<&str>,
        without: &[&str],
    ) -> Result<GlobFilter, GlobError> {
        let mut exclude = self.exclude_patterns.clone();
        exclude.extend(without.iter().map(|d| format!("{}/**", globset::escape(d))));
        let mut filter = GlobFilter::new(&self.include_patterns, &exclude)?;
        filter.within = dir.map(|d| format!("{d}/"));
        Ok(filter)
    }

    /// Whether `path` (root-relative, `/`-separated) passes.
    pub(crate) fn matches(&self, path: &str) -> bool {
        self.is_included(path) && !self.is_excluded(path)
    }

    /// Whether `path` matches the include list (always true when it is empty).
    pub(crate) fn is_included(&self, path: &str) -> bool {
        self.within
            .as_ref()
            .is_none_or(|dir| path.starts_with(dir.as_str()))
            && self.include.as_ref().is_none_or(|set| set.is_match(path))
    }

    /// Whether `path` matches an exclude glob.
    pub(crate) fn is_excluded(&self, path: &str) -> bool {
        self.exclude.is_match(path)
    }

    /// The exclude globs `path` matches, as written.
    pub(crate) fn excluded_by(&self, path: &str) -> Vec<&str> {
        self.exclude
            .matches(path)
            .into_iter()
            .map(|i| self.exclude_patterns[i].as_str())
            .collect()
    }

    /// The include globs as written (empty = everything).
    pub(crate) fn include_patterns(&self) -> &[String] {
        &self.include_patterns
    }

    /// The exclude globs as written.
    pub(crate) fn exclude_patterns(&self) -> &[String] {
        &self.exclude_patterns
    }
}

fn build_set(patterns: &[String], list: &'static str) -> Result<GlobSet, GlobError> {
    let mut builder = GlobSetBuilder::new();
    for (index, pattern) in patterns.iter().enumerate() {
        let glob = compile(pattern).map_err(|e| GlobError {
            list,
            index,
            message: e.to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| GlobError {
        list,
        index: 0,
        message: e.to_string(),
    })
}

fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// The directories under `root` (root-relative, sorted) that `pattern`
/// names: itself, or what its glob matches, one path component at a time
/// (`packages/*`; `**` matches any depth; `./` and a trailing `/` are
/// ignored). Walking by component reads only the directories the pattern
/// can reach, not the whole tree. Hidden directories (`.git`, `.venv`)
/// match only when named. Used for workspace members and for the
/// checkers' search paths, which name directories the same way.
pub(crate) fn matching_dirs(root: &Path, pattern: &str) -> Vec<String> {
    // Root-relative only: a path outside the root names no directory of it.
    if pattern.starts_with('/') || Path::new(pattern).is_absolute() {
        return Vec::new();
    }
    let parts: Vec<&str> = pattern
        .trim()
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let mut found = Vec::new();
    walk(root, String::new(), &parts, &mut found);
    found.sort();
    found.dedup();
    found
}

fn walk(root: &Path, dir: String, parts: &[&str], found: &mut Vec<String>) {
    let join = |name: &str| match dir.as_str() {
        "" => name.to_string(),
        _ => format!("{dir}/{name}"),
    };
    let Some((part, rest)) = parts.split_first() else {
        if !dir.is_empty() && crate::file_name::join(root, &dir).is_dir() {
            found.push(dir);
        }
        return;
    };
    if *part == "." {
        return walk(root, dir, rest, found);
    }
    if !part.contains(['*', '?', '[']) {
        return walk(root, join(part), rest, found);
    }
    if *part == "**" {
        walk(root, dir.clone(), rest, found);
        for name in subdirs(root, &dir) {
            walk(root, join(&name), parts, found);
        }
        return;
    }
    let Ok(one) = GlobBuilder::new(part).literal_separator(true).build() else {
        return;
    };
    let one = one.compile_matcher();
    for name in subdirs(root, &dir).into_iter().filter(|n| one.is_match(n)) {
        walk(root, join(&name), rest, found);
    }
}

/// The directories directly in `dir`, hidden ones left out, sorted.
fn subdirs(root: &Path, dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(crate::file_name::join(root, dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| crate::file_name::from_os_str(&e.file_name()))
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_globs_match_one_component_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        for dir in [
            "packages/a/src",
            "packages/b",
            "packages/.hidden",
            "libs/x/y",
        ] {
            std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        }
        std::fs::write(tmp.path().join("packages/file"), "").unwrap();
        let dirs = |pattern: &str| matching_dirs(tmp.path(), pattern);
        assert_eq!(dirs("packages/*"), ["packages/a", "packages/b"]);
        assert_eq!(dirs("./packages/a/"), ["packages/a"]);
        assert_eq!(dirs("packages/.hidden"), ["packages/.hidden"]);
        assert_eq!(dirs("libs/**/y"), ["libs/x/y"]);
        assert_eq!(dirs("**/src"), ["packages/a/src"]);
        assert!(dirs("nowhere").is_empty());
        let outside = format!("{}/*", tmp.path().join("packages").display());
        assert!(dirs(&outside).is_empty(), "a path outside the root");
    }

    fn filter(include: &[&str], exclude: &[&str]) -> GlobFilter {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        GlobFilter::new(&own(include), &own(exclude)).unwrap()
    }

    #[test]
    fn double_star_matches_zero_or_more_directories() {
        let f = filter(&["src/**/*.py"], &[]);
        assert!(f.matches("src/x.py"));
        assert!(f.matches("src/a/b/x.py"));
        assert!(!f.matches("tests/x.py"));
    }

    #[test]
    fn single_star_stays_in_one_directory() {
        let f = filter(&["*.py"], &[]);
        assert!(f.matches("x.py"));
        assert!(!f.matches("pkg/x.py"));
    }

    #[test]
    fn exclude_wins_and_empty_include_means_all() {
        let f = filter(&[], &[".venv/**", "build/**"]);
        assert!(f.matches("pkg/x.py"));
        assert!(!f.matches(".venv/lib/x.py"));
        assert!(!f.matches("build/x.py"));
    }

    #[test]
    fn bad_glob_names_list_and_index() {
        let err = GlobFilter::new(&["ok/**".into()], &["a/[".into()]).unwrap_err();
        assert_eq!((err.list, err.index), ("exclude_globs", 0));
    }
}
