//! What a stored result is keyed on. Everything that can change a tool's
//! findings in a file goes in; a part qg cannot know makes the file
//! uncacheable (a miss that is not stored), never a guess:
//!
//! - the gate: qg's version, the gate id, the config's digest, the tool's
//!   version line (a tool qg cannot ask for its version is not cached),
//!   its settings (each settings file at the root, by the sections the tool
//!   reads, and the settings modules a plugin runs);
//! - for a whole-program checker (`scope.importers`), the environment it
//!   resolves third-party imports in (the distributions installed);
//! - the file: its path and content, the tool's settings files in the
//!   directories above it (`**/ruff.toml`: the nearest one applies);
//! - for a whole-program checker, every project module the file imports,
//!   transitively, by what an importer can see of it (its interface, see
//!   `graph::interface`; its whole content without `interface_aware_importers`),
//!   as the import graph knows them — a file whose imports the graph does
//!   not know, or knows from older content, is not cached.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{Config, Gate, ToolConfigFile};
use crate::graph::interface::Interfaces;

/// The format of the key's material: a new one misses every older entry.
const FORMAT: &str = "qg-results/v1";

/// What every key of one gate in one run shares, and how its files'
/// dependencies count.
#[derive(Debug, Clone)]
pub(crate) struct GateKey {
    /// The digest of the gate's part.
    identity: String,
    /// Settings files found by pattern (`**/ruff.toml`): their names.
    nested_settings: Vec<String>,
    /// Whether the file's imports count, and how.
    imports: Imports,
}

/// How a file's imports count in its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Imports {
    /// Not at all: the tool checks each file alone.
    Ignored,
    /// By their interfaces.
    Interfaces,
    /// By their whole content.
    Contents,
}

/// Why a gate's results are not cached.
pub(crate) type Uncached = String;

impl GateKey {
    /// The gate's part of its files' keys; `Err` says why it has none.
    pub(crate) fn new(
        root: &Path,
        config: &Config,
        gate: &Gate,
        version: Option<&str>,
        environment: Option<&str>,
    ) -> Result<GateKey, Uncached> {
        let version = version.ok_or("its tool's version is unknown")?;
        let nested_settings = nested_settings(&gate.tool_config)?;
        let imports = match (gate.importers, config.interface_aware_importers) {
            (false, _) => Imports::Ignored,
            (true, true) => Imports::Interfaces,
            (true, false) => Imports::Contents,
        };
        let environment = match imports {
            Imports::Ignored => None,
            _ => Some(environment.ok_or("the environment it checks against is unknown")?),
        };
        let material = serde_json::json!({
            "format": FORMAT,
            "qg": env!("CARGO_PKG_VERSION"),
            "gate": gate.id,
            "working_dir": gate.working_dir.as_ref().map(|d| crate::paths::to_slash(d)),
            "config": config.hash,
            "version": version,
            "settings": crate::tool_config::settings::root_digests(root, gate),
            "environment": environment,
        });
        Ok(GateKey {
            identity: crate::git::hash_blob(material.to_string().as_bytes()),
            nested_settings,
            imports,
        })
    }

    /// The digest of the gate's part: its tool, version, settings and
    /// environment, as every file's key holds it.
    pub(crate) fn identity(&self) -> &str {
        &self.identity
    }

    /// How the gate's files' imports count.
    pub(crate) fn imports(&self) -> Imports {
        self.imports
    }
}

