//! The outcome stage's side of the executor: a [`GateResult`] for every
//! run, batch and tool that could not run.

use std::time::Duration;

use super::imports::advise_on_unresolved_imports;
use super::judge::{judge, judge_findings, merge, render_hints, restrict};
use super::result::{ErrorKind, GateError, GateResult, GateStatus};
use crate::exec::{Judge, NotRun, Timed, UnitRun, WarmRun};
use crate::paths::PathContext;
use crate::plan::GatePlan;
use crate::tools::Toolbox;
use crate::warm::WarmPlan;

/// The outcome stage's judge of the executor's runs: a result for every
/// gate, whether its tool ran, ran in batches, or could not run at all.
pub(crate) struct Verdicts<'a> {
    /// Where the tools were found (for paths, hints and advice).
    pub(crate) tools: &'a Toolbox<'a>,
}

impl Judge<GateResult> for Verdicts<'_> {
    fn not_run(&self, plan: &GatePlan<'_>, why: NotRun) -> GateResult {
        let gate = plan.gate;
        let program = &gate.command[0];
        let (kind, message, install) = match why {
            NotRun::Skipped(reason) => return GateResult::skipped(gate, reason),
            NotRun::NotFound { searched, install } => {
                let places: Vec<String> =
                    searched.iter().map(|p| p.display().to_string()).collect();
                let searched = match places.is_empty() {
                    true => "PATH is empty".to_string(),
                    false => places.join(", "),
                };
                let message = format!("`{program}` not found (searched: {searched})");
                (ErrorKind::NotFound, message, install)
            }
            NotRun::NotExecutable(path) => {
                let message = format!("{} is not executable (chmod +x it)", path.display());
                (
                    ErrorKind::NotExecutable,
                    message,
                    self.tools.install_hint(gate),
                )
            }
            NotRun::TooLong {
                files,
                needed,
                budget,
            } => {
                let message = format!(
                    "the command line for {files} files needs {needed} bytes but this OS allows {budget}; give the gate a `selection` (its tool's own whole-project run is used when the files do not fit), set execution.batchable: true, or pass_files: false and let the tool find its files"
                );
                (ErrorKind::SpawnFailed, message, None)
            }
        };
        let message = match &install {
            Some(install) => format!("{message}; install: {install}"),
            None => message,
        };
        let mut result = GateResult::launch_error(gate, kind, message);
        result.files_checked = plan.files.len();
        if let (ErrorKind::NotFound, Some(install), Some(error)) =
            (kind, install, &mut result.error)
        {
            error.short = format!("not found (install: {install})");
        }
        result
    }

    fn unit(&self, plan: &GatePlan<'_>, run: UnitRun<'_>) -> GateResult {
        let gate = plan.gate;
        let finished = match run.finished {
            Ok(finished) => finished,
            Err(e) => {
                let message = format!("could not start {}: {e}", run.program.display());
                let mut result = GateResult::launch_error(gate, ErrorKind::SpawnFailed, message);
                result.files_checked = run.files.len();
                return result;
            }
        };
        let paths = PathContext::new(self.tools.root, run.cwd);
        let mut result = judge(gate, run.files, &finished, &paths);
        match run.log {
            Ok(log) => result.log = log,
            Err(e) => result
                .warnings
                .push(format!("could not write the artifact log: {e}")),
        }
        result
    }

    fn gate(&self, plan: &GatePlan<'_>, units: Vec<Timed<GateResult>>) -> GateResult {
        let started = units.iter().map(|u| u.started).min();
        let ended = units.iter().map(|u| u.ended).max();
        let mut result = merge(plan.gate, units.into_iter().map(|u| u.result).collect());
        if let (Some(started), Some(ended)) = (started, ended) {
            result.duration_ms = ended.duration_since(started).as_millis() as u64;
        }
        if plan.report_only.is_some() || plan.project_scope.is_some() {
            restrict(plan.gate, &mut result, |f| plan.reports(f));
        }
        self.advise(plan, &mut result);
        self.rerun_as_planned(plan, &mut result);
        result
    }

    fn warm(
        &self,
        plan: &GatePlan<'_>,
        run: WarmRun<'_>,
        request: &WarmPlan,
        took: Duration,
    ) -> Result<GateResult, String> {
        let mut result = match run {
            WarmRun::Diagnostics { violations, log } => {
                let mut result = judge_findings(plan.gate, &plan.files, violations);
                match log {
                    Ok(log) => result.log = log,
                    Err(e) => result
                        .warnings
                        .push(format!("could not write the artifact log: {e}")),
                }
                result
            }
            WarmRun::Output(run) => self.unit(plan, run),
        };
        // A daemon that could not be trusted to check proves nothing: the
        // tool runs cold, which errs the same way if the fault is real.
        if let (GateStatus::Error, Some(error)) = (result.status, &result.error) {
            return Err(warm_error(error, result.log.as_deref()));
        }
        // A daemon's exit code does not say whether the tool stopped before
        // checking anything (dmypy exits 1 on a syntax error, where mypy
        // exits 2): a finding that may have stopped it is answered cold,
        // which says whether it did — a run that stops at a parse is quick.
        if let Some(said) = may_have_stopped(plan.gate, &result) {
            return Err(format!(
                "its daemon's answer holds what may have stopped the tool ({said}): a cold run says whether it did"
            ));
        }
        // The daemon checked the whole program: report what a cold run of
        // this plan reports — silently dropping what it would not have
        // seen, counting what it would have left out, as it does.
        let unseen = result.outside_scope;
        restrict(plan.gate, &mut result, |f| request.reports(f));
        result.outside_scope = unseen;
        if plan.report_only.is_some() || plan.project_scope.is_some() {
            restrict(plan.gate, &mut result, |f| plan.reports(f));
        }
        result.files_checked = plan.files.len();
        result.duration_ms = took.as_millis() as u64;
        result.warm = true;
        self.advise(plan, &mut result);
        self.rerun_as_planned(plan, &mut result);
        Ok(result)
    }

    fn cold_instead(&self, mut result: GateResult, why: Option<(String, bool)>) -> GateResult {
        if let Some((why, warn)) = why {
            if warn {
                result.warn_answered_cold(&why);
            }
            result.cold_because = Some(why);
        }
        result
    }

    fn noted(&self, mut result: GateResult, note: String) -> GateResult {
        result.notice = Some(note);
        result
    }
}

