//! The import statements of a Python file, read with a real parser
//! (tree-sitter's Python grammar): every `import` and `from … import` at
//! any depth — in functions, `try` blocks, `if TYPE_CHECKING:` — as the
//! names it asks for. The graph uses them to see which imports its
//! analyzer left unresolved (see [`super::unresolved`]).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

/// One import statement's request (kept in `.st3/import-names.json` by
/// blob, under short keys: a large project has hundreds of thousands).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Import {
    /// Leading dots of a relative import; 0 for an absolute one.
    #[serde(rename = "l", default, skip_serializing_if = "is_zero")]
    pub(crate) level: usize,
    /// The dotted module (`a.b`; empty in `from . import x`).
    #[serde(rename = "m", default, skip_serializing_if = "String::is_empty")]
    pub(crate) module: String,
    /// What `from module import …` names (each may be a submodule); empty
    /// for `import module` and `from module import *`.
    #[serde(rename = "n", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) names: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The imports of each of `files` (root-relative) under `root`, parsed on
/// every core (a whole project's first graph reads every file); `None` for
/// a file that cannot be read.
pub(crate) fn of_files(root: &Path, files: &[&str]) -> Vec<Option<Vec<Import>>> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    let mut parsed: Vec<(usize, Option<Vec<Import>>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = files.get(index) else {
                            return done;
                        };
                        let source = std::fs::read(crate::file_name::join(root, file));
                        done.push((index, source.ok().map(|s| of(&s))));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    parsed.sort_by_key(|(index, _)| *index);
    parsed.into_iter().map(|(_, imports)| imports).collect()
}

/// Every import of `source`. A file that does not parse still yields the
/// statements the parser recovered around the error.
pub(crate) fn of(source: &[u8]) -> Vec<Import> {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        return Vec::new();
    }
    let Some(tree) = parser.parse(source, None) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        let descend = match node.kind() {
            "import_statement" => {
                found.extend(plain_imports(node, source));
                false
            }
            "import_from_statement" => {
                found.extend(from_import(node, source));
                false
            }
            // `from __future__ import …` imports no module of the project.
            "future_import_statement" => false,
            _ => true,
        };
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return found;
            }
        }
    }
}

/// `import a.b, c as d`: one import per module.
fn plain_imports(node: tree_sitter::Node<'_>, source: &[u8]) -> Vec<Import> {
    let mut cursor = node.walk();
    node.children_by_field_name("name", &mut cursor)
        .filter_map(|name| dotted(name, source))
        .map(|module| Import {
            level: 0,
            module,
            names: Vec::new(),
        })
        .collect()
}

/// `from .a import b, c as d`.
fn from_import(node: tree_sitter::Node<'_>, source: &[u8]) -> Option<Import> {
    let module = node.child_by_field_name("module_name")?;
    let (level, module) = match module.kind() {
        "relative_import" => {
            let mut cursor = module.walk();
            let mut level = 0;
            let mut name = String::new();
            for part in module.named_children(&mut cursor) {
                match part.kind() {
                    "import_prefix" => level = text(part, source).matches('.').count(),
                    _ => name = dotted(part, source).unwrap_or_default(),
                }
            }
            (level, name)
        }
        _ => (0, dotted(module, source)?),
    };
    let mut cursor = node.walk();
    let names = node
        .children_by_field_name("name", &mut cursor)
        .filter_map(|name| dotted(name, source))
        .collect();
    Some(Import {
        level,
        module,
        names,
    })
}

/// The dotted name of a `dotted_name` or of an `aliased_import`'s name.
fn dotted(node: tree_sitter::Node<'_>, source: &[u8]) -> Option<String> {
    let name = match node.kind() {
        "aliased_import" => node.child_by_field_name("name")?,
        "dotted_name" => node,
        _ => return None,
    };
    let joined: String = text(name, source)
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '\\')
        .collect();
    (!joined.is_empty()).then_some(joined)
}

fn text<'s>(node: tree_sitter::Node<'_>, source: &'s [u8]) -> &'s str {
    node.utf8_text(source).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(level: usize, module: &str, names: &[&str]) -> Import {
        Import {
            level,
            module: module.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    #[test]
    fn every_form_of_import_at_any_depth() {
        let source = b"import a.b as c, d\nfrom . import x\nfrom ..pkg.mod import (y as z,\n    w)\nfrom m import *\nif TYPE_CHECKING:\n    from t import T\ndef f():\n    try:\n        import inner\n    except ImportError:\n        pass\nfrom __future__ import annotations\nimport \\\n    spaced . name\n";
        assert_eq!(
            of(source),
            [
                import(0, "a.b", &[]),
                import(0, "d", &[]),
                import(1, "", &["x"]),
                import(2, "pkg.mod", &["y", "w"]),
                import(0, "m", &[]),
                import(0, "t", &["T"]),
                import(0, "inner", &[]),
                import(0, "spaced.name", &[]),
            ]
        );
    }

    #[test]
    fn a_file_with_a_syntax_error_keeps_the_imports_around_it() {
        let found = of(b"import good\ndef broken(:\n    pass\nfrom other import thing\n");
        assert!(found.contains(&import(0, "good", &[])), "{found:?}");
        assert!(found.contains(&import(0, "other", &["thing"])), "{found:?}");
    }
}