/// The basenames of `tool_config` entries written `**/NAME`; `Err` for a
/// pattern of another shape, whose files qg cannot find from a file alone.
fn nested_settings(entries: &[ToolConfigFile]) -> Result<Vec<String>, Uncached> {
    let patterned = entries
        .iter()
        .filter(|e| e.file.contains(['*', '?', '[', '{']));
    let mut names = Vec::new();
    for entry in patterned {
        match entry.file.strip_prefix("**/") {
            Some(name) if !name.contains(['*', '?', '[', '{', '/']) => names.push(name.to_string()),
            _ => {
                return Err(format!(
                    "its settings pattern `{}` is not `**/NAME`",
                    entry.file
                ))
            }
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Computes the keys of one run's files, reading each content once.
pub(crate) struct Keyer<'a> {
    root: &'a Path,
    /// Root-relative file → its blob id now (`None`: unreadable).
    blobs: BTreeMap<String, Option<String>>,
    /// Directory → the digests of the settings files in it, by gate.
    nested: BTreeMap<(String, String), Vec<(String, String)>>,
    interfaces: Interfaces,
}

impl<'a> Keyer<'a> {
    /// A keyer for the project at `root`.
    pub(crate) fn new(root: &'a Path) -> Keyer<'a> {
        Keyer {
            root,
            blobs: BTreeMap::new(),
            nested: BTreeMap::new(),
            interfaces: Interfaces::load(root),
        }
    }

    /// The key of `gate`'s findings in `file`. `dependencies` is what the
    /// file reaches through its imports with the blobs the import graph
    /// read (the file itself among them; see `graph::dependencies`), for a
    /// gate whose files' imports count. `None`: not cacheable now.
    pub(crate) fn key(
        &mut self,
        gate: &Gate,
        gate_key: &GateKey,
        file: &str,
        dependencies: Option<&[(String, String)]>,
    ) -> Option<String> {
        let blob = self.blob(file)?;
        let mut material = format!("{}\0{file}\0{blob}", gate_key.identity);
        for (name, digest) in self.settings_above(gate, gate_key, file) {
            material.push_str(&format!("\0settings {name}={digest}"));
        }
        if gate_key.imports != Imports::Ignored {
            for (dependency, read) in dependencies? {
                // The graph read another content: what it says the file
                // imports may no longer hold.
                let now = self.blob(dependency)?;
                if now != *read {
                    return None;
                }
                if dependency != file {
                    let seen = self.seen_by_importers(gate_key.imports, dependency, &now);
                    material.push_str(&format!("\0import {dependency}={seen}"));
                }
            }
        }
        Some(crate::git::hash_blob(material.as_bytes()))
    }

    /// Keeps the interfaces it read for the next run's keys (`.st3`).
    pub(crate) fn save_interfaces(&mut self) {
        self.interfaces.save(self.root, &|_| false);
    }

    fn blob(&mut self, file: &str) -> Option<String> {
        let root = self.root;
        self.blobs
            .entry(file.to_string())
            .or_insert_with(|| crate::git::blob_id(&root.join(file)))
            .clone()
    }

    /// What an importer of `file` (content `blob`) can see of it.
    fn seen_by_importers(&mut self, imports: Imports, file: &str, blob: &str) -> String {
        if imports == Imports::Contents {
            return format!("blob:{blob}");
        }
        let path = self.root.join(file);
        match self.interfaces.of(blob, || std::fs::read(&path).ok()) {
            Some(interface) => format!("interface:{}", interface.digest),
            // Unparsable: every change counts.
            None => format!("blob:{blob}"),
        }
    }

    /// The gate's settings files (`**/NAME`) in every directory from the
    /// file's own up to the root, with the digest of what the tool reads
    /// in each.
    fn settings_above(
        &mut self,
        gate: &Gate,
        gate_key: &GateKey,
        file: &str,
    ) -> Vec<(String, String)> {
        if gate_key.nested_settings.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut dir = file;
        loop {
            dir = dir.rfind('/').map_or("", |cut| &dir[..cut]);
            found.extend(self.settings_in(gate, gate_key, dir));
            if dir.is_empty() {
                return found;
            }
        }
    }

    fn settings_in(&mut self, gate: &Gate, gate_key: &GateKey, dir: &str) -> Vec<(String, String)> {
        let memo = (gate.id.clone(), dir.to_string());
        if let Some(known) = self.nested.get(&memo) {
            return known.clone();
        }
        let mut found = Vec::new();
        for name in &gate_key.nested_settings {
            let file = match dir {
                "" => name.clone(),
                dir => format!("{dir}/{name}"),
            };
            let Ok(bytes) = std::fs::read(self.root.join(&file)) else {
                continue;
            };
            let entries: Vec<&ToolConfigFile> = gate
                .tool_config
                .iter()
                .filter(|e| e.file.strip_prefix("**/") == Some(name.as_str()))
                .collect();
            let digest = crate::tool_config::settings::digest(&file, Some(&bytes), &entries);
            found.push((file, digest));
        }
        self.nested.insert(memo, found.clone());
        found
    }
}

/// The digest of the environment a whole-program checker resolves
/// third-party imports in: the Python it was made for and every
/// distribution installed in it, by name and version (the names of its
/// `site-packages` entries: `rich-15.0.0.dist-info`, `foo.pth`). Paths
/// are left out, so two clones' environments of the same lock agree.
pub(crate) fn environment_digest(site_packages: &[std::path::PathBuf]) -> Option<String> {
    if site_packages.is_empty() {
        return None;
    }
    let mut material = String::new();
    for dir in site_packages {
        let python = dir
            .parent()
            .and_then(|lib| lib.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "__pycache__")
            .collect();
        names.sort();
        material.push_str(&format!("{python}\0{}\0", names.join("\0")));
    }
    Some(crate::git::hash_blob(material.as_bytes()))
}
