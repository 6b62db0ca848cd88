//! Which project files import which: the files a change can break. For the
//! gates that check importers (type checkers), a partial scope grows by
//! every project file that imports a changed (or deleted) file, directly or
//! through other modules, so that an edit that breaks an unchanged importer
//! is caught in the run that made it.
//!
//! The graph comes from the analyzer `import_graph` names (a real resolver
//! of Python imports, not a regex of ours), asked only about files whose
//! content changed since it last answered: its answers are cached by blob
//! id in `.st3/import-graph.json` (see [`cache`]). Whenever the importers
//! cannot be known for sure — no analyzer, a crash, output that cannot be
//! read, a file it cannot read, a deleted module with no graph from before —
//! [`importers`] says why, and those gates check the whole project.

mod analyzer;
pub(crate) mod cache;
mod imports;
pub(crate) mod interface;
pub(crate) mod roots;
mod unresolved;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::config::{Config, ImportGraph};
use crate::git::{self, Changes};
use crate::workspace::Workspace;
use cache::{Graph, Node};
use roots::SearchRoots;

/// What [`importers`] needs to know about the run.
pub(crate) struct Request<'a> {
    /// The project.
    pub(crate) ws: &'a Workspace,
    /// The config (project globs, the analyzer).
    pub(crate) config: &'a Config,
    /// The analyzer.
    pub(crate) spec: &'a ImportGraph,
    /// Files whose importers are wanted: the changed ones.
    pub(crate) seeds: BTreeSet<String>,
    /// Files that were deleted: whatever imported them is wanted too.
    pub(crate) deleted: BTreeSet<String>,
    /// Files already in scope (their own imports need not be known).
    pub(crate) in_scope: BTreeSet<String>,
    /// The diff the scope was resolved from, if one was taken.
    pub(crate) diff: Option<&'a Changes>,
    /// Whether the cache may be written (`--no-state` says no).
    pub(crate) remember: bool,
    /// The run's tools: where the analyzer and the environment are found,
    /// and the run whose cancelling stops the analyzer.
    pub(crate) tools: &'a crate::tools::Toolbox<'a>,
}

/// The files that import the changed ones.
#[derive(Debug, Default)]
pub(crate) struct Importers {
    /// Importer → one changed file it depends on.
    pub(crate) found: BTreeMap<String, String>,
    /// The importers found only through imports the analyzer could not
    /// resolve, each with such an import (`acme.b.use in tests/t.py`).
    pub(crate) assumed: BTreeMap<String, String>,
}

/// Every project file that imports a seed or a deleted file, transitively
/// (seeds themselves left out), with one changed file it depends on.
/// `Err` says why the importers cannot be known.
pub(crate) fn importers(request: &Request<'_>) -> Result<Importers, String> {
    let (graph, changed) = current_graph(request)?;
    if request.remember && changed {
        cache::save(request.ws, &graph);
    }
    check_readable(request, &graph)?;
    // A deleted file the graph never knew: what imported it is unknown.
    if let Some(unknown) = request
        .deleted
        .iter()
        .find(|d| !graph.nodes.contains_key(*d))
    {
        return Err(format!(
            "what imported the deleted {} is unknown: the import graph never saw it",
            crate::file_name::display(unknown)
        ));
    }
    let seeds = || request.seeds.iter().chain(&request.deleted);
    let live = |file: &String| graph.is_live(file) && !request.seeds.contains(file);
    let mut found = reach(&graph, seeds(), true);
    found.retain(|file, _| live(file));
    let real = reach(&graph, seeds(), false);
    let assumed = found
        .keys()
        .filter(|file| !real.contains_key(*file))
        .map(|file| (file.clone(), assumed_import(&graph, file, &found)))
        .collect();
    Ok(Importers { found, assumed })
}

/// Why `file` was assumed to import a changed one: an assumed import of
/// its own that reaches the changes, or of a module it imports.
fn assumed_import(graph: &Graph, file: &str, found: &BTreeMap<String, String>) -> String {
    let node = &graph.nodes[file];
    let own = node
        .assumed
        .iter()
        .find(|(target, _)| found.contains_key(*target) || found.values().any(|o| o == *target));
    match own {
        Some((_, import)) => format!("`{import}` in {}", crate::file_name::display(file)),
        None => format!("{}'s imports", crate::file_name::display(file)),
    }
}

