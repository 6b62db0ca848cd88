//! `.st3/import-graph.json`: the analyzer's last answer for every file,
//! with the blob id of the content it answered for. A file whose blob is
//! unchanged need not be asked again; a different analyzer, a change to
//! its config files, or a new file invalidates what it said.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::roots::SearchRoots;
use super::Request;
use crate::workspace::Workspace;

/// Where the graph is cached, relative to the root.
pub(crate) const CACHE_FILE: &str = ".st3/import-graph.json";

/// Where each analyzed content's import statements are cached.
pub(crate) const NAMES_FILE: &str = ".st3/import-names.json";

/// The import statements of each analyzed blob: parsing every file again
/// whenever the graph is rebuilt (a file added, a config changed) would
/// cost a large project seconds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Names {
    /// What parsed them; another parser's answers are not reused.
    pub(crate) parser: String,
    /// Blob id → its imports.
    pub(crate) blobs: std::collections::HashMap<String, Vec<super::imports::Import>>,
}

/// The parser behind [`Names`]: this qg's grammar.
pub(crate) const NAMES_PARSER: &str = "tree-sitter-python/v1";

/// The cached import statements (none when unreadable or from another parser).
pub(crate) fn load_names(ws: &Workspace) -> Names {
    std::fs::read(ws.root.join(NAMES_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Names>(&bytes).ok())
        .filter(|names| names.parser == NAMES_PARSER)
        .unwrap_or_default()
}

/// Writes the import statements; unwritable, they are parsed again next time.
pub(crate) fn save_names(ws: &Workspace, names: &Names) {
    if let Ok(bytes) = serde_json::to_vec(names) {
        let _ = crate::atomic_file::write_cache(&ws.root.join(NAMES_FILE), &bytes);
    }
}

/// The import graph: for each analyzed file, what it imports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Graph {
    /// Identity of the analyzer and its config (see [`key`]).
    pub(crate) key: String,
    /// Root-relative path → what the analyzer said about it.
    pub(crate) nodes: BTreeMap<String, Node>,
}

impl Graph {
    /// Whether `path` is a file the graph knows and that is not gone.
    pub(crate) fn is_live(&self, path: &str) -> bool {
        self.nodes.get(path).is_some_and(|n| !n.gone)
    }
}

/// One analyzed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Node {
    /// The blob id of the content analyzed.
    pub(crate) blob: String,
    /// Root-relative project files it imports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) imports: Vec<String>,
    /// Project files it may import through an import the analyzer left
    /// unresolved (see [`super::unresolved`]): target → the import as
    /// written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) assumed: BTreeMap<String, String>,
    /// The analyzer could not read it: its imports are unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) unreadable: bool,
    /// The file is gone. Kept so that what imported it can still be found
    /// (the importers' own entries keep the edge until they change).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) gone: bool,
}

impl Node {
    /// What is left of a deleted file: the graph knew it.
    pub(crate) fn tombstone(&self) -> Node {
        Node {
            blob: self.blob.clone(),
            imports: Vec::new(),
            assumed: BTreeMap::new(),
            unreadable: false,
            gone: true,
        }
    }
}

/// Identity of the analyzer: its command, the binary it resolves to (path,
/// size, mtime), the content of its config files, and the roots it
/// resolves imports from.
pub(crate) fn key(request: &Request<'_>, roots: &SearchRoots) -> Result<String, String> {
    let ctx = request.tools;
    let spec = request.spec;
    let tool = ctx.resolve_program(&spec.command[0]);
    let stamp = crate::tools::resolve::stamp(&tool);
    let mut identity = format!(
        "qg-graph/v2\0{}\0{stamp:?}\0{}",
        spec.command.join("\0"),
        roots.toml_array()
    );
    for file in &spec.config_files {
        let blob = crate::git::blob_id(&request.ws.root.join(file));
        identity.push_str(&format!("\0{file}={}", blob.as_deref().unwrap_or("-")));
    }
    Ok(crate::git::hash_blob(identity.as_bytes()))
}

/// The cached graph, if there is a readable one.
pub(crate) fn load(ws: &Workspace) -> Option<Graph> {
    let bytes = std::fs::read(ws.root.join(CACHE_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the graph; a cache that cannot be written is rebuilt next time.
pub(crate) fn save(ws: &Workspace, graph: &Graph) {
    if let Ok(bytes) = serde_json::to_vec(graph) {
        let path = ws.root.join(CACHE_FILE);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = crate::atomic_file::write_cache(&path, &bytes);
    }
}
