//! Where the import graph looks for the project's own modules. The
//! analyzer's own setting (its config, or its default) is merged with the
//! search paths of every active gate that checks importers — read from the
//! tool's own config, its environment variables and its built-in defaults,
//! as the gate's `search_paths` section describes them — and with the
//! project's editable installs. A module only a type checker can find (a
//! namespace package spread over two source roots its config names) is
//! then found by the graph too; otherwise an edit that breaks its importer
//! would pass while the type checker, run on the whole project, fails.
//!
//! More roots only add edges (a larger scope, a cost); a root missing
//! loses them (a green that is not the truth). So every root a gate might
//! search is taken, and each says where it came from (`qg explain`, `qg
//! doctor`).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Serialize;

use crate::config::{Config, Gate, SearchPathSpec};
use crate::paths::PathContext;
use crate::selection::ToolSelection;
use crate::tool_config::{self, Found};
use crate::tools::environment::Environment;

/// The roots the graph resolves imports from, in search order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct SearchRoots {
    /// Each root once, first mention first.
    pub(crate) roots: Vec<SearchRoot>,
    /// What a tool's config names that cannot be a root (a directory that
    /// does not exist, a config that cannot be read): for `qg doctor`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) problems: Vec<String>,
}

/// One root directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SearchRoot {
    /// Root-relative, `/`-separated; `.` is the project root.
    pub(crate) path: String,
    /// Every place that names it (`mypy: pyproject.toml [tool.mypy]
    /// mypy_path`, `editable install: …/_pkg.pth`).
    pub(crate) from: Vec<String>,
}

impl SearchRoots {
    /// The directories alone, in search order.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
        self.roots.iter().map(|r| r.path.as_str())
    }

    /// The directories as a TOML array of strings (JSON's string escapes
    /// are TOML's too): what `{search_paths}` stands for.
    pub(crate) fn toml_array(&self) -> String {
        let paths: Vec<&str> = self.paths().collect();
        serde_json::to_string(&paths).unwrap_or_else(|_| "[]".into())
    }
}

/// The search roots of the project at `root`: the analyzer's own, then
/// each importer gate's in `active_gates` order, then the editable installs
/// of `environment`, then the package bases of `files` (the project files
/// the analyzer reads).
pub(crate) fn search_roots<'a>(
    root: &Path,
    config: &Config,
    files: impl Iterator<Item = &'a str> + Clone,
    environment: Option<&Environment>,
) -> SearchRoots {
    let mut found = Collector::new(root);
    if let Some(graph) = &config.import_graph {
        if let Some(spec) = &graph.search_paths {
            let analyzer = graph.command[0].as_str();
            found.read_spec(analyzer, spec, root);
        }
    }
    let gates = config
        .active_gates
        .iter()
        .filter_map(|id| config.gates.get(id))
        .filter(|gate| gate.importers);
    let mut bases: Vec<(&Gate, Option<ToolSelection>)> = Vec::new();
    for gate in gates {
        let Some(spec) = &gate.search_paths else {
            continue;
        };
        let dir = gate.config_dir(root);
        found.read_spec(&gate.id, spec, &dir);
        if searches_package_bases(&dir, spec) {
            let selection = gate
                .selection
                .as_ref()
                .map(|s| crate::selection::read(root, gate, s).unwrap_or_else(|(d, _)| d));
            bases.push((gate, selection));
        }
    }
    if let Some(environment) = environment {
        for (path, from) in editable_installs(root, environment) {
            found.add(path, from);
        }
    }
    let known: HashSet<&str> = files.clone().collect();
    for (gate, selection) in bases {
        let checked = files
            .clone()
            .filter(|f| gate.owns(f) && selection.as_ref().is_none_or(|s| s.selects(f)));
        for (base, example) in package_bases(checked, &known) {
            let from = format!("{}: the package base of {example}", gate.id);
            found.add(base, from);
        }
    }
    found.finish()
}

/// Whether the tool `spec` describes, run in `dir`, searches the package
/// bases of the files it checks: it does by nature, and its config does
/// not turn that off (`explicit_bases_key`; an unreadable config counts
/// as not).
pub(crate) fn searches_package_bases(dir: &Path, spec: &SearchPathSpec) -> bool {
    let Some(key) = &spec.explicit_bases_key else {
        return spec.package_bases;
    };
    let explicit = tool_config::first_section(dir, &spec.config)
        .ok()
        .flatten()
        .and_then(|found| found.section.flag(key))
        .unwrap_or(false);
    spec.package_bases && !explicit
}

