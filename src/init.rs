//! `qg init`: inspect a project and write a commented `.st3/quality.yaml`
//! tailored to it (or a `[tool.qg]` table appended to `pyproject.toml`).
//! The project's own `.gitignore` is left alone: `.st3/.gitignore` keeps
//! qg's state and logs out of commits.
//!
//! Tools are recognized by convention from each default gate's program name
//! (`[tool.<name>]` in pyproject.toml, `<name>.toml`, `<name>.ini`,
//! `<name>config.json`, a `[<name>]` section of setup.cfg), so no tool is
//! named here; the gate definitions are copied from the embedded default.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::config::{self, DEFAULT_TOOLS, EMBEDDED_DEFAULT, PROJECT_CONFIG, PYPROJECT};
use crate::error::QgError;
use crate::tools::Toolbox;

/// What `qg init` found out about a gate's tool.
#[derive(Debug, Clone)]
pub(crate) struct ToolFinding {
    /// Gate id.
    pub(crate) gate: String,
    /// Program name (`command[0]`).
    pub(crate) program: String,
    /// Where it resolves, if installed: root-relative inside the project
    /// (`.venv/bin/ruff`), absolute outside it.
    pub(crate) installed: Option<PathBuf>,
    /// The tool's own config files or sections found in the project.
    pub(crate) configured_in: Vec<String>,
    /// How to install it.
    pub(crate) install_hint: Option<String>,
    /// The embedded default leaves the gate off (ty, pyrefly): only the
    /// project's own config of the tool activates it.
    pub(crate) opt_in: bool,
}

impl ToolFinding {
    /// A default gate is activated when its tool is installed or the
    /// project configures it (then it is meant to be used and will be
    /// installed); an opt-in gate only when the project configures it —
    /// a type checker that happens to be installed is not the project's
    /// choice.
    pub(crate) fn active(&self) -> bool {
        match self.opt_in {
            true => !self.configured_in.is_empty(),
            false => self.installed.is_some() || !self.configured_in.is_empty(),
        }
    }
}

/// What `qg init` learned about the project.
#[derive(Debug, Clone)]
pub(crate) struct Inspection {
    /// Per default gate.
    pub(crate) tools: Vec<ToolFinding>,
    /// `src` layout, flat packages, or loose modules.
    pub(crate) layout: String,
    /// Directories that hold Python code.
    pub(crate) source_dirs: Vec<String>,
    /// Generated or third-party directories present (to exclude).
    pub(crate) excluded_dirs: Vec<String>,
    /// Parent branch, when one resolves.
    pub(crate) parent_branch: Option<String>,
    /// The workspace's members, each with how it was found and the gates
    /// that run in it with its own config.
    pub(crate) members: Vec<crate::members::MemberRuns>,
}

/// What `qg init` did.
#[derive(Debug)]
pub(crate) struct InitOutcome {
    /// The config written.
    pub(crate) config_path: PathBuf,
    /// The inspection it was tailored from.
    pub(crate) inspection: Inspection,
}

/// Directories that are never source, when present.
const NOT_SOURCE: [&str; 10] = [
    ".venv",
    "venv",
    "env",
    ".tox",
    ".nox",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "docs/_build",
];

/// Where `qg init` writes the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination {
    /// `.st3/quality.yaml`, the whole config with every gate spelled out:
    /// the default, because it never rewrites a file the project owns and
    /// it shows (and lets one edit) exactly what each gate runs.
    Yaml,
    /// A `[tool.qg]` table appended to `pyproject.toml`: the project part
    /// only, the gates are the built-in ones.
    PyProject,
}

