//! The whole program a daemon holds: the project's files of the gate's
//! types (what a language server is told about), the files the tool's own
//! run checks (its first full pass), and the arguments of that run (what a
//! command daemon checks each time).

use crate::config::{Config, Gate};
use crate::selection::{self, ToolSelection};
use crate::workspace::Workspace;

/// A gate's whole program, as things are now.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    /// Every project file of the gate's types (root-relative, sorted).
    pub(crate) listing: Vec<String>,
    /// The files the tool's own run checks.
    pub(crate) checked: Vec<String>,
    /// The arguments of the tool's own run: its `project_args`, or the
    /// entries its config names files with, or the checked files.
    pub(crate) own_args: Vec<String>,
}

/// Reads the project's files and the gate's selection.
pub(crate) fn whole_program(
    ws: &Workspace,
    config: &Config,
    gate: &Gate,
) -> Result<Program, String> {
    let files = crate::scope::project_files(ws, config).map_err(|e| e.to_string())?;
    let listing: Vec<String> = files
        .into_iter()
        .filter(|f| gate.handles_file_type(f))
        .collect();
    let selection = gate
        .selection
        .as_ref()
        .map(|spec| selection::read(&ws.root, gate, spec).unwrap_or_else(|(defaults, _)| defaults));
    let checked: Vec<String> = listing
        .iter()
        .filter(|f| gate.scope.matches(f))
        .filter(|f| selection.as_ref().is_none_or(|s| s.checks(f, &ws.root)))
        .cloned()
        .collect();
    // The tool's own run would reach the members that run on their own:
    // a gate around members checks its own files by name, named from the
    // directory it runs in.
    // So does a config naming modules by dotted name (mypy's `packages`),
    // which a client given files does not read: their files by name.
    let own_args = match (&gate.selection, &selection) {
        (Some(spec), Some(selection))
            if gate.left_to_members.is_empty() && !selection.names_modules() =>
        {
            own_args(selection, &spec.project_args, &listing)
        }
        _ => checked.iter().map(|f| named_from(gate, f)).collect(),
    };
    Ok(Program {
        listing,
        checked,
        own_args,
    })
}

/// The root-relative `file` as the gate's tool, run in its working
/// directory, is given it.
fn named_from(gate: &Gate, file: &str) -> String {
    let Some(dir) = &gate.working_dir else {
        return file.to_string();
    };
    let dir = crate::paths::to_slash(dir);
    file.strip_prefix(&format!("{dir}/"))
        .unwrap_or(file)
        .to_string()
}

/// The tool's own run, as arguments a daemon's client accepts: its
/// `project_args`, or — when its config names the files, which a client
/// that insists on files does not read — those entries, a glob among them
/// replaced by the project files it matches.
fn own_args(selection: &ToolSelection, project_args: &[String], listing: &[String]) -> Vec<String> {
    if !selection.names_files {
        return project_args.to_vec();
    }
    let mut args = Vec::new();
    for entry in &selection.named {
        let entry = entry.trim();
        if !entry.contains(['*', '?', '[']) {
            args.push(entry.to_string());
            continue;
        }
        let Ok(glob) = globset::GlobBuilder::new(entry.trim_start_matches("./"))
            .literal_separator(true)
            .build()
        else {
            continue;
        };
        let matcher = glob.compile_matcher();
        args.extend(listing.iter().filter(|f| matcher.is_match(f)).cloned());
    }
    args
}
