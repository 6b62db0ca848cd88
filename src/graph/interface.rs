//! The interface of a Python module: what a type checker can see of it from
//! another module. A change that leaves it equal cannot change an
//! importer's verdict, so its importers need no check (`import_graph.
//! interface_aware`). Read with the parser the graph already uses
//! (tree-sitter's Python grammar).
//!
//! Everything counts — the module's and every class's statements, imports,
//! assignments with their values, decorators, signatures with defaults,
//! bases — except three things no importer can observe:
//!
//! - the *body* of a function with a return annotation (its callers see
//!   the annotation), unless the body assigns to an attribute (`self.x =
//!   …`: checkers infer attribute types from such assignments) or declares
//!   a `global` (the module variable's type takes in that assignment).
//!   Two properties of such a body still count: whether it is trivial
//!   (`...`, `pass`, a docstring, `raise NotImplementedError`: mypy treats
//!   such methods of protocols and abstract classes as unimplemented) and
//!   whether it yields (an `async def` that yields is an async generator);
//! - bare string statements (docstrings);
//! - comments, except directives (`# NAME: …`, NAME a word: type comments
//!   and every tool's own, whichever tools the config runs) — a note to a
//!   reader (`# TODO: …`, `# NOTE: …`, `# FIXME: …`) is no directive.
//!
//! A function without a return annotation keeps its body: its return type
//! is inferred from it. A source the parser cannot read without error has
//! no interface: every change to it counts.

/// Where the interfaces of contents already read are kept, relative to the
/// root: by blob id, so a content is parsed once and the interface of one
/// that passed uncommitted (`clean_blobs` holds its blob id, not the
/// content) is known when it changes again.
pub(crate) const CACHE_FILE: &str = ".st3/interfaces.json";

/// How many saves an interface is kept after its last use.
const KEPT_SAVES: u64 = 20;

/// The rule behind the digests: another rule's are not reused.
const RULE: &str = "qg-interface/v3";

/// Blob id → the interface of that content (`None`: it does not parse).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Interfaces {
    /// Which rule computed them ([`RULE`]).
    rule: String,
    /// Blob id → its interface.
    blobs: std::collections::BTreeMap<String, Option<Interface>>,
    /// How many times the file was written with a change.
    #[serde(default)]
    saves: u64,
    /// Blob id → the save that last found it used.
    #[serde(default)]
    used_at: std::collections::BTreeMap<String, u64>,
    /// Whether something was added since loading.
    #[serde(skip)]
    added: bool,
    /// The blobs this run asked about: what [`Interfaces::save`] keeps.
    #[serde(skip)]
    used: std::collections::BTreeSet<String>,
}