/// The first finding of `result` that `gate`'s `success.stopped` marks as
/// a stop, in a few words.
fn may_have_stopped(gate: &crate::config::Gate, result: &GateResult) -> Option<String> {
    let stopped = gate.stopped.as_ref()?;
    let finding = result
        .violations
        .iter()
        .find(|v| stopped.marks(v.code.as_deref(), &v.message))?;
    Some(format!(
        "{}:{} {}",
        finding.file.as_deref().unwrap_or("-"),
        finding.line.unwrap_or(0),
        finding.code.as_deref().unwrap_or(&finding.message)
    ))
}

/// Why a daemon's answer was not taken: its error, the line its stderr
/// ends with (a crash's exception — `KeyError: 'tests'` — says which known
/// bug it is) and the log holding the rest.
fn warm_error(error: &GateError, log: Option<&str>) -> String {
    let mut why = format!("its daemon's answer is an error: {}", error.message);
    let last = error
        .stderr_tail
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty());
    if let Some(last) = last {
        why.push_str(&format!("; its stderr ends `{last}`"));
    }
    if let Some(log) = log {
        why.push_str(&format!(" ({log})"));
    }
    why
}

impl Verdicts<'_> {
    /// Gives the hints the package bases the plan's run was given, and the
    /// manager's `run` where the tool is out of the shell's reach.
    fn rerun_as_planned(&self, plan: &GatePlan<'_>, result: &mut GateResult) {
        result.runner = self.tools.hint_runner(plan.gate, &result.run_from);
        result.package_bases = plan.package_bases.clone();
        if result.package_bases.is_none() && result.runner == Default::default() {
            return;
        }
        render_hints(plan.gate, result);
    }

    /// Says so when most findings are unresolved imports.
    fn advise(&self, plan: &GatePlan<'_>, result: &mut GateResult) {
        if let Some(unresolved) = &plan.gate.unresolved_imports {
            let advice = || self.tools.unresolved_imports_advice(unresolved);
            advise_on_unresolved_imports(result, &unresolved.codes, advice);
        }
    }
}
