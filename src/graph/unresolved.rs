//! No silent drop: an import the analyzer left unresolved, but whose name
//! could be a project module, still makes an edge. The graph cannot know
//! where a type checker finds what the analyzer could not, so the edge
//! goes to every project file the name could be — the module files whose
//! dotted path ends with the longest prefix of the name that the project
//! has, or every file under such a directory (a namespace package). A
//! larger scope is a cost; a missing importer is a green that is not the
//! truth. The run says when such an edge put an importer in scope.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use super::imports::{self, Import};

/// Project files by the dotted module names they can be imported as.
pub(crate) struct ModuleIndex<'a> {
    /// Every dotted suffix of a module file's path (`use`, `b.use`,
    /// `acme.b.use` for `…/acme/b/use.py`; a package is its `__init__`).
    modules: HashMap<String, Vec<&'a str>>,
    /// Every project file, for the files under a directory.
    files: Vec<&'a str>,
}

impl<'a> ModuleIndex<'a> {
    /// The index of `files` (root-relative).
    pub(crate) fn new(files: impl Iterator<Item = &'a str>) -> ModuleIndex<'a> {
        let mut modules: HashMap<String, Vec<&'a str>> = HashMap::new();
        let files: Vec<&'a str> = files.collect();
        for file in &files {
            for suffix in dotted_suffixes(file) {
                modules.entry(suffix).or_default().push(file);
            }
        }
        ModuleIndex { modules, files }
    }

    /// The files `name` could be: the module files of the longest prefix
    /// of it that names one, or else every file under the directories of
    /// that prefix; empty when no prefix names anything in the project.
    fn candidates(&self, name: &str) -> Vec<&'a str> {
        let parts: Vec<&str> = name.split('.').collect();
        for end in (1..=parts.len()).rev() {
            let prefix = parts[..end].join(".");
            if let Some(files) = self.modules.get(&prefix) {
                return files.clone();
            }
            let dir = parts[..end].join("/");
            let under: Vec<&'a str> = self
                .files
                .iter()
                .copied()
                .filter(|f| f.starts_with(&format!("{dir}/")) || f.contains(&format!("/{dir}/")))
                .collect();
            if !under.is_empty() {
                return under;
            }
        }
        Vec::new()
    }

    /// The module files of the root-relative module path `path` (no
    /// suffix): `path.py(i)` or `path/__init__.py(i)`.
    fn files_at(&self, path: &str) -> Vec<&'a str> {
        let wanted = [
            format!("{path}.py"),
            format!("{path}.pyi"),
            format!("{path}/__init__.py"),
            format!("{path}/__init__.pyi"),
        ];
        self.files
            .iter()
            .copied()
            .filter(|f| wanted.iter().any(|w| w.trim_start_matches('/') == *f))
            .collect()
    }
}

/// For each of `analyzed` (root-relative files under `root`), the project
/// files its unresolved imports could be, each with the import as written.
/// `resolved` gives what the analyzer said each file imports.
pub(crate) fn assumed_edges(
    root: &Path,
    analyzed: &[String],
    resolved: &BTreeMap<String, Vec<String>>,
    index: &ModuleIndex<'_>,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut edges = BTreeMap::new();
    for file in analyzed {
        let Some(imports) = resolved.get(file) else {
            continue;
        };
        let Ok(source) = std::fs::read(crate::file_name::join(root, file)) else {
            continue;
        };
        let found = for_file(file, &imports::of(&source), imports, index);
        if !found.is_empty() {
            edges.insert(file.clone(), found);
        }
    }
    edges
}

