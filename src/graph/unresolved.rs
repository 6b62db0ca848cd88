//! What the analyzer's answer lacks. It resolves each import to the first
//! root that has the module, as Python would — but the gates do not agree
//! on the order (pyright reads its `stubPath` first, mypy its `mypy_path`),
//! and a file the analyzer never names has no importers. So every import
//! is read again (see [`super::imports`]) and:
//!
//! - an absolute import gains an edge to every file it names under any
//!   search root (`typings/ext/__init__.pyi` beside `ext/__init__.py`), and
//!   a relative one to the file it names beside the importer: exact edges;
//! - an import found under no root, whose name the project still has, is
//!   no silent drop: it is *assumed* to reach every project file the name
//!   could be — the module files whose dotted path ends with the longest
//!   prefix of the name that the project has, or every file under such a
//!   directory (a namespace package). A larger scope is a cost; a missing
//!   importer is a green that is not the truth. The run says when such an
//!   edge put an importer in scope.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::imports::Import;

/// Project files by path, and by the dotted module names they can be
/// imported as.
pub(crate) struct ModuleIndex<'a> {
    /// Every project file.
    files: HashSet<&'a str>,
    /// Every dotted suffix of a module file's path (`use`, `b.use`,
    /// `acme.b.use` for `…/acme/b/use.py`; a package is its `__init__`):
    /// made only when an import must be assumed, which is rare.
    modules: OnceCell<HashMap<String, Vec<&'a str>>>,
}

impl<'a> ModuleIndex<'a> {
    /// The index of `files` (root-relative).
    pub(crate) fn new(files: impl Iterator<Item = &'a str>) -> ModuleIndex<'a> {
        ModuleIndex {
            files: files.collect(),
            modules: OnceCell::new(),
        }
    }

    fn modules(&self) -> &HashMap<String, Vec<&'a str>> {
        self.modules.get_or_init(|| {
            let mut modules: HashMap<String, Vec<&'a str>> = HashMap::new();
            for file in &self.files {
                for suffix in dotted_suffixes(file) {
                    modules.entry(suffix).or_default().push(file);
                }
            }
            for found in modules.values_mut() {
                found.sort_unstable();
            }
            modules
        })
    }

    /// The files `name` could be anywhere in the project: the module files
    /// of the longest prefix of it that names one, or else every file
    /// under the directories of that prefix; empty when no prefix names
    /// anything in the project.
    fn anywhere(&self, name: &str) -> Vec<&'a str> {
        let parts: Vec<&str> = name.split('.').collect();
        for end in (1..=parts.len()).rev() {
            if let Some(files) = self.modules().get(&parts[..end].join(".")) {
                return files.clone();
            }
            let dir = parts[..end].join("/");
            let (top, inner) = (format!("{dir}/"), format!("/{dir}/"));
            let mut under: Vec<&'a str> = self
                .files
                .iter()
                .copied()
                .filter(|f| f.starts_with(&top) || f.contains(&inner))
                .collect();
            if !under.is_empty() {
                under.sort_unstable();
                return under;
            }
        }
        Vec::new()
    }

    /// Whether the project holds the module `name` itself, under some
    /// directory — a module file or a package directory whose dotted path
    /// ends with the whole name — not only a prefix of it: the module an
    /// import names is then in the repository, and a search root would
    /// resolve it.
    pub(crate) fn holds(&self, name: &str) -> bool {
        if self.modules().contains_key(name) {
            return true;
        }
        let dir = name.replace('.', "/");
        let (top, inner) = (format!("{dir}/"), format!("/{dir}/"));
        self.files
            .iter()
            .any(|f| f.starts_with(&top) || f.contains(&inner))
    }

    /// The module files at the root-relative module path `path` (no
    /// suffix): `path.py(i)` or `path/__init__.py(i)`.
    fn files_at(&self, path: &str) -> Vec<&'a str> {
        ["py", "pyi"]
            .iter()
            .flat_map(|ext| [format!("{path}.{ext}"), format!("{path}/__init__.{ext}")])
            .filter_map(|wanted| self.files.get(wanted.trim_start_matches('/')).copied())
            .collect()
    }
}

