//! What an environment's editable installs put on `sys.path`: a tool that
//! silences installed packages reports nothing under those roots, so
//! neither its warm answers nor its cached results are looked for there.

use crate::tools::Toolbox;
use crate::workspace::Workspace;

/// The source roots the environment's editable installs name.
pub(super) fn installed_roots(workspace: &Workspace, tools: &Toolbox<'_>) -> Vec<String> {
    let environment = tools.environment();
    environment
        .map(|e| crate::graph::roots::installed_roots(&workspace.root, &e))
        .unwrap_or_default()
}

/// Whether `file` lies under one of `dirs` (root-relative; `.`: all).
pub(super) fn under_any(file: &str, dirs: &[String]) -> bool {
    dirs.iter()
        .any(|dir| dir == "." || file.starts_with(&format!("{dir}/")))
}
