//! Finding a project's tools and running them as its own: where each
//! program resolves, the environment that activates its virtualenv, the
//! install command when it is missing, and which version it is.

pub(crate) mod dependencies;
pub(crate) mod environment;
pub(crate) mod resolve;
pub(crate) mod version;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::config::Gate;
use crate::process::Cancel;
use resolve::{ResolveError, ResolvedTool};

/// Where a project's tools are found, and how they run: the project's
/// virtualenv first (`$VIRTUAL_ENV`, `.venv`, `venv`), then `PATH`, as if
/// that virtualenv were activated.
///
/// A run makes one and hands it down (scope, import graph, gates, exec):
/// the environment is found and each program resolved once, and every
/// stage sees the same answer. Clones share what was found.
#[derive(Debug, Clone)]
pub(crate) struct Toolbox<'a> {
    /// Project root (canonical).
    pub(crate) root: &'a Path,
    /// `$VIRTUAL_ENV` at start.
    pub(crate) virtual_env: Option<OsString>,
    /// `$PATH` at start.
    pub(crate) path_var: Option<OsString>,
    /// The run the tools belong to: cancelling it kills them.
    pub(crate) cancel: Cancel,
    /// What was found so far, shared by clones.
    found: Arc<Found>,
}

/// The environment and the programs a toolbox found, each looked up once.
#[derive(Debug, Default)]
struct Found {
    /// The project's environment (or none).
    environment: OnceLock<Option<environment::Environment>>,
    /// Program name → where it resolved.
    programs: Mutex<HashMap<String, Result<ResolvedTool, ResolveError>>>,
}

impl Toolbox<'_> {
    /// Captures the environment qg itself was started with.
    pub(crate) fn from_env(root: &Path) -> Toolbox<'_> {
        Toolbox {
            root,
            virtual_env: std::env::var_os("VIRTUAL_ENV"),
            path_var: std::env::var_os("PATH"),
            cancel: Cancel::default(),
            found: Arc::default(),
        }
    }

    /// The same tools, run as part of the run `cancel` stops.
    pub(crate) fn cancelled_by(self, cancel: &Cancel) -> Self {
        Toolbox {
            cancel: cancel.clone(),
            ..self
        }
    }
}