/// The package bases of `checked` — every file a tool checks in its own
/// run on the project — which a run given some of them must be handed to
/// search what the project's run searches (a gate's `bases_env`; its own
/// files' bases among them: the hint that reruns a part needs them too).
/// `known` holds the project's files (for its `__init__.py`s).
/// Root-relative, sorted; the root itself left out (the tool searches it
/// anyway); none when the tool's config in `dir`, where it runs, makes its
/// bases explicit.
pub(crate) fn bases_of_all<'a>(
    dir: &Path,
    spec: &SearchPathSpec,
    checked: impl Iterator<Item = &'a str>,
    known: &HashSet<&str>,
) -> Vec<String> {
    if !searches_package_bases(dir, spec) {
        return Vec::new();
    }
    package_bases(checked, known)
        .into_keys()
        .filter(|base| base != ".")
        .collect()
}

/// Roots gathered so far, each once.
struct Collector<'a> {
    root: &'a Path,
    roots: Vec<SearchRoot>,
    problems: Vec<String>,
}

impl<'a> Collector<'a> {
    fn new(root: &'a Path) -> Collector<'a> {
        Collector {
            root,
            roots: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn finish(self) -> SearchRoots {
        SearchRoots {
            roots: self.roots,
            problems: self.problems,
        }
    }

    /// Adds an existing directory inside the project (root-relative);
    /// anything else is left out.
    fn add(&mut self, path: String, from: String) {
        if path.starts_with('/') || path == ".." || path.starts_with("../") {
            return;
        }
        match self.roots.iter_mut().find(|r| r.path == path) {
            Some(known) if !known.from.contains(&from) => known.from.push(from),
            Some(_) => {}
            None => self.roots.push(SearchRoot {
                path,
                from: vec![from],
            }),
        }
    }

    /// What `spec` names for the tool `who`, run in `dir` (the root, or
    /// a workspace member's directory): its config there, its paths
    /// relative to there.
    fn read_spec(&mut self, who: &str, spec: &SearchPathSpec, dir: &Path) {
        let cwd = PathContext::new(self.root, dir);
        let found = match tool_config::first_section(dir, &spec.config) {
            Ok(found) => found,
            Err(why) => {
                self.problems.push(format!("{who}: {why}"));
                None
            }
        };
        for key in &spec.keys {
            self.read_key(who, spec, found.as_ref(), key, dir);
        }
        for var in &spec.env {
            let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
                continue;
            };
            for dir in std::env::split_paths(&value) {
                let path = normalize(&cwd, &dir.to_string_lossy());
                self.add_named(path, format!("{who}: ${var}"));
            }
        }
        for always in &spec.always {
            let path = normalize(&cwd, always);
            if self.root.join(&path).is_dir() {
                self.add(path, format!("{who}: always searched"));
            }
        }
    }

    /// One key's directories, or its default when the config leaves it out.
    fn read_key(
        &mut self,
        who: &str,
        spec: &SearchPathSpec,
        found: Option<&Found>,
        key: &crate::config::SearchKey,
        dir: &Path,
    ) {
        let values = found.map(|f| f.section.strings_at(&key.key));
        let Some(found) = found.filter(|_| values.as_ref().is_some_and(|v| !v.is_empty())) else {
            let cwd = PathContext::new(self.root, dir);
            for dir in &key.default {
                let path = normalize(&cwd, dir);
                if self.root.join(&path).is_dir() {
                    self.add(path, format!("{who}: the default of `{}`", key.key));
                }
            }
            return;
        };
        let config_dir = dir
            .join(crate::file_name::to_path(&found.file))
            .parent()
            .unwrap_or(dir)
            .to_path_buf();
        let context = PathContext::new(self.root, &config_dir);
        let from = format!("{who}: {} `{}`", found.label, key.key);
        for value in values.unwrap_or_default() {
            for entry in value.entries(split_search_path) {
                let expanded = expand(&entry, |name| {
                    match spec.config_dir_variable.as_deref() == Some(name) {
                        true => Some(config_dir.to_string_lossy().into_owned()),
                        false => std::env::var(name).ok(),
                    }
                });
                for path in self.expand_glob(normalize(&context, &expanded)) {
                    self.add_named(path, from.clone());
                }
            }
        }
    }

    /// A directory a config names: a missing one is a problem to report.
    fn add_named(&mut self, path: String, from: String) {
        if path.starts_with('/') {
            return;
        }
        match self.root.join(crate::file_name::to_path(&path)).is_dir() {
            true => self.add(path, from),
            false => self
                .problems
                .push(format!("{from} names {path}, which is not a directory")),
        }
    }

    /// A pattern (`packages/*/src`) as the directories it matches; a plain
    /// path as itself.
    fn expand_glob(&self, path: String) -> Vec<String> {
        if !path.contains(['*', '?', '[']) {
            return vec![path];
        }
        crate::globs::matching_dirs(self.root, &path)
    }
}

/// A path as written in a config (relative to `context`'s directory, or
/// absolute) made root-relative (`.` for the root itself); outside the
/// root, absolute.
fn normalize(context: &PathContext, written: &str) -> String {
    let path = context.normalize(written.trim().trim_end_matches(['/', '\\']));
    match path.as_str() {
        "" => ".".to_string(),
        _ => path,
    }
}

/// One string of directories split as the tools split it: at commas,
/// newlines, and colons (`a:b`, mypy's `mypy_path`) except a Windows drive's
/// (`C:\lib`).
fn split_search_path(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let drive = c == ':'
            && current.trim().len() == 1
            && current.trim().chars().all(|l| l.is_ascii_alphabetic())
            && matches!(chars.get(i + 1), Some('\\' | '/'));
        match c {
            ',' | '\n' => parts.push(std::mem::take(&mut current)),
            ':' if !drive => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// `~` and `$VAR` / `${VAR}` expanded as the tools expand them (Python's
/// `os.path.expanduser` and `expandvars`): an unknown variable stays as
/// written.
fn expand(text: &str, var: impl Fn(&str) -> Option<String>) -> String {
    let text = match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with(['/', '\\']) => {
            match std::env::var("HOME").or_else(|_| std::env::var("USERPROFILE")) {
                Ok(home) => format!("{home}{rest}"),
                Err(_) => text.to_string(),
            }
        }
        _ => text.to_string(),
    };
    let pattern = regex::Regex::new(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
        .expect("a valid pattern");
    pattern
        .replace_all(&text, |caps: &regex::Captures<'_>| {
            let name = caps
                .get(1)
                .or_else(|| caps.get(2))
                .map_or("", |m| m.as_str());
            var(name).unwrap_or_else(|| caps[0].to_string())
        })
        .into_owned()
}

/// The directory above each file's outermost package, as a tool that
/// crawls up from the file finds it: the parent of the highest directory
/// holding an `__init__.py(i)` (directories between may be namespace
/// packages), or the file's own directory when none does — with one file
/// it holds, for saying where the root came from.
fn package_bases<'a>(
    files: impl Iterator<Item = &'a str>,
    known: &HashSet<&str>,
) -> BTreeMap<String, String> {
    let packages = package_dirs(known.iter().copied());
    let mut bases: BTreeMap<String, String> = BTreeMap::new();
    for file in files {
        bases
            .entry(package_base(file, &packages).to_string())
            .or_insert_with(|| file.to_string());
    }
    bases
}

/// The directories holding an `__init__.py(i)` among `files`: packages.
pub(crate) fn package_dirs<'a>(files: impl Iterator<Item = &'a str>) -> HashSet<&'a str> {
    files
        .filter_map(|f| {
            let (dir, name) = f.rsplit_once('/')?;
            matches!(name, "__init__.py" | "__init__.pyi").then_some(dir)
        })
        .collect()
}

