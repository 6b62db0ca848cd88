//! `qg explain GATE`: what a gate runs, with which program, on which files,
//! and how its findings are fixed.

use clap::Args;

use super::{current_dir, print_stdout};
use crate::error::QgError;
use crate::explain::{self, GateExplanation};
use crate::quote::shell_quote;

#[derive(Debug, Args)]
pub(super) struct ExplainArgs {
    /// The gate id (a key under `gates` in the config).
    gate: String,
    /// Config file (default: .st3/quality.yaml at the project root, else [tool.qg] in
    /// pyproject.toml,
    /// else the built-in default; a .toml file is read for its [tool.qg]).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: ExplainFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExplainFormat {
    Human,
    Json,
}

pub(super) fn command(args: ExplainArgs) -> Result<i32, QgError> {
    let (workspace, config) = crate::run::prepare(&current_dir()?, args.config.as_deref())?;
    let explained = explain::explain(&workspace, &config, &args.gate)?;
    let text = match args.format {
        ExplainFormat::Json => {
            serde_json::to_string(&explained).expect("an explanation serializes") + "\n"
        }
        ExplainFormat::Human => human(&explained),
    };
    print_stdout(&text);
    Ok(i32::from(explained.problem.is_some()))
}

fn human(e: &GateExplanation) -> String {
    let argv = |words: &[String]| words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>();
    let mut command = argv(&e.command);
    if e.pass_files {
        command.push("FILES…".into());
    }
    let active = if e.active { "active" } else { "not active" };
    let mut out = format!("{} — {} ({active})\n", e.id, e.name);
    let cd = match &e.working_dir {
        Some(dir) => format!("cd {} && ", shell_quote(dir)),
        None => String::new(),
    };
    out.push_str(&format!("  command:  {cd}{}\n", command.join(" ")));
    match (&e.program, &e.problem) {
        (Some(program), _) => {
            let version = e.tool_version.as_deref().unwrap_or("version unknown");
            out.push_str(&format!("  program:  {program} ({version})\n"));
            if let Some(older) = &e.older_version {
                out.push_str(&format!("            {older}\n"));
            }
        }
        (None, Some(problem)) => {
            out.push_str(&format!("  program:  {}\n", problem.message));
            if let Some(fix) = &problem.fix {
                out.push_str(&format!("            fix: {fix}\n"));
            }
        }
        (None, None) => {}
    }
    let types = match e.file_types.is_empty() && e.file_names.is_empty() {
        true => "any".to_string(),
        false => [e.file_types.as_slice(), e.file_names.as_slice()]
            .concat()
            .join(" "),
    };
    out.push_str(&format!("  files:    {types}; {}\n", e.files_from));
    if e.checks_importers {
        out.push_str("            on a partial scope, also the files that import a changed one\n");
    }
    if let Some(which) = &e.importers_of {
        out.push_str(&format!("            {which}\n"));
    }
    if !e.settings.is_empty() {
        out.push_str(&format!(
            "  settings: {}\n            a change to one makes the gate check its whole project\n",
            e.settings.join(", ")
        ));
    }
    if let Some(roots) = &e.import_roots {
        out.push_str(
            "  imports:  resolved from these roots, as the import graph finds importers:\n",
        );
        for root in roots {
            out.push_str(&format!(
                "            {} ({})\n",
                root.path,
                root.from.join("; ")
            ));
        }
    }
    if e.project_wide {
        out.push_str("            runs on the whole project, reports the scoped files\n");
    }
    out.push_str(&format!(
        "  output:   {}; fails on {} and above; timeout {} s\n",
        e.parser,
        e.fail_on.as_str(),
        e.timeout_seconds
    ));
    match &e.fix {
        Some(fix) => {
            out.push_str(&format!(
                "  qg fix:   {} FILES…",
                argv(&fix.command).join(" ")
            ));
            if !fix.unsafe_args.is_empty() {
                out.push_str(&format!(" (--unsafe adds {})", fix.unsafe_args.join(" ")));
            }
            out.push('\n');
        }
        None => out.push_str("  qg fix:   no fixer\n"),
    }
    if let Some(hint) = e.fix_hint.as_ref().or(e.rerun_hint.as_ref()) {
        out.push_str(&format!("  hint:     {hint}\n"));
    }
    if let Some(warm) = &e.warm {
        let state = match warm.live {
            true => "a daemon is live",
            false => "no daemon now: qg daemon start",
        };
        let command = argv(&warm.command).join(" ");
        let line = format!("  warm:     {command} ({}); {state}\n", warm.protocol);
        out.push_str(&line);
    }
    out
}