impl Toolbox<'_> {
    /// The gate's install command, as the project's manager spells it
    /// (`uv add --dev mypy`, `poetry add --group dev mypy`, or pip into the
    /// project's virtualenv: `.venv/bin/pip install mypy`), so the tool
    /// lands where qg looks first.
    /// A tool the project already declares as a dependency of a managed
    /// project is installed by installing the project (`poetry install`).
    pub(crate) fn install_hint(&self, gate: &Gate) -> Option<String> {
        let hint = gate.install_hint.as_deref()?;
        if let Some(package) = hint.strip_prefix("{install} ") {
            if environment::detect(self.root).is_some() && environment::declares(self.root, package)
            {
                return Some(self.expand_hint("{install_project}"));
            }
        }
        Some(self.expand_hint(hint))
    }

    /// The command that upgrades the gate's tool to at least `min`, as the
    /// project's manager spells it (`.venv/bin/pip install 'mypy>=1.11'`):
    /// its install hint with the version bound, which a plain install of
    /// a package already there would not move.
    pub(crate) fn upgrade_hint(&self, gate: &Gate, min: &str) -> String {
        self.upgrade_command(gate.install_hint.as_deref(), &gate.command[0], min)
    }

    /// [`Toolbox::upgrade_hint`] for any tool: its `install_hint` (or its
    /// program, named, when it has none) and the version it needs.
    pub(crate) fn upgrade_command(
        &self,
        install_hint: Option<&str>,
        program: &str,
        min: &str,
    ) -> String {
        let package = install_hint
            .and_then(|hint| hint.strip_prefix("{install} "))
            .map(|package| package.trim_matches('\''));
        let name = package.map(|p| p.split('[').next().unwrap_or(p));
        let in_group = name.and_then(|name| environment::upgrade_in_group(self.root, name));
        match (package, in_group) {
            // Where the project's lock file pins it.
            (Some(package), Some(add)) => format!("{add} '{package}>={min}'"),
            (Some(package), None) => self.expand_hint(&format!("{{install}} '{package}>={min}'")),
            (None, _) => format!("upgrade `{program}` to {min} or later"),
        }
    }

    /// The project's environment, and why it is the one.
    pub(crate) fn environment(&self) -> Option<environment::Environment> {
        self.found
            .environment
            .get_or_init(|| {
                environment::find(self.root, self.virtual_env.clone(), self.path_var.as_ref())
            })
            .clone()
    }

    /// What a gate's `unresolved_imports` advises, expanded: its
    /// `when_installed` where the project's environment already holds every
    /// dependency the project declares (see [`dependencies::all_installed`])
    /// — installing them cannot resolve what none of them provides — else
    /// its `advice`.
    pub(crate) fn unresolved_imports_advice(
        &self,
        unresolved: &crate::config::UnresolvedImports,
    ) -> String {
        let complete = || {
            self.environment()
                .is_some_and(|environment| dependencies::all_installed(self.root, &environment))
        };
        let advice = match &unresolved.when_installed {
            Some(instead) if complete() => instead,
            _ => &unresolved.advice,
        };
        self.expand_hint(advice)
    }

    /// A hint's placeholders: `{venv_bin}` (the project virtualenv's `bin/`,
    /// root-relative when inside the root, or nothing without one),
    /// `{install}` (what installs a tool: `uv add --dev`, `poetry add
    /// --group dev`, `.venv/bin/pip install`, …) and `{install_project}`
    /// (what installs the project: `uv sync`, `poetry install`, `pip
    /// install -e .`, …).
    pub(crate) fn expand_hint(&self, hint: &str) -> String {
        let environment = self.environment();
        let bin = environment
            .as_ref()
            .map(|e| {
                // The platform's own separator throughout: `.venv\Scripts\`
                // on Windows, never `.venv\Scripts/`.
                let shown = e.bin.strip_prefix(self.root).unwrap_or(&e.bin);
                format!("{}{}", shown.display(), std::path::MAIN_SEPARATOR)
            })
            .unwrap_or_default();
        let commands = environment::install_commands(
            self.root,
            environment.as_ref(),
            &bin,
            self.path_var.as_ref(),
        );
        let hint = hint
            .replace("{venv_bin}", &bin)
            .replace("{install_project}", &commands.install_project);
        commands.expand_install(&hint)
    }

    /// The variables that run `tool` as if its virtualenv were activated:
    /// its `bin` first on PATH, `VIRTUAL_ENV` set. Nothing for a tool found
    /// on PATH.
    pub(crate) fn activated(&self, tool: &ResolvedTool) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        if let Some(bin) = &tool.venv_bin {
            let mut dirs = vec![bin.clone()];
            if let Some(path) = &self.path_var {
                dirs.extend(std::env::split_paths(path));
            }
            if let Ok(joined) = std::env::join_paths(dirs) {
                env.push(("PATH".into(), joined));
            }
            if let Some(venv) = bin.parent() {
                env.push(("VIRTUAL_ENV".into(), venv.as_os_str().to_owned()));
            }
        }
        env
    }

    /// How the fix and re-run hints reach `gate`'s tool from the user's
    /// shell, which has not activated the environment qg found it in:
    /// nothing for a tool on the shell's PATH; the manager's `run ` where
    /// the environment is the manager's (`hatch run `, `poetry run ` for an
    /// environment kept outside the project; `uv run `, `pdm run ` for the
    /// project's `.venv`, which they make and use); else the executable's
    /// path, as named from `run_from` (the root-relative directory the hint
    /// changes into first: `.venv/bin/mypy`, `../../.venv/bin/mypy`).
    pub(crate) fn hint_runner(&self, gate: &Gate, run_from: &str) -> HintRunner {
        let Ok(tool) = self.resolve(gate) else {
            return HintRunner::default();
        };
        let Some(bin) = tool.venv_bin.as_deref() else {
            return HintRunner::default();
        };
        if self.on_path(bin) || self.activated_bin(bin) {
            return HintRunner::default();
        }
        if let Some(manager) = self.manager_running(bin) {
            return HintRunner {
                prefix: format!("{} run ", manager.program()),
                program: None,
            };
        }
        HintRunner {
            prefix: String::new(),
            program: Some((
                gate.command[0].clone(),
                self.named_from(&tool.path, run_from),
            )),
        }
    }

    /// Whether `bin` is one of the directories of the shell's PATH.
    fn on_path(&self, bin: &Path) -> bool {
        self.path_var
            .as_ref()
            .is_some_and(|path| std::env::split_paths(path).any(|dir| dir == bin))
    }

    /// Whether `bin` is the environment `$VIRTUAL_ENV` names: activating
    /// it put it on the shell's PATH.
    fn activated_bin(&self, bin: &Path) -> bool {
        self.environment()
            .is_some_and(|e| e.bin == bin && matches!(e.origin, environment::Origin::Activated))
    }

    /// The manager whose `run` runs the tools of the environment `bin`:
    /// the one that keeps it outside the project, or uv and PDM for the
    /// project's own `.venv` (Poetry and Hatch use it only when told to);
    /// none when the shell cannot find the manager either.
    fn manager_running(&self, bin: &Path) -> Option<environment::Manager> {
        let environment = self.environment().filter(|e| e.bin == bin)?;
        let manager = match &environment.origin {
            environment::Origin::Manager { detected, .. } if !bin.starts_with(self.root) => {
                Some(detected.manager)
            }
            environment::Origin::InProject(".venv") => environment::detect(self.root)
                .map(|d| d.manager)
                .filter(|m| matches!(m, environment::Manager::Uv | environment::Manager::Pdm)),
            _ => None,
        }?;
        environment::program_on_path(manager.program(), self.path_var.as_ref())?;
        Some(manager)
    }

    /// `path` as a command typed in the root-relative directory `run_from`:
    /// relative when inside the root, absolute otherwise.
    fn named_from(&self, path: &Path, run_from: &str) -> String {
        let Ok(inside) = path.strip_prefix(self.root) else {
            return as_command(path);
        };
        let mut named = PathBuf::new();
        if cfg!(windows) && run_from.is_empty() {
            // PowerShell runs nothing from the current directory unless
            // told so: `.\.venv\Scripts\mypy.exe`.
            named.push(".");
        }
        for _ in Path::new(run_from).components() {
            named.push("..");
        }
        named.push(inside);
        as_command(&named)
    }

    /// Where this gate's `command[0]` resolves.
    pub(crate) fn resolve(&self, gate: &Gate) -> Result<ResolvedTool, ResolveError> {
        self.resolve_for(gate, &gate.command[0])
    }

    /// Where `program` resolves for `gate`: in a workspace member's own
    /// virtualenv (`packages/a/.venv`) when the gate is the member's run and
    /// the program is there — as the member's own CI runs it — else as
    /// [`Toolbox::resolve_program`] finds it for the project.
    pub(crate) fn resolve_for(
        &self,
        gate: &Gate,
        program: &str,
    ) -> Result<ResolvedTool, ResolveError> {
        let Some(venv) = self.member_virtualenv(gate) else {
            return self.resolve_program(program);
        };
        let key = format!("{}\0{program}", venv.display());
        let member_dir = gate.config_dir(self.root);
        let in_member = self.cached(key, || {
            resolve::resolve(program, &member_dir, Some(venv.clone().into()), None)
        });
        match in_member {
            Ok(tool) if tool.venv_bin.is_some() => Ok(tool),
            _ => self.resolve_program(program),
        }
    }

    /// The member's own virtualenv, for a gate that is a workspace
    /// member's run ([`member_environment`]).
    pub(crate) fn member_virtualenv(&self, gate: &Gate) -> Option<std::path::PathBuf> {
        gate.member.as_ref()?;
        let dir = gate.config_dir(self.root);
        let own = member_environment(&dir, self.root, self.path_var.as_ref())?;
        own.bin.parent().map(Path::to_path_buf)
    }

    /// Where `program` resolves: the project's virtualenv, then PATH.
    pub(crate) fn resolve_program(&self, program: &str) -> Result<ResolvedTool, ResolveError> {
        self.cached(program.to_string(), || {
            resolve::resolve(
                program,
                self.root,
                self.virtual_env.clone(),
                self.path_var.clone(),
            )
        })
    }

    /// The answer for `key`, looked up once per toolbox (and its clones).
    fn cached(
        &self,
        key: String,
        resolve: impl FnOnce() -> Result<ResolvedTool, ResolveError>,
    ) -> Result<ResolvedTool, ResolveError> {
        let mut programs = self
            .found
            .programs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        programs.entry(key).or_insert_with(resolve).clone()
    }
}

