//! Which version of each tool ran: `command[0]` with the gate's
//! `version_args`, asked once per installed binary and remembered in
//! `.st3/tool-versions.json` by path, size and mtime (a reinstall is a new
//! binary), and in qg's user cache directory for every clone on the machine. Reports carry it (SARIF `tool.driver.version`, JSON
//! `tool_version`), so a finding can be traced to the tool that made it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::resolve::ToolStamp;
use super::resolve::{self, ResolvedTool};
use super::Toolbox;
use crate::config::{Adapted, Config, Gate, ImportGraph, OlderVersion};
use crate::process::{self, Termination};

/// Where the cache lives, relative to the root.
pub(crate) const CACHE_FILE: &str = ".st3/tool-versions.json";

/// The machine's shared memo, in qg's user cache directory.
const MACHINE_FILE: &str = "tool-versions.json";

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
    // Only a gate that says how to ask is resolved (a PATH search each).
    let asks = gates
        .iter()
        .filter_map(|gate| {
            let args = gate.version_args.clone()?;
            let tool = tools.resolve(gate).ok()?;
            Some((gate.id.clone(), tool, args))
        })
        .collect();
    versions(asks, tools, remember)
}

/// The version of each `(id, tool, version args)`, by id: from the cache
/// (by the binary's path, size and mtime), or asked in parallel and then
/// cached unless `remember` is false.
fn versions(
    asks: Vec<(String, ResolvedTool, Vec<String>)>,
    tools: &Toolbox<'_>,
    remember: bool,
) -> BTreeMap<String, String> {
    let path = tools.root.join(CACHE_FILE);
    let mut cache = read_memo(&path);
    let machine_path = machine_memo();
    let mut machine: Option<BTreeMap<String, Entry>> = None;
    let mut found = BTreeMap::new();
    let mut to_ask = Vec::new();
    let mut learned = false;
    for (id, tool, args) in asks {
        let stamp = resolve::stamp(&Ok(tool.clone()));
        let key = tool.path.display().to_string();
        if let Some(entry) = cache.get(&key).filter(|e| e.stamp == stamp) {
            found.insert(id, entry.version.clone());
            continue;
        }
        // Another clone on this machine asked the same binary.
        let machine = machine
            .get_or_insert_with(|| machine_path.as_deref().map(read_memo).unwrap_or_default());
        match machine.get(&key).filter(|e| e.stamp == stamp).cloned() {
            Some(entry) => {
                found.insert(id, entry.version.clone());
                cache.insert(key, entry);
                learned = true;
            }
            None => to_ask.push((id, key, stamp, tool, args)),
        }
    }
    if to_ask.is_empty() {
        if remember && learned {
            write_memo(&path, &cache);
        }
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
    let mut machine = machine.unwrap_or_default();
    for (id, key, stamp, version) in answers {
        let Some(version) = version else { continue };
        found.insert(id, version.clone());
        let entry = Entry { stamp, version };
        machine.insert(key.clone(), entry.clone());
        cache.insert(key, entry);
    }
    if remember {
        write_memo(&path, &cache);
        if let Some(machine_path) = &machine_path {
            write_memo(machine_path, &machine);
        }
    }
    found
}

/// The versions remembered in `path` (none when it cannot be read).
fn read_memo(path: &std::path::Path) -> BTreeMap<String, Entry> {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Writes the versions remembered; one that cannot be written is asked
/// again next time.
fn write_memo(path: &std::path::Path, memo: &BTreeMap<String, Entry>) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(text) = serde_json::to_vec_pretty(memo) {
        let _ = crate::atomic_file::write_cache(path, &text);
    }
}

/// The versions every clone on this machine shares, in qg's user cache
/// directory (by the binary's path, size and mtime, as a project's are):
/// a fresh clone does not ask a tool another clone asked. None when the
/// cache is off (`QG_NO_CACHE`, as the test suite runs).
fn machine_memo() -> Option<std::path::PathBuf> {
    if crate::user_cache::off_by_environment() {
        return None;
    }
    crate::user_cache::dir().map(|dir| dir.join(MACHINE_FILE))
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
/// is not a notice around it and holds a version number, else the first
/// that is not a notice. pyright-python's "WARNING: there is a new pyright
/// version available (v1.1.399 -> v1.1.407)." and its "Please install the
/// new version..." come before `pyright 1.1.399`, and npm's "added 1
/// package in 3s" when it fetches the pyright a project pins.
fn version_line(text: &str) -> Option<&str> {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let notice = |line: &str| {
        let lower = line.to_ascii_lowercase();
        lower.starts_with("warning") || lower.starts_with("please ") || lower.starts_with("note:")
    };
    let says_version = |line: &&str| !notice(line) && number(line) != *line;
    lines()
        .find(says_version)
        .or_else(|| lines().find(|l| !notice(l)))
        .or_else(|| lines().next())
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
    older_than(line, min)?.then(|| {
        format!(
            "{} is older than {min}, the oldest the gate's command works with",
            line.trim()
        )
    })
}

/// The `older_versions` entries that apply to the tool whose `--version`
/// said `line`: every one whose bound is above that version, the highest
/// bound first, so an older version's entry only says what it lacks
/// besides. None when the tool's own way works, or the version has no
/// number to compare.
fn applying<'e>(entries: &'e [OlderVersion], line: &str) -> Option<Vec<&'e OlderVersion>> {
    let mut applying: Vec<(Vec<u64>, &OlderVersion)> = entries
        .iter()
        .filter(|entry| older_than(line, &entry.below) == Some(true))
        .filter_map(|entry| Some((parts(&entry.below)?, entry)))
        .collect();
    applying.sort_by(|(a, _), (b, _)| b.cmp(a));
    let applying: Vec<&OlderVersion> = applying.into_iter().map(|(_, e)| e).collect();
    (!applying.is_empty()).then_some(applying)
}

