//! Workspace trust: what a repository makes qg run, and whether the user
//! has said it may. A repository's qg config names programs; its own files
//! may be programs qg starts (a committed `.venv/bin/ruff`, a
//! `scripts/lint.sh` a gate names); a tool's settings may name the
//! project's own code for the tool to import (mypy's `plugins`). On the
//! command line running them is the user's explicit act, like `make`. The
//! automatic contexts — `qg lsp` started by an editor when a file is
//! opened, `qg mcp` by an agent, `qg watch`, and the daemons they start —
//! run nothing of the repository's until the user trusts it, as direnv,
//! mise and VS Code's Workspace Trust do.
//!
//! Trust is given to what would run, not to a folder: the
//! [`Fingerprint`] of the effective config, of every executable inside the
//! repository qg would start (path and content), and of the tool settings
//! that name project code. A `git pull` that changes any of them takes the
//! trust away until it is given again. The record lives in the user's own
//! data directory ([`store`]), never in the repository.

pub(crate) mod store;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::tools::Toolbox;
use crate::workspace::Workspace;

/// What decides what qg runs in a repository, as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Fingerprint {
    /// The config's origin (`.st3/quality.yaml`, `pyproject.toml
    /// [tool.qg]`, `<embedded default>`).
    pub(crate) config: String,
    /// Whether the config is the repository's own (not the built-in one).
    pub(crate) own_config: bool,
    /// Executables inside the repository qg would start (root-relative,
    /// with their content's blob id): those git does not ignore.
    pub(crate) executables: Vec<(String, String)>,
    /// Tool settings naming project code the tool imports (`pyproject.toml
    /// [tool.mypy] plugins = pkg.plugin`).
    pub(crate) code: Vec<String>,
    /// The digest of all of it, with the config's own hash.
    pub(crate) digest: String,
}

impl Fingerprint {
    /// The fingerprint of the repository at `ws` under `config`.
    pub(crate) fn of(ws: &Workspace, config: &Config, tools: &Toolbox<'_>) -> Fingerprint {
        let own_config = config.origin != crate::config::EMBEDDED_ORIGIN;
        let executables = in_repository_executables(ws, config, tools);
        let code = project_code_settings(&ws.root, config);
        let text = serde_json::json!({
            "config": config.hash,
            "origin": config.origin,
            "executables": executables,
            "code": code,
        });
        Fingerprint {
            config: config.origin.clone(),
            own_config,
            executables,
            code,
            digest: crate::git::hash_blob(text.to_string().as_bytes()),
        }
    }

    /// Whether anything of the repository's would run: its own config, an
    /// executable of its own, or project code a tool's settings name. The
    /// built-in config with tools from outside the tree needs no trust.
    pub(crate) fn needs_trust(&self) -> bool {
        self.own_config || !self.executables.is_empty() || !self.code.is_empty()
    }

    /// What would run, in words: `.st3/quality.yaml, .venv/bin/ruff`.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.own_config {
            parts.push(format!("the gate commands of {}", self.config));
        }
        match self.executables.len() {
            0 => {}
            1 => parts.push(format!("the executable {}", self.executables[0].0)),
            n => parts.push(format!(
                "{n} executables in the repository ({})",
                self.executables
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
        parts.extend(self.code.iter().cloned());
        parts.join("; ")
    }
}

/// Whether the automatic contexts may run the repository's commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Nothing of the repository's would run.
    NotNeeded,
    /// Trusted as it is now.
    Trusted,
    /// Never trusted, or trusted as it was before what changed.
    Untrusted {
        /// Why, in words (names `qg trust`).
        why: String,
    },
}

/// The standing of the repository at `ws` under `config`; a trust store
/// that cannot be read trusts nothing, and says which file to mend.
pub(crate) fn standing(ws: &Workspace, config: &Config, tools: &Toolbox<'_>) -> Standing {
    let fingerprint = Fingerprint::of(ws, config, tools);
    if !fingerprint.needs_trust() {
        return Standing::NotNeeded;
    }
    let root = ws.root.display().to_string();
    let record = match store::read() {
        Ok(records) => records.trusted.get(&root).cloned(),
        Err(e) => {
            return Standing::Untrusted {
                why: format!("{e}; nothing is trusted until it is mended"),
            }
        }
    };
    match record {
        Some(record) if record.digest == fingerprint.digest => Standing::Trusted,
        Some(_) => Standing::Untrusted {
            why: format!(
                "{} changed since it was trusted ({}): read it, then run `qg trust` in {root}",
                root,
                fingerprint.describe()
            ),
        },
        None => Standing::Untrusted {
            why: format!(
                "{root} is not trusted: qg would run {}; read them, then run `qg trust` there",
                fingerprint.describe()
            ),
        },
    }
}

/// What `qg trust` did.
#[derive(Debug, Clone)]
pub(crate) enum Given {
    /// Nothing of the repository's would run: nothing to trust.
    NotNeeded,
    /// Trusted now: what would run.
    Trusted(Fingerprint),
}