/// The directory above `file`'s outermost package (`.` for the root), as
/// a tool crawling up from the file finds it: the parent of the highest
/// directory holding an `__init__.py(i)` with only identifiers on the way
/// (directories between may be namespace packages), else the file's own
/// directory.
pub(crate) fn package_base<'f>(file: &'f str, packages: &HashSet<&str>) -> &'f str {
    let Some((dir, _)) = file.rsplit_once('/') else {
        return ".";
    };
    let mut highest: Option<&str> = None;
    let mut here = dir;
    loop {
        let name = here.rsplit('/').next().unwrap_or(here);
        if !is_identifier(name) {
            break;
        }
        if packages.contains(here) {
            highest = Some(here);
        }
        match here.rsplit_once('/') {
            Some((parent, _)) => here = parent,
            None => break,
        }
    }
    match highest {
        Some(package) => package.rsplit_once('/').map_or(".", |(p, _)| p),
        None => dir,
    }
}

/// The module a Python file is, found from its package base
/// (`src/pkg/mod.py` → `pkg.mod`, `pkg/__init__.py` → `pkg`, a stub the
/// same as its module).
pub(crate) fn module_name(file: &str, packages: &HashSet<&str>) -> String {
    let base = package_base(file, packages);
    let inside = match base {
        "." => file,
        base => file
            .strip_prefix(base)
            .map_or(file, |f| f.trim_start_matches('/')),
    };
    let stem = inside
        .strip_suffix(".pyi")
        .or_else(|| inside.strip_suffix(".py"))
        .unwrap_or(inside);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    stem.replace('/', ".")
}

