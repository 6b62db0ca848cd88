//! `qg explain GATE`: what one gate runs and how — its command, the
//! program that resolves and its version, where its files come from, how
//! its output is read, and how its findings are fixed. Read-only.

use serde::Serialize;

use crate::config::{Config, Gate};
use crate::error::QgError;
use crate::parse::ParserSpec;
use crate::tools::resolve::ResolveError;
use crate::tools::Toolbox;
use crate::violation::Severity;
use crate::workspace::Workspace;

/// One gate, explained: the `qg explain --format json` document (schema:
/// `schemas/explain.json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GateExplanation {
    /// Gate id.
    pub(crate) id: String,
    /// Human name.
    pub(crate) name: String,
    /// Whether a plain `qg run` runs it (`active_gates`).
    pub(crate) active: bool,
    /// The command as configured; the files follow it when `pass_files`.
    pub(crate) command: Vec<String>,
    /// Whether the files are appended to the command.
    pub(crate) pass_files: bool,
    /// The program `command[0]` resolves to, when it does.
    pub(crate) program: Option<String>,
    /// The program's own version line, when it answers.
    pub(crate) tool_version: Option<String>,
    /// Why this tool's version runs the gate another way (`older_versions`),
    /// and what it does instead: the rest of the explanation is that way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) older_version: Option<String>,
    /// Why the program cannot run, and what fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) problem: Option<Problem>,
    /// Suffixes of the files it checks (empty, and no `file_names`: any).
    pub(crate) file_types: Vec<String>,
    /// Names of further files it checks wherever they are.
    pub(crate) file_names: Vec<String>,
    /// Where its files come from: the tool's own config, or qg's list.
    pub(crate) files_from: String,
    /// Where the tool runs, root-relative (a workspace member's directory,
    /// or the gate's `working_dir`); none: the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) working_dir: Option<String>,
    /// The files its tool reads its settings from (`tool_config`, sections
    /// in brackets): a change makes the gate check its whole project.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) settings: Vec<String>,
    /// On a partial scope, it also checks the files importing a changed one.
    pub(crate) checks_importers: bool,
    /// For a gate that checks importers: which changes add them, in words
    /// (`interface_aware_importers`, and whether it was proved wrong here).
    /// The human output's; JSON has the config's setting.
    #[serde(skip)]
    pub(crate) importers_of: Option<String>,
    /// For a gate that checks importers: the roots the import graph
    /// resolves imports from, with where each came from.
    pub(crate) import_roots: Option<Vec<crate::graph::roots::SearchRoot>>,
    /// It runs on the whole project and reports the scoped files.
    pub(crate) project_wide: bool,
    /// Its files may be split over several runs.
    pub(crate) batchable: bool,
    /// Wall-clock limit of one run.
    pub(crate) timeout_seconds: u64,
    /// The lowest severity that fails it.
    pub(crate) fail_on: Severity,
    /// How its output becomes findings.
    pub(crate) parser: &'static str,
    /// How `qg fix` fixes its findings, when it can.
    pub(crate) fix: Option<Fixer>,
    /// The hint shown for its failing files (`{files}` stands for them).
    pub(crate) fix_hint: Option<String>,
    /// The command that checks its failing files again, for a gate that
    /// cannot fix.
    pub(crate) rerun_hint: Option<String>,
    /// How it is kept warm between runs (`qg daemon`), when it can be.
    pub(crate) warm: Option<Warm>,
}

/// A gate's `daemon` section, and its daemon now.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Warm {
    /// `lsp` or `command`.
    pub(crate) protocol: &'static str,
    /// The long-lived process.
    pub(crate) command: Vec<String>,
    /// Whether a daemon lives for it in this project.
    pub(crate) live: bool,
}

/// A gate's fixer.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Fixer {
    /// Program and arguments; the files follow.
    pub(crate) command: Vec<String>,
    /// Added by `qg fix --unsafe`.
    pub(crate) unsafe_args: Vec<String>,
    /// Added by `qg fix --diff`.
    pub(crate) diff_args: Vec<String>,
}

/// Why a gate's program cannot run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Problem {
    /// What is wrong.
    pub(crate) message: String,
    /// The command that fixes it.
    pub(crate) fix: Option<String>,
}