/// A workspace member's own environment: `.venv`, else `venv`, in its
/// directory, else the one its package manager keeps for it (Poetry path
/// dependencies: `cd packages/b && poetry run mypy`) — where the member's
/// own CI finds its tools; `None`: it has none, the project's serves.
pub(crate) fn member_environment(
    dir: &Path,
    root: &Path,
    path_var: Option<&OsString>,
) -> Option<environment::Environment> {
    [".venv", "venv"]
        .into_iter()
        .map(|name| environment::Environment {
            bin: dir.join(name).join(environment::VENV_BIN),
            origin: environment::Origin::InProject(name),
        })
        .find(|own| own.bin.is_dir())
        .or_else(|| environment::member_manager_environment(dir, root, path_var))
}

/// An executable's path as the first word of a command the user pastes:
/// quoted where it must be, and on Windows, where PowerShell takes a
/// quoted word for a string, called with `&`.
fn as_command(path: &Path) -> String {
    let shown = path.display().to_string();
    let quoted = crate::quote::shell_quote(&shown);
    match cfg!(windows) && quoted != shown {
        true => format!("& {quoted}"),
        false => quoted,
    }
}

/// How a hint names its tool for the user's shell
/// ([`Toolbox::hint_runner`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HintRunner {
    /// Put before the command: the manager's `run ` (`uv run `).
    pub(crate) prefix: String,
    /// The program the hint names (`mypy`) and the path that reaches it
    /// instead (`.venv/bin/mypy`).
    pub(crate) program: Option<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run, one answer: every stage holding the run's toolbox (or a
    /// clone) sees where a program resolved when it was first asked, even
    /// if the environment changes meanwhile; the next run looks again.
    #[test]
    fn a_toolbox_resolves_each_program_once_and_its_clones_share_the_answer() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let bin = root.join(".venv").join(environment::VENV_BIN);
        std::fs::create_dir_all(&bin).unwrap();
        // `tool.exe` on Windows, found by PATHEXT as `tool`.
        let tool = bin.join(format!("tool{}", std::env::consts::EXE_SUFFIX));
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let run = Toolbox {
            root,
            virtual_env: None,
            path_var: None,
            cancel: Cancel::default(),
            found: Arc::default(),
        };
        let stage = run.clone().cancelled_by(&Cancel::default());
        assert_eq!(run.resolve_program("tool").unwrap().path, tool);
        std::fs::remove_file(&tool).unwrap();
        assert_eq!(stage.resolve_program("tool").unwrap().path, tool);
        let next = Toolbox {
            found: Arc::default(),
            ..run.clone()
        };
        assert!(next.resolve_program("tool").is_err());
    }
}
