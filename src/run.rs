//! A run as a library call: options in, a [`RunReport`] value out. Reports
//! render that value; the CLI only parses flags and picks a renderer.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::config::{self, Config};
use crate::error::QgError;
use crate::exec::{self, ExecContext, Observer};
use crate::outcome::{GateResult, GateStatus};
use crate::plan;
use crate::scope::{self, Scope, ScopeRequest};
use crate::workspace::Workspace;

/// What `qg run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Directory qg was started in.
    pub cwd: PathBuf,
    /// `--config`.
    pub config: Option<PathBuf>,
    /// `--scope` and positional paths.
    pub scope: ScopeRequest,
    /// `--gate` ids (empty = `active_gates`).
    pub gates: Vec<String>,
    /// Maximum tools running at once.
    pub jobs: usize,
    /// `--no-state`.
    pub no_state: bool,
}

/// The counts the summary line and JSON `summary` report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Gates in the run.
    pub gates: usize,
    /// Gates that passed.
    pub passed: usize,
    /// Gates that failed.
    pub failed: usize,
    /// Gates that errored.
    pub errored: usize,
    /// Gates that were skipped.
    pub skipped: usize,
    /// Every violation reported.
    pub total_violations: usize,
    /// Violations the tools can fix by themselves.
    pub auto_fixable: usize,
}

/// Everything a run found.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The resolved scope.
    pub scope: Scope,
    /// One result per gate, in config order.
    pub gates: Vec<GateResult>,
    /// Wall time of the whole run.
    pub total_ms: u64,
}

impl RunReport {
    /// Counts by status.
    pub fn summary(&self) -> Summary {
        let count = |status| self.gates.iter().filter(|g| g.status == status).count();
        Summary {
            gates: self.gates.len(),
            passed: count(GateStatus::Passed),
            failed: count(GateStatus::Failed),
            errored: count(GateStatus::Error),
            skipped: count(GateStatus::Skipped),
            total_violations: self.gates.iter().map(|g| g.violations.len()).sum(),
            auto_fixable: self.gates.iter().map(GateResult::fixable_count).sum(),
        }
    }

    /// True when no gate failed or errored.
    pub fn overall_pass(&self) -> bool {
        let s = self.summary();
        s.failed == 0 && s.errored == 0
    }

    /// 0 all passed (or nothing to check), 1 failures only, 2 any error.
    pub fn exit_code(&self) -> i32 {
        let s = self.summary();
        if s.errored > 0 {
            2
        } else if s.failed > 0 {
            1
        } else {
            0
        }
    }
}

/// Loads the workspace and config for a command.
pub fn prepare(
    cwd: &std::path::Path,
    config: Option<&std::path::Path>,
) -> Result<(Workspace, Config), QgError> {
    let workspace = Workspace::discover(cwd)?;
    let config = config::load(&workspace.root, config)?;
    Ok((workspace, config))
}

/// Runs the configured gates on the resolved scope.
pub fn run(options: &RunOptions, observer: &dyn Observer) -> Result<RunReport, QgError> {
    let started = Instant::now();
    let (workspace, config) = prepare(&options.cwd, options.config.as_deref())?;
    let gates = plan::select_gates(&config, &options.gates)?;
    let scope = scope::resolve(&workspace, &config, &options.scope)?;
    let plans = plan::plan(&gates, &scope);
    let ctx = ExecContext::from_env(&workspace.root, &config.artifact_logging);
    let results = exec::run_all(&plans, &ctx, options.jobs, observer);
    Ok(RunReport {
        scope,
        gates: results,
        total_ms: started.elapsed().as_millis() as u64,
    })
}
