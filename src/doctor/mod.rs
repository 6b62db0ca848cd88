//! `qg doctor`: is everything qg needs in place? For each active gate, the
//! executable it resolves to and its version; whether the config is valid;
//! the git repository and the state file. Everything missing comes with the
//! exact command that fixes it. Read-only: it changes nothing (but for
//! remembering what the project's package manager named as its
//! environment, as any run does).

mod hooks;
mod stops;

use std::path::Path;

use serde::Serialize;

use crate::config::{self, Config};
use crate::members::MemberRuns;
use crate::state::StateStore;
use crate::tools::environment::{self, Origin};
use crate::tools::resolve::ResolveError;
use crate::tools::version;
use crate::tools::Toolbox;
use crate::workspace::Workspace;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Health {
    /// Fine.
    Ok,
    /// Works, with a limitation worth knowing.
    Warning,
    /// Broken: qg run would error or misbehave.
    Error,
}

/// One line of the diagnosis.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    /// What was checked (`config`, a gate id, `git`, `state`).
    pub(crate) name: String,
    /// Outcome.
    pub(crate) status: Health,
    /// What was found.
    pub(crate) detail: String,
    /// The command (or edit) that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fix: Option<String>,
}

impl Check {
    fn new(name: &str, status: Health, detail: String, fix: Option<String>) -> Check {
        Check {
            name: name.to_string(),
            status,
            detail,
            fix,
        }
    }
}

/// The whole diagnosis.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Diagnosis {
    /// True when no check is an error.
    pub(crate) ok: bool,
    /// The project root.
    pub(crate) root: String,
    /// Every check, in order.
    pub(crate) checks: Vec<Check>,
}

/// Diagnoses the project around `cwd` with `config_path` (or the usual lookup).
pub(crate) fn diagnose(cwd: &Path, config_path: Option<&Path>) -> Diagnosis {
    let mut checks = Vec::new();
    let workspace = match Workspace::discover(cwd) {
        Ok(ws) => ws,
        Err(e) => {
            // The message itself names the fix (e.g. the safe.directory command).
            checks.push(Check::new("git", Health::Error, e.to_string(), None));
            return finish(cwd.display().to_string(), checks);
        }
    };
    match crate::members::load_config_and_members(&workspace, config_path) {
        Ok((config, members, unrun)) => {
            let active = config.active_gates.len();
            let detail = format!(
                "{}: {} gates defined, {active} active",
                config.origin,
                config.gates.len()
            );
            checks.push(Check::new("config", Health::Ok, detail, None));
            for warning in &config.warnings {
                let fix = "delete the one you do not use".to_string();
                checks.push(Check::new(
                    "config",
                    Health::Warning,
                    warning.clone(),
                    Some(fix),
                ));
            }
            checks.push(environment_check(&workspace.root));
            checks.extend(member_checks(&workspace, &members));
            checks.extend(unrun_config_dirs(&unrun));
            checks.extend(gate_checks(&workspace.root, &config));
            checks.extend(selection_checks(&workspace.root, &config));
            checks.extend(hooks::narrowing_hooks(&workspace.root, &config));
            checks.push(settings_check(&workspace, &config));
            checks.push(trust_check(&workspace, &config));
            checks.extend(stop_checks(&workspace, &config));
            checks.extend(import_checks(&workspace.root, &config));
            checks.extend(import_graph_checks(&workspace, &config));
            checks.extend(daemon_checks(&workspace.root, &config));
        }
        Err(e) => checks.push(Check::new(
            "config",
            Health::Error,
            e.to_string(),
            Some("fix the key the message names (see the book's configuration reference)".into()),
        )),
    }
    checks.push(git_check(&workspace));
    checks.push(state_check(&workspace));
    finish(workspace.root.display().to_string(), checks)
}

/// One line per workspace member: how it was found and which gates run
/// in it with its own config (the others check it from the project's run).
fn member_checks(workspace: &Workspace, members: &[MemberRuns]) -> Vec<Check> {
    let path_var = Toolbox::from_env(&workspace.root).path_var;
    members
        .iter()
        .map(|(member, own)| {
            let runs = match own.is_empty() {
                true => {
                    "no config of its own for a tool run per member: the project's runs check it"
                        .to_string()
                }
                false => format!("its own runs: {}", own.join(", ")),
            };
            let member_dir = workspace.root.join(crate::file_name::to_path(&member.dir));
            let own =
                crate::tools::member_environment(&member_dir, &workspace.root, path_var.as_ref());
            let tools = match own.map(|e| e.origin) {
                Some(Origin::Manager { detected, asked }) => format!(
                    "tools: the environment {} keeps for it (`{asked}`) first, then the project's",
                    detected.manager.program()
                ),
                Some(Origin::InProject(name)) => {
                    format!("tools: its own {name} first, then the project's")
                }
                _ => "tools and environment: the project's".to_string(),
            };
            let detail = format!(
                "{} (found by {}): {runs}; {tools}",
                member.dir, member.found_by
            );
            Check::new("member", Health::Ok, detail, None)
        })
        .collect()
}

