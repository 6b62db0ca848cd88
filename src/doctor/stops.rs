//! What will stop a tool before it checks anything (`success.stopped`):
//! two files it checks that are one module, a package directory that is no
//! valid package name. Found from the project's files before a run meets
//! them, with what to put in the tool's config.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use super::{Check, Health};
use crate::config::{Gate, PatternSyntax};
use crate::graph::roots;
use crate::selection::{self, ToolSelection};

/// At most this many problems are named per check (the rest are counted).
const SHOWN: usize = 3;

/// The checks for `gate` over the project's `files`: none when nothing
/// found would stop its tool.
pub(crate) fn checks(root: &Path, gate: &Gate, files: &[String]) -> Vec<Check> {
    let Some(stopped) = &gate.stopped else {
        return Vec::new();
    };
    let selection = gate
        .selection
        .as_ref()
        .map(|spec| selection::read(root, gate, spec).unwrap_or_else(|(partial, _)| partial));
    let checked: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| gate.handles_file_type(f) && gate.owns(f))
        .filter(|f| selection.as_ref().is_none_or(|s| s.checks(f, root)))
        .collect();
    let packages = roots::package_dirs(files.iter().map(String::as_str));
    let mut found = Vec::new();
    if stopped.on_invalid_package_names {
        found.extend(invalid_packages(
            gate,
            &checked,
            &packages,
            selection.as_ref(),
        ));
    }
    if stopped.on_duplicate_modules && searches_package_bases(root, gate) {
        found.extend(duplicate_modules(
            gate,
            &checked,
            &packages,
            selection.as_ref(),
        ));
    }
    found
}

/// Whether the tool finds module names from package bases: with explicit
/// bases, names come from its search paths, which this check does not model
/// (it says nothing rather than something wrong).
fn searches_package_bases(root: &Path, gate: &Gate) -> bool {
    gate.search_paths
        .as_ref()
        .is_some_and(|spec| roots::searches_package_bases(&gate.config_dir(root), spec))
}

/// Directories holding an `__init__.py` above a checked file whose names
/// are no identifiers (`my-pkg`; a `-stubs` suffix is allowed).
fn invalid_packages(
    gate: &Gate,
    checked: &[&str],
    packages: &HashSet<&str>,
    selection: Option<&ToolSelection>,
) -> Option<Check> {
    let mut invalid = BTreeSet::new();
    for file in checked {
        let mut here = file.rsplit_once('/').map(|(dir, _)| dir);
        while let Some(dir) = here {
            let name = dir.rsplit('/').next().unwrap_or(dir);
            let name = name.strip_suffix("-stubs").unwrap_or(name);
            if packages.contains(dir) && !roots::is_identifier(name) {
                invalid.insert(dir.to_string());
            }
            here = dir.rsplit_once('/').map(|(parent, _)| parent);
        }
    }
    if invalid.is_empty() {
        return None;
    }
    let listed = shown(invalid.iter().cloned().collect());
    let dirs = outermost(invalid.iter().map(String::as_str).collect());
    Some(Check::new(
        &format!("{} stops", gate.id),
        Health::Error,
        format!(
            "{listed} holds an __init__.py but is no valid Python package name: {} stops before checking anything (`qg run` errors)",
            gate.name
        ),
        Some(leave_out(gate, &dirs, selection)),
    ))
}

/// Checked files that are one module (`a/x.py` and `b/x.py`, neither in a
/// package): the tool cannot tell which is which and stops.
fn duplicate_modules(
    gate: &Gate,
    checked: &[&str],
    packages: &HashSet<&str>,
    selection: Option<&ToolSelection>,
) -> Option<Check> {
    let mut modules: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for file in checked {
        // A stub and its module are one file to the tool.
        let stem = file
            .strip_suffix('i')
            .filter(|_| file.ends_with(".pyi"))
            .unwrap_or(file);
        modules
            .entry(roots::module_name(file, packages))
            .or_default()
            .insert(stem);
    }
    let twice: Vec<(String, Vec<&str>)> = modules
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(module, files)| (module, files.into_iter().collect()))
        .collect();
    if twice.is_empty() {
        return None;
    }
    let each: Vec<String> = twice
        .iter()
        .map(|(module, files)| format!("`{module}` is {}", files.join(" and ")))
        .collect();
    // Every module found twice at once: one round of the fix, not one per
    // duplicate. Each keeps its first file; the others' directories go.
    let dirs: Vec<&str> = outermost(
        twice
            .iter()
            .flat_map(|(_, files)| files[1..].iter())
            .map(|f| f.rsplit_once('/').map_or(".", |(d, _)| d))
            .collect(),
    );
    Some(Check::new(
        &format!("{} stops", gate.id),
        Health::Error,
        format!(
            "{}: {} stops on a module found twice, before checking anything (`qg run` errors)",
            shown(each),
            gate.name
        ),
        Some(format!(
            "{}, or make the directories packages (an __init__.py in each)",
            leave_out(gate, &dirs, selection)
        )),
    ))
}

/// `dirs` without those under another of them, sorted.
fn outermost(mut dirs: Vec<&str>) -> Vec<&str> {
    dirs.sort_unstable();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| {
        !all.iter()
            .any(|o| o != d && (*o == "." || d.starts_with(&format!("{o}/"))))
    });
    dirs
}

/// The first few of `items`, and how many more.
fn shown(items: Vec<String>) -> String {
    let more = items.len().saturating_sub(SHOWN);
    let mut text = items.into_iter().take(SHOWN).collect::<Vec<_>>().join("; ");
    if more > 0 {
        text.push_str(&format!("; and {more} more"));
    }
    text
}

/// How to leave `dirs` out of the tool's files: its config's exclude key
/// (in the config it has, else the first place it reads), each entry
/// written the way the key's syntax reads it.
fn leave_out(gate: &Gate, dirs: &[&str], selection: Option<&ToolSelection>) -> String {
    let spec = gate.selection.as_ref();
    let exclude = spec.and_then(|s| s.exclude.as_ref());
    let (Some(spec), Some(exclude)) = (spec, exclude) else {
        let listed: Vec<String> = dirs.iter().map(|d| format!("{d}/")).collect();
        return format!("leave {} out of the tool's files", listed.join(", "));
    };
    let label = selection
        .and_then(|s| s.config_label.as_deref().map(str::to_string))
        .or_else(|| {
            spec.config
                .iter()
                .rev()
                .find(|c| c.file == "pyproject.toml")
                .map(|c| format!("{} [{}]", c.file, c.section))
        })
        .unwrap_or_else(|| "the tool's config".to_string());
    let (key, syntax) = (&exclude.key, exclude.syntax);
    // INI values are written bare; in TOML a backslash stays as written
    // only in a literal string.
    let file = label.split(' ').next().unwrap_or_default();
    let toml = file.ends_with(".toml") || file.ends_with(".json");
    let entries: Vec<String> = dirs
        .iter()
        .map(|dir| {
            let entry = match syntax {
                PatternSyntax::Regex => format!("^{}/", escape_regex(dir)),
                _ => format!("{dir}/"),
            };
            match (toml, entry.contains('\\')) {
                (false, _) => entry,
                (true, true) => format!("'{entry}'"),
                (true, false) => format!("\"{entry}\""),
            }
        })
        .collect();
    let them = match entries.len() {
        1 => "it",
        _ => "them",
    };
    format!(
        "leave {them} out: add {} to `{key}` in {label}",
        entries.join(", ")
    )
}

/// `text` as a regex matching itself: only what a directory name can hold
/// that a regex reads otherwise is escaped (`-` is not: it reads as itself).
fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if ".+*?()|[]{}^$\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