impl Interfaces {
    /// The cached interfaces under `root` (none when unreadable or of
    /// another rule).
    pub(crate) fn load(root: &std::path::Path) -> Interfaces {
        std::fs::read(root.join(CACHE_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Interfaces>(&bytes).ok())
            .filter(|cached| cached.rule == RULE)
            .unwrap_or_else(|| Interfaces {
                rule: RULE.to_string(),
                ..Interfaces::default()
            })
    }

    /// The interface of the content with blob id `blob`, read by `content`
    /// when not cached; `None` when it does not parse or cannot be read.
    pub(crate) fn of(
        &mut self,
        blob: &str,
        content: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<Interface> {
        self.used.insert(blob.to_string());
        if let Some(known) = self.blobs.get(blob) {
            return known.clone();
        }
        let found = read(&content()?);
        self.blobs.insert(blob.to_string(), found.clone());
        self.added = true;
        found
    }

    /// The interface of a blob seen before, if it was.
    pub(crate) fn known(&mut self, blob: &str) -> Option<Interface> {
        self.used.insert(blob.to_string());
        self.blobs.get(blob).cloned().flatten()
    }

    /// Writes what was added, keeping the interfaces used in the last
    /// [`KEPT_SAVES`] saves and those `keep` names (the contents the last
    /// green run checked uncommitted): the others can be read again from
    /// git or the working tree, and a long TDD loop must not grow the file
    /// by every content it ever saw. Two readers share the file — the
    /// scope's body-only check (the changed files) and the result cache's
    /// keys (what they import) — so one's save must not drop what the
    /// other reads on every run: rich's keys parsed 100 files on each warm
    /// run, 0.1 s, when only the last user's were kept. Unwritable, they
    /// are computed again next time.
    pub(crate) fn save(&mut self, root: &std::path::Path, keep: &dyn Fn(&str) -> bool) {
        if !self.added {
            return;
        }
        self.saves += 1;
        let now = self.saves;
        for blob in std::mem::take(&mut self.used) {
            self.used_at.insert(blob, now);
        }
        let recent = |blob: &str, used_at: &std::collections::BTreeMap<String, u64>| {
            used_at.get(blob).is_some_and(|at| *at + KEPT_SAVES > now)
        };
        let used_at = std::mem::take(&mut self.used_at);
        self.blobs
            .retain(|blob, _| recent(blob, &used_at) || keep(blob));
        self.used_at = used_at;
        let blobs = &self.blobs;
        self.used_at.retain(|blob, _| blobs.contains_key(blob));
        if let Ok(bytes) = serde_json::to_vec(self) {
            let _ = crate::atomic_file::write_cache(&root.join(CACHE_FILE), &bytes);
        }
        self.added = false;
    }
}

/// A module's interface: one digest of it all, and one of each part a
/// message can name (`def f`, `class A`, `module level`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Interface {
    /// Everything an importer sees, in order.
    pub(crate) digest: String,
    /// Part → its digest (a name defined twice: `def f`, `def f (2)`).
    pub(crate) parts: std::collections::BTreeMap<String, String>,
}

impl Interface {
    /// The parts that differ from `before`'s (added, removed or changed);
    /// `statement order` when the parts are equal but not their order.
    pub(crate) fn changed_since(&self, before: &Interface) -> Vec<String> {
        let names: std::collections::BTreeSet<&String> =
            self.parts.keys().chain(before.parts.keys()).collect();
        let changed: Vec<String> = names
            .into_iter()
            .filter(|name| self.parts.get(*name) != before.parts.get(*name))
            .cloned()
            .collect();
        match (changed.is_empty(), self.digest == before.digest) {
            (true, false) => vec!["statement order".to_string()],
            _ => changed,
        }
    }
}

/// The interface of `source`; `None` when it does not parse cleanly (then
/// no two versions are known to be equal).
pub(crate) fn read(source: &[u8]) -> Option<Interface> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(source, None)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut whole = String::new();
    let mut parts: std::collections::BTreeMap<String, String> = Default::default();
    let mut cursor = root.walk();
    for statement in root.children(&mut cursor) {
        let mut text = String::new();
        write_node(statement, source, &mut text);
        whole.push_str(&text);
        let mut name = part_name(statement, source);
        let mut seen = 1;
        while parts.contains_key(&name) && !name.starts_with("module level") {
            seen += 1;
            name = format!("{} ({seen})", part_name(statement, source));
        }
        parts.entry(name).or_default().push_str(&text);
    }
    let parts = parts
        .into_iter()
        .map(|(name, text)| (name, crate::git::hash_blob(text.as_bytes())))
        .collect();
    Some(Interface {
        digest: crate::git::hash_blob(whole.as_bytes()),
        parts,
    })
}

/// How a message names a module-level statement: the function or class it
/// defines, else `module level` (imports, assignments, `if` blocks).
fn part_name(statement: tree_sitter::Node<'_>, source: &[u8]) -> String {
    let definition = match statement.kind() {
        "decorated_definition" => statement.child_by_field_name("definition"),
        _ => Some(statement),
    };
    let named = |kind: &str| {
        definition
            .filter(|d| d.kind() == kind)
            .and_then(|d| d.child_by_field_name("name"))
            .map(|n| text(n, source).to_string())
    };
    match (named("function_definition"), named("class_definition")) {
        (Some(name), _) => format!("def {name}"),
        (_, Some(name)) => format!("class {name}"),
        _ => "module level".to_string(),
    }
}

