//! The project's own pre-commit hooks that narrow what a tool checks: a
//! hook's `exclude:` or `files:` (or the file's own top-level ones) leave
//! files out that qg's gate for the same tool checks, as the tool's own run
//! does. On polyfactory (a user trial) `make lint` passed, through hooks
//! excluding `tests` from pyright, while `qg run --scope project` failed
//! with 66 findings there, and doctor said nothing.

use std::path::Path;

use serde::Deserialize;

use super::{Check, Health};
use crate::config::{Config, Gate};

/// The files pre-commit reads, in its order.
const CONFIG_FILES: [&str; 2] = [".pre-commit-config.yaml", ".pre-commit-config.yml"];

#[derive(Debug, Deserialize)]
struct PreCommit {
    #[serde(default)]
    repos: Vec<Repo>,
    #[serde(default)]
    exclude: Option<String>,
    #[serde(default)]
    files: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Repo {
    #[serde(default)]
    hooks: Vec<Hook>,
}

#[derive(Debug, Deserialize)]
struct Hook {
    id: String,
    #[serde(default)]
    entry: Option<String>,
    #[serde(default)]
    exclude: Option<String>,
    #[serde(default)]
    files: Option<String>,
}

/// One warning per active gate a hook narrows; none without a
/// pre-commit config (or one qg cannot read: pre-commit says why).
pub(super) fn narrowing_hooks(root: &Path, config: &Config) -> Vec<Check> {
    let Some((name, text)) = CONFIG_FILES
        .iter()
        .find_map(|name| Some((*name, std::fs::read_to_string(root.join(name)).ok()?)))
    else {
        return Vec::new();
    };
    let Ok(pre_commit) = serde_saphyr::from_str::<PreCommit>(&text) else {
        return Vec::new();
    };
    let gates: Vec<&Gate> = config
        .active_gates
        .iter()
        .filter_map(|id| config.gates.get(id))
        .collect();
    let hooks: Vec<&Hook> = pre_commit.repos.iter().flat_map(|r| &r.hooks).collect();
    // `ruff-format` claims the gate running `ruff format`: a bare `ruff`
    // hook is then the other one's.
    let claimed: Vec<(&str, &str)> = hooks.iter().filter_map(|h| h.id.split_once('-')).collect();
    let mut checks = Vec::new();
    for hook in &hooks {
        let narrowed: Vec<String> = [
            (
                "exclude",
                hook.exclude.as_ref().or(pre_commit.exclude.as_ref()),
            ),
            ("files", hook.files.as_ref().or(pre_commit.files.as_ref())),
        ]
        .into_iter()
        .filter_map(|(key, pattern)| Some(format!("{key}: {}", pattern?.trim())))
        .collect();
        if narrowed.is_empty() {
            continue;
        }
        // A gate given globs of its own has been told what to leave out.
        let narrowed_already = |g: &&&Gate| {
            !g.scope.exclude_patterns().is_empty() || !g.scope.include_patterns().is_empty()
        };
        let matching = gates
            .iter()
            .filter(|g| runs_tool_of(g, hook, &claimed))
            .filter(|g| !narrowed_already(g));
        for gate in matching {
            checks.push(Check::new(
                &format!("{} files", gate.id),
                Health::Warning,
                format!(
                    "{name} runs it as hook `{}` with {}: qg checks the files the tool itself selects, those too, and may report findings there the hook does not",
                    hook.id,
                    narrowed.join(", ")
                ),
                Some(format!(
                    "to check what the hook checks, give gate `{}` `scope: {{exclude_globs: [...]}}` (globs of the files the pattern leaves out) in .st3/quality.yaml",
                    gate.id
                )),
            ));
        }
    }
    checks
}

/// Whether `hook` runs `gate`'s program: its id is the program's name and
/// a word of the gate's command (`ruff-format` for `ruff format --check`),
/// or the bare name when no other hook's id claims a word of the command
/// (`claimed`), or its entry names the program (`uv run mypy`).
fn runs_tool_of(gate: &Gate, hook: &Hook, claimed: &[(&str, &str)]) -> bool {
    let Some(program) = gate.command.first().map(|p| program_name(p)) else {
        return false;
    };
    let words: Vec<&str> = gate.command.iter().skip(1).map(String::as_str).collect();
    let by_id = match hook.id.split_once('-') {
        None => {
            hook.id == program
                && !claimed
                    .iter()
                    .any(|(tool, word)| *tool == program && words.contains(word))
        }
        Some((tool, word)) => tool == program && words.contains(&word),
    };
    let by_entry = hook.entry.as_deref().is_some_and(|entry| {
        let words: Vec<&str> = entry.split_whitespace().collect();
        words.iter().any(|w| program_name(w) == program)
            && gate
                .command
                .iter()
                .skip(1)
                .filter(|w| !w.starts_with('-'))
                .all(|w| words.contains(&w.as_str()))
    });
    by_id || by_entry
}

/// A program's name without its directory and `.exe`.
fn program_name(program: &str) -> &str {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name.strip_suffix(".exe").unwrap_or(name)
}