/// Brings the cached graph up to date without asking for importers (a
/// whole-project run), so the next partial run finds it ready.
pub(crate) fn refresh(request: &Request<'_>) -> Result<(), String> {
    let (graph, changed) = current_graph(request)?;
    if changed {
        cache::save(request.ws, &graph);
    }
    Ok(())
}

/// The cached graph brought up to date with the files as they are now, and
/// whether that changed it (else the cache need not be rewritten).
fn current_graph(request: &Request<'_>) -> Result<(Graph, bool), String> {
    let current = current_blobs(request)?;
    let roots = search_roots(request.ws, request.config, request.tools, current.keys());
    let key = cache::key(request, &roots)?;
    let old = cache::load(request.ws).unwrap_or(Graph {
        key: String::new(),
        nodes: BTreeMap::new(),
    });
    let is_new = |path: &String| old.nodes.get(path).is_none_or(|n| n.gone);
    let mut graph = if old.key != key || current.keys().any(is_new) {
        // A file new to the graph may be what an unchanged file's import
        // now resolves to: every file is asked again.
        build(request, &key, &current, &old, &roots)?
    } else {
        update(request, &old, &current, &roots)?
    };
    // What is gone stays known, as a tombstone.
    for (path, node) in &old.nodes {
        if !current.contains_key(path) {
            graph
                .nodes
                .entry(path.clone())
                .or_insert_with(|| node.tombstone());
        }
    }
    forget_old_tombstones(&mut graph);
    let changed = graph != old;
    Ok((graph, changed))
}

/// Tombstones past this many are forgotten, those nothing imports first.
const MAX_TOMBSTONES: usize = 10_000;

/// Keeps the cache bounded on a project that deletes files for years: a
/// tombstone nothing imports tells only that nothing imported it.
fn forget_old_tombstones(graph: &mut Graph) {
    let gone = graph.nodes.values().filter(|n| n.gone).count();
    if gone <= MAX_TOMBSTONES {
        return;
    }
    let imported: BTreeSet<String> = graph
        .nodes
        .values()
        .flat_map(|n| n.imports.iter().cloned())
        .collect();
    graph
        .nodes
        .retain(|path, node| !node.gone || imported.contains(path));
}

/// The roots the analyzer resolves imports from, for the project whose
/// analyzed files are `files` (see [`roots`]).
fn search_roots<'a>(
    ws: &Workspace,
    config: &Config,
    tools: &crate::tools::Toolbox<'_>,
    files: impl Iterator<Item = &'a String> + Clone,
) -> SearchRoots {
    let environment = tools.environment();
    roots::search_roots(
        &ws.root,
        config,
        files.map(String::as_str),
        environment.as_ref(),
    )
}

/// The roots the import graph of the project resolves from now, with
/// where each came from: `qg explain` and `qg doctor` show them.
pub(crate) fn current_search_roots(ws: &Workspace, config: &Config) -> Option<SearchRoots> {
    let spec = config.import_graph.as_ref()?;
    let files = crate::scope::project_files(ws, config).ok()?;
    let analyzed: Vec<String> = files
        .into_iter()
        .filter(|f| is_analyzed(spec, config, f))
        .collect();
    let tools = crate::tools::Toolbox::from_env(&ws.root);
    Some(search_roots(ws, config, &tools, analyzed.iter()))
}

/// How many imports of the cached graph the analyzer left unresolved while
/// they may name project modules (see [`unresolved`]).
pub(crate) struct AssumedCount {
    /// The imports (edges).
    pub(crate) imports: usize,
    /// The files holding them.
    pub(crate) files: usize,
    /// One of them: `from acme.b import use` in tests/t.py.
    pub(crate) example: Option<String>,
}

impl AssumedCount {
    fn of(imports: &BTreeSet<(&String, &String)>) -> Option<AssumedCount> {
        let files: BTreeSet<&String> = imports.iter().map(|(file, _)| *file).collect();
        let example = imports
            .iter()
            .next()
            .map(|(file, import)| format!("`{import}` in {}", crate::file_name::display(file)));
        (!imports.is_empty()).then_some(AssumedCount {
            imports: imports.len(),
            files: files.len(),
            example,
        })
    }
}