/// Writes `node` as a nested form: its kind and, inside, its children
/// (leaves as their text), leaving out what no importer sees.
fn write_node(node: tree_sitter::Node<'_>, source: &[u8], out: &mut String) {
    match node.kind() {
        "comment" => {
            if is_checker_comment(text(node, source)) {
                out.push_str(text(node, source));
                out.push('\n');
            }
            return;
        }
        "expression_statement" if is_bare_string(node) => return,
        "function_definition" => return write_function(node, source, out),
        _ => {}
    }
    if node.child_count() == 0 {
        out.push_str(text(node, source));
        out.push(' ');
        return;
    }
    out.push('(');
    out.push_str(node.kind());
    out.push(' ');
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        write_node(child, source, out);
    }
    out.push_str(") ");
}

/// A function: everything but a body its callers cannot observe, which is
/// written as what they can (trivial, yields).
fn write_function(node: tree_sitter::Node<'_>, source: &[u8], out: &mut String) {
    let body = node.child_by_field_name("body");
    let hidden = body.filter(|body| {
        node.child_by_field_name("return_type").is_some() && !reaches_outside(*body, source)
    });
    out.push_str("(function_definition ");
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if hidden.is_some_and(|body| body.id() == child.id()) {
            out.push_str(&format!(
                "(hidden_body trivial={} yields={} {}) ",
                is_trivial(child, source),
                yields(child),
                // Comments inside it: `# type: ignore` on the def's line
                // comes out of the body in tree-sitter's reading.
                checker_comments(child, source)
            ));
        } else {
            write_node(child, source, out);
        }
    }
    out.push_str(") ");
}

/// Whether a function body changes what is seen outside the function: an
/// assignment to an attribute (`self.x = …`, `cls.y += …`, `for self.i in
/// …`, `with … as self.f`) or a `global` declaration. Nested functions and
/// classes count too (conservatively).
fn reaches_outside(body: tree_sitter::Node<'_>, source: &[u8]) -> bool {
    let mut cursor = body.walk();
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        let target = match node.kind() {
            "global_statement" => return true,
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                node.child_by_field_name("left")
            }
            "as_pattern" => node.child_by_field_name("alias"),
            _ => None,
        };
        if target.is_some_and(|t| holds_attribute(t, source)) {
            return true;
        }
        stack.extend(node.children(&mut cursor));
    }
    false
}

/// Whether `node` is or holds an attribute reference (`a.b`).
fn holds_attribute(node: tree_sitter::Node<'_>, _source: &[u8]) -> bool {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "attribute" {
            return true;
        }
        stack.extend(node.children(&mut cursor));
    }
    false
}

/// mypy's trivial body: docstrings, `pass`, `...`, and `raise
/// NotImplementedError` (called or not), nothing else.
fn is_trivial(body: tree_sitter::Node<'_>, source: &[u8]) -> bool {
    let mut cursor = body.walk();
    let statements: Vec<tree_sitter::Node<'_>> = body.named_children(&mut cursor).collect();
    statements
        .into_iter()
        .filter(|s| s.kind() != "comment")
        .all(|statement| match statement.kind() {
            "pass_statement" => true,
            "expression_statement" => {
                is_bare_string(statement)
                    || (statement.named_child_count() == 1
                        && statement
                            .named_child(0)
                            .is_some_and(|e| e.kind() == "ellipsis"))
            }
            "raise_statement" => {
                let raised = statement.named_child(0).map(|e| text(e, source));
                raised.is_some_and(|r| {
                    let name = r.split('(').next().unwrap_or("").trim();
                    name == "NotImplementedError" || name.ends_with(".NotImplementedError")
                })
            }
            _ => false,
        })
}

/// Whether the body yields (outside nested functions, lambdas and classes):
/// an `async def` that does is an async generator, not a coroutine.
fn yields(body: tree_sitter::Node<'_>) -> bool {
    let mut cursor = body.walk();
    let mut stack: Vec<tree_sitter::Node<'_>> = body.children(&mut cursor).collect();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "yield" => return true,
            "function_definition" | "lambda" | "class_definition" => continue,
            _ => {}
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    false
}