/// The directories holding a config of a tool run per member that no run
/// checks: no declared member, and outside the project's own run of the
/// tool. A test fixture needs nothing; a member made a minute ago needs
/// declaring, or it is never checked — one line says which they are.
fn unrun_config_dirs(unrun: &[crate::members::Member]) -> Option<Check> {
    const SHOWN: usize = 5;
    let first = unrun.first()?;
    let mut named: Vec<String> = unrun
        .iter()
        .take(SHOWN)
        .map(|m| format!("{} ({})", m.dir, m.found_by))
        .collect();
    if unrun.len() > SHOWN {
        named.push(format!("and {} more", unrun.len() - SHOWN));
    }
    Some(Check::new(
        "not members",
        Health::Ok,
        format!(
            "{}: each holds a tool's config, but no workspace declares it a member and the project's own run of that tool leaves it out, so nothing checks it (a test fixture needs nothing)",
            named.join(", ")
        ),
        Some(format!(
            "to check one as `cd {} && <tool>` does, declare it: [tool.uv.workspace] members, Hatch's workspace.members, or qg's `members`",
            first.dir
        )),
    ))
}

fn finish(root: String, checks: Vec<Check>) -> Diagnosis {
    Diagnosis {
        ok: checks.iter().all(|c| c.status != Health::Error),
        root,
        checks,
    }
}

/// Which Python environment the tools come from, and why that one.
fn environment_check(root: &Path) -> Check {
    let ctx = Toolbox::from_env(root);
    let detected = environment::detect(root);
    let managed_by = detected
        .as_ref()
        .map(|d| format!("; {} project ({})", d.manager.program(), d.marker))
        .unwrap_or_default();
    match (ctx.environment(), detected) {
        (Some(env), _) => {
            let also = match env.origin {
                Origin::Manager { .. } => String::new(),
                _ => managed_by,
            };
            Check::new("environment", Health::Ok, format!("{}{also}", env.describe(root)), None)
        }
        (None, Some(detected)) => Check::new(
            "environment",
            Health::Warning,
            format!(
                "a {} project ({}) without an environment qg can find ($VIRTUAL_ENV, .venv, venv, or {}'s own): tools come from PATH",
                detected.manager.program(),
                detected.marker,
                detected.manager.program()
            ),
            Some(
                match environment::program_on_path(detected.manager.program(), ctx.path_var.as_ref()) {
                    Some(_) => ctx.expand_hint("{install_project}"),
                    None => format!(
                        "install {}, then: {}",
                        detected.manager.program(),
                        ctx.expand_hint("{install_project}")
                    ),
                },
            ),
        ),
        (None, None) => Check::new(
            "environment",
            Health::Ok,
            "no virtualenv ($VIRTUAL_ENV, .venv, venv): tools come from PATH".to_string(),
            None,
        ),
    }
}

fn gate_checks(root: &Path, config: &Config) -> Vec<Check> {
    let ctx = Toolbox::from_env(root);
    config
        .active_gates
        .iter()
        .map(|id| {
            let gate = &config.gates[id];
            let program = &gate.command[0];
            match ctx.resolve(gate) {
                Ok(tool) => {
                    let args = gate
                        .version_args
                        .clone()
                        .unwrap_or_else(|| vec!["--version".into()]);
                    let asked = crate::tools::version::ask(&tool, &args, &ctx);
                    if let Some((line, min)) = asked.as_deref().zip(gate.min_version.as_deref()) {
                        if let Some(why) = version::too_old(line, min) {
                            let detail = format!("{}: {why}", tool.path.display());
                            let upgrade = format!("upgrade it: {}", ctx.upgrade_hint(gate, min));
                            return Check::new(id, Health::Error, detail, Some(upgrade));
                        }
                    }
                    let adapted = asked.as_deref().and_then(|l| version::adapt(gate, l));
                    if let Some(how) = adapted.and_then(|a| a.adapted) {
                        return older_version_check(id, &tool.path, gate, &how, &ctx);
                    }
                    let version =
                        asked.unwrap_or_else(|| format!("`{}` printed no version", args.join(" ")));
                    let detail = format!("{} ({version})", tool.path.display());
                    Check::new(id, Health::Ok, detail, None)
                }
                Err(ResolveError::NotFound { .. }) => Check::new(
                    id,
                    Health::Error,
                    format!("`{program}` not found in the project's virtualenv or PATH"),
                    Some(ctx.install_hint(gate).unwrap_or_else(|| {
                        format!("install `{program}`, or fix gates.{id}.execution.command")
                    })),
                ),
                Err(ResolveError::NotExecutable(path)) => Check::new(
                    id,
                    Health::Error,
                    format!("{} is not executable", path.display()),
                    Some(format!("chmod +x {}", path.display())),
                ),
            }
        })
        .collect()
}