/// The assumed edges of one file: target → the import, as written.
fn for_file(
    file: &str,
    imports: &[Import],
    resolved: &[String],
    index: &ModuleIndex<'_>,
) -> BTreeMap<String, String> {
    let resolved_files: HashSet<&str> = resolved.iter().map(String::as_str).collect();
    // Only project files count: an import resolved to an installed copy
    // of a project module outside the root is not an edge to the project.
    let resolved_names: HashSet<String> = resolved
        .iter()
        .filter(|r| !r.starts_with('/'))
        .flat_map(|r| dotted_suffixes(r))
        .collect();
    let mut edges = BTreeMap::new();
    for import in imports {
        for (written, targets) in
            open_requests(file, import, &resolved_files, &resolved_names, index)
        {
            for target in targets.into_iter().filter(|t| *t != file) {
                edges
                    .entry(target.to_string())
                    .or_insert_with(|| written.clone());
            }
        }
    }
    edges
}

/// The requests of one import the analyzer did not resolve, each with the
/// files it could be.
fn open_requests<'a>(
    file: &str,
    import: &Import,
    resolved_files: &HashSet<&str>,
    resolved_names: &HashSet<String>,
    index: &ModuleIndex<'a>,
) -> Vec<(String, Vec<&'a str>)> {
    // `from m import a`: `a` may be a submodule of `m`, or a name in it.
    let requests: Vec<Vec<String>> = match import.names.is_empty() {
        true => vec![vec![import.module.clone()]],
        false => import
            .names
            .iter()
            .map(|n| match import.module.is_empty() {
                true => vec![n.clone()],
                false => vec![format!("{}.{n}", import.module), import.module.clone()],
            })
            .collect(),
    };
    let mut open = Vec::new();
    if import.level > 0 {
        let Some(base) = package_dir(file, import.level) else {
            return open;
        };
        for request in requests {
            let paths: Vec<String> = request
                .iter()
                .map(|name| join_module(&base, name))
                .chain(import.module.is_empty().then(|| base.clone()))
                .collect();
            let existing: Vec<&'a str> = paths
                .iter()
                .map(|p| index.files_at(p))
                .find(|files| !files.is_empty())
                .unwrap_or_default();
            if !existing.is_empty() && !existing.iter().any(|f| resolved_files.contains(f)) {
                open.push((import.statement(&request[0]), existing));
            }
        }
        return open;
    }
    for request in requests {
        let top = request[0].split('.').next().unwrap_or_default();
        if request.iter().any(|name| resolved_names.contains(name)) || is_stdlib(top) {
            continue;
        }
        let targets = index.candidates(&request[0]);
        if !targets.is_empty() {
            open.push((import.statement(&request[0]), targets));
        }
    }
    open
}

impl Import {
    /// The statement that asks for `request` (one of the import's names),
    /// as it would be written: `import a.b`, `from .m import x`.
    fn statement(&self, request: &str) -> String {
        let dots = ".".repeat(self.level);
        let module = format!("{dots}{}", self.module);
        match self.names.is_empty() {
            true => format!("import {module}"),
            false => {
                let name = request
                    .strip_prefix(&format!("{}.", self.module))
                    .filter(|_| !self.module.is_empty())
                    .unwrap_or(request);
                format!("from {module} import {name}")
            }
        }
    }
}

/// The directory a relative import of `level` dots starts from in `file`.
fn package_dir(file: &str, level: usize) -> Option<String> {
    let mut dir: Vec<&str> = file.split('/').collect();
    dir.pop();
    for _ in 1..level {
        dir.pop()?;
    }
    Some(dir.join("/"))
}

/// `base/a/b` for the dotted `a.b` below `base`.
fn join_module(base: &str, dotted: &str) -> String {
    let path = dotted.replace('.', "/");
    match (base.is_empty(), path.is_empty()) {
        (true, _) => path,
        (false, true) => base.to_string(),
        (false, false) => format!("{base}/{path}"),
    }
}

/// Every dotted name a module file can be imported as, from its own name
/// up to its whole path (as far as each part is a Python name; a
/// `-stubs` directory stands for its package).
fn dotted_suffixes(file: &str) -> Vec<String> {
    let Some(stem) = file
        .strip_suffix(".pyi")
        .or_else(|| file.strip_suffix(".py"))
    else {
        return Vec::new();
    };
    let mut parts: Vec<&str> = stem.split('/').collect();
    if parts.last() == Some(&"__init__") {
        parts.pop();
    }
    let mut suffixes = Vec::new();
    let mut name: Vec<&str> = Vec::new();
    for part in parts.iter().rev() {
        let part = part.strip_suffix("-stubs").unwrap_or(part);
        if !is_name(part) {
            break;
        }
        name.insert(0, part);
        suffixes.push(name.join("."));
    }
    suffixes
}