/// The checker comments anywhere under `node`, in order.
fn checker_comments(node: tree_sitter::Node<'_>, source: &[u8]) -> String {
    let mut found = Vec::new();
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "comment" && is_checker_comment(text(node, source)) {
            found.push((node.start_byte(), text(node, source)));
        }
        stack.extend(node.children(&mut cursor));
    }
    found.sort();
    found
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A directive (`# type: …`, or any tool's `# NAME: …`) can change what a
/// checker sees; which tools read which is the config's business, so every
/// comment of that shape counts (a `# trial: …` too: a wasted check, never
/// a missed one) — but for the words people leave notes under, which no
/// tool reads as its name: a `# TODO:` in a function's body made a real
/// project (polyfactory) check 113 importers instead of 1 file.
fn is_checker_comment(comment: &str) -> bool {
    let body = comment.trim_start_matches('#').trim_start();
    body.split_once(':').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !READER_NOTES
                .iter()
                .any(|note| note.eq_ignore_ascii_case(name))
    })
}

/// The words of notes to a reader (`# TODO: …`), never a tool's directive.
const READER_NOTES: [&str; 14] = [
    "todo",
    "fixme",
    "xxx",
    "hack",
    "note",
    "nb",
    "bug",
    "optimize",
    "review",
    "warning",
    "see",
    "example",
    "deprecated",
    "perf",
];

/// A statement that is one plain string (a docstring, wherever it stands).
fn is_bare_string(statement: tree_sitter::Node<'_>) -> bool {
    statement.named_child_count() == 1
        && statement
            .named_child(0)
            .is_some_and(|e| matches!(e.kind(), "string" | "concatenated_string"))
}

