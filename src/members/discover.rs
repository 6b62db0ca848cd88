//! Finding the members: the config's `members` list when it has one, else
//! what the workspace declares (uv's `[tool.uv.workspace]`, Hatch's
//! `workspace.members`) and every directory holding a config of a tool run
//! per member.

use std::collections::BTreeMap;
use std::path::Path;

use globset::{Glob, GlobMatcher};

use crate::config::Config;
use crate::error::QgError;
use crate::workspace::Workspace;

/// One member project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// Root-relative directory, `/`-separated, never the root itself.
    pub(crate) dir: String,
    /// How it was found (`[tool.uv.workspace] members`), for `qg doctor`.
    pub(crate) found_by: String,
    /// Named as a member (qg's `members`, uv, Hatch), not only found
    /// holding a tool's config (which a test fixture does too).
    pub(crate) declared: bool,
}

/// The members of the workspace, sorted by directory.
pub(crate) fn discover(ws: &Workspace, config: &Config) -> Result<Vec<Member>, QgError> {
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let mut undeclared: BTreeMap<String, String> = BTreeMap::new();
    match &config.members {
        Some(named) => {
            let by = format!("`members` in {}", config.origin);
            for pattern in named {
                let dirs = crate::globs::matching_dirs(&ws.root, pattern);
                if dirs.is_empty() {
                    return Err(QgError::Usage(format!(
                        "{by}: `{pattern}` names no directory under {}; \
                         correct it or leave it out",
                        ws.root.display()
                    )));
                }
                for dir in dirs {
                    found.entry(dir).or_insert_with(|| by.clone());
                }
            }
        }
        None => {
            declared(&ws.root, &mut found);
            holding_tool_configs(ws, config, &mut undeclared)?;
        }
    }
    let declared = found.into_iter().map(|(dir, by)| (dir, by, true));
    let mut members: Vec<Member> = declared
        .chain(undeclared.into_iter().map(|(dir, by)| (dir, by, false)))
        // A member under a directory the project leaves out (`.venv`,
        // `build/`) is no member: its project file is what the globs judge.
        .filter(|(dir, _, _)| {
            !dir.is_empty()
                && !config
                    .project_scope
                    .is_excluded(&format!("{dir}/pyproject.toml"))
        })
        .map(|(dir, found_by, declared)| Member {
            dir,
            found_by,
            declared,
        })
        .collect();
    // Declared first: a directory both declared and holding a config is
    // the declared member.
    members.sort_by(|a, b| a.dir.cmp(&b.dir).then(b.declared.cmp(&a.declared)));
    members.dedup_by(|later, kept| later.dir == kept.dir);
    Ok(members)
}

/// The members the root's `pyproject.toml` (uv, Hatch) and `hatch.toml`
/// declare, each a directory with a `pyproject.toml` as both tools require.
fn declared(root: &Path, found: &mut BTreeMap<String, String>) {
    let read = |name: &str| -> Option<toml::Table> {
        let text = std::fs::read_to_string(root.join(name)).ok()?;
        text.parse::<toml::Table>().ok()
    };
    let mut declarations: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    if let Some(pyproject) = read("pyproject.toml") {
        if let Some(uv) = table_at(&pyproject, &["tool", "uv", "workspace"]) {
            let by = "pyproject.toml [tool.uv.workspace] members".to_string();
            declarations.push((by, strings(uv, "members"), strings(uv, "exclude")));
        }
        if let Some(envs) = table_at(&pyproject, &["tool", "hatch", "envs"]) {
            hatch_envs(envs, "pyproject.toml [tool.hatch.envs", &mut declarations);
        }
    }
    if let Some(hatch) = read("hatch.toml") {
        if let Some(envs) = table_at(&hatch, &["envs"]) {
            hatch_envs(envs, "hatch.toml [envs", &mut declarations);
        }
    }
    for (by, members, exclude) in declarations {
        let excluded: Vec<GlobMatcher> = exclude.iter().filter_map(|p| matcher(p)).collect();
        for pattern in members {
            for dir in crate::globs::matching_dirs(root, &pattern) {
                let is_project = root.join(&dir).join("pyproject.toml").is_file();
                if is_project && !excluded.iter().any(|m| m.is_match(&dir)) {
                    found.entry(dir).or_insert_with(|| by.clone());
                }
            }
        }
    }
}

