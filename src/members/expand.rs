//! A gate of its own for every member holding the config of a tool run per
//! member; the enclosing project's gate leaves the member's files out.

use std::path::{Path, PathBuf};

use super::Member;
use crate::config::{Config, Gate, GateMember, ToolConfigFile};
use crate::error::QgError;
use crate::globs::{GlobError, GlobFilter};

/// Adds `mypy@packages/a` beside `mypy` for every member holding mypy's own
/// config, active where `mypy` is, right after it; the outer gates' scopes
/// leave each such member's directory to its own run.
pub(super) fn gates_per_member(
    config: &mut Config,
    root: &Path,
    members: &[Member],
) -> Result<(), QgError> {
    let split: Vec<String> = config
        .gates
        .values()
        .filter(|g| g.runs_per_member && g.selection.is_some())
        .map(|g| g.id.clone())
        .collect();
    for id in split {
        let gate = config.gates[&id].clone();
        let checked_by_project = project_checks(root, &gate);
        let owners: Vec<&str> = members
            .iter()
            .filter(|m| m.declared || checked_by_project(&m.dir))
            .map(|m| m.dir.as_str())
            .filter(|dir| holds_config(root, dir, &gate))
            .collect();
        if owners.is_empty() {
            continue;
        }
        let own_runs = owners
            .iter()
            .map(|dir| member_gate(&gate, dir, &inside(&owners, Some(dir))))
            .collect::<Result<Vec<Gate>, QgError>>()?;
        let outer = config.gates.get_mut(&id).expect("listed above");
        let left = inside(&owners, None);
        outer.scope = outer
            .scope
            .for_member(None, &left)
            .map_err(|e| glob_error(&id, e))?;
        outer.left_to_members = left.iter().map(|dir| dir.to_string()).collect();
        if let Some(at) = config.active_gates.iter().position(|a| *a == id) {
            let ids = own_runs.iter().map(|g| g.id.clone());
            config.active_gates.splice(at + 1..at + 1, ids);
        }
        for own in own_runs {
            config.gates.insert(own.id.clone(), own);
        }
    }
    Ok(())
}

/// Whether the project's own run of the tool (at the root) checks files
/// in a directory: one it leaves out (mypy's `exclude = "^tests/fixtures/"`,
/// pyright's `include = ["src"]`) holding a config of its own is a test
/// fixture, not a member — unless uv, Hatch or qg's `members` name it.
fn project_checks(root: &Path, gate: &Gate) -> impl Fn(&str) -> bool {
    let selection = gate
        .selection
        .as_ref()
        .map(|spec| crate::selection::read(root, gate, spec).unwrap_or_else(|(d, _)| d));
    move |dir: &str| {
        selection
            .as_ref()
            .is_none_or(|s| s.selects(&format!("{dir}/__init__.py")))
    }
}

/// Whether the tool, run in `dir`, finds its own config there (one it
/// cannot read counts: its own run there fails on it, and so must qg's).
fn holds_config(root: &Path, dir: &str, gate: &Gate) -> bool {
    let Some(spec) = &gate.selection else {
        return false;
    };
    let here = root.join(crate::file_name::to_path(dir));
    !matches!(
        crate::tool_config::first_section(&here, &spec.config),
        Ok(None)
    )
}

/// The owners directly or deeply inside `dir` (`None`: the root), each
/// left out of `dir`'s run; nested ones are inside their parent anyway.
fn inside<'o>(owners: &[&'o str], dir: Option<&str>) -> Vec<&'o str> {
    owners
        .iter()
        .copied()
        .filter(|o| dir.is_none_or(|d| o.strip_prefix(d).is_some_and(|r| r.starts_with('/'))))
        .collect()
}

/// The member's own run of `gate`, in `dir`.
fn member_gate(gate: &Gate, dir: &str, inner: &[&str]) -> Result<Gate, QgError> {
    let id = format!("{}@{dir}", gate.id);
    let scope = gate
        .scope
        .for_member(Some(dir), inner)
        .map_err(|e| glob_error(&id, e))?;
    Ok(Gate {
        id,
        name: format!("{} ({dir})", gate.name),
        working_dir: Some(PathBuf::from(crate::file_name::to_path(dir).as_ref())),
        runs_per_member: false,
        member: Some(GateMember {
            dir: dir.to_string(),
            of: gate.id.clone(),
        }),
        scope,
        left_to_members: inner.iter().map(|d| d.to_string()).collect(),
        tool_config: gate
            .tool_config
            .iter()
            .map(|file| in_member(file, dir).map_err(|e| glob_error(&gate.id, e)))
            .collect::<Result<_, _>>()?,
        ..gate.clone()
    })
}

/// A `tool_config` entry as the member's run reads it: a file named from
/// the root (`pyproject.toml`) is the member's (`packages/a/pyproject.toml`),
/// so that editing the member's `[tool.mypy]` checks its whole project; one
/// found anywhere (`**/ruff.toml`) stays.
fn in_member(file: &ToolConfigFile, dir: &str) -> Result<ToolConfigFile, GlobError> {
    if file.file.starts_with("**/") {
        return Ok(file.clone());
    }
    let moved = format!("{}/{}", globset::escape(dir), file.file);
    Ok(ToolConfigFile {
        matcher: GlobFilter::new(std::slice::from_ref(&moved), &[])?,
        file: moved,
        sections: file.sections.clone(),
        runs: file.runs,
    })
}

fn glob_error(id: &str, e: GlobError) -> QgError {
    QgError::Usage(format!(
        "gate `{id}`: its globs with a workspace member's directory do not compile: {}",
        e.message
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_leaves_out_only_the_members_inside_it() {
        let owners = ["a", "a/b", "ab", "c"];
        assert_eq!(inside(&owners, Some("a")), ["a/b"]);
        assert_eq!(inside(&owners, Some("c")), Vec::<&str>::new());
        assert_eq!(inside(&owners, None), owners);
    }
}