/// A tool older than a feature its gate uses: the gate works another way
/// (`older_versions`), which doctor says, with the upgrade that restores
/// the gate's own.
fn older_version_check(
    id: &str,
    path: &Path,
    gate: &crate::config::Gate,
    how: &crate::config::Adapted,
    ctx: &Toolbox<'_>,
) -> Check {
    let detail = format!(
        "{} ({}): older than {}, {}: the gate {}",
        path.display(),
        how.version,
        how.below,
        how.why,
        how.instead
    );
    let upgrade = format!(
        "to run it the gate's own way, upgrade: {}",
        ctx.upgrade_hint(gate, &how.below)
    );
    Check::new(id, Health::Warning, detail, Some(upgrade))
}

/// Where each active gate's files come from: the tool's own config (and
/// which keys), or qg's file list.
fn selection_checks(root: &Path, config: &Config) -> Vec<Check> {
    let mut checks = Vec::new();
    for id in &config.active_gates {
        let name = format!("{id} files");
        let gate = &config.gates[id];
        match crate::selection::files_from(root, gate) {
            Ok(detail) => checks.push(Check::new(&name, Health::Ok, detail, None)),
            Err(why) => checks.push(Check::new(&name, Health::Warning, why, None)),
        }
        // The tool's own selection, read once for the checks of it.
        let own = gate.selection.as_ref().and_then(|spec| {
            let selection = crate::selection::read(root, gate, spec).ok()?;
            Some(OwnSelection { spec, selection })
        });
        if let Some(own) = &own {
            checks.extend(missing_selected_paths(root, own, &name));
            checks.extend(files_left_to_members(gate, own, &name));
        }
    }
    checks
}

/// A gate's selection spec with what it reads in this project.
struct OwnSelection<'g> {
    spec: &'g config::SelectionSpec,
    selection: crate::selection::ToolSelection,
}

impl OwnSelection<'_> {
    /// The include key and the config that sets it, as messages name them.
    fn key_and_source(&self) -> (&str, &str) {
        let key = self.spec.include.as_ref().map_or("", |k| k.key.as_str());
        let source = self
            .selection
            .config_label
            .as_deref()
            .unwrap_or("the tool's config");
        (key, source)
    }
}