/// Hatch's per-environment `workspace.members` (strings or `{path = ...}`)
/// and `workspace.exclude`.
fn hatch_envs(
    envs: &toml::Table,
    label: &str,
    declarations: &mut Vec<(String, Vec<String>, Vec<String>)>,
) {
    for (name, env) in envs {
        let Some(workspace) = env.as_table().and_then(|e| table_at(e, &["workspace"])) else {
            continue;
        };
        let members = workspace
            .get("members")
            .and_then(|m| m.as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| match m {
                toml::Value::String(path) => Some(path.clone()),
                toml::Value::Table(t) => t.get("path")?.as_str().map(str::to_string),
                _ => None,
            })
            .collect();
        let by = format!("{label}.{name}] workspace.members");
        declarations.push((by, members, strings(workspace, "exclude")));
    }
}

/// Every directory holding (in git's files, untracked ones included;
/// outside git, present) a file a gate run per member reads its config
/// from.
fn holding_tool_configs(
    ws: &Workspace,
    config: &Config,
    found: &mut BTreeMap<String, String>,
) -> Result<(), QgError> {
    let mut names: Vec<&str> = config
        .gates
        .values()
        .filter(|g| g.runs_per_member)
        .filter_map(|g| g.selection.as_ref())
        .flat_map(|spec| spec.config.iter())
        .map(|source| source.file.rsplit('/').next().unwrap_or(&source.file))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return Ok(());
    }
    let files = match &ws.repo {
        Some(repo) => repo.named(&names),
        None => crate::scope::candidate_files(ws)?
            .into_iter()
            .filter(|f| names.contains(&f.rsplit('/').next().unwrap_or(f)))
            .collect(),
    };
    for file in files {
        let Some((dir, name)) = file.rsplit_once('/') else {
            continue;
        };
        if config.project_scope.is_excluded(&file) {
            continue;
        }
        found
            .entry(dir.to_string())
            .or_insert_with(|| format!("its own {name}"));
    }
    Ok(())
}

/// The table at `path` under `table`.
fn table_at<'t>(table: &'t toml::Table, path: &[&str]) -> Option<&'t toml::Table> {
    path.iter()
        .try_fold(table, |t, key| t.get(*key).and_then(|v| v.as_table()))
}

/// The strings of the array `key` (none when absent or not an array).
fn strings(table: &toml::Table, key: &str) -> Vec<String> {
    table
        .get(key)
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn matcher(pattern: &str) -> Option<GlobMatcher> {
    let pattern = clean(pattern);
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g: Glob| g.compile_matcher())
}

/// A member entry as written, without `./` before or `/` after.
fn clean(pattern: &str) -> &str {
    pattern
        .trim()
        .trim_start_matches("./")
        .trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dirs: &[&str]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for dir in dirs {
            std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        }
        tmp
    }

    #[test]
    fn uv_and_hatch_members_are_projects_not_excluded() {
        let tmp = tree(&["packages/a", "packages/b", "packages/c", "tools/t"]);
        for dir in ["packages/a", "packages/b", "tools/t"] {
            std::fs::write(tmp.path().join(dir).join("pyproject.toml"), "").unwrap();
        }
        std::fs::write(
            tmp.path().join("pyproject.toml"),
            "[tool.uv.workspace]\nmembers = [\"packages/*\"]\nexclude = [\"packages/b\"]\n\
             [tool.hatch.envs.default]\nworkspace.members = [{path = \"tools/t\"}]\n",
        )
        .unwrap();
        let mut found = BTreeMap::new();
        declared(tmp.path(), &mut found);
        let dirs: Vec<&str> = found.keys().map(String::as_str).collect();
        // c has no pyproject.toml; b is excluded.
        assert_eq!(dirs, ["packages/a", "tools/t"]);
        assert_eq!(
            found["packages/a"],
            "pyproject.toml [tool.uv.workspace] members"
        );
        assert_eq!(
            found["tools/t"],
            "pyproject.toml [tool.hatch.envs.default] workspace.members"
        );
    }
}