/// The assumed imports of the cached graph, split by whether the module
/// each names is in the repository (a search root the tools lack would
/// resolve it) or only shares a prefix with project modules (no root can:
/// the module is neither here nor installed).
#[derive(Default)]
pub(crate) struct AssumedImports {
    /// Modules the repository holds under a directory no tool searches.
    pub(crate) in_repository: Option<AssumedCount>,
    /// Modules found neither in the repository nor installed.
    pub(crate) nowhere: Option<AssumedCount>,
}

/// The assumed imports of the cached graph, or `None` without one, but
/// for those `installed` says an installed package answers (a project
/// that vendors a copy of what it also installs: no search root is
/// missing there).
pub(crate) fn assumed_imports(
    ws: &Workspace,
    installed: &dyn Fn(&str) -> bool,
) -> Option<AssumedImports> {
    let graph = cache::load(ws)?;
    let present = || graph.nodes.iter().filter(|(_, n)| !n.gone);
    let index = unresolved::ModuleIndex::new(present().map(|(file, _)| file.as_str()));
    let (in_repository, nowhere): (BTreeSet<_>, BTreeSet<_>) = present()
        .flat_map(|(file, node)| node.assumed.values().map(move |import| (file, import)))
        .filter(|(_, import)| !installed(import_name(import)))
        .partition(|(_, import)| index.holds(import_name(import)));
    Some(AssumedImports {
        in_repository: AssumedCount::of(&in_repository),
        nowhere: AssumedCount::of(&nowhere),
    })
}

/// The dotted module an import statement names (`resolvelib` of `from
/// resolvelib.structs import x`, `import resolvelib as r`).
fn import_name(statement: &str) -> &str {
    let words: Vec<&str> = statement.split_whitespace().collect();
    match words.as_slice() {
        ["from", module, ..] | ["import", module, ..] => module.trim_end_matches(','),
        _ => statement,
    }
}

/// Whether the analyzer reads `path`: a project file of its types.
fn is_analyzed(spec: &ImportGraph, config: &Config, path: &str) -> bool {
    spec.file_types.iter().any(|t| path.ends_with(t.as_str()))
        && config.project_scope.matches(path)
        && !crate::state::is_state_file(path)
}

/// The blob id of every project file the analyzer reads: the index's for
/// files the diff shows unchanged, the file's own for the others.
fn current_blobs(request: &Request<'_>) -> Result<BTreeMap<String, String>, String> {
    let ws = request.ws;
    let wanted = |path: &str| is_analyzed(request.spec, request.config, path);
    let Some(repo) = &ws.repo else {
        // Outside git every file is hashed: nothing else knows its content.
        let files = crate::scope::project_files(ws, request.config).map_err(|e| e.to_string())?;
        return Ok(files
            .into_iter()
            .filter(|f| wanted(f))
            .filter_map(|f| {
                Some((
                    f.clone(),
                    git::blob_id(&crate::file_name::join(&ws.root, &f))?,
                ))
            })
            .collect());
    };
    let own_diff;
    let diff = match request.diff {
        Some(diff) => diff,
        None => {
            let head = repo.head().map_err(|e| e.to_string())?.commit;
            own_diff = repo
                .changes_since(head.as_deref())
                .map_err(|e| e.to_string())?;
            &own_diff
        }
    };
    let mut blobs: BTreeMap<String, String> = repo
        .index_blobs()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|(path, _)| wanted(path) && !diff.deleted.contains(path))
        .collect();
    for path in diff.changed.iter().chain(&diff.untracked) {
        if !wanted(path) {
            continue;
        }
        match git::blob_id(&crate::file_name::join(&ws.root, path)) {
            Some(blob) => blobs.insert(path.clone(), blob),
            None => blobs.remove(path),
        };
    }
    Ok(blobs)
}