/// Inspects the project and writes its config; refuses to overwrite one
/// unless `force`, and to write one the other would shadow or be shadowed by.
pub(crate) fn init(
    root: &Path,
    force: bool,
    destination: Destination,
) -> Result<InitOutcome, QgError> {
    let yaml_path = root.join(PROJECT_CONFIG);
    let pyproject_path = root.join(PYPROJECT);
    let pyproject = std::fs::read_to_string(&pyproject_path).ok();
    let has_table = pyproject.as_deref().is_some_and(config::has_tool_qg);
    let inspection = inspect(root)?;
    let config_path = match destination {
        Destination::Yaml => {
            if yaml_path.exists() && !force {
                return Err(QgError::Usage(format!(
                    "{PROJECT_CONFIG} already exists; pass --force to overwrite it"
                )));
            }
            if has_table {
                return Err(QgError::Usage(format!(
                    "{PYPROJECT} has a [tool.qg] table, which {PROJECT_CONFIG} would \
                     shadow; remove the table first, or keep using it"
                )));
            }
            write_yaml(&yaml_path, &render(&inspection))?;
            yaml_path
        }
        Destination::PyProject => {
            let Some(existing) = pyproject else {
                return Err(QgError::Usage(format!(
                    "there is no {PYPROJECT} to add a [tool.qg] table to; run `qg init` \
                     without --pyproject to write {PROJECT_CONFIG}"
                )));
            };
            if has_table {
                return Err(QgError::Usage(format!(
                    "{PYPROJECT} already has a [tool.qg] table; qg never rewrites it, \
                     edit it or remove it first"
                )));
            }
            if yaml_path.exists() {
                return Err(QgError::Usage(format!(
                    "{PROJECT_CONFIG} exists and would take precedence over [tool.qg]; \
                     delete it first"
                )));
            }
            append_table(&pyproject_path, &existing, &render_table(&inspection))?;
            pyproject_path
        }
    };
    // qg's state and logs stay out of commits from the start.
    crate::state::ignore_state_files(&root.join(".st3"));
    Ok(InitOutcome {
        config_path,
        inspection,
    })
}

fn write_yaml(path: &Path, text: &str) -> Result<(), QgError> {
    config::parse(text, PROJECT_CONFIG)
        .map_err(|e| QgError::Internal(format!("qg init generated an invalid config: {e}")))?;
    let dir = path.parent().expect("config has a directory");
    std::fs::create_dir_all(dir)
        .map_err(|e| QgError::io(format!("cannot create {}", dir.display()), e))?;
    crate::atomic_file::write(path, text.as_bytes())
        .map_err(|e| QgError::io(format!("cannot write {}", path.display()), e))
}