/// Trusts the repository at `ws` as it is now (`qg trust`, an editor's
/// Trust action).
pub(crate) fn give(ws: &Workspace, config: &Config, tools: &Toolbox<'_>) -> Result<Given, String> {
    let fingerprint = Fingerprint::of(ws, config, tools);
    if !fingerprint.needs_trust() {
        return Ok(Given::NotNeeded);
    }
    let record = store::Record {
        digest: fingerprint.digest.clone(),
        at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        what: fingerprint.describe(),
    };
    let root = ws.root.display().to_string();
    store::update(|records| records.trusted.insert(root, record))?;
    Ok(Given::Trusted(fingerprint))
}

/// Takes back the trust given to the repository at `root`; whether there
/// was any.
pub(crate) fn revoke(root: &Path) -> Result<bool, String> {
    let root = root.display().to_string();
    store::update(|records| records.trusted.remove(&root).is_some())
}

/// The standing of the project around `cwd` (its config found the usual
/// way, or `config`), as an error naming `qg trust` when it is untrusted.
pub(crate) fn require(cwd: &Path, config: Option<&Path>) -> Result<(), crate::error::QgError> {
    let workspace = Workspace::discover(cwd)?;
    let config = crate::members::load_config(&workspace, config)?;
    let tools = Toolbox::from_env(&workspace.root);
    match standing(&workspace, &config, &tools) {
        Standing::Untrusted { why } => Err(crate::error::QgError::Untrusted(why)),
        _ => Ok(()),
    }
}

/// Every program the config may start (every gate's command, fixer,
/// daemon and its client, the import analyzer) that resolves inside the
/// repository and that git does not ignore, with its content's blob id.
fn in_repository_executables(
    ws: &Workspace,
    config: &Config,
    tools: &Toolbox<'_>,
) -> Vec<(String, String)> {
    // Each program with the gate it runs for: a workspace member's run
    // resolves in the member's own virtualenv first.
    let mut programs: Vec<(Option<&crate::config::Gate>, &str)> = Vec::new();
    for gate in config.gates.values() {
        let mut named: Vec<&str> = vec![&gate.command[0]];
        if let Some(fix) = &gate.fix {
            named.extend(fix.command.first().map(String::as_str));
        }
        if let Some(daemon) = &gate.daemon {
            named.push(&daemon.command[0]);
            if let crate::config::Protocol::Command(spec) = &daemon.protocol {
                named.extend(spec.check.first().map(String::as_str));
                named.extend(spec.stop.iter().flat_map(|s| s.first()).map(String::as_str));
            }
        }
        programs.extend(named.into_iter().map(|program| (Some(gate), program)));
    }
    if let Some(graph) = &config.import_graph {
        programs.push((None, &graph.command[0]));
    }
    let root = dunce::canonicalize(&ws.root).unwrap_or_else(|_| ws.root.clone());
    let mut found: Vec<(String, String)> = programs
        .into_iter()
        .filter_map(|(gate, program)| match gate {
            Some(gate) => tools.resolve_for(gate, program).ok(),
            None => tools.resolve_program(program).ok(),
        })
        .filter_map(|tool| inside(&root, &tool.path))
        .filter(|relative| !is_ignored(ws, relative))
        .filter_map(|relative| {
            let blob = crate::git::blob_id(&crate::file_name::join(&root, &relative))?;
            Some((relative, blob))
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// `path` relative to `root` (`/`-separated) when it lies inside it.
fn inside(root: &Path, path: &Path) -> Option<String> {
    let real: PathBuf = dunce::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let relative = real.strip_prefix(root).ok()?;
    Some(crate::file_name::from_os_str(relative.as_os_str()).replace('\\', "/"))
}

/// Whether git ignores `relative` (and does not track it): the user's own
/// local files (a `.venv` made by `uv sync`), not the repository's word.
fn is_ignored(ws: &Workspace, relative: &str) -> bool {
    ws.repo
        .as_ref()
        .is_some_and(|repo| repo.is_ignored(relative) && !repo.is_tracked(relative))
}

/// The values of the tool settings that name code the tool imports
/// (`executes` in each gate's YAML: mypy's `plugins`), where a project
/// sets one: `pyproject.toml [tool.mypy] plugins = pydantic.mypy`.
fn project_code_settings(root: &Path, config: &Config) -> Vec<String> {
    let mut found = Vec::new();
    for gate in config.gates.values().filter(|g| !g.executes.is_empty()) {
        let Some(selection) = &gate.selection else {
            continue;
        };
        let Ok(Some(section)) =
            crate::tool_config::first_section(&gate.config_dir(root), &selection.config)
        else {
            continue;
        };
        for key in &gate.executes {
            let values: Vec<String> = section
                .section
                .strings_at(key)
                .into_iter()
                .flat_map(|s| s.entries(|t| t.split(',').map(|p| p.trim().to_string()).collect()))
                .filter(|v| !v.is_empty())
                .collect();
            if !values.is_empty() {
                found.push(format!("{} {key} = {}", section.label, values.join(", ")));
            }
        }
    }
    // A module a plugin's setting names (django-stubs' settings module)
    // is imported and run as it is now: its content, not only its name.
    for gate in config.gates.values() {
        for file in gate.tool_config.iter().filter(|f| f.runs) {
            let blob = crate::git::blob_id(&crate::file_name::join(root, &file.file));
            if let Some(blob) = blob {
                let short = &blob[..blob.len().min(12)];
                found.push(format!(
                    "{}, which {}'s plugin imports ({short})",
                    file.file, gate.name
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}