/// Asks the analyzer about every file. An unchanged file keeps its edges
/// to files that are gone (the analyzer can no longer resolve them), so
/// that what imported a deleted module is still known.
fn build(
    request: &Request<'_>,
    key: &str,
    current: &BTreeMap<String, String>,
    old: &Graph,
    roots: &SearchRoots,
) -> Result<Graph, String> {
    let files: Vec<String> = current.keys().cloned().collect();
    let answers = ask(request, &files, roots, current)?;
    let nodes = current
        .iter()
        .map(|(path, blob)| {
            let mut node = answers.node(path, blob);
            if let Some(before) = old.nodes.get(path).filter(|n| n.blob == *blob && !n.gone) {
                let gone = before.imports.iter().filter(|i| !current.contains_key(*i));
                node.imports.extend(gone.cloned());
                node.imports.sort();
                node.imports.dedup();
            }
            (path.clone(), node)
        })
        .collect();
    Ok(Graph {
        key: key.to_string(),
        nodes,
    })
}

/// Asks the analyzer only about the files whose content changed (every
/// other file keeps its node, edges to deleted files included).
fn update(
    request: &Request<'_>,
    old: &Graph,
    current: &BTreeMap<String, String>,
    roots: &SearchRoots,
) -> Result<Graph, String> {
    let unchanged = |path: &String, blob: &String| {
        old.nodes
            .get(path)
            .filter(|n| n.blob == *blob && !n.gone)
            .cloned()
    };
    let stale: Vec<String> = current
        .iter()
        .filter(|(path, blob)| unchanged(path, blob).is_none())
        .map(|(path, _)| path.clone())
        .collect();
    let answers = match stale.is_empty() {
        true => analyzer::Answers::default(),
        false => ask(request, &stale, roots, current)?,
    };
    let nodes = current
        .iter()
        .map(|(path, blob)| {
            let node = unchanged(path, blob).unwrap_or_else(|| answers.node(path, blob));
            (path.clone(), node)
        })
        .collect();
    Ok(Graph {
        key: old.key.clone(),
        nodes,
    })
}

/// The analyzer's answer for `files`, with the edges their unresolved
/// imports are assumed to make into the `current` project files.
fn ask(
    request: &Request<'_>,
    files: &[String],
    roots: &SearchRoots,
    current: &BTreeMap<String, String>,
) -> Result<analyzer::Answers, String> {
    let mut answers = analyzer::analyze(request, files, roots)?;
    let index = unresolved::ModuleIndex::new(current.keys().map(String::as_str));
    let readable: Vec<String> = files
        .iter()
        .filter(|f| !answers.unreadable.contains(*f))
        .cloned()
        .collect();
    let parsed = import_statements(request, &readable, current);
    let roots: Vec<&str> = roots.paths().collect();
    let extra = unresolved::extra_edges(&parsed, &answers.imports, &roots, &index);
    for (file, extra) in extra {
        if let Some(imports) = answers.imports.get_mut(&file) {
            imports.extend(extra.imports);
            imports.sort();
            imports.dedup();
        }
        if !extra.assumed.is_empty() {
            answers.assumed.insert(file, extra.assumed);
        }
    }
    Ok(answers)
}

/// Parsing this many files costs less than reading the names cache of a
/// large project: an update of a few changed files parses them directly.
const PARSE_WITHOUT_CACHE: usize = 64;

/// The import statements of `files`: parsed once per content, the
/// answers kept in `.st3/import-names.json` for the contents in `current`.
fn import_statements(
    request: &Request<'_>,
    files: &[String],
    current: &BTreeMap<String, String>,
) -> BTreeMap<String, Vec<imports::Import>> {
    if files.len() <= PARSE_WITHOUT_CACHE {
        let names: Vec<&str> = files.iter().map(String::as_str).collect();
        let parsed = imports::of_files(&request.ws.root, &names);
        return files
            .iter()
            .zip(parsed)
            .filter_map(|(file, statements)| Some((file.clone(), statements?)))
            .collect();
    }
    let mut names = cache::load_names(request.ws);
    let blob = |file: &String| current.get(file).cloned().unwrap_or_default();
    let unparsed: Vec<&str> = files
        .iter()
        .filter(|f| !names.blobs.contains_key(&blob(f)))
        .map(String::as_str)
        .collect();
    let parsed = imports::of_files(&request.ws.root, &unparsed);
    let changed = !unparsed.is_empty();
    for (file, statements) in unparsed.iter().zip(parsed) {
        if let Some(statements) = statements {
            names.blobs.insert(blob(&file.to_string()), statements);
        }
    }
    let found = files
        .iter()
        .filter_map(|f| Some((f.clone(), names.blobs.get(&blob(f))?.clone())))
        .collect();
    if request.remember && changed {
        let live: BTreeSet<&String> = current.values().collect();
        names.blobs.retain(|blob, _| live.contains(blob));
        names.parser = cache::NAMES_PARSER.to_string();
        cache::save_names(request.ws, &names);
    }
    found
}