/// Appends `table` to the project's own `pyproject.toml`, leaving every
/// byte before it as it was (no re-serialization that would reorder or
/// drop the user's comments).
fn append_table(path: &Path, existing: &str, table: &str) -> Result<(), QgError> {
    let separator = match existing {
        "" => "",
        t if t.ends_with("\n\n") => "",
        t if t.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    let text = format!("{existing}{separator}{table}");
    match config::parse_pyproject(&text, PYPROJECT) {
        Ok(Some(_)) => {}
        Ok(None) => return Err(QgError::Internal("qg init wrote no [tool.qg] table".into())),
        // The user's own file does not parse: say so, change nothing.
        Err(e) if existing.parse::<toml::Table>().is_err() => {
            return Err(QgError::Usage(format!(
                "{PYPROJECT} is not valid TOML ({e}); fix it first"
            )))
        }
        Err(e) => {
            return Err(QgError::Internal(format!(
                "qg init generated an invalid [tool.qg]: {e}"
            )))
        }
    }
    crate::atomic_file::write(path, text.as_bytes())
        .map_err(|e| QgError::io(format!("cannot write {}", path.display()), e))
}

/// Looks at the project without changing anything.
pub(crate) fn inspect(root: &Path) -> Result<Inspection, QgError> {
    let default = config::parse(EMBEDDED_DEFAULT, config::EMBEDDED_ORIGIN)?;
    let pyproject = read_toml(&root.join("pyproject.toml"));
    let setup_cfg = std::fs::read_to_string(root.join("setup.cfg")).unwrap_or_default();
    let ctx = Toolbox::from_env(root);
    // The default's active gates in their order, then the opt-in ones.
    let opt_in = default
        .gates
        .keys()
        .filter(|id| !default.active_gates.contains(id));
    let mut tools: Vec<ToolFinding> = default
        .active_gates
        .iter()
        .chain(opt_in)
        .map(|id| {
            let gate = &default.gates[id];
            let program = gate.command[0].clone();
            ToolFinding {
                gate: id.clone(),
                installed: ctx.resolve(gate).ok().map(|t| shown_path(root, t.path)),
                configured_in: tool_configs(root, &program, pyproject.as_ref(), &setup_cfg),
                install_hint: ctx.install_hint(gate),
                opt_in: !default.active_gates.contains(id),
                program,
            }
        })
        .collect();
    let members = crate::workspace::Workspace::discover(root)
        .and_then(|ws| crate::members::with_own_runs(&ws, &default))?;
    for tool in &mut tools {
        // A tool only the members configure is the project's choice too.
        for (member, own) in &members {
            if own
                .iter()
                .any(|id| id.split('@').next() == Some(tool.gate.as_str()))
            {
                tool.configured_in
                    .push(format!("{}'s own config", member.dir));
            }
        }
    }
    let (layout, source_dirs) = layout(root);
    let excluded_dirs = NOT_SOURCE
        .iter()
        .filter(|d| root.join(d).is_dir())
        .map(|d| d.to_string())
        .collect();
    Ok(Inspection {
        tools,
        layout,
        source_dirs,
        excluded_dirs,
        parent_branch: parent_branch(root),
        members,
    })
}

fn read_toml(path: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    text.parse::<toml::Table>().ok()
}

/// Where the project configures `program`, by the common conventions.
fn tool_configs(
    root: &Path,
    program: &str,
    pyproject: Option<&toml::Table>,
    setup_cfg: &str,
) -> Vec<String> {
    let mut found = Vec::new();
    let in_pyproject = pyproject
        .and_then(|t| t.get("tool"))
        .and_then(|t| t.get(program))
        .is_some();
    if in_pyproject {
        found.push(format!("pyproject.toml [tool.{program}]"));
    }
    for name in [
        format!("{program}.toml"),
        format!(".{program}.toml"),
        format!("{program}.ini"),
        format!(".{program}.ini"),
        format!("{program}config.json"),
    ] {
        if root.join(&name).is_file() {
            found.push(name);
        }
    }
    let section = format!("[{program}]");
    if setup_cfg.lines().any(|l| l.trim() == section) {
        found.push(format!("setup.cfg {section}"));
    }
    found
}

/// `src` layout, flat packages, or loose modules, with the code directories.
fn layout(root: &Path) -> (String, Vec<String>) {
    let mut dirs: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.') && !NOT_SOURCE.contains(&name.as_str()))
        .filter(|name| has_python(&root.join(name), 3))
        .collect();
    dirs.sort();
    let layout = if dirs.iter().any(|d| d == "src") {
        "src layout (packages under src/)"
    } else if dirs
        .iter()
        .any(|d| root.join(d).join("__init__.py").is_file())
    {
        "flat layout (packages at the top level)"
    } else {
        "loose modules"
    };
    (layout.to_string(), dirs)
}

fn has_python(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            depth > 0 && has_python(&path, depth - 1)
        } else {
            path.extension().is_some_and(|x| x == "py" || x == "pyi")
        }
    })
}

fn parent_branch(root: &Path) -> Option<String> {
    let repo = crate::git::discover(root).ok()??;
    // The project's main line, even when it is the branch checked out now.
    repo.resolve_parent(None, None, "")
        .ok()?
        .ok()
        .map(|p| p.name)
}