fn is_name(part: &str) -> bool {
    let mut chars = part.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The top-level modules of Python's standard library (`sys.stdlib_module_names`,
/// public ones, 3.8–3.14): a name the analyzer left unresolved there is
/// the standard library's, not a project module shadowing it.
fn is_stdlib(top: &str) -> bool {
    const STDLIB: &[&str] = &[
        "abc",
        "aifc",
        "annotationlib",
        "antigravity",
        "argparse",
        "array",
        "ast",
        "asynchat",
        "asyncio",
        "asyncore",
        "atexit",
        "audioop",
        "base64",
        "bdb",
        "binascii",
        "bisect",
        "builtins",
        "bz2",
        "cProfile",
        "calendar",
        "cgi",
        "cgitb",
        "chunk",
        "cmath",
        "cmd",
        "code",
        "codecs",
        "codeop",
        "collections",
        "colorsys",
        "compileall",
        "compression",
        "concurrent",
        "configparser",
        "contextlib",
        "contextvars",
        "copy",
        "copyreg",
        "crypt",
        "csv",
        "ctypes",
        "curses",
        "dataclasses",
        "datetime",
        "dbm",
        "decimal",
        "difflib",
        "dis",
        "distutils",
        "doctest",
        "email",
        "encodings",
        "ensurepip",
        "enum",
        "errno",
        "faulthandler",
        "fcntl",
        "filecmp",
        "fileinput",
        "fnmatch",
        "fractions",
        "ftplib",
        "functools",
        "gc",
        "genericpath",
        "getopt",
        "getpass",
        "gettext",
        "glob",
        "graphlib",
        "grp",
        "gzip",
        "hashlib",
        "heapq",
        "hmac",
        "html",
        "http",
        "idlelib",
        "imaplib",
        "imghdr",
        "imp",
        "importlib",
        "inspect",
        "io",
        "ipaddress",
        "itertools",
        "json",
        "keyword",
        "lib2to3",
        "linecache",
        "locale",
        "logging",
        "lzma",
        "mailbox",
        "mailcap",
        "marshal",
        "math",
        "mimetypes",
        "mmap",
        "modulefinder",
        "msilib",
        "msvcrt",
        "multiprocessing",
        "netrc",
        "nis",
        "nntplib",
        "nt",
        "ntpath",
        "nturl2path",
        "numbers",
        "opcode",
        "operator",
        "optparse",
        "os",
        "ossaudiodev",
        "pathlib",
        "pdb",
        "pickle",
        "pickletools",
        "pipes",
        "pkgutil",
        "platform",
        "plistlib",
        "poplib",
        "posix",
        "posixpath",
        "pprint",
        "profile",
        "pstats",
        "pty",
        "pwd",
        "py_compile",
        "pyclbr",
        "pydoc",
        "pydoc_data",
        "pyexpat",
        "queue",
        "quopri",
        "random",
        "re",
        "readline",
        "reprlib",
        "resource",
        "rlcompleter",
        "runpy",
        "sched",
        "secrets",
        "select",
        "selectors",
        "shelve",
        "shlex",
        "shutil",
        "signal",
        "site",
        "smtpd",
        "smtplib",
        "sndhdr",
        "socket",
        "socketserver",
        "spwd",
        "sqlite3",
        "sre_compile",
        "sre_constants",
        "sre_parse",
        "ssl",
        "stat",
        "statistics",
        "string",
        "stringprep",
        "struct",
        "subprocess",
        "sunau",
        "symtable",
        "sys",
        "sysconfig",
        "syslog",
        "tabnanny",
        "tarfile",
        "telnetlib",
        "tempfile",
        "termios",
        "textwrap",
        "this",
        "threading",
        "time",
        "timeit",
        "tkinter",
        "token",
        "tokenize",
        "tomllib",
        "trace",
        "traceback",
        "tracemalloc",
        "tty",
        "turtle",
        "turtledemo",
        "types",
        "typing",
        "unicodedata",
        "unittest",
        "urllib",
        "uu",
        "uuid",
        "venv",
        "warnings",
        "wave",
        "weakref",
        "webbrowser",
        "winreg",
        "winsound",
        "wsgiref",
        "xdrlib",
        "xml",
        "xmlrpc",
        "zipapp",
        "zipfile",
        "zipimport",
        "zlib",
        "zoneinfo",
    ];
    STDLIB.binary_search(&top).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: &[&str] = &[
        "packages/a/src/acme/a/core.py",
        "packages/b/src/acme/b/use.py",
        "packages/b/src/acme/b/__init__.py",
        "pkg/__init__.py",
        "pkg/sub/mod.py",
        "tests/test_use.py",
        "stubs/foo-stubs/__init__.pyi",
    ];

    fn open(file: &str, source: &str, resolved: &[&str]) -> BTreeMap<String, String> {
        let index = ModuleIndex::new(FILES.iter().copied());
        let resolved: Vec<String> = resolved.iter().map(|r| r.to_string()).collect();
        for_file(file, &imports::of(source.as_bytes()), &resolved, &index)
    }

    #[test]
    fn an_unresolved_project_module_is_an_edge_and_a_resolved_one_is_not() {
        let source = "from acme.b.use import twice\nimport acme.a.core as c\nimport os.path\nimport requests\n";
        let edges = open(
            "tests/test_use.py",
            source,
            &["packages/a/src/acme/a/core.py"],
        );
        assert_eq!(
            edges,
            BTreeMap::from([(
                "packages/b/src/acme/b/use.py".to_string(),
                "from acme.b.use import twice".to_string()
            )])
        );
        // Resolved to an installed copy outside the project: still open.
        let edges = open(
            "tests/test_use.py",
            "import acme.a.core\n",
            &["/venv/site-packages/acme/a/core.py"],
        );
        assert_eq!(
            edges.keys().collect::<Vec<_>>(),
            ["packages/a/src/acme/a/core.py"]
        );
    }

    #[test]
    fn a_namespace_prefix_reaches_every_file_under_it_and_a_stub_package_counts() {
        let edges = open("tests/test_use.py", "from acme import nothing_here\n", &[]);
        assert_eq!(
            edges.keys().collect::<Vec<_>>(),
            [
                "packages/a/src/acme/a/core.py",
                "packages/b/src/acme/b/__init__.py",
                "packages/b/src/acme/b/use.py",
            ]
        );
        let edges = open("tests/test_use.py", "import foo\n", &[]);
        assert_eq!(
            edges.keys().collect::<Vec<_>>(),
            ["stubs/foo-stubs/__init__.pyi"]
        );
    }

    #[test]
    fn relative_imports_resolve_from_the_files_package() {
        let edges = open(
            "pkg/sub/other.py",
            "from . import mod\nfrom .. import sub\n",
            &[],
        );
        assert_eq!(
            edges,
            BTreeMap::from([
                // `sub` has no __init__: importing it runs pkg's.
                (
                    "pkg/__init__.py".to_string(),
                    "from .. import sub".to_string()
                ),
                (
                    "pkg/sub/mod.py".to_string(),
                    "from . import mod".to_string()
                ),
            ])
        );
        let resolved = open(
            "pkg/sub/other.py",
            "from .mod import x\n",
            &["pkg/sub/mod.py"],
        );
        assert!(resolved.is_empty());
        // Beyond the top: not an import of the project.
        assert!(open("top.py", "from ...x import y\n", &[]).is_empty());
    }

    #[test]
    fn the_standard_library_list_is_sorted_for_binary_search() {
        assert!(is_stdlib("os") && is_stdlib("zoneinfo") && is_stdlib("abc"));
        assert!(!is_stdlib("acme"));
    }
}