/// A file the analyzer could not read may import anything: unless it is
/// checked anyway, its importers cannot be known.
fn check_readable(request: &Request<'_>, graph: &Graph) -> Result<(), String> {
    let unknown = graph.nodes.iter().find(|(path, node)| {
        node.unreadable && !request.in_scope.contains(*path) && !request.seeds.contains(*path)
    });
    match unknown {
        Some((path, _)) => Err(format!(
            "the import analyzer could not read {}, so what it imports is unknown",
            crate::file_name::display(path)
        )),
        None => Ok(()),
    }
}

/// Breadth-first over "is imported by" from every seed at once: each file
/// reached, with the seed that reached it first. `assumed`: whether the
/// edges of unresolved imports count.
fn reach<'a>(
    graph: &Graph,
    seeds: impl Iterator<Item = &'a String>,
    assumed: bool,
) -> BTreeMap<String, String> {
    let mut imported_by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (path, node) in &graph.nodes {
        let guessed = node.assumed.keys().filter(|_| assumed);
        for dependency in node.imports.iter().chain(guessed) {
            imported_by
                .entry(dependency.as_str())
                .or_default()
                .push(path.as_str());
        }
    }
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let mut queue: VecDeque<(&str, &str)> = seeds.map(|s| (s.as_str(), s.as_str())).collect();
    let starts: BTreeSet<&str> = queue.iter().map(|(s, _)| *s).collect();
    while let Some((file, origin)) = queue.pop_front() {
        for importer in imported_by.get(file).into_iter().flatten() {
            if starts.contains(importer) || found.contains_key(*importer) {
                continue;
            }
            found.insert(importer.to_string(), origin.to_string());
            queue.push_back((importer, origin));
        }
    }
    found
}

/// Every live project file that imports one of `seeds`, transitively, as
/// the cached graph knows them (the seeds left out); `None` when there is
/// no graph to ask. The importers a body-only edit leaves out
/// (`interface_aware_importers`), which a daemon's sample checks.
pub(crate) fn importers_known(ws: &Workspace, seeds: &[String]) -> Option<BTreeSet<String>> {
    let graph = cache::load(ws)?;
    let found = reach(&graph, seeds.iter(), true);
    Some(found.into_keys().filter(|f| graph.is_live(f)).collect())
}

