//! What an engine needs to know about its project and gate, and what it
//! derives from that: placeholders expanded, programs resolved as the
//! gate's tools are, the whole program as it is now.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::log::Log;
use super::program::Program;
use super::slot::Slot;
use crate::config::{Config, DaemonSpec, Gate};
use crate::tools::Toolbox;
use crate::workspace::Workspace;

/// What an engine needs to know about its project and gate.
pub(crate) struct Context<'a> {
    /// The project.
    pub(crate) ws: &'a Workspace,
    /// The config the daemon runs under.
    pub(crate) config: &'a Config,
    /// The gate.
    pub(crate) gate: &'a Gate,
    /// Its `daemon` section.
    pub(crate) spec: &'a DaemonSpec,
    /// The daemon's directory.
    pub(crate) slot: &'a Slot,
    /// Where the tools are found.
    pub(crate) tools: &'a Toolbox<'a>,
    /// This executable, which also runs the guard.
    pub(crate) qg: &'a Path,
    /// The daemon's log.
    pub(crate) log: &'a Log,
}

impl Context<'_> {
    /// `{daemon_dir}` expanded.
    pub(crate) fn expand(&self, text: &str) -> String {
        text.replace(
            "{daemon_dir}",
            &self.slot.engine_dir().display().to_string(),
        )
    }

    /// The daemon's log as the user finds it: root-relative where it can
    /// be (`.st3/daemons/pyright/daemon.log`).
    pub(crate) fn shown_log(&self) -> String {
        let log = self.slot.log_file();
        let shown = log.strip_prefix(&self.ws.root).unwrap_or(&log);
        crate::file_name::from_os_str(shown.as_os_str())
    }

    /// The gate's working directory.
    pub(crate) fn cwd(&self) -> PathBuf {
        crate::process::working_dir(&self.ws.root, self.gate.working_dir.as_deref())
    }

    /// `program` resolved as the gate's tools are, with the environment that
    /// runs it as if its virtualenv were activated, plus the gate's own.
    pub(crate) fn resolve(
        &self,
        program: &str,
    ) -> Result<(PathBuf, Vec<(OsString, OsString)>), String> {
        let tool = self.tools.resolve_for(self.gate, program).map_err(|_| {
            let install = self.tools.install_hint(self.gate);
            let hint = install
                .map(|i| format!(" (install: {i})"))
                .unwrap_or_default();
            format!("`{program}` not found{hint}")
        })?;
        let mut env = self.tools.activated(&tool);
        env.extend(self.gate.env.iter().map(|(k, v)| (k.into(), v.into())));
        Ok((tool.path, env))
    }

    /// The gate's whole program as it is now.
    pub(crate) fn program(&self) -> Result<Program, String> {
        super::program::whole_program(self.ws, self.config, self.gate)
    }
}