/// What one file's imports add to the analyzer's answer.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Extra {
    /// Files its imports name exactly (under a search root, or beside it
    /// for a relative import) that the analyzer left out.
    pub(crate) imports: BTreeSet<String>,
    /// Files an import found under no root could be: target → the import,
    /// as written.
    pub(crate) assumed: BTreeMap<String, String>,
}

/// For each file of `parsed` (its import statements), what its imports
/// add to `resolved` (what the analyzer said each imports), given the
/// search `roots`.
pub(crate) fn extra_edges(
    parsed: &BTreeMap<String, Vec<Import>>,
    resolved: &BTreeMap<String, Vec<String>>,
    roots: &[&str],
    index: &ModuleIndex<'_>,
) -> BTreeMap<String, Extra> {
    let mut edges = BTreeMap::new();
    for (file, statements) in parsed {
        let Some(imports) = resolved.get(file) else {
            continue;
        };
        let context = Context {
            file,
            resolved: imports,
            roots,
            index,
        };
        let extra = context.extra(statements);
        if extra != Extra::default() {
            edges.insert(file.clone(), extra);
        }
    }
    edges
}

/// One file, what the analyzer said it imports, and where modules are.
struct Context<'c, 'a> {
    file: &'c str,
    resolved: &'c [String],
    roots: &'c [&'c str],
    index: &'c ModuleIndex<'a>,
}

impl Context<'_, '_> {
    fn extra(&self, imports: &[Import]) -> Extra {
        // Only project files count: an import resolved to an installed copy
        // of a project module outside the root is not an edge to the project.
        let resolved_names: HashSet<String> = self
            .resolved
            .iter()
            .filter(|r| !r.starts_with('/'))
            .flat_map(|r| dotted_suffixes(r))
            .collect();
        let known: HashSet<&str> = self.resolved.iter().map(String::as_str).collect();
        let mut extra = Extra::default();
        for import in imports {
            for request in requests(import) {
                let exact = match import.level {
                    0 => self.under_roots(&request),
                    level => self.beside(level, &request),
                };
                let missing: Vec<&str> = exact
                    .iter()
                    .copied()
                    .filter(|f| !known.contains(f) && *f != self.file)
                    .collect();
                extra
                    .imports
                    .extend(missing.into_iter().map(str::to_string));
                let resolved =
                    !exact.is_empty() || request.iter().any(|name| resolved_names.contains(name));
                if import.level == 0 && !resolved {
                    self.assume(import, &request[0], &mut extra);
                }
            }
        }
        extra
    }

    /// Every file the first of `request`'s names that names any (`m.a`,
    /// else `m`) is under a search root.
    fn under_roots(&self, request: &[String]) -> Vec<&str> {
        request
            .iter()
            .map(|name| {
                let path = name.replace('.', "/");
                self.roots
                    .iter()
                    .flat_map(|root| self.index.files_at(&join_module(root, &path)))
                    .collect::<Vec<_>>()
            })
            .find(|files| !files.is_empty())
            .unwrap_or_default()
    }

    /// The file a relative import of `level` dots names beside this one.
    fn beside(&self, level: usize, request: &[String]) -> Vec<&str> {
        let Some(base) = package_dir(self.file, level) else {
            return Vec::new();
        };
        request
            .iter()
            .map(|name| {
                self.index
                    .files_at(&join_module(&base, &name.replace('.', "/")))
            })
            .chain(std::iter::once(self.index.files_at(&base)))
            .find(|files| !files.is_empty())
            .unwrap_or_default()
    }

    /// An import found nowhere the tools look: every file it could be.
    fn assume(&self, import: &Import, name: &str, extra: &mut Extra) {
        let top = name.split('.').next().unwrap_or_default();
        if is_stdlib(top) {
            return;
        }
        for target in self.index.anywhere(name) {
            if target != self.file {
                extra
                    .assumed
                    .entry(target.to_string())
                    .or_insert_with(|| import.statement(name));
            }
        }
    }
}

