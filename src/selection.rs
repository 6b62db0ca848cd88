//! Each tool's own choice of files: what it checks when the project runs it
//! itself (`mypy .`, bare `pyright`), read from the tool's config as the
//! gate's `selection` describes it — where the config lives, which keys
//! include and exclude files, and how stubs beside sources are treated.
//!
//! On `--scope project` such a gate runs the tool's own whole-project
//! invocation, so it checks exactly what the project's own run would; on a
//! partial scope, files the tool's config leaves out are never passed to it
//! (a file named on the command line overrides a tool's config, so qg must
//! filter), and a `.py` hidden by its `.pyi` is passed the way the tool's
//! discovery would treat it.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;

use crate::config::{ConfigSource, PatternSyntax, SelectionSpec, StubPolicy};
use crate::tool_config::Section;

/// What a tool selects in this project.
#[derive(Debug, Clone)]
pub(crate) struct ToolSelection {
    /// Where it comes from, for `qg doctor`: `setup.cfg [mypy]: files =
    /// src; exclude = ^build/`, or `the tool's defaults`.
    pub(crate) source: Box<str>,
    /// Whether the tool's config names the files itself (then its
    /// whole-project run takes no `project_args`).
    pub(crate) names_files: bool,
    /// The entries of the include key as the config writes them, when it
    /// names the files (`files = ["src"]`).
    pub(crate) named: Box<[String]>,
    /// The config that says so (`pyproject.toml [tool.mypy]`), if one does.
    pub(crate) config_label: Option<Box<str>>,
    /// It names them by dotted module name (`packages = pkg`).
    by_module: bool,
    include: Option<Box<Matcher>>,
    exclude: Option<Box<Matcher>>,
    prefer_stub: bool,
    /// The directory the tool runs in, root-relative with a trailing `/`
    /// (`""`: the root): its config's paths are relative to it, and it
    /// checks nothing outside it.
    within: Box<str>,
    /// Where the tool configures each file by its nearest config: a file
    /// its include leaves out is kept when a directory between it and
    /// this config holds a config of its own.
    nearest: Option<Box<NearestConfig>>,
}

/// The tool's directory and where a config may live in each directory,
/// for a tool that configures each file by the config nearest to it.
#[derive(Debug, Clone)]
struct NearestConfig {
    dir: PathBuf,
    sources: Vec<ConfigSource>,
}

impl NearestConfig {
    /// Whether a directory above `path` (relative to [`Self::dir`]), below
    /// `dir` itself, holds a config of the tool's own. One that cannot be
    /// read counts: the tool stops on it, which the run must see.
    fn has_own_config_above(&self, path: &str) -> bool {
        let dirs = path.match_indices('/').map(|(i, _)| &path[..i]);
        dirs.into_iter().any(|dir| {
            !matches!(
                crate::tool_config::first_section(&self.dir.join(dir), &self.sources),
                Ok(None)
            )
        })
    }
}

/// Include or exclude entries, compiled.
#[derive(Debug, Clone)]
enum Matcher {
    /// Files, directories or globs, root-relative.
    Paths(GlobSet),
    /// Regexes searched in each path and in each of its directories
    /// (`a/`, `a/b/`), as mypy's `exclude` is.
    Regex(Vec<Regex>),
    /// Entries a walk finds (see [`PatternSyntax::WalkedPaths`]).
    Walked(Vec<WalkedEntry>),
    /// Globs a `*` of which crosses `/` (see [`PatternSyntax::JoinedGlobs`]).
    JoinedGlobs(Box<JoinedGlobs>),
}

/// ruff's file patterns as ruff compiles them: each joined to the
/// config's directory, and one without `/` also as written, with globset's
/// defaults (a `*` crosses `/`), in one set matched against absolute paths
/// — by `include` the file's, by `exclude` also each directory's above it
/// and each one's name (`examples` leaves out every directory so named).
#[derive(Debug, Clone)]
struct JoinedGlobs {
    set: GlobSet,
    /// The config's directory, absolute, with `/`.
    dir: String,
}

impl JoinedGlobs {
    fn includes(&self, path: &str) -> bool {
        self.set.is_match(format!("{}/{path}", self.dir))
    }

    fn excludes(&self, path: &str) -> bool {
        let parts = path.match_indices('/').map(|(i, _)| &path[..i]);
        parts.chain(std::iter::once(path)).any(|part| {
            let name = part.rsplit('/').next().unwrap_or(part);
            self.includes(part) || self.set.is_match(name)
        })
    }
}

