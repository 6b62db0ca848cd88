//! Gates whose tool, or its settings, changed since the commit a scope
//! compares with: a change to `[tool.mypy]` can change the verdict on any
//! file, so such a gate checks its whole project scope — only that gate.
//! The settings of a file are compared by digest (see
//! [`crate::tool_config::settings`]): what the commit held, or what the
//! last green run recorded for a file it saw uncommitted.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{Config, ToolConfigFile};
use crate::file_name;
use crate::git::{self, Repo};
use crate::state::ToolStamp;
use crate::tool_config::settings;

/// Gate id → root-relative file → the digest of the tool's settings in it.
pub(crate) type SettingsDigests = BTreeMap<String, BTreeMap<String, String>>;

/// What the settings comparison found.
#[derive(Debug, Default)]
pub(crate) struct SettingsChanges {
    /// Gate id → why it checks its whole project scope.
    pub(crate) whole: BTreeMap<String, String>,
    /// The gates among them for which code the tool runs changed.
    pub(crate) uncached: BTreeSet<String>,
    /// The digests of every settings file the comparison looked at, as the
    /// files are now (what a green run records of the uncommitted ones).
    pub(crate) now: SettingsDigests,
}

/// Compares each gate's settings files among `candidates` (the paths a
/// diff from `base` shows, plus the ones `recorded`) as they are now with
/// what `base` held — or, for a recorded file, with its recorded digest.
/// `since` ends the reason (`the last green run`).
pub(crate) fn compare(
    repo: &Repo,
    root: &std::path::Path,
    config: &Config,
    base: &str,
    candidates: &BTreeSet<String>,
    recorded: &SettingsDigests,
    since: &str,
) -> SettingsChanges {
    let mut found = SettingsChanges::default();
    for gate in config.gates.values().filter(|g| !g.tool_config.is_empty()) {
        let remembered = recorded.get(&gate.id);
        let paths = candidates
            .iter()
            .chain(remembered.into_iter().flat_map(|r| r.keys()));
        let mut changed = BTreeSet::new();
        for path in paths {
            let entries: Vec<&ToolConfigFile> = gate.tool_config_for(path).collect();
            if entries.is_empty() {
                continue;
            }
            let content = std::fs::read(file_name::join(root, path)).ok();
            let now = settings::digest(path, content.as_deref(), &entries);
            let then = match remembered.and_then(|r| r.get(path)) {
                Some(digest) => digest.clone(),
                None => settings::digest(path, repo.file_at(base, path).as_deref(), &entries),
            };
            if now != then {
                changed.insert(path.clone());
                if entries.iter().any(|e| e.runs) {
                    found.uncached.insert(gate.id.clone());
                }
            }
            found
                .now
                .entry(gate.id.clone())
                .or_default()
                .insert(path.clone(), now);
        }
        if !changed.is_empty() {
            let files: Vec<String> = changed
                .iter()
                .map(|p| file_name::display(p).into_owned())
                .collect();
            found.whole.insert(
                gate.id.clone(),
                format!("its settings in {} changed since {since}", files.join(", ")),
            );
        }
    }
    found
}

/// Gates whose tool resolves to another executable than the one the
/// baseline was taken with (an upgrade, another environment).
pub(crate) fn changed_tools(
    then: &BTreeMap<String, ToolStamp>,
    now: &BTreeMap<String, ToolStamp>,
) -> BTreeMap<String, String> {
    now.iter()
        .filter(|(gate, stamp)| then.get(*gate) != Some(stamp))
        .map(|(gate, stamp)| {
            let was = then.get(gate).and_then(|t| t.path.as_deref());
            (gate.clone(), tool_change(stamp.path.as_deref(), was))
        })
        .collect()
}

/// Why a gate checks the whole project: its tool is `now` (`None`: not
/// found), and the last green run's was `was`.
fn tool_change(now: Option<&str>, was: Option<&str>) -> String {
    match (now, was) {
        (Some(now), _) => format!("its tool changed since the last green run ({now})"),
        (None, Some(was)) => {
            format!("its tool is not found (the last green run used {was})")
        }
        (None, None) => "its tool is not found".to_string(),
    }
}

/// Of `now`, the digests that differ from what `head` holds: what a green
/// run at `head` records, so that the next run compares with them.
pub(crate) fn uncommitted(
    repo: &Repo,
    config: &Config,
    head: &str,
    now: &SettingsDigests,
) -> SettingsDigests {
    let mut kept = SettingsDigests::new();
    for (id, files) in now {
        let Some(gate) = config.gates.get(id) else {
            continue;
        };
        for (path, digest) in files {
            let entries: Vec<&ToolConfigFile> = gate.tool_config_for(path).collect();
            let committed = settings::digest(path, repo.file_at(head, path).as_deref(), &entries);
            if committed != *digest {
                kept.entry(id.clone())
                    .or_default()
                    .insert(path.clone(), digest.clone());
            }
        }
    }
    kept
}

/// The paths a diff shows in any way: changed, untracked or deleted.
pub(crate) fn diff_paths(changes: &git::Changes) -> BTreeSet<String> {
    changes
        .changed
        .iter()
        .chain(&changes.untracked)
        .chain(&changes.deleted)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(path: Option<&str>) -> ToolStamp {
        ToolStamp {
            path: path.map(str::to_string),
            size: 1,
            mtime_ns: 1,
        }
    }

    /// A tool gone (a venv not activated) is said so, with the one the
    /// last green run used — not "changed ((not found))".
    #[test]
    fn a_tool_not_found_is_named_missing_with_the_one_the_green_run_used() {
        let then = BTreeMap::from([
            ("mypy".to_string(), stamp(Some("/p/.venv/bin/mypy"))),
            ("ruff".to_string(), stamp(Some("/p/.venv/bin/ruff"))),
        ]);
        let now = BTreeMap::from([
            ("mypy".to_string(), stamp(None)),
            ("ruff".to_string(), stamp(Some("/usr/bin/ruff"))),
            ("ty".to_string(), stamp(None)),
        ]);
        let changed = changed_tools(&then, &now);
        assert_eq!(
            changed["mypy"],
            "its tool is not found (the last green run used /p/.venv/bin/mypy)"
        );
        assert_eq!(
            changed["ruff"],
            "its tool changed since the last green run (/usr/bin/ruff)"
        );
        assert_eq!(changed["ty"], "its tool is not found");
    }
}