/// What the entries that apply say, with what the tool does instead.
fn adapted(line: &str, applying: &[&OlderVersion], instead: Vec<String>, cold: bool) -> Adapted {
    let why: Vec<&str> = applying.iter().map(|e| e.why.as_str()).collect();
    Adapted {
        version: line.trim().to_string(),
        below: applying[0].below.clone(),
        why: why.join("; "),
        instead: instead.join(", "),
        cold,
    }
}

/// The gate as it runs with the tool whose `--version` said `line`: each
/// `older_versions` entry that applies ([`applying`]) takes the gate's
/// place where it says (command, parsing, file types, daemon); none when
/// the gate's own way works.
pub(crate) fn adapt(gate: &Gate, line: &str) -> Option<Gate> {
    let applying = applying(&gate.older_versions, line)?;
    let mut adapted = gate.clone();
    let mut instead = Vec::new();
    for entry in &applying {
        if let Some(command) = &entry.command {
            adapted.command = with_own_arguments(command, &adapted.command, &entry.instead_of);
            instead.push(format!("runs `{}`", adapted.command.join(" ")));
        }
        if let Some(parser) = &entry.parser {
            adapted.parser = parser.clone();
        }
        if let Some(file_types) = &entry.file_types {
            adapted.file_types = file_types.clone();
            instead.push(format!("takes {} files", file_types.join(" ")));
        }
        if let (Some(args), Some(selection)) = (&entry.project_args, &mut adapted.selection) {
            selection.project_args = args.clone();
            instead.push(format!(
                "names `{}` in its own run on --scope project",
                args.join(" ")
            ));
        }
        if !entry.daemon && adapted.daemon.take().is_some() {
            instead.push("answers cold (no daemon)".to_string());
        }
    }
    let cold = gate.daemon.is_some() && adapted.daemon.is_none();
    adapted.adapted = Some(self::adapted(line, &applying, instead, cold));
    Some(adapted)
}

/// An older version's `command` with the gate's own arguments it does not
/// stand in for (`instead_of`) nor have already: a project's `--strict` on
/// mypy's command must reach the older mypy too, or its verdict is
/// another. They go right after the words both commands begin with (the
/// program, its subcommand), so the older command's own flags come last
/// and win (mypy's `--no-pretty` over a project's `--pretty`, which would
/// spread a finding over lines its text parser reads one by one).
fn with_own_arguments(older: &[String], own: &[String], instead_of: &[String]) -> Vec<String> {
    let shared = older.iter().zip(own).take_while(|(a, b)| a == b).count();
    let stood_in_for = |arg: &String| instead_of.contains(arg);
    let already_there = |arg: &String| arg.starts_with('-') && older.contains(arg);
    let kept = own[shared..]
        .iter()
        .filter(|arg| !stood_in_for(arg) && !already_there(arg));
    older[..shared]
        .iter()
        .chain(kept)
        .chain(&older[shared..])
        .cloned()
        .collect()
}