/// Whether `name` can be a Python package name.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The project directories (root-relative) the environment's editable
/// installs put on `sys.path`: a tool that counts what it finds there as
/// installed packages silences their errors.
pub(crate) fn installed_roots(root: &Path, environment: &Environment) -> Vec<String> {
    let mut roots: Vec<String> = editable_installs(root, environment)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// The project directories an environment's editable installs put on
/// `sys.path`: the paths a `.pth` file lists (what pip, uv, Hatch, PDM and
/// Poetry write for an editable install), and the package directories a
/// setuptools finder (`__editable___*_finder.py`) maps — with the file
/// that says so.
fn editable_installs(root: &Path, environment: &Environment) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for site in environment.site_packages() {
        let Ok(entries) = std::fs::read_dir(&site) else {
            continue;
        };
        let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for file in names {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let dirs = if name.ends_with(".pth") {
                pth_directories(&file, &site)
            } else if name.starts_with("__editable__") && name.ends_with("_finder.py") {
                finder_directories(&file)
            } else {
                continue;
            };
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for dir in dirs {
                let Ok(canonical) = dunce::canonicalize(dir) else {
                    continue;
                };
                if let Ok(inside) = canonical.strip_prefix(root) {
                    let path = crate::paths::to_slash(inside);
                    let path = if path.is_empty() { ".".into() } else { path };
                    found.push((path, format!("editable install: {shown}")));
                }
            }
        }
    }
    found
}

/// The directories a `.pth` file adds (its lines, relative to
/// site-packages; `import` lines are code, not paths).
fn pth_directories(file: &Path, site: &Path) -> Vec<std::path::PathBuf> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|l| !l.starts_with("import ") && !l.starts_with("import\t"))
        .map(|l| site.join(l))
        .filter(|p| p.is_dir())
        .collect()
}

/// The directories above the packages a setuptools editable finder maps
/// (`MAPPING = {'pkg': '/…/src/pkg'}` → `/…/src`), where the package's
/// directory has its import name.
fn finder_directories(file: &Path) -> Vec<std::path::PathBuf> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let Some(mapping) = text.lines().find(|l| l.trim_start().starts_with("MAPPING")) else {
        return Vec::new();
    };
    let pair =
        regex::Regex::new(r#"['"]([^'"]+)['"]\s*:\s*['"]([^'"]+)['"]"#).expect("a valid pattern");
    pair.captures_iter(mapping)
        .filter_map(|caps| {
            let package = Path::new(&caps[2]);
            let named = package.file_name()?.to_string_lossy() == caps[1];
            named
                .then(|| package.parent().map(Path::to_path_buf))
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_path_strings_split_at_commas_and_colons_but_not_a_drive() {
        assert_eq!(
            split_search_path("a/src:b/src, c\nd"),
            ["a/src", "b/src", "c", "d"]
        );
        assert_eq!(split_search_path(r"C:\lib,d:/x"), [r"C:\lib", "d:/x"]);
        assert_eq!(split_search_path(" , "), Vec::<String>::new());
    }

    #[test]
    fn variables_expand_and_unknown_ones_stay() {
        let var = |name: &str| (name == "DIR").then(|| "/cfg".to_string());
        assert_eq!(expand("$DIR/src", var), "/cfg/src");
        assert_eq!(expand("${DIR}/a:$NOPE", var), "/cfg/a:$NOPE");
    }

    #[test]
    fn a_package_base_is_above_the_outermost_package() {
        let files = [
            "src/acme/a/__init__.py",
            "src/acme/a/core.py",
            "src/plain/__init__.py",
            "src/plain/sub/deep.py",
            "tests/unit/test_x.py",
            "setup.py",
            "my-tools/run.py",
        ];
        let known: HashSet<&str> = files.iter().copied().collect();
        let bases = package_bases(files.iter().copied(), &known);
        let bases: Vec<(&str, &str)> = bases
            .iter()
            .map(|(b, f)| (b.as_str(), f.as_str()))
            .collect();
        assert_eq!(
            bases,
            [
                (".", "setup.py"),
                ("my-tools", "my-tools/run.py"),
                // acme has no __init__: the base is the namespace package itself.
                ("src", "src/plain/__init__.py"),
                ("src/acme", "src/acme/a/__init__.py"),
                ("tests/unit", "tests/unit/test_x.py"),
            ]
        );
    }

    #[test]
    fn a_setuptools_finder_maps_packages_to_the_directory_above_them() {
        let tmp = tempfile::tempdir().unwrap();
        let finder = tmp.path().join("__editable___demo_1_0_finder.py");
        std::fs::write(
            &finder,
            "import sys\nMAPPING: dict[str, str] = {'demo': '/w/lib/demo', 'other': '/w/x/renamed'}\nNAMESPACES = {}\n",
        )
        .unwrap();
        assert_eq!(
            finder_directories(&finder),
            [std::path::PathBuf::from("/w/lib")]
        );
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        let pth = tmp.path().join("_demo.pth");
        std::fs::write(&pth, "# editable\nimport _virtualenv\nsrc\nmissing\n").unwrap();
        assert_eq!(pth_directories(&pth, tmp.path()), [tmp.path().join("src")]);
    }
}