/// One entry of a walked include: where the walk starts, what it matches,
/// and whether it enters every directory.
#[derive(Debug, Clone)]
struct WalkedEntry {
    /// The entry's directories before its first wildcard (`""`: the root).
    start: String,
    /// The entry itself, or anything under what it matches.
    matcher: GlobSet,
    /// It holds `**`: the walk enters every directory below `start`.
    deep: bool,
}

impl WalkedEntry {
    /// Whether the walk reaches `path` and the entry matches it: every
    /// directory it enters below `start` must match the entry too (one
    /// that matches makes every directory under it match).
    fn reaches(&self, path: &str) -> bool {
        let below = match self.start.as_str() {
            "" => Some(path),
            // An entry naming the file itself (`include = ["a/b.py"]`).
            start if path == start => return self.matcher.is_match(path),
            start => path.strip_prefix(start).and_then(|p| p.strip_prefix('/')),
        };
        let Some(below) = below else {
            return false;
        };
        let entered = match below.split_once('/') {
            Some((first, _)) if !self.deep => {
                let dir = match self.start.as_str() {
                    "" => first.to_string(),
                    start => format!("{start}/{first}"),
                };
                self.matcher.is_match(&dir)
            }
            _ => true,
        };
        entered && self.matcher.is_match(path)
    }
}

impl ToolSelection {
    /// Whether its config names the files by dotted module name (mypy's
    /// `packages`, `modules`) rather than by path.
    pub(crate) fn names_modules(&self) -> bool {
        self.by_module
    }

    /// Whether the tool's own run would check `path` (root-relative).
    pub(crate) fn selects(&self, path: &str) -> bool {
        let Some(path) = path.strip_prefix(&*self.within) else {
            return false;
        };
        let included = || {
            self.include.as_ref().is_none_or(|m| m.matches(path))
                || self
                    .nearest
                    .as_ref()
                    .is_some_and(|n| n.has_own_config_above(path))
        };
        included() && !self.exclude.as_ref().is_some_and(|m| m.excludes(path))
    }

    /// The entries of the include key, as the config writes them, that
    /// name no file or directory under `root` (globs are left out: one
    /// that matches nothing is not a mistake the tool stops on).
    pub(crate) fn missing_entries(&self, root: &Path) -> Vec<String> {
        self.named
            .iter()
            .map(|entry| clean(entry))
            .filter(|entry| !entry.is_empty() && *entry != "." && !entry.contains(['*', '?', '[']))
            .filter(|entry| !root.join(&*self.within).join(entry).exists())
            .map(str::to_string)
            .collect()
    }

    /// Whether the tool checks `path` given the project's other files:
    /// with `prefer_stub`, a `.py` beside a `.pyi` of the same module is
    /// never checked (the tool's discovery takes the stub).
    pub(crate) fn checks(&self, path: &str, root: &Path) -> bool {
        if self.prefer_stub && path.ends_with(".py") {
            let stub = format!("{path}i");
            if crate::file_name::join(root, &stub).is_file() {
                return false;
            }
        }
        self.selects(path)
    }
}

impl Matcher {
    fn matches(&self, path: &str) -> bool {
        match self {
            Matcher::Paths(set) => set.is_match(path),
            Matcher::Regex(regexes) => {
                let dirs = path.match_indices('/').map(|(i, _)| &path[..=i]);
                std::iter::once(path)
                    .chain(dirs)
                    .any(|p| regexes.iter().any(|r| r.is_match(p)))
            }
            Matcher::Walked(entries) => entries.iter().any(|e| e.reaches(path)),
            Matcher::JoinedGlobs(globs) => globs.includes(path),
        }
    }

    /// Whether `path` is left out by this matcher as an exclude: as by
    /// [`Self::matches`], except ruff's, which also leaves out what is under
    /// a directory it matches.
    fn excludes(&self, path: &str) -> bool {
        match self {
            Matcher::JoinedGlobs(globs) => globs.excludes(path),
            _ => self.matches(path),
        }
    }
}