/// The names one import asks for, each with its fallbacks: `from m import
/// a` asks for `m.a` (a submodule) or else `m` (a name in it).
fn requests(import: &Import) -> Vec<Vec<String>> {
    if import.names.is_empty() {
        return vec![vec![import.module.clone()]];
    }
    import
        .names
        .iter()
        .map(|n| match import.module.is_empty() {
            true => vec![n.clone()],
            false => vec![format!("{}.{n}", import.module), import.module.clone()],
        })
        .collect()
}

impl Import {
    /// The statement that asks for `request` (one of the import's names),
    /// as it would be written: `import a.b`, `from .m import x`.
    fn statement(&self, request: &str) -> String {
        let module = format!("{}{}", ".".repeat(self.level), self.module);
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

/// `base/path` (`.` or empty `base`: `path` alone).
fn join_module(base: &str, path: &str) -> String {
    match (base, path.is_empty()) {
        ("" | ".", _) => path.to_string(),
        (_, true) => base.to_string(),
        _ => format!("{base}/{path}"),
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
    use crate::graph::imports;

    const FILES: &[&str] = &[
        "packages/a/src/acme/a/core.py",
        "packages/b/src/acme/b/use.py",
        "packages/b/src/acme/b/__init__.py",
        "pkg/__init__.py",
        "pkg/sub/mod.py",
        "tests/test_use.py",
        "stubs/foo-stubs/__init__.pyi",
        "ext/__init__.py",
        "typings/ext/__init__.pyi",
    ];

    /// What `source` in `file` adds, given what the analyzer resolved and
    /// the roots `.` and `typings`.
    fn extra(file: &str, source: &str, resolved: &[&str]) -> Extra {
        let index = ModuleIndex::new(FILES.iter().copied());
        let resolved: Vec<String> = resolved.iter().map(|r| r.to_string()).collect();
        let context = Context {
            file,
            resolved: &resolved,
            roots: &[".", "typings"],
            index: &index,
        };
        context.extra(&imports::of(source.as_bytes()))
    }

    fn open(file: &str, source: &str, resolved: &[&str]) -> BTreeMap<String, String> {
        extra(file, source, resolved).assumed
    }

    fn set(files: &[&str]) -> BTreeSet<String> {
        files.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn an_import_names_its_file_under_every_root_not_only_the_first() {
        let found = extra("use.py", "from ext import f\n", &["ext/__init__.py"]);
        assert_eq!(found.imports, set(&["typings/ext/__init__.pyi"]));
        assert!(found.assumed.is_empty());
        let found = extra("use.py", "import pkg.sub.mod as m\n", &[]);
        assert_eq!(found.imports, set(&["pkg/sub/mod.py"]));
        // `from pkg import name`: the package itself when `name` is no module.
        let found = extra("use.py", "from pkg import name\n", &[]);
        assert_eq!(found.imports, set(&["pkg/__init__.py"]));
    }

    #[test]
    fn an_unresolved_project_module_is_assumed_and_a_resolved_one_is_not() {
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
    fn relative_imports_name_the_file_beside_the_importer() {
        let found = extra(
            "pkg/sub/other.py",
            "from . import mod\nfrom .. import sub\n",
            &[],
        );
        // `sub` has no __init__: importing it runs pkg's.
        assert_eq!(found.imports, set(&["pkg/__init__.py", "pkg/sub/mod.py"]));
        assert!(found.assumed.is_empty());
        let resolved = extra(
            "pkg/sub/other.py",
            "from .mod import x\n",
            &["pkg/sub/mod.py"],
        );
        assert_eq!(resolved, Extra::default());
        // Beyond the top: not an import of the project.
        assert_eq!(
            extra("top.py", "from ...x import y\n", &[]),
            Extra::default()
        );
    }

    #[test]
    fn the_standard_library_list_is_sorted_for_binary_search() {
        assert!(is_stdlib("os") && is_stdlib("zoneinfo") && is_stdlib("abc"));
        assert!(!is_stdlib("acme"));
        assert!(open("x.py", "import json\n", &[]).is_empty());
    }
}
