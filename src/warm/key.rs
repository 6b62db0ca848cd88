//! What a daemon was started for: the project, the gate, the tool binaries
//! it runs, the config, the virtualenv and the tool's own config files. A
//! run asks a daemon only when the key it computes now equals the daemon's;
//! a daemon whose key no longer holds starts its tool again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{Config, Gate};
use crate::tools::resolve::{self, ToolStamp};
use crate::tools::Toolbox;

/// The identity of a daemon. Every part can change what the tool says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DaemonKey {
    /// The qg that runs the daemon.
    pub(crate) qg: String,
    /// The project root.
    pub(crate) root: String,
    /// The gate id.
    pub(crate) gate: String,
    /// The long-lived program (`daemon.command[0]`) as resolved.
    pub(crate) program: ToolStamp,
    /// The gate's own program (`command[0]`): its version is the checker's.
    pub(crate) checker: ToolStamp,
    /// The blob id of the config text.
    pub(crate) config: String,
    /// The virtualenv the tools run in, and the modification times of its
    /// site-packages directories (a package installed or removed).
    pub(crate) virtualenv: Option<String>,
    /// The digests of the tool's settings in each of its settings files
    /// (`tool_config`, the root's: a daemon runs from there): what it
    /// checks and how — not the rest of a shared `pyproject.toml`.
    pub(crate) tool_config: Vec<(String, Option<String>)>,
}

impl DaemonKey {
    /// The key of `gate`'s daemon in this project, as things are now.
    pub(crate) fn now(root: &Path, config: &Config, gate: &Gate, tools: &Toolbox<'_>) -> DaemonKey {
        let program = gate
            .daemon
            .as_ref()
            .map_or(gate.command[0].as_str(), |d| d.command[0].as_str());
        let tool_config = crate::tool_config::settings::root_digests(root, gate);
        DaemonKey {
            qg: env!("CARGO_PKG_VERSION").to_string(),
            root: root.display().to_string(),
            gate: gate.id.clone(),
            program: resolve::stamp(&tools.resolve_for(gate, program)),
            checker: resolve::stamp(&tools.resolve(gate)),
            config: config.hash.clone(),
            virtualenv: resolve::project_venv_bin(
                root,
                tools.virtual_env.clone(),
                tools.path_var.as_ref(),
            )
            .and_then(|bin| bin.parent().map(Path::to_path_buf))
            .map(|venv| describe_virtualenv(&venv)),
            tool_config,
        }
    }

    /// A short stable digest, as runs and daemons compare keys.
    pub(crate) fn digest(&self) -> String {
        let text = serde_json::to_vec(self).unwrap_or_default();
        crate::git::hash_blob(&text)
    }

    /// What differs from `other`, in a few words (for `qg daemon status`
    /// and the daemon's log).
    pub(crate) fn differences(&self, other: &DaemonKey) -> Vec<&'static str> {
        let mut parts = Vec::new();
        let mut check = |same: bool, name| {
            if !same {
                parts.push(name);
            }
        };
        check(self.qg == other.qg, "qg version");
        check(self.root == other.root, "project root");
        check(self.gate == other.gate, "gate");
        check(self.program == other.program, "daemon program");
        check(self.checker == other.checker, "tool version");
        check(self.config == other.config, "qg config");
        check(self.virtualenv == other.virtualenv, "virtualenv");
        check(self.tool_config == other.tool_config, "tool config");
        parts
    }
}

/// The virtualenv's path and when its installed packages last changed.
fn describe_virtualenv(venv: &Path) -> String {
    let mut text = venv.display().to_string();
    for dir in site_packages(venv) {
        let mtime = std::fs::metadata(&dir)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        text.push_str(&format!(";{}@{mtime}", dir.display()));
    }
    text
}

/// `lib/python*/site-packages` (and `lib64`) of a virtualenv.
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(venv.join(lib)) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let packages = entry.path().join("site-packages");
            if packages.is_dir() {
                found.push(packages);
            }
        }
    }
    found.sort();
    found
}
