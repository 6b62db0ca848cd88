//! Which version of each tool ran: `command[0]` with the gate's
//! `version_args`, asked once per installed binary and remembered in
//! `.st3/tool-versions.json` by path, size and mtime (a reinstall is a new
//! binary). Reports carry it (SARIF `tool.driver.version`, JSON
//! `tool_version`), so a finding can be traced to the tool that made it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::resolve::ToolStamp;
use super::resolve::{self, ResolvedTool};
use super::Toolbox;
use crate::config::Gate;
use crate::process::{self, Termination};

/// Where the cache lives, relative to the root.
pub(crate) const CACHE_FILE: &str = ".st3/tool-versions.json";

/// A `--version` that takes longer than this is not worth waiting for.
const TIMEOUT: Duration = Duration::from_secs(20);

/// One remembered answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    stamp: ToolStamp,
    version: String,
}

/// The version of each gate's tool, by gate id: from the cache, or asked
/// (in parallel) and then cached unless `remember` is false. Gates without
/// `version_args`, or whose tool does not resolve or answer, are absent.
pub(crate) fn tool_versions(
    gates: &[&Gate],
    tools: &Toolbox<'_>,
    remember: bool,
) -> BTreeMap<String, String> {
    let path = tools.root.join(CACHE_FILE);
    let mut cache: BTreeMap<String, Entry> = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let mut found = BTreeMap::new();
    let mut to_ask = Vec::new();
    for gate in gates {
        // Only a gate that says how to ask is resolved (a PATH search each).
        let Some(args) = &gate.version_args else {
            continue;
        };
        let Ok(tool) = tools.resolve(gate) else {
            continue;
        };
        let stamp = resolve::stamp(&Ok(tool.clone()));
        let key = tool.path.display().to_string();
        match cache.get(&key).filter(|e| e.stamp == stamp) {
            Some(entry) => {
                found.insert(gate.id.clone(), entry.version.clone());
            }
            None => to_ask.push((gate.id.clone(), key, stamp, tool, args.clone())),
        }
    }
    if to_ask.is_empty() {
        return found;
    }
    let answers: Vec<_> = std::thread::scope(|threads| {
        let handles: Vec<_> = to_ask
            .into_iter()
            .map(|(id, key, stamp, tool, args)| {
                threads.spawn(move || (id, key, stamp, ask(&tool, &args, tools)))
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (id, key, stamp, version) in answers {
        let Some(version) = version else { continue };
        found.insert(id, version.clone());
        cache.insert(key, Entry { stamp, version });
    }
    if remember {
        if let Ok(text) = serde_json::to_vec_pretty(&cache) {
            // A cache that cannot be written is asked again next time.
            let _ = crate::atomic_file::write_cache(&path, &text);
        }
    }
    found
}

/// The first line the tool prints for `args` (stdout, else stderr).
pub(crate) fn ask(tool: &ResolvedTool, args: &[String], tools: &Toolbox<'_>) -> Option<String> {
    let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    let invocation = process::Invocation {
        label: "--version",
        program: &tool.path,
        args: &args,
        cwd: tools.root,
        env: &[],
        timeout: TIMEOUT,
        cancel: &tools.cancel,
    };
    let done = process::run(&invocation).ok()?;
    if done.termination != Termination::Exited(0) {
        return None;
    }
    let first_line = |stream: &process::Capture| {
        let bytes = stream.read_all().unwrap_or_default();
        version_line(&String::from_utf8_lossy(&bytes)).map(str::to_string)
    };
    first_line(&done.stdout).or_else(|| first_line(&done.stderr))
}

/// The line of `--version` output that says the version: the first that
/// is not a notice around it (pyright-python's "WARNING: there is a new
/// pyright version available (v1.1.399 -> v1.1.407)." and its "Please
/// install the new version..." come before `pyright 1.1.399`).
fn version_line(text: &str) -> Option<&str> {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let notice = |line: &str| {
        let lower = line.to_ascii_lowercase();
        lower.starts_with("warning") || lower.starts_with("please ") || lower.starts_with("note:")
    };
    lines().find(|l| !notice(l)).or_else(|| lines().next())
}

/// The version number in a `--version` line (`mypy 2.4.1 (compiled: yes)`
/// → `2.4.1`), or the whole line when it holds none.
pub(crate) fn number(line: &str) -> &str {
    line.split_whitespace()
        .find(|word| {
            let word = word.trim_start_matches('v');
            word.starts_with(|c: char| c.is_ascii_digit()) && word.contains('.')
        })
        .unwrap_or(line)
}

/// Why the tool's version `line` is too old for a gate needing `min`
/// (`mypy 1.10.1 is older than 1.11, ...`); none when it is new enough or
/// either has no number to compare.
pub(crate) fn too_old(line: &str, min: &str) -> Option<String> {
    let installed = parts(number(line))?;
    let needed = parts(min)?;
    (installed < needed).then(|| {
        format!(
            "{} is older than {min}, the oldest the gate's command works with",
            line.trim()
        )
    })
}

/// `1.11.0rc1` → `[1, 11, 0]`: the leading numbers of each dotted part.
fn parts(version: &str) -> Option<Vec<u64>> {
    let numbers: Vec<u64> = version
        .trim_start_matches('v')
        .split('.')
        .map_while(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    (!numbers.is_empty()).then_some(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_older_than_the_gate_needs_says_so() {
        let old = too_old("mypy 1.10.1 (compiled: yes)", "1.11").unwrap();
        assert_eq!(
            old,
            "mypy 1.10.1 (compiled: yes) is older than 1.11, the oldest the gate's command works with"
        );
        assert_eq!(too_old("mypy 1.11.0", "1.11"), None);
        assert_eq!(too_old("mypy 1.19.1", "1.11"), None);
        assert_eq!(too_old("mypy 2.0", "1.11"), None);
        assert!(too_old("mypy 1.9.0", "1.11").is_some());
        assert!(too_old("tool v0.9rc1", "1.0").is_some());
        // Nothing to compare: never a complaint.
        assert_eq!(too_old("no number here", "1.11"), None);
    }

    #[test]
    fn a_notice_before_the_version_line_is_passed_over() {
        let pyright = "WARNING: there is a new pyright version available (v1.1.399 -> v1.1.407).\n\
                       Please install the new version or set PYRIGHT_PYTHON_FORCE_VERSION to `latest`\n\n\
                       pyright 1.1.399\n";
        assert_eq!(version_line(pyright), Some("pyright 1.1.399"));
        assert_eq!(version_line("ruff 0.17.5\n"), Some("ruff 0.17.5"));
        assert_eq!(
            version_line("WARNING: only this\n"),
            Some("WARNING: only this")
        );
        assert_eq!(version_line("\n"), None);
    }

    #[test]
    fn version_numbers_are_found_in_version_lines() {
        assert_eq!(number("ruff 0.17.5"), "0.17.5");
        assert_eq!(number("mypy 2.4.1 (compiled: yes)"), "2.4.1");
        assert_eq!(number("pyright 1.1.414"), "1.1.414");
        assert_eq!(number("tool v3.2"), "v3.2");
        assert_eq!(number("no number here"), "no number here");
    }
}