/// Explains gate `id` of `config`; an unknown id is a usage error naming
/// the gates there are.
pub(crate) fn explain(
    ws: &Workspace,
    config: &Config,
    id: &str,
) -> Result<GateExplanation, QgError> {
    let root = ws.root.as_path();
    let gate = config.gate(id)?;
    let tools = Toolbox::from_env(root);
    let (program, tool_version, problem) = match tools.resolve(gate) {
        Ok(tool) => {
            let args = gate.version_args.clone().unwrap_or_default();
            let version = (!args.is_empty())
                .then(|| crate::tools::version::ask(&tool, &args, &tools))
                .flatten();
            (Some(tool.path.display().to_string()), version, None)
        }
        Err(e) => (None, None, Some(problem(&tools, gate, e))),
    };
    // The gate as a run runs it with this version of its tool (ruff 0.14
    // formats without `--output-format=json`): what is explained.
    let adapted = tool_version
        .as_deref()
        .and_then(|line| crate::tools::version::adapt(gate, line));
    let older_version = adapted
        .as_ref()
        .and_then(|g| g.adapted.as_ref())
        .map(|a| format!("{}; it {}", a.why_cold(), a.instead));
    let gate = adapted.as_ref().unwrap_or(gate);
    Ok(GateExplanation {
        id: gate.id.clone(),
        name: gate.name.clone(),
        active: config.active_gates.contains(&gate.id),
        command: gate.command.clone(),
        pass_files: gate.pass_files,
        program,
        tool_version,
        older_version,
        problem,
        file_types: gate.file_types.clone(),
        file_names: gate.file_names.clone(),
        files_from: crate::selection::files_from(root, gate).unwrap_or_else(|why| why),
        working_dir: gate.working_dir.as_deref().map(crate::paths::to_slash),
        settings: gate
            .tool_config
            .iter()
            .map(|c| match c.sections.is_empty() {
                true => c.file.clone(),
                false => format!("{} [{}]", c.file, c.sections.join(", ")),
            })
            .collect(),
        checks_importers: gate.importers,
        importers_of: gate.importers.then(|| importers_of(root, config)),
        import_roots: gate
            .importers
            .then(|| crate::graph::current_search_roots(ws, config))
            .flatten()
            .map(|roots| roots.roots),
        project_wide: gate.project_wide,
        batchable: gate.batchable,
        timeout_seconds: gate.timeout.as_secs(),
        fail_on: gate.fail_on,
        parser: match gate.parser {
            ParserSpec::Json(_) => "json_violations",
            ParserSpec::Text(_) => "text_violations",
            ParserSpec::ExitCode => "exit_code",
        },
        fix: gate.fix.as_ref().map(|fix| Fixer {
            command: fix.command.clone(),
            unsafe_args: fix.unsafe_args.clone(),
            diff_args: fix.diff_args.clone(),
        }),
        fix_hint: gate.fix_hint.clone(),
        rerun_hint: gate.rerun_hint.clone(),
        warm: gate.daemon.as_ref().map(|daemon| Warm {
            protocol: match daemon.protocol {
                crate::config::Protocol::Lsp(_) => "lsp",
                crate::config::Protocol::Command(_) => "command",
            },
            command: daemon.command.clone(),
            live: crate::warm::slot::Slot::new(root, &gate.id).is_alive(),
        }),
    })
}

/// Which changes add their importers to a partial scope, in words.
fn importers_of(root: &std::path::Path, config: &Config) -> String {
    if !config.interface_aware_importers {
        return "every change adds them (interface_aware_importers: false)".into();
    }
    match crate::state::importers_off::read(root) {
        Some(_) => format!(
            "every change adds them: leaving out a body-only edit's was proved wrong here ({})",
            crate::state::importers_off::IMPORTERS_OFF_FILE
        ),
        None => {
            "an edit of a body no importer can see adds none (interface_aware_importers)".into()
        }
    }
}

fn problem(tools: &Toolbox<'_>, gate: &Gate, error: ResolveError) -> Problem {
    let program = &gate.command[0];
    match error {
        ResolveError::NotFound { searched } => Problem {
            message: format!(
                "`{program}` is not installed (looked in {})",
                searched
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            fix: tools.install_hint(gate),
        },
        ResolveError::NotExecutable(path) => Problem {
            message: format!("{} is not executable", path.display()),
            fix: Some(format!("chmod +x {}", path.display())),
        },
    }
}