fn text<'s>(node: tree_sitter::Node<'_>, source: &'s [u8]) -> &'s str {
    node.utf8_text(source).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::read;

    fn digest(source: &[u8]) -> Option<String> {
        read(source).map(|interface| interface.digest)
    }

    /// Whether `before` and `after` have one interface.
    fn same(before: &str, after: &str) -> bool {
        let (a, b) = (digest(before.as_bytes()), digest(after.as_bytes()));
        assert!(
            a.is_some() && b.is_some(),
            "both parse: {before:?} {after:?}"
        );
        a == b
    }

    const TYPED: &str = "def f(x: int) -> int:\n    \"\"\"Doc.\"\"\"\n    return x + 1\n";

    #[test]
    fn a_body_behind_a_return_annotation_is_hidden() {
        assert!(same(
            TYPED,
            "def f(x: int) -> int:\n    y = x * 2\n    return y\n"
        ));
        // Comments, docstrings and blank lines anywhere.
        assert!(same(
            TYPED,
            "# note\n\"\"\"Module doc.\"\"\"\n\ndef f(x: int) -> int:  # why\n    return x + 1\n"
        ));
        // A method's, too, and one inside an `if`.
        let class = "class A:\n    def m(self) -> int:\n        return 1\n";
        assert!(same(
            class,
            "class A:\n    def m(self) -> int:\n        return 2  # two\n"
        ));
        let guarded = "if X:\n    def g() -> str:\n        return 'a'\n";
        assert!(same(
            guarded,
            "if X:\n    def g() -> str:\n        return 'b'\n"
        ));
    }

    #[test]
    fn what_callers_see_counts() {
        for after in [
            // The signature: parameters, defaults, the annotation, async.
            "def f(x: int, y: int = 0) -> int:\n    return x\n",
            "def f(x: int = 1) -> int:\n    return x\n",
            "def f(x: int) -> str:\n    return str(x)\n",
            "async def f(x: int) -> int:\n    return x\n",
            "def f[T](x: int) -> int:\n    return x\n",
            // Decorators, the name, what stands beside it.
            "@cache\ndef f(x: int) -> int:\n    return x\n",
            "def g(x: int) -> int:\n    return x\n",
            "def f(x: int) -> int:\n    return x\nLIMIT = 3\n",
            // A type comment, a checker's directive.
            "def f(x: int) -> int:  # type: ignore[override]\n    return x\n",
            "# mypy: disallow-untyped-defs\ndef f(x: int) -> int:\n    return x\n",
            // A directive inside a hidden body.
            "def f(x: int) -> int:\n    \"\"\"Doc.\"\"\"\n    return x + 1  # type: ignore[operator]\n",
        ] {
            assert!(!same(TYPED, after), "{after}");
        }
        // A plain comment there does not count, nor a note to a reader.
        assert!(same(
            TYPED,
            "def f(x: int) -> int:\n    \"\"\"Doc.\"\"\"\n    return x + 1  # one more\n"
        ));
        for note in ["# TODO: x", "# NOTE: why", "# fixme: later", "#XXX: odd"] {
            let after = format!("def f(x: int) -> int:\n    {note}\n    return x + 1\n");
            assert!(same(TYPED, &after), "{after}");
        }
        // Any other word of that shape may be a tool's: it counts.
        let tool = "def f(x: int) -> int:\n    # pyrefly: ignore\n    return x + 1\n";
        assert!(!same(TYPED, tool));
    }

    #[test]
    fn a_body_whose_result_is_inferred_counts() {
        // No return annotation: the return type is inferred from the body.
        let bare = "def f(x):\n    return x + 1\n";
        assert!(!same(bare, "def f(x):\n    return str(x)\n"));
        let typed_args = "def f(x: int):\n    return x\n";
        assert!(!same(typed_args, "def f(x: int):\n    return None\n"));
        // An attribute assigned in a method, whatever its return annotation.
        let init = "class A:\n    def __init__(self) -> None:\n        self.x = 1\n";
        assert!(!same(
            init,
            "class A:\n    def __init__(self) -> None:\n        self.x = 'a'\n"
        ));
        for assigned in [
            "        self.y: int = 0\n",
            "        self.n += 1\n",
            "        for self.i in range(3):\n            pass\n",
            "        with open('f') as self.f:\n            pass\n",
            "        self.items[0] = 1\n",
        ] {
            let before = format!("class A:\n    def m(self) -> None:\n{assigned}");
            let after = format!("class A:\n    def m(self) -> None:\n{assigned}        print()\n");
            assert!(!same(&before, &after), "{assigned}");
        }
        // A global the function assigns.
        let global = "X = 1\ndef set() -> None:\n    global X\n    X = 2\n";
        assert!(!same(
            global,
            "X = 1\ndef set() -> None:\n    global X\n    X = 'a'\n"
        ));
    }

    #[test]
    fn a_hidden_body_still_says_whether_it_is_trivial_and_whether_it_yields() {
        let trivial = "class P(Protocol):\n    def m(self) -> int:\n        ...\n";
        assert!(same(
            trivial,
            "class P(Protocol):\n    def m(self) -> int:\n        \"\"\"Doc.\"\"\"\n        pass\n"
        ));
        assert!(same(
            trivial,
            "class P(Protocol):\n    def m(self) -> int:\n        raise NotImplementedError\n"
        ));
        assert!(!same(
            trivial,
            "class P(Protocol):\n    def m(self) -> int:\n        return 1\n"
        ));
        // One expression is not `...`: a call makes the body implemented.
        assert!(!same(
            trivial,
            "class P(Protocol):\n    def m(self) -> int:\n        print(1)\n"
        ));
        let coroutine = "async def g() -> AsyncIterator[int]:\n    return None\n";
        assert!(!same(
            coroutine,
            "async def g() -> AsyncIterator[int]:\n    yield 1\n"
        ));
        // A yield in a nested function is not the function's own.
        let nested = "def g() -> int:\n    def inner():\n        return 1\n    return 1\n";
        assert!(same(
            nested,
            "def g() -> int:\n    def inner():\n        yield 1\n    return 1\n"
        ));
    }

    #[test]
    fn module_and_class_level_statements_count() {
        let module = "import a\nfrom b import c\nX: int = 1\n__all__ = ['X']\n";
        for after in [
            "import a\nfrom b import c, d\nX: int = 1\n__all__ = ['X']\n",
            "import a\nfrom b import c\nX: int = 2\n__all__ = ['X']\n",
            "import a\nfrom b import c\nX: int = 1\n__all__ = ['X', 'c']\n",
            "import a\nfrom b import c\nX = 1\n__all__ = ['X']\n",
        ] {
            assert!(!same(module, after), "{after}");
        }
        let class = "@dataclass\nclass A(B, metaclass=M):\n    x: int = 0\n    RED = 1\n";
        for after in [
            "@dataclass(frozen=True)\nclass A(B, metaclass=M):\n    x: int = 0\n    RED = 1\n",
            "@dataclass\nclass A(B):\n    x: int = 0\n    RED = 1\n",
            "@dataclass\nclass A(B, metaclass=M):\n    x: int = 1\n    RED = 1\n",
            "@dataclass\nclass A(B, metaclass=M):\n    x: int = 0\n    RED = 1\n    BLUE = 2\n",
        ] {
            assert!(!same(class, after), "{after}");
        }
        // One statement moved into or out of a block is another module.
        let guarded = "if TYPE_CHECKING:\n    import a\nimport b\n";
        assert!(!same(
            guarded,
            "if TYPE_CHECKING:\n    import a\n    import b\n"
        ));
    }

    #[test]
    fn a_source_that_does_not_parse_has_no_interface() {
        assert_eq!(digest(b"def f(:\n    pass\n"), None);
        assert_eq!(digest(b"def f() -> int:\n    return (\n"), None);
        assert!(digest(b"").is_some());
    }
}