/// Where a gate's files come from, in words (`qg doctor`, `qg explain`):
/// the tool's own selection and where it is configured, or qg's list.
/// `Err` says why the tool's config could not be read (its defaults apply).
pub(crate) fn files_from(root: &Path, gate: &crate::config::Gate) -> Result<String, String> {
    let Some(spec) = &gate.selection else {
        return Ok("qg's file list: project_scope and the gate's file_types and globs".into());
    };
    read(root, gate, spec)
        .map(|selection| format!("the tool's own selection: {}", selection.source))
        .map_err(|(_, why)| why)
}

/// Reads `gate`'s tool's selection (`spec`, the gate's own) from the first
/// config source that holds its section, in the directory the gate runs
/// in (a workspace member's). `Err` says which file could not be read (the
/// tool would fail on it too); the selection is then the tool's defaults.
pub(crate) fn read(
    root: &Path,
    gate: &crate::config::Gate,
    spec: &SelectionSpec,
) -> Result<ToolSelection, (ToolSelection, String)> {
    let within = match &gate.working_dir {
        Some(dir) => format!("{}/", crate::paths::to_slash(dir)),
        None => String::new(),
    };
    // The variable that stands for the config's directory in its paths
    // (the gate's search_paths.config_dir_variable: `$MYPY_CONFIG_FILE_DIR`).
    let dir_variable = gate
        .search_paths
        .as_ref()
        .and_then(|s| s.config_dir_variable.as_deref());
    read_at(&gate.config_dir(root), spec, &within, dir_variable)
}

/// What [`from_section`] reads a section with.
struct Reading<'a> {
    spec: &'a SelectionSpec,
    /// The tool's directory, absolute.
    dir: &'a Path,
    within: &'a str,
    dir_variable: Option<&'a str>,
}

/// [`read`] in `dir`, for a tool run there, its paths relative to `dir`;
/// `within` is `dir` root-relative with a `/` (empty at the root), which
/// labels name the config file with (`packages/a/pyproject.toml`).
fn read_at(
    dir: &Path,
    spec: &SelectionSpec,
    within: &str,
    dir_variable: Option<&str>,
) -> Result<ToolSelection, (ToolSelection, String)> {
    let defaults = |source: String| ToolSelection {
        source: source.into(),
        names_files: false,
        named: Box::default(),
        config_label: None,
        by_module: false,
        include: None,
        exclude: spec
            .exclude
            .as_ref()
            .filter(|e| !e.default.is_empty())
            .and_then(|e| compile(&e.default, e.syntax, dir).ok())
            .map(Box::new),
        prefer_stub: spec.stubs == StubPolicy::PreferStub,
        within: within.into(),
        nearest: nearest(spec, dir),
    };
    match crate::tool_config::first_section(dir, &spec.config) {
        Ok(Some(found)) => {
            let label = format!("{within}{}", found.label);
            let reading = Reading {
                spec,
                dir,
                within,
                dir_variable,
            };
            return from_section(&label, &found.section, &reading)
                .map_err(|why| (defaults("the tool's defaults".into()), why));
        }
        Ok(None) => {}
        Err(why) => {
            let why = format!("{why}; assuming the tool's defaults");
            return Err((defaults("the tool's defaults".into()), why));
        }
    }
    Ok(defaults(match spec.config.is_empty() {
        // qg reads nothing: the tool's own run applies its own settings.
        true => "the tool's own discovery and settings, applied by the tool itself".into(),
        false => "the tool's defaults (no config names its files)".into(),
    }))
}