/// The import analyzer as it runs with the version `line`: the command
/// of the entries that apply, the oldest last.
pub(crate) fn adapt_graph(graph: &ImportGraph, line: &str) -> Option<ImportGraph> {
    let applying = applying(&graph.older_versions, line)?;
    let mut adapted = graph.clone();
    let mut instead = Vec::new();
    for command in applying.iter().filter_map(|e| e.command.as_ref()) {
        adapted.command = command.clone();
        instead.push(format!("runs `{}`", command.join(" ")));
    }
    adapted.adapted = Some(self::adapted(line, &applying, instead, false));
    Some(adapted)
}

/// Why the import analyzer whose version is `line` has no graph to give
/// (older than its `min_version`), if it is.
pub(crate) fn analyzer_too_old(graph: &ImportGraph, line: &str) -> Option<String> {
    let min = graph.min_version.as_deref()?;
    older_than(line, min)?.then(|| {
        format!(
            "the import analyzer {} is older than {min}, the oldest with `{}`",
            line.trim(),
            graph.command[..graph.command.len().min(3)].join(" ")
        )
    })
}

/// Every gate of `config` that may run — the active ones, and those
/// `requested` by name (`--gate ruff_format` runs an inactive gate too) —
/// and its import analyzer, adapted to the version of its tool ([`adapt`],
/// [`adapt_graph`]). Only tools with `older_versions` are asked (from the
/// cache, else in parallel): the rest run as they are.
pub(crate) fn adapt_to_versions(
    config: &mut Config,
    tools: &Toolbox<'_>,
    remember: bool,
    requested: &[String],
) {
    const GRAPH: &str = "\0import_graph";
    // The gates `--gate` selects, as the run selects them (an unknown id
    // is the run's error to say, not this one's).
    let selected: Vec<String> = config
        .select_gates(requested)
        .map(|gates| gates.iter().map(|g| g.id.clone()).collect())
        .unwrap_or_default();
    let may_run =
        |gate: &Gate| config.active_gates.contains(&gate.id) || selected.contains(&gate.id);
    let mut asks: Vec<(String, ResolvedTool, Vec<String>)> = config
        .gates
        .values()
        .filter(|gate| may_run(gate))
        .filter(|gate| !gate.older_versions.is_empty())
        .filter_map(|gate| {
            let args = gate.version_args.clone()?;
            Some((gate.id.clone(), tools.resolve(gate).ok()?, args))
        })
        .collect();
    if let Some(graph) = config.import_graph.as_ref() {
        let bounded = !graph.older_versions.is_empty() || graph.min_version.is_some();
        let args = graph.version_args.clone().filter(|_| bounded);
        let tool = args
            .as_ref()
            .and_then(|_| tools.resolve_program(&graph.command[0]).ok());
        if let Some((args, tool)) = args.zip(tool) {
            asks.push((GRAPH.to_string(), tool, args));
        }
    }
    if asks.is_empty() {
        return;
    }
    let versions = versions(asks, tools, remember);
    for gate in config.gates.values_mut() {
        if let Some(adapted) = versions.get(&gate.id).and_then(|line| adapt(gate, line)) {
            *gate = adapted;
        }
    }
    if let Some(graph) = config.import_graph.as_mut() {
        if let Some(line) = versions.get(GRAPH) {
            if let Some(adapted) = adapt_graph(graph, line) {
                *graph = adapted;
            }
            graph.too_old = analyzer_too_old(graph, line);
        }
    }
}