/// Every project file `files` import, directly or through other modules,
/// with the packages (`__init__` files) of each one — Python runs a
/// module's packages before the module — as the cached graph knows them;
/// `None` when there is no graph to ask.
pub(crate) fn imported<'a>(
    ws: &Workspace,
    files: impl Iterator<Item = &'a str>,
) -> Option<BTreeSet<String>> {
    let graph = cache::load(ws)?;
    let known = |path: &str| graph.is_live(path);
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<String> = files.map(str::to_string).collect();
    while let Some(file) = queue.pop_front() {
        let imports = graph
            .nodes
            .get(&file)
            .map(|n| n.imports.as_slice())
            .unwrap_or_default();
        let packages = packages_of(&file).into_iter().filter(|p| known(p));
        for next in imports.iter().cloned().chain(packages) {
            if found.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    Some(found)
}

/// For each of `files`, the file itself and every project file it
/// imports, directly or through other modules (with their packages'
/// `__init__` files, and the targets of imports the analyzer could only
/// assume), each with the blob id of the content the graph read: what a
/// type checker's verdict on the file can depend on in the project. `None`
/// for a file whose imports, or those of a module it reaches, the graph
/// does not know; all `None` when there is no graph.
pub(crate) fn dependencies(
    ws: &Workspace,
    files: &[&str],
) -> BTreeMap<String, Option<Vec<(String, String)>>> {
    let graph = cache::load(ws);
    files
        .iter()
        .map(|file| {
            let found = graph.as_ref().and_then(|g| dependencies_of(g, file));
            (file.to_string(), found)
        })
        .collect()
}

fn dependencies_of(graph: &Graph, file: &str) -> Option<Vec<(String, String)>> {
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::from([file.to_string()]);
    let mut queue: VecDeque<String> = VecDeque::from([file.to_string()]);
    while let Some(next) = queue.pop_front() {
        let node = graph
            .nodes
            .get(&next)
            .filter(|n| !n.gone && !n.unreadable)?;
        let packages = packages_of(&next).into_iter().filter(|p| graph.is_live(p));
        let reached = node.imports.iter().chain(node.assumed.keys()).cloned();
        for target in reached.chain(packages) {
            if seen.insert(target.clone()) {
                queue.push_back(target);
            }
        }
        found.insert(next, node.blob.clone());
    }
    Some(found.into_iter().collect())
}

/// The `__init__.py` and `__init__.pyi` of every package above `file`.
fn packages_of(file: &str) -> Vec<String> {
    let mut packages = Vec::new();
    let mut dir = file;
    while let Some(cut) = dir.rfind('/') {
        dir = &dir[..cut];
        for init in ["__init__.py", "__init__.pyi"] {
            let package = format!("{dir}/{init}");
            if package != file {
                packages.push(package);
            }
        }
    }
    packages
}

impl analyzer::Answers {
    /// The graph node of one analyzed file.
    fn node(&self, path: &str, blob: &str) -> Node {
        match self.imports.get(path) {
            Some(imports) if !self.unreadable.contains(path) => Node {
                blob: blob.to_string(),
                imports: imports.clone(),
                assumed: self.assumed.get(path).cloned().unwrap_or_default(),
                unreadable: false,
                gone: false,
            },
            // Named unreadable, or left out of the answer: unknown imports.
            _ => Node {
                blob: blob.to_string(),
                imports: Vec::new(),
                assumed: BTreeMap::new(),
                unreadable: true,
                gone: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        Graph {
            key: String::new(),
            nodes: edges
                .iter()
                .map(|(file, imports)| {
                    let node = Node {
                        blob: String::new(),
                        imports: imports.iter().map(|s| s.to_string()).collect(),
                        assumed: BTreeMap::new(),
                        unreadable: false,
                        gone: false,
                    };
                    (file.to_string(), node)
                })
                .collect(),
        }
    }

    #[test]
    fn importers_are_found_transitively_with_their_origin() {
        // a <- pkg/__init__ <- c ; a <- b ; d is unrelated; e imports c.
        let g = graph(&[
            ("a.py", &[]),
            ("pkg/__init__.py", &["a.py"]),
            ("b.py", &["a.py"]),
            ("c.py", &["pkg/__init__.py"]),
            ("d.py", &[]),
            ("e.py", &["c.py", "d.py"]),
        ]);
        let seeds = ["a.py".to_string()];
        let found = reach(&g, seeds.iter(), true);
        let expected: BTreeMap<String, String> = ["b.py", "c.py", "e.py", "pkg/__init__.py"]
            .iter()
            .map(|f| (f.to_string(), "a.py".to_string()))
            .collect();
        assert_eq!(found, expected);
        // A cycle ends; a seed is never its own importer.
        let g = graph(&[("x.py", &["y.py"]), ("y.py", &["x.py"])]);
        let found = reach(&g, ["x.py".to_string()].iter(), true);
        assert_eq!(found.keys().collect::<Vec<_>>(), ["y.py"]);
    }

    #[test]
    fn past_the_limit_only_the_tombstones_something_imports_are_kept() {
        let mut g = graph(&[("live.py", &["gone0.py"]), ("other.py", &[])]);
        let bury = |g: &mut Graph, count: usize| {
            for i in 0..count {
                let node = g.nodes["other.py"].tombstone();
                g.nodes.insert(format!("gone{i}.py"), node);
            }
        };
        bury(&mut g, MAX_TOMBSTONES);
        let at_the_limit = g.clone();
        forget_old_tombstones(&mut g);
        assert_eq!(g, at_the_limit, "up to the limit, every tombstone stays");
        bury(&mut g, MAX_TOMBSTONES + 1);
        forget_old_tombstones(&mut g);
        let kept: Vec<&str> = g.nodes.keys().map(String::as_str).collect();
        assert_eq!(kept, ["gone0.py", "live.py", "other.py"]);
    }
}