fn from_section(
    label: &str,
    section: &Section,
    reading: &Reading,
) -> Result<ToolSelection, String> {
    let Reading {
        spec,
        dir,
        within,
        dir_variable,
    } = *reading;
    let mut shown = Vec::new();
    let by_name = dotted_include(section, &spec.include_modules, dir_variable, &mut shown)
        .map_err(|e| format!("{label}: {e}"))?;
    // The key's matcher and the entries it was made of.
    type Read = Option<(Box<Matcher>, Vec<String>)>;
    let mut read_key = |key: &Option<crate::config::SelectionKey>| -> Result<Read, String> {
        let Some(key) = key else { return Ok(None) };
        let mut patterns = match entries(section, &key.key, key.syntax) {
            Some(entries) => {
                shown.push(format!("{} = {}", key.key, entries.join(", ")));
                entries
            }
            None if !key.default.is_empty() => key.default.clone(),
            None => return Ok(None),
        };
        // ruff's `extend-include` adds to `include` (alone, to ruff's
        // default, which takes every file qg passes).
        let extended = key.extended_by.as_deref();
        if let Some((extra, more)) =
            extended.and_then(|k| Some((k, entries(section, k, key.syntax)?)))
        {
            shown.push(format!("{extra} = {}", more.join(", ")));
            patterns.extend(more);
        }
        compile(&patterns, key.syntax, dir)
            .map(|matcher| Some((Box::new(matcher), patterns)))
            .map_err(|e| format!("{label}: `{}` cannot be read: {e}", key.key))
    };
    let by_module = by_name.is_some();
    let (include, named) = match by_name {
        // mypy stops when both are set; the dotted names are what it
        // would check were `files` not there.
        Some(matcher) => (Some(matcher), Vec::new()),
        None => match read_key(&spec.include)? {
            // A filter on what the tool's walk finds names no file itself.
            Some((matcher, _)) if !names_where_to_start(&spec.include) => {
                (Some(matcher), Vec::new())
            }
            Some((matcher, entries)) => (Some(matcher), entries),
            None => (None, Vec::new()),
        },
    };
    let exclude = read_key(&spec.exclude)?.map(|(matcher, _)| matcher);
    let source = match shown.is_empty() {
        true => format!("{label} (no file selection: the tool's defaults)"),
        false => format!("{label}: {}", shown.join("; ")),
    };
    Ok(ToolSelection {
        source: source.into(),
        names_files: include.is_some() && (by_module || names_where_to_start(&spec.include)),
        named: named.into(),
        config_label: Some(label.into()),
        by_module,
        include,
        exclude,
        prefer_stub: spec.stubs == StubPolicy::PreferStub,
        within: within.into(),
        nearest: nearest(spec, dir),
    })
}

/// What a tool that configures each file by its nearest config needs to
/// find one under `dir`, the tool's directory.
fn nearest(spec: &SelectionSpec, dir: &Path) -> Option<Box<NearestConfig>> {
    spec.nearest_config.then(|| {
        Box::new(NearestConfig {
            dir: dir.to_path_buf(),
            sources: spec.config.clone(),
        })
    })
}

/// Whether the include key names where the tool starts (mypy's `files`,
/// which its whole-project run then takes instead of `project_args`),
/// rather than filtering what its walk finds (ruff's `include`).
fn names_where_to_start(key: &Option<crate::config::SelectionKey>) -> bool {
    key.as_ref()
        .is_none_or(|k| k.syntax != PatternSyntax::JoinedGlobs)
}

/// The files the dotted-name keys name (`packages = pkg, tests.examples`),
/// found under the tool's directory and the directories each key's
/// `roots_key` lists (mypy's `mypy_path`); `None` when none is present.
/// Each name is looked for under every root (the tool takes the first it
/// finds: two roots holding one package is a mistake it reports itself).
fn dotted_include(
    section: &Section,
    keys: &[crate::config::SelectionKey],
    dir_variable: Option<&str>,
    shown: &mut Vec<String>,
) -> Result<Option<Box<Matcher>>, String> {
    let mut paths = Vec::new();
    let mut present = false;
    for key in keys {
        let Some(names) = entries(section, &key.key, key.syntax) else {
            continue;
        };
        present = true;
        shown.push(format!("{} = {}", key.key, names.join(", ")));
        let roots = roots(section, key.roots_key.as_deref(), dir_variable);
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            paths.extend(module_paths(name, key.syntax, &roots));
        }
    }
    if !present {
        return Ok(None);
    }
    // Keys present but naming nothing: the tool checks nothing by them.
    if paths.is_empty() {
        return Ok(Some(Box::new(Matcher::Paths(GlobSet::empty()))));
    }
    paths_matcher(paths.iter().map(String::as_str)).map(|set| Some(Box::new(Matcher::Paths(set))))
}

/// The directories dotted names are found under: the tool's own (`""`)
/// and those `key` lists, relative to it (with `dir_variable` the config
/// directory's variable, `$MYPY_CONFIG_FILE_DIR/src` is `src`; mypy
/// separates them by `,` or `:` on every platform).
pub(crate) fn roots(
    section: &Section,
    key: Option<&str>,
    dir_variable: Option<&str>,
) -> Vec<String> {
    let listed = key
        .and_then(|k| entries(section, k, PatternSyntax::Paths))
        .unwrap_or_default();
    let listed = listed.iter().flat_map(|e| e.split(':')).map(|root| {
        let root = root.trim();
        let root = dir_variable
            .and_then(|v| root.strip_prefix('$')?.strip_prefix(v))
            .unwrap_or(root);
        clean(root.trim_start_matches('/')).to_string()
    });
    let mut roots = vec![String::new()];
    roots.extend(listed.filter(|r| !r.is_empty() && r != "."));
    roots
}