#[cfg(test)]
mod parts {
    use super::read;

    fn changed(before: &str, after: &str) -> Vec<String> {
        let (a, b) = (
            read(before.as_bytes()).unwrap(),
            read(after.as_bytes()).unwrap(),
        );
        b.changed_since(&a)
    }

    #[test]
    fn a_change_is_named_by_the_definition_it_is_in() {
        let module = "import a\n\ndef f(x: int) -> int:\n    return x\n\nclass A:\n    x = 1\n";
        assert_eq!(changed(module, module), Vec::<String>::new());
        assert_eq!(
            changed(module, &module.replace("def f(x: int)", "def f(x: str)")),
            ["def f"]
        );
        assert_eq!(
            changed(module, &module.replace("x = 1", "x = 2")),
            ["class A"]
        );
        assert_eq!(
            changed(module, &module.replace("import a", "import b")),
            ["module level"]
        );
        assert_eq!(
            changed(module, &format!("{module}\ndef g() -> None:\n    pass\n")),
            ["def g"]
        );
        // A decorated definition is named by what it defines.
        let decorated =
            "import functools\n\n@functools.cache\ndef f(x: int) -> int:\n    return x\n";
        assert_eq!(
            changed(decorated, &decorated.replace("x: int)", "x: str)")),
            ["def f"]
        );
        // Redefined: each definition is a part of its own.
        let twice = "def f() -> int:\n    return 1\n\ndef f() -> str:\n    return ''\n";
        assert_eq!(
            changed(
                twice,
                &twice.replace("-> str", "-> bytes").replace("''", "b''")
            ),
            ["def f (2)"]
        );
        // The same parts in another order.
        let swapped = "class A:\n    x = 1\n\ndef f(x: int) -> int:\n    return x\nimport a\n";
        assert_eq!(changed(module, swapped), ["statement order"]);
    }
}

#[cfg(test)]
mod cache {
    use super::Interfaces;

    #[test]
    fn the_cache_keeps_what_recent_runs_used_and_what_it_is_told_to() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".st3")).unwrap();
        let mut first = Interfaces::load(dir.path());
        for blob in ["a", "b", "c"] {
            first.of(blob, || Some(format!("X = '{blob}'\n").into_bytes()));
        }
        first.save(dir.path(), &|_| false);
        // Another reader that adds nothing drops nothing of the first's.
        let mut other = Interfaces::load(dir.path());
        assert!(other.known("a").is_some());
        other.save(dir.path(), &|_| false);
        assert!(Interfaces::load(dir.path()).known("b").is_some());
        // A long loop: each run adds a content and uses `a`.
        for run in 0..super::KEPT_SAVES {
            let mut next = Interfaces::load(dir.path());
            assert!(next.known("a").is_some(), "run {run}");
            next.of(&format!("n{run}"), || Some(b"Y = 1\n".to_vec()));
            next.save(dir.path(), &|blob| blob == "c");
        }
        let mut last = Interfaces::load(dir.path());
        assert!(last.known("a").is_some(), "used by every run");
        assert!(last.known("c").is_some(), "kept as told");
        assert!(
            last.known("b").is_none(),
            "unused for as many saves: dropped"
        );
        let last_added = format!("n{}", super::KEPT_SAVES - 1);
        assert!(last.known(&last_added).is_some(), "used by the last run");
    }
}