/// Whether the version `line` says is older than `bound`; none when
/// either has no number to compare.
fn older_than(line: &str, bound: &str) -> Option<bool> {
    Some(parts(number(line))? < parts(bound)?)
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

    /// A gate with two `older_versions` entries, as a config writes them.
    fn versioned_gate() -> Gate {
        let yaml = r#"version: "1"
active_gates: [t]
gates:
  t:
    execution: {command: ["t", "--json"], batchable: false}
    parsing: {strategy: exit_code}
    capabilities: {file_types: [".py", ".md"]}
    daemon: {protocol: command, command: ["td"], check: ["td", "check"]}
    version_args: ["--version"]
    older_versions:
      - {below: "0.6", why: "no notebooks", file_types: [".py"]}
      - {below: "0.16", why: "no --json", command: ["t"], instead_of: ["--json"], file_types: [".py", ".ipynb"], daemon: false}
"#;
        let config = crate::config::parse(yaml, "test").unwrap();
        config.gates["t"].clone()
    }

    #[test]
    fn every_entry_above_the_version_applies_the_oldest_last() {
        let gate = versioned_gate();
        assert!(gate.daemon.is_some());
        assert!(adapt(&gate, "t 0.16.0").is_none());
        assert!(adapt(&gate, "t 1.2").is_none());
        assert!(adapt(&gate, "no number").is_none());

        let mid = adapt(&gate, "t 0.15.22").unwrap();
        assert_eq!(mid.command, ["t"]);
        assert_eq!(mid.file_types, [".py", ".ipynb"]);
        assert!(mid.daemon.is_none());
        let how = mid.adapted.unwrap();
        assert!(how.cold);
        assert_eq!(
            (how.below.as_str(), how.why.as_str()),
            ("0.16", "no --json")
        );

        // The older entry says only what it lacks besides; the newer one's
        // command stays, and the bound to reach is the newest.
        let old = adapt(&gate, "t 0.5.9").unwrap();
        assert_eq!(old.command, ["t"]);
        assert_eq!(old.file_types, [".py"]);
        let how = old.adapted.unwrap();
        assert_eq!(how.below, "0.16");
        assert_eq!(how.why, "no --json; no notebooks");
    }

    /// A project's own arguments on the gate's command reach the older
    /// command (humanize's mypy `--strict` was dropped with mypy 1.7, and
    /// with it every finding only --strict reports), before its own flags,
    /// which win: `--no-pretty` over the project's `--pretty`.
    #[test]
    fn an_older_command_keeps_the_gates_own_arguments_but_those_it_stands_in_for() {
        let config = crate::config::parse(crate::config::EMBEDDED_DEFAULT, "default").unwrap();
        let mut mypy = config.gates["mypy"].clone();
        mypy.command = [
            "mypy",
            "--output=json",
            "--strict",
            "--pretty",
            "--show-error-codes",
        ]
        .map(String::from)
        .to_vec();
        let old = adapt(&mypy, "mypy 1.7.0 (compiled: yes)").unwrap();
        assert_eq!(
            old.command,
            [
                "mypy",
                "--strict",
                "--pretty",
                "--show-column-numbers",
                "--show-error-end",
                "--show-error-codes",
                "--no-error-summary",
                "--no-pretty",
                "--no-color-output"
            ]
        );
        // The default gates' own commands become the older ones exactly.
        let format = adapt(&config.gates["ruff_format"], "ruff 0.6.9").unwrap();
        assert_eq!(
            format.command,
            ["ruff", "format", "--check", "--force-exclude"]
        );
        let own_mypy = adapt(&config.gates["mypy"], "mypy 1.7.0").unwrap();
        assert!(
            !own_mypy.command.contains(&"--output=json".to_string()),
            "{:?}",
            own_mypy.command
        );
    }

    /// ruff before 0.1.7 checks nothing given no path: the default's ruff
    /// gates name `.` in their own run of the project there, and only there.
    #[test]
    fn the_default_ruff_gates_name_the_project_for_a_ruff_that_needs_a_path() {
        let config = crate::config::parse(crate::config::EMBEDDED_DEFAULT, "default").unwrap();
        let project_args = |gate: &Gate| gate.selection.as_ref().unwrap().project_args.clone();
        for id in ["ruff_check", "ruff_format"] {
            let gate = &config.gates[id];
            assert!(project_args(gate).is_empty(), "{id}");
            let old = adapt(gate, "ruff 0.1.6").unwrap();
            assert_eq!(project_args(&old), ["."], "{id}");
            let newer = adapt(gate, "ruff 0.1.7").unwrap_or_else(|| gate.clone());
            assert!(project_args(&newer).is_empty(), "{id}");
        }
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
        let fetched = "\nadded 1 package in 3s\n\npyright 1.1.401\n";
        assert_eq!(version_line(fetched), Some("pyright 1.1.401"));
        assert_eq!(version_line("tool (no number)\n"), Some("tool (no number)"));
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