/// Where the module `name` may be under each of `roots`: its file, or its
/// package's `__init__` (relative to the tool's directory).
pub(crate) fn module_files(name: &str, roots: &[String]) -> Vec<String> {
    module_paths(name, PatternSyntax::Modules, roots)
}

/// Where the module or package `name` may be under each of `roots`, as
/// path entries: a package's directory (all under it) or a module's file
/// for `packages`; the module's file or its package's `__init__` alone
/// for `modules`.
fn module_paths(name: &str, syntax: PatternSyntax, roots: &[String]) -> Vec<String> {
    let relative = name.replace('.', "/");
    let mut paths = Vec::new();
    for root in roots {
        let at = match root.is_empty() {
            true => relative.clone(),
            false => format!("{root}/{relative}"),
        };
        paths.push(format!("{at}.py"));
        paths.push(format!("{at}.pyi"));
        match syntax {
            PatternSyntax::Packages => paths.push(at),
            _ => {
                paths.push(format!("{at}/__init__.py"));
                paths.push(format!("{at}/__init__.pyi"));
            }
        }
    }
    paths
}

/// `entries` compiled as `syntax`; `dir` is the tool's directory,
/// absolute, which ruff's globs are matched under.
fn compile(entries: &[String], syntax: PatternSyntax, dir: &Path) -> Result<Matcher, String> {
    match syntax {
        // Checked when the config is read: these are never file patterns.
        PatternSyntax::Packages | PatternSyntax::Modules => {
            Err("dotted module names are not file patterns".to_string())
        }
        PatternSyntax::Paths => {
            paths_matcher(entries.iter().map(String::as_str)).map(Matcher::Paths)
        }
        PatternSyntax::WalkedPaths => entries
            .iter()
            .map(|entry| {
                let entry = clean(entry);
                let start: Vec<&str> = entry
                    .split('/')
                    .take_while(|part| !part.contains(['*', '?', '[']))
                    .filter(|part| !part.is_empty() && *part != ".")
                    .collect();
                Ok(WalkedEntry {
                    start: start.join("/"),
                    matcher: paths_matcher(std::iter::once(entry))?,
                    deep: entry.contains("**"),
                })
            })
            .collect::<Result<Vec<_>, String>>()
            .map(Matcher::Walked),
        PatternSyntax::Regex => entries
            .iter()
            .map(|r| Regex::new(r.trim()).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()
            .map(Matcher::Regex),
        PatternSyntax::JoinedGlobs => {
            joined_globs(entries, dir).map(|g| Matcher::JoinedGlobs(Box::new(g)))
        }
    }
}

/// ruff's patterns (see [`JoinedGlobs`]) under the config's directory
/// `dir`: ruff does not escape it, nor does this.
fn joined_globs(entries: &[String], dir: &Path) -> Result<JoinedGlobs, String> {
    let dir = crate::paths::to_slash(dir)
        .trim_end_matches('/')
        .to_string();
    let mut set = GlobSetBuilder::new();
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let glob = |pattern: &str| globset::Glob::new(pattern).map_err(|e| e.to_string());
        // Joined as a path, which drops a trailing `/` (`examples/`
        // excludes the directory); the `/` still keeps it from matching a
        // name anywhere.
        let joined = entry.trim_start_matches("./").trim_end_matches('/');
        set.add(glob(&format!("{dir}/{joined}"))?);
        if !entry.contains('/') {
            set.add(glob(entry)?);
        }
    }
    Ok(JoinedGlobs {
        set: set.build().map_err(|e| e.to_string())?,
        dir,
    })
}

/// An entry as written, without `./` before or `/` after.
fn clean(entry: &str) -> &str {
    entry.trim().trim_start_matches("./").trim_end_matches('/')
}

/// Files, directories or globs: each entry itself (a file, or a glob), or
/// anything under it; `.` or nothing: everything.
fn paths_matcher<'e>(entries: impl Iterator<Item = &'e str>) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for entry in entries {
        let entry = clean(entry);
        if entry.is_empty() || entry == "." {
            builder.add(glob("**")?);
            continue;
        }
        builder.add(glob(entry)?);
        builder.add(glob(&format!("{entry}/**"))?);
    }
    builder.build().map_err(|e| e.to_string())
}