/// The header both destinations start with: what was found, and why each
/// gate is on or off.
fn render_findings(out: &mut String, inspection: &Inspection) {
    let _ = writeln!(
        out,
        "# qg configuration, written by `qg init` for this project."
    );
    let _ = writeln!(
        out,
        "# Reference: the qg book, \"Configuration reference\". Edit freely; `qg doctor` checks it."
    );
    let _ = writeln!(out, "#");
    let _ = writeln!(out, "# Layout: {}.", inspection.layout);
    for tool in &inspection.tools {
        let _ = writeln!(out, "# {}", describe(tool));
    }
    render_members(out, inspection);
}

/// The workspace members found, as comments: they are found again on every
/// run (a new member counts at once); a `members` list fixes them instead.
fn render_members(out: &mut String, inspection: &Inspection) {
    if inspection.members.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "# Workspace members (found on every run; a `members` list of directories fixes them):"
    );
    for (member, own) in &inspection.members {
        let runs = match own.is_empty() {
            true => "checked by the project's runs".to_string(),
            false => format!("its own runs: {}", own.join(", ")),
        };
        let _ = writeln!(out, "#   {} ({}): {runs}", member.dir, member.found_by);
    }
}

/// The gates to activate, and the comment to write when none was found
/// (then every default gate is active, and `qg run` says what to install).
fn active_gates(inspection: &Inspection) -> (Vec<&str>, Option<&'static str>) {
    let active: Vec<&str> = inspection
        .tools
        .iter()
        .filter(|t| t.active())
        .map(|t| t.gate.as_str())
        .collect();
    if !active.is_empty() {
        return (active, None);
    }
    let defaults = inspection
        .tools
        .iter()
        .filter(|t| !t.opt_in)
        .map(|t| t.gate.as_str())
        .collect();
    let why = "# No tool is installed or configured yet: every default gate is active,\n\
               # and `qg run` will say what to install.";
    (defaults, Some(why))
}

/// The `[tool.qg]` table: the project part; the gates are the built-in
/// ones, so the table stays a dozen lines.
pub(crate) fn render_table(inspection: &Inspection) -> String {
    let quoted = |items: &[&str]| {
        let items: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
        format!("[{}]", items.join(", "))
    };
    let mut out = String::from("[tool.qg]\n");
    render_findings(&mut out, inspection);
    let _ = writeln!(
        out,
        "# The gates are qg's built-in ones (`qg explain <gate>` shows each)."
    );
    let _ = writeln!(out, "version = \"1\"");
    let (active, why) = active_gates(inspection);
    if let Some(why) = why {
        let _ = writeln!(out, "{why}");
    }
    let _ = writeln!(out, "active_gates = {}", quoted(&active));
    if let Some(parent) = &inspection.parent_branch {
        let _ = writeln!(
            out,
            "# For --scope branch (and auto's first run on a new branch)."
        );
        let _ = writeln!(out, "parent_branch = \"{parent}\"");
    }
    let _ = writeln!(out, "\n[tool.qg.project_scope]");
    let _ = writeln!(
        out,
        "# Python files and stubs, and the notebooks, Markdown and settings files ruff checks."
    );
    let _ = writeln!(out, "include_globs = {}", quoted_list(&default_includes()));
    let excluded: Vec<String> = excluded_globs(inspection);
    let _ = writeln!(
        out,
        "# Excluded from every scope (files git ignores are never checked anyway)."
    );
    let _ = writeln!(out, "exclude_globs = {}", quoted_list(&excluded));
    out
}

/// The commented config text.
pub(crate) fn render(inspection: &Inspection) -> String {
    let mut out = String::new();
    render_findings(&mut out, inspection);
    let _ = writeln!(out, "version: \"1\"");
    let (active, why) = active_gates(inspection);
    if let Some(why) = why {
        let _ = writeln!(out, "{why}");
    }
    let _ = writeln!(out, "active_gates: [{}]", active.join(", "));
    render_scope(&mut out, inspection);
    if let Some(parent) = &inspection.parent_branch {
        let _ = writeln!(out, "\n# For --scope branch (and auto's first run on a new branch).\nparent_branch: {parent}");
    }
    let _ = writeln!(
        out,
        "\nartifact_logging: {{enabled: true, output_dir: \".st3/logs\", max_files: 200}}\n"
    );
    out.push_str(DEFAULT_TOOLS);
    out
}