/// The entries of a gate's own file selection that lie in a workspace
/// member with its own config: the tool's own run from here checks them
/// with these settings, while qg leaves them to the member's run, with the
/// member's (as `cd member && tool` does) — by design, and said here.
fn files_left_to_members(gate: &config::Gate, own: &OwnSelection<'_>, name: &str) -> Option<Check> {
    let within = |entry: &str, dir: &str| {
        let entry = entry.trim().trim_start_matches("./").trim_end_matches('/');
        entry == dir
            || entry
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let tool = gate.command.first().map_or("the tool", String::as_str);
    let overlaps: Vec<String> = own
        .selection
        .named
        .iter()
        .filter_map(|entry| {
            let dir = gate.left_to_members.iter().find(|dir| within(entry, dir))?;
            Some(format!(
                "{}, inside member {dir} (checked as `cd {dir} && {tool}` checks it, with its config)",
                entry.trim()
            ))
        })
        .collect();
    if overlaps.is_empty() {
        return None;
    }
    let (key, source) = own.key_and_source();
    Some(Check::new(
        name,
        Health::Warning,
        format!(
            "{source} `{key}` names {}; `{tool}` run here would check it with these settings as well, which qg does not",
            overlaps.join("; ")
        ),
        Some(format!(
            "to check it with these settings too, run `{tool}` here yourself; to silence this, take it out of `{key}`"
        )),
    ))
}

/// Whether `qg lsp`, `qg mcp` and `qg watch` may run the repository's
/// commands (the command line always may: running it is the user's act).
fn trust_check(workspace: &Workspace, config: &Config) -> Check {
    let tools = Toolbox::from_env(&workspace.root);
    match crate::trust::standing(workspace, config, &tools) {
        crate::trust::Standing::NotNeeded => Check::new(
            "trust",
            Health::Ok,
            "nothing of the repository's runs (the built-in config, tools from outside it): the editor and agents need no trust".to_string(),
            None,
        ),
        crate::trust::Standing::Trusted => Check::new(
            "trust",
            Health::Ok,
            format!(
                "trusted: qg lsp, qg mcp and qg watch run {}",
                crate::trust::Fingerprint::of(workspace, config, &tools).describe()
            ),
            None,
        ),
        crate::trust::Standing::Untrusted { why } => Check::new(
            "trust",
            Health::Warning,
            format!("qg lsp, qg mcp and qg watch run nothing here: {why}"),
            Some("read what would run, then: qg trust".to_string()),
        ),
    }
}

/// What would stop an active gate's tool before it checks anything.
fn stop_checks(workspace: &Workspace, config: &Config) -> Vec<Check> {
    let stoppable = config
        .active_gates
        .iter()
        .any(|id| config.gates[id].stopped.is_some());
    let files = match stoppable {
        true => crate::scope::project_files(workspace, config).unwrap_or_default(),
        false => return Vec::new(),
    };
    config
        .active_gates
        .iter()
        .flat_map(|id| stops::checks(&workspace.root, &config.gates[id], &files))
        .collect()
}

/// Where the active gates' tools find their settings in this project
/// (`tool_config`: the files that exist and hold the tool's sections): a
/// change to one makes the next run check that gate's whole project scope.
fn settings_check(workspace: &Workspace, config: &Config) -> Check {
    let files = crate::scope::candidate_files(workspace).unwrap_or_default();
    let mut by_file: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for file in &files {
        for id in &config.active_gates {
            let gate = &config.gates[id];
            let entries: Vec<&config::ToolConfigFile> = gate.tool_config_for(file).collect();
            if entries.is_empty() {
                continue;
            }
            let content = std::fs::read(workspace.root.join(crate::file_name::to_path(file))).ok();
            let digest = crate::tool_config::settings::digest(file, content.as_deref(), &entries);
            if digest != "absent" {
                by_file.entry(file).or_default().push(id);
            }
        }
    }
    let detail = match by_file.is_empty() {
        true => "no settings file of the tools in the project (their defaults apply)".to_string(),
        false => {
            let each: Vec<String> = by_file
                .iter()
                .map(|(file, gates)| {
                    format!("{} ({})", crate::file_name::display(file), gates.join(", "))
                })
                .collect();
            format!(
                "{}: a change to one makes those gates check their whole project",
                each.join("; ")
            )
        }
    };
    Check::new("settings", Health::Ok, detail, None)
}

/// A path the tool's own config names to check that does not exist: the
/// tool's own run stops on it or warns, and the gate with it.
fn missing_selected_paths(root: &Path, own: &OwnSelection<'_>, name: &str) -> Option<Check> {
    let missing = own.selection.missing_entries(root);
    if missing.is_empty() {
        return None;
    }
    let (key, source) = own.key_and_source();
    let listed = missing.join(", ");
    let stops = own
        .spec
        .include
        .as_ref()
        .is_none_or(|k| k.missing == config::MissingPath::Stops);
    let (health, effect) = match stops {
        true => (
            Health::Error,
            "the tool's own run stops on it, and `qg run` with it",
        ),
        false => (
            Health::Warning,
            "the tool warns about it and checks the rest",
        ),
    };
    Some(Check::new(
        name,
        health,
        format!("{source} `{key}` names {listed}, which does not exist: {effect}"),
        Some(format!(
            "remove {listed} from `{key}` in {source}, or create it"
        )),
    ))
}

/// A gate whose last run reported mostly unresolved imports cannot see the
/// project's dependencies: its verdict is about the environment, not the
/// code.
fn import_checks(root: &Path, config: &Config) -> Vec<Check> {
    let Some(last) = crate::state::history::read(root).pop() else {
        return Vec::new();
    };
    let ctx = Toolbox::from_env(root);
    last.gates
        .iter()
        .filter_map(|record| {
            let gate = config.gates.get(&record.id)?;
            let unresolved = gate.unresolved_imports.as_ref()?;
            let mostly =
                crate::outcome::mostly_unresolved(record.unresolved_imports, record.violations);
            mostly.then(|| {
                Check::new(
                    &format!("{} imports", record.id),
                    Health::Warning,
                    format!(
                        "the last run ({}) reported {} unresolved imports among {} findings",
                        last.at, record.unresolved_imports, record.violations
                    ),
                    Some(ctx.unresolved_imports_advice(unresolved)),
                )
            })
        })
        .collect()
}

/// An import analyzer older than its command needs runs its older
/// command (`older_versions`), to the same answer: doctor says which.
fn analyzer_version_check(
    workspace: &Workspace,
    spec: &crate::config::ImportGraph,
) -> Option<Check> {
    let args = spec.version_args.as_ref()?;
    let tools = Toolbox::from_env(&workspace.root);
    let tool = tools.resolve_program(&spec.command[0]).ok()?;
    let line = version::ask(&tool, args, &tools)?;
    if let Some(why) = version::analyzer_too_old(spec, &line) {
        let min = spec.min_version.as_deref().unwrap_or_default();
        let upgrade = tools.upgrade_command(spec.install_hint.as_deref(), &spec.command[0], min);
        let detail = format!(
            "{why}: the gates that check importers check the whole project on every partial scope"
        );
        return Some(Check::new(
            "import graph",
            Health::Warning,
            detail,
            Some(upgrade),
        ));
    }
    let how = version::adapt_graph(spec, &line)?.adapted?;
    let detail = format!(
        "{} ({}): older than {}, {}: it {}",
        tool.path.display(),
        how.version,
        how.below,
        how.why,
        how.instead
    );
    Some(Check::new("import graph", Health::Ok, detail, None))
}

/// The roots the import graph resolves imports from (when a gate checks
/// importers), each with where it came from; what a tool's config names
/// that cannot be a root; and the imports the graph's analyzer could not
/// resolve that may name project modules (their importers are assumed).
fn import_graph_checks(workspace: &Workspace, config: &Config) -> Vec<Check> {
    let uses_graph = config
        .active_gates
        .iter()
        .any(|id| config.gates[id].importers);
    let Some(spec) = config.import_graph.as_ref().filter(|_| uses_graph) else {
        return Vec::new();
    };
    let Some(roots) = crate::graph::current_search_roots(workspace, config) else {
        return Vec::new();
    };
    let mut checks: Vec<Check> = analyzer_version_check(workspace, spec)
        .into_iter()
        .collect();
    checks.extend(roots.roots.iter().map(|root| {
        let detail = format!("{} — {}", root.path, root.from.join("; "));
        Check::new("import root", Health::Ok, detail, None)
    }));
    checks.extend(roots.problems.iter().map(|problem| {
        Check::new(
            "import root",
            Health::Warning,
            problem.clone(),
            Some("fix the path in the tool's config, or create the directory".into()),
        )
    }));
    let site = Toolbox::from_env(&workspace.root)
        .environment()
        .map(|e| e.site_packages())
        .unwrap_or_default();
    // An installed package answers an import whatever the project vendors:
    // no search root is missing for it.
    let installed = |module: &str| {
        let top = module
            .trim_start_matches('.')
            .split('.')
            .next()
            .unwrap_or_default();
        !top.is_empty()
            && site
                .iter()
                .any(|dir| dir.join(top).is_dir() || dir.join(format!("{top}.py")).is_file())
    };
    let assumed = crate::graph::assumed_imports(workspace, &installed).unwrap_or_default();
    let imports_in = |count: &crate::graph::AssumedCount| {
        format!(
            "{} in {}",
            crate::report::plural(count.imports, "import"),
            crate::report::plural(count.files, "file")
        )
    };
    if let Some(count) = assumed.in_repository {
        let example = count.example.as_deref().unwrap_or_default();
        checks.push(Check::new(
            "import graph",
            Health::Warning,
            format!(
                "{} could not be resolved by `{}` but name modules in the repository (e.g. {example}): their importers are checked whenever a file they could be changes",
                imports_in(&count),
                spec.command[0]
            ),
            Some("add the source root of those modules to the tools' search paths (mypy_path, extraPaths, ruff's src)".into()),
        ));
    }
    // A module that is neither here nor installed has no root to add: the
    // tools report the import themselves, and qg's only cost is a larger
    // scope — worth knowing, nothing to fix.
    if let Some(count) = assumed.nowhere {
        let example = count.example.as_deref().unwrap_or_default();
        checks.push(Check::new(
            "import graph",
            Health::Ok,
            format!(
                "{} name modules neither in the repository nor installed (e.g. {example}), which share a name with project modules: qg checks their importers whenever such a module changes, and there is nothing to fix for it (the tools report the import if it matters)",
                imports_in(&count)
            ),
            None,
        ));
    }
    checks
}

/// Each live daemon, and whether its answers are trusted: one whose answer
/// differed from a cold run is said (its gate runs cold), with the first
/// differing finding and the log holding both sides.
fn daemon_checks(root: &Path, config: &Config) -> Vec<Check> {
    crate::warm::control::status(root, config)
        .into_iter()
        .filter_map(|state| daemon_check(&state))
        .collect()
}

/// A warm gate's standing now — not the self-check of its last start: a
/// daemon that drifted since says so, and so does the memory of a drift
/// or of a tool that refused to start, daemon or none.
fn daemon_check(state: &crate::warm::control::DaemonState) -> Option<Check> {
    let name = format!("{} daemon", state.gate);
    let gate = &state.gate;
    let cold =
        |detail: String, fix: String| Some(Check::new(&name, Health::Warning, detail, Some(fix)));
    if let Some(status) = &state.status {
        let record = &status.record;
        if let Some(distrust) = &record.distrust {
            return cold(
                format!(
                    "answers cold for this tool and config: {}",
                    distrust.describe()
                ),
                format!(
                    "read both sides in {}; it answers warm again once its tool or settings change",
                    distrust.log
                ),
            );
        }
        if let Some(error) = &record.error {
            return cold(
                format!("answers cold: its tool failed: {error}"),
                warm_again(gate),
            );
        }
        let standing = match (state.answers_warm(), record.verified.is_some()) {
            (true, true) => format!(
                "its answers agreed with a cold run {} since it started{}",
                times(status.agreed),
                status
                    .last_agreed
                    .as_deref()
                    .map(|at| format!(" (last at {at})"))
                    .unwrap_or_default()
            ),
            (true, false) => {
                "not yet compared with a cold run (runs answer cold meanwhile)".to_string()
            }
            (false, _) => {
                "not for the current tool and config: runs answer cold until it starts again"
                    .to_string()
            }
        };
        return Some(Check::new(
            &name,
            Health::Ok,
            format!("{} (pid {}); {standing}", state.state, record.pid),
            None,
        ));
    }
    let standing = state.standing.as_ref()?;
    let fix = match standing.drifted() {
        true => "it answers warm again once its tool or settings change".to_string(),
        false => warm_again(gate),
    };
    cold(format!("answers cold: {}", standing.describe()), fix)
}

/// What to do about a daemon whose tool failed or refused to start: the
/// gate's verdict needs nothing (it answers cold); being warm may need the
/// project's own settings changed, which only the user can weigh.
fn warm_again(gate: &str) -> String {
    format!(
        "the gate's findings need nothing (it answers cold); to have it warm, mend what the tool said (it may refuse the project's own settings), then: qg daemon start --gate {gate}"
    )
}

/// `once`, `twice`, `3 times`.
fn times(n: u64) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

fn git_check(workspace: &Workspace) -> Check {
    let Some(repo) = &workspace.repo else {
        return Check::new(
            "git",
            Health::Warning,
            "not a git repository: only --scope project and explicit paths work".into(),
            Some("git init".into()),
        );
    };
    match repo.head() {
        Ok(head) => {
            let at = head
                .commit
                .map(|c| format!("at {}", &c.to_string()[..7]))
                .unwrap_or_else(|| "with no commits yet".into());
            Check::new(
                "git",
                Health::Ok,
                format!("branch {} {at}", head.branch),
                None,
            )
        }
        Err(e) => Check::new("git", Health::Error, e.to_string(), None),
    }
}

fn state_check(workspace: &Workspace) -> Check {
    let store = StateStore::new(&workspace.root);
    match store.health() {
        Ok(None) => Check::new(
            "state",
            Health::Ok,
            "no state yet (the first auto run checks the project)".into(),
            None,
        ),
        Ok(Some(branches)) => Check::new(
            "state",
            Health::Ok,
            format!(
                "{} readable; baselines for: {}",
                store.path().display(),
                branches.join(", ")
            ),
            None,
        ),
        Err(why) => Check::new(
            "state",
            Health::Error,
            format!("{} is unusable: {why}", store.path().display()),
            Some(
                "qg state reset --all-branches (the next run keeps a copy of the old file)".into(),
            ),
        ),
    }
}
