//! The project a run checks, as every stage sees it — its workspace,
//! config and tools — and each gate's tool's own choice of files: what the
//! gates' planning and the confirmation of warm answers both start from.

use std::collections::BTreeMap;

use crate::config::{self, Config};
use crate::selection::{self, ToolSelection};
use crate::tools::Toolbox;
use crate::workspace::Workspace;

/// The project a run checks, as every stage of it sees the project: its
/// workspace, its config and its tools (found once per run).
#[derive(Clone, Copy)]
pub(super) struct Project<'p> {
    /// The workspace.
    pub(super) workspace: &'p Workspace,
    /// The loaded config.
    pub(super) config: &'p Config,
    /// The run's tools.
    pub(super) tools: &'p Toolbox<'p>,
}

/// Each gate's tool's own choice of files, read from its config; a config
/// that cannot be read is a warning of its gate (the tool's defaults are
/// assumed; the tool itself will say more).
pub(super) fn tool_selections(
    workspace: &Workspace,
    gates: &[&config::Gate],
) -> (BTreeMap<String, ToolSelection>, BTreeMap<String, String>) {
    let mut selections = BTreeMap::new();
    let mut warnings = BTreeMap::new();
    for gate in gates {
        let Some(spec) = &gate.selection else {
            continue;
        };
        let selection = match selection::read(&workspace.root, gate, spec) {
            Ok(selection) => selection,
            Err((selection, why)) => {
                warnings.insert(gate.id.clone(), why);
                selection
            }
        };
        selections.insert(gate.id.clone(), selection);
    }
    (selections, warnings)
}