fn glob(pattern: &str) -> Result<globset::Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())
}

/// The entries of `key`: a list, or a string (comma- or line-separated
/// for paths; one regex per line-joined string for regexes).
fn entries(section: &Section, key: &str, syntax: PatternSyntax) -> Option<Vec<String>> {
    let split = |text: &str| -> Vec<String> {
        match syntax {
            PatternSyntax::Paths
            | PatternSyntax::WalkedPaths
            | PatternSyntax::JoinedGlobs
            | PatternSyntax::Packages
            | PatternSyntax::Modules => text
                .split([',', '\n'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            PatternSyntax::Regex => vec![text.trim().to_string()],
        }
    };
    section.strings(key).map(|strings| strings.entries(split))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigSource, SelectionKey, SelectionSpec};

    fn spec(
        config: &[(&str, &str)],
        include: &str,
        exclude: (&str, PatternSyntax),
    ) -> SelectionSpec {
        SelectionSpec {
            project_args: vec![".".into()],
            config: config
                .iter()
                .map(|(file, section)| ConfigSource {
                    file: file.to_string(),
                    section: section.to_string(),
                })
                .collect(),
            include: Some(SelectionKey {
                key: include.into(),
                syntax: PatternSyntax::Paths,
                default: Vec::new(),
                missing: Default::default(),
                roots_key: None,
                extended_by: None,
            }),
            include_modules: ["packages", "modules"]
                .map(|key| SelectionKey {
                    key: key.into(),
                    syntax: match key {
                        "packages" => PatternSyntax::Packages,
                        _ => PatternSyntax::Modules,
                    },
                    default: Vec::new(),
                    missing: Default::default(),
                    roots_key: Some("mypy_path".into()),
                    extended_by: None,
                })
                .to_vec(),
            exclude: Some(SelectionKey {
                key: exclude.0.into(),
                syntax: exclude.1,
                default: match exclude.1 {
                    PatternSyntax::Paths | PatternSyntax::WalkedPaths => {
                        vec!["**/node_modules".into()]
                    }
                    _ => Vec::new(),
                },
                missing: Default::default(),
                roots_key: None,
                extended_by: None,
            }),
            stubs: StubPolicy::Both,
            nearest_config: false,
        }
    }

    fn read_in(files: &[(&str, &str)], spec: &SelectionSpec) -> ToolSelection {
        let tmp = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(tmp.path().join(name), text).unwrap();
        }
        read_at(tmp.path(), spec, "", Some("MYPY_CONFIG_FILE_DIR"))
            .unwrap_or_else(|(_, why)| panic!("{why}"))
    }

    #[test]
    fn ini_lists_span_lines_and_regexes_match_directories_too() {
        let s = spec(
            &[("mypy.ini", "mypy"), ("setup.cfg", "mypy")],
            "files",
            ("exclude", PatternSyntax::Regex),
        );
        let cfg = "[metadata]\nname = x\n[mypy]\nfiles =\n    src,\n    tests/unit\nexclude = (?x)(^build/ | /generated/)  # not a comment\n";
        let selection = read_in(&[("setup.cfg", cfg)], &s);
        assert!(selection.names_files);
        assert!(selection.selects("src/a.py") && selection.selects("tests/unit/t.py"));
        assert!(!selection.selects("tests/other.py"));
        assert!(
            !selection.selects("src/pkg/generated/x.py"),
            "a directory matches"
        );
        // The first source holding the section wins.
        let own = read_in(
            &[("setup.cfg", cfg), ("mypy.ini", "[mypy]\nfiles = tests\n")],
            &s,
        );
        assert!(own.selects("tests/other.py") && !own.selects("src/a.py"));
    }

    /// mypy's `packages` (each with all under it) and `modules` (alone),
    /// found under the current directory and every `mypy_path` entry.
    #[test]
    fn dotted_names_select_packages_and_modules_under_each_root() {
        let s = spec(
            &[("setup.cfg", "mypy")],
            "files",
            ("exclude", PatternSyntax::Regex),
        );
        let cfg = "[mypy]\npackages = app.core, tests\nmodules = tool,\n    lib.one\n\
                   mypy_path = $MYPY_CONFIG_FILE_DIR/src:stubs\nfiles = ignored.py\n";
        let selection = read_in(&[("setup.cfg", cfg)], &s);
        assert!(selection.names_files && selection.names_modules());
        for checked in [
            "src/app/core/__init__.py",
            "src/app/core/deep/x.py",
            "app/core/x.py",
            "tests/test_a.py",
            "tool.py",
            "src/tool.pyi",
            "stubs/lib/one/__init__.pyi",
            "lib/one.py",
        ] {
            assert!(selection.selects(checked), "{checked}");
        }
        for left_out in [
            "src/app/other.py",
            "app/__init__.py",
            "lib/one/two.py",
            "ignored.py",
            "src/tests_extra.py",
        ] {
            assert!(!selection.selects(left_out), "{left_out}");
        }
        assert!(
            selection.source.contains("packages = app.core, tests"),
            "{}",
            selection.source
        );
    }

    #[test]
    fn toml_and_json_with_comments_and_defaults() {
        let s = spec(
            &[
                ("pyrightconfig.json", ""),
                ("pyproject.toml", "tool.pyright"),
            ],
            "include",
            ("exclude", PatternSyntax::Paths),
        );
        let toml = "[tool.pyright]\ninclude = [\"src\", \"scripts/*.py\"]\n";
        let selection = read_in(&[("pyproject.toml", toml)], &s);
        assert!(selection.selects("src/deep/a.py") && selection.selects("scripts/run.py"));
        assert!(
            !selection.selects("scripts/sub/run.py"),
            "`*` stays in its directory"
        );
        // The default exclude applies when the key is absent.
        assert!(!selection.selects("src/node_modules/x.py"));
        let json = "{\n  // pyright allows comments\n  \"include\": [\"lib\"], /* and these */ \"exclude\": [\"lib/old\"]\n}";
        let selection = read_in(
            &[("pyproject.toml", toml), ("pyrightconfig.json", json)],
            &s,
        );
        assert!(selection.selects("lib/a.py") && !selection.selects("lib/old/a.py"));
        assert!(!selection.selects("src/a.py"));
        // Nothing configured: everything, and the tool's own run takes its args.
        let none = read_in(&[], &s);
        assert!(!none.names_files && none.selects("anything.py"));
    }

    #[test]
    fn a_walked_include_enters_only_directories_the_entry_matches() {
        let walked = |entries: &[&str]| {
            let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
            compile(&entries, PatternSyntax::WalkedPaths, Path::new("/")).unwrap()
        };
        // pyright: `packages/*/jaraco` never enters packages/text, which it
        // does not match; `**` enters everything; `packages/*` matches
        // packages/text and so everything under it.
        let one_star = walked(&["packages/*/jaraco"]);
        assert!(!one_star.matches("packages/text/jaraco/text/__init__.py"));
        let two_stars = walked(&["packages/**/jaraco"]);
        assert!(two_stars.matches("packages/text/jaraco/text/__init__.py"));
        assert!(!two_stars.matches("packages/text/tests/test_core.py"));
        let last = walked(&["packages/*", "src", "./tools/"]);
        for path in ["packages/text/jaraco/a.py", "src/deep/a.py", "tools/x.py"] {
            assert!(last.matches(path), "{path}");
        }
        assert!(!last.matches("other/a.py"));
        assert!(walked(&["*.py"]).matches("setup.py"));
        assert!(
            !walked(&["*.py"]).matches("pkg/a.py"),
            "`*` stays in its directory"
        );
        assert!(walked(&["."]).matches("pkg/a.py"));
        // An entry naming a file (attrs: `include = ["typing-examples/baseline.py"]`).
        let file = walked(&["typing-examples/baseline.py"]);
        assert!(file.matches("typing-examples/baseline.py"));
        assert!(!file.matches("typing-examples/mypy.py"));
    }

    /// ruff's `include` as `ruff check --show-files .` (0.17.5) takes it:
    /// `*` crosses `/`, a pattern without `/` is matched anywhere only as
    /// a wildcard, a directory takes no file, `extend-include` adds.
    #[test]
    fn joined_globs_match_as_ruff_does_and_a_nested_config_keeps_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = spec(
            &[("ruff.toml", ""), ("pyproject.toml", "tool.ruff")],
            "include",
            ("exclude", PatternSyntax::Regex),
        );
        s.exclude = None;
        let include = s.include.as_mut().unwrap();
        include.syntax = PatternSyntax::JoinedGlobs;
        include.extended_by = Some("extend-include".into());
        s.nearest_config = true;
        let toml =
            "[tool.ruff]\ninclude = [\"src/*.py\", \"*.pyi\", \"lib\", \"b.py\", \"./top.py\"]\n\
                    extend-include = [\"tools/**/*.py\"]\n";
        std::fs::write(tmp.path().join("pyproject.toml"), toml).unwrap();
        std::fs::create_dir_all(tmp.path().join("sub/deep")).unwrap();
        std::fs::write(tmp.path().join("sub/ruff.toml"), "").unwrap();
        let selection = read_at(tmp.path(), &s, "", None).unwrap();
        assert!(
            !selection.names_files,
            "a filter: ruff's own run still walks `.`"
        );
        for taken in [
            "src/a.py",
            "src/pkg/b.py",
            "x/y.pyi",
            "top.py",
            "tools/a/t.py",
            "sub/deep/y.py",
        ] {
            assert!(selection.selects(taken), "{taken}");
        }
        for left in ["lib/a.py", "pkg/b.py", "other.py", "x/y.ipynb"] {
            assert!(!selection.selects(left), "{left}");
        }
        // `exclude` (which replaces ruff's default) and `extend-exclude`:
        // a name without `/` anywhere, a directory with all under it.
        let mut s = s.clone();
        s.exclude = Some(SelectionKey {
            key: "exclude".into(),
            syntax: PatternSyntax::JoinedGlobs,
            default: vec![".venv".into()],
            missing: Default::default(),
            roots_key: None,
            extended_by: Some("extend-exclude".into()),
        });
        let excluding = |toml: &str| {
            std::fs::write(tmp.path().join("pyproject.toml"), toml).unwrap();
            read_at(tmp.path(), &s, "", None).unwrap()
        };
        let own = excluding(
            "[tool.ruff]\nexclude = [\"examples\", \"docs/*.py\"]\nextend-exclude = [\"*_pb2.py\"]\n",
        );
        for left in [
            "examples/e.py",
            "src/examples/e.py",
            "docs/d.py",
            "docs/sub/d.py",
            "src/x_pb2.py",
        ] {
            assert!(!own.selects(left), "{left}");
        }
        assert!(own.selects(".venv/v.py") && own.selects("a.py"));
        let extended = excluding("[tool.ruff]\nextend-exclude = [\"sub/\", \"pkg/bench/\"]\n");
        // A trailing `/` is dropped as ruff joins the path (werkzeug's
        // `examples/`, sympy's `sympy/core/benchmarks/`), and the pattern
        // holds a `/`: no directory of that name elsewhere.
        assert!(!extended.selects("pkg/bench/b.py") && extended.selects("other/pkg/bench/b.py"));
        assert!(!extended.selects(".venv/v.py") && !extended.selects("x/.venv/v.py"));
        assert!(extended.selects("examples/e.py"));
        // No `include`: ruff's default, which takes every file qg passes.
        std::fs::write(
            tmp.path().join("pyproject.toml"),
            "[tool.ruff]\nextend-include = [\"a.py\"]\n",
        )
        .unwrap();
        assert!(read_at(tmp.path(), &s, "", None)
            .unwrap()
            .selects("other.py"));
    }

    #[test]
    fn a_stub_hides_its_source_when_the_tool_prefers_stubs() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("m.py"), "").unwrap();
        std::fs::write(tmp.path().join("m.pyi"), "").unwrap();
        std::fs::write(tmp.path().join("n.py"), "").unwrap();
        let mut s = spec(&[], "files", ("exclude", PatternSyntax::Regex));
        s.stubs = StubPolicy::PreferStub;
        let selection = read_at(tmp.path(), &s, "", None).unwrap();
        assert!(!selection.checks("m.py", tmp.path()));
        assert!(selection.checks("m.pyi", tmp.path()) && selection.checks("n.py", tmp.path()));
    }

    #[test]
    fn an_unreadable_config_is_said_and_the_defaults_assumed() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("pyproject.toml"), "[tool.mypy\n").unwrap();
        let s = spec(
            &[("pyproject.toml", "tool.mypy")],
            "files",
            ("exclude", PatternSyntax::Regex),
        );
        let (selection, why) = read_at(tmp.path(), &s, "", None).unwrap_err();
        assert!(why.starts_with("cannot read pyproject.toml:"), "{why}");
        assert!(selection.selects("a.py"));
    }
}