/// `path` relative to `root` when inside it.
fn shown_path(root: &Path, path: PathBuf) -> PathBuf {
    match path.strip_prefix(root) {
        Ok(inside) => inside.to_path_buf(),
        Err(_) => path,
    }
}

fn describe(tool: &ToolFinding) -> String {
    let installed = match &tool.installed {
        // The file is committed: a path on this machine outside the
        // project (a manager's environment, an activated virtualenv) means
        // nothing on the next one.
        Some(path) if path.is_absolute() => "installed outside the project".to_string(),
        Some(path) => format!(
            "installed at {}",
            crate::file_name::from_os_str(path.as_os_str())
        ),
        None => format!(
            "not installed{}",
            tool.install_hint
                .as_ref()
                .map(|h| format!(" ({h})"))
                .unwrap_or_default()
        ),
    };
    let configured = if tool.configured_in.is_empty() {
        "no project config".to_string()
    } else {
        format!("configured in {}", tool.configured_in.join(", "))
    };
    let verdict = match (tool.active(), tool.opt_in) {
        (true, _) => "active",
        (false, true) => "not active (activated when the project configures it)",
        (false, false) => "not active",
    };
    format!(
        "{}: `{}` {installed}; {configured} → {verdict}",
        tool.gate, tool.program
    )
}

fn render_scope(out: &mut String, inspection: &Inspection) {
    let _ = writeln!(out, "\nproject_scope:");
    let _ = writeln!(
        out,
        "  # Python files and stubs, and the notebooks, Markdown and settings files ruff checks."
    );
    let _ = writeln!(out, "  include_globs: {}", quoted_list(&default_includes()));
    if !inspection.source_dirs.is_empty() {
        let _ = writeln!(
            out,
            "  # Python code found in: {}",
            inspection.source_dirs.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  # Excluded from every scope (files git ignores are never checked anyway)."
    );
    let _ = writeln!(out, "  exclude_globs:");
    for glob in excluded_globs(inspection) {
        let _ = writeln!(out, "    - \"{glob}\"");
    }
}

/// The directories found that are never source (each `dir/**`), then
/// the built-in config's excludes.
fn excluded_globs(inspection: &Inspection) -> Vec<String> {
    let mut excluded: Vec<String> = inspection
        .excluded_dirs
        .iter()
        .map(|dir| format!("{dir}/**"))
        .collect();
    for glob in crate::config::default_project_globs().1 {
        if !excluded.contains(&glob) {
            excluded.push(glob);
        }
    }
    excluded
}

/// The built-in config's include globs: an initialised project checks
/// every file the default would.
fn default_includes() -> Vec<String> {
    crate::config::default_project_globs().0
}

/// `["a", "b"]`, as TOML and YAML flow lists both read it.
fn quoted_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_project_part_then_the_tools_part() {
        assert!(EMBEDDED_DEFAULT.ends_with(DEFAULT_TOOLS));
        assert!(
            DEFAULT_TOOLS.contains("\nimport_graph:\n") && DEFAULT_TOOLS.contains("\ngates:\n")
        );
        assert!(!DEFAULT_TOOLS.contains("\nactive_gates:"));
    }

    #[test]
    fn tool_configs_by_convention() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("lint.toml"), "").unwrap();
        std::fs::write(tmp.path().join("checkconfig.json"), "{}").unwrap();
        let pyproject: toml::Table = "[tool.lint]\nx = 1\n".parse().unwrap();
        let found = tool_configs(tmp.path(), "lint", Some(&pyproject), "[metadata]\n[lint]\n");
        assert_eq!(
            found,
            [
                "pyproject.toml [tool.lint]",
                "lint.toml",
                "setup.cfg [lint]"
            ]
        );
        assert_eq!(
            tool_configs(tmp.path(), "check", None, ""),
            ["checkconfig.json"]
        );
    }
}
