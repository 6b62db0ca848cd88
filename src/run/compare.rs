//! Comparing warm answers with a cold run of the tool in the foreground:
//! every warm answer under `--verify` (and in the daemon's self-checks and
//! samples). A difference found so is the gate's error, showing both
//! answers, and makes the gate answer cold for that tool and config (see
//! [`crate::warm::standing`]). The confirmation of everyday warm answers,
//! in the background, is [`super::confirm`]'s.

use std::collections::{BTreeMap, BTreeSet};

use super::RunOptions;
use crate::config::{Config, Protocol};
use crate::exec::{self, ExecContext, WarmRequests};
use crate::outcome::{GateResult, GateStatus, Verdicts};
use crate::plan::GatePlan;
use crate::scope;
use crate::selection::ToolSelection;
use crate::tools::Toolbox;
use crate::warm;
use crate::workspace::Workspace;

/// The project's files as a comparison started with them.
pub(super) struct TreeStamp {
    files: Vec<String>,
    snapshot: warm::snapshot::Snapshot,
}

impl TreeStamp {
    pub(super) fn take(workspace: &Workspace, config: &Config) -> TreeStamp {
        TreeStamp::of(workspace, config, &Default::default())
    }

    /// The project's files now, stamped after `previous` (a file it saw
    /// while racy is hashed again, so its content tells).
    pub(super) fn of(
        workspace: &Workspace,
        config: &Config,
        previous: &warm::snapshot::Snapshot,
    ) -> TreeStamp {
        let files = scope::project_files(workspace, config).unwrap_or_default();
        let snapshot = warm::snapshot::Snapshot::take(&workspace.root, &files, previous);
        TreeStamp { files, snapshot }
    }

    /// The files as stamped.
    pub(super) fn snapshot(&self) -> &warm::snapshot::Snapshot {
        &self.snapshot
    }

    /// What changed since, in words, if anything did.
    pub(super) fn changed(&self, workspace: &Workspace) -> Option<String> {
        let now = warm::snapshot::Snapshot::take(&workspace.root, &self.files, &self.snapshot);
        describe(&self.snapshot.changes_to(&now))
    }

    /// What differs between `earlier` and this stamp, in words.
    pub(super) fn since(&self, earlier: &warm::snapshot::Snapshot) -> Option<String> {
        describe(&earlier.changes_to(&self.snapshot))
    }
}

/// `files changed (a.py and 2 more)`, or none.
fn describe(changes: &warm::snapshot::Changes) -> Option<String> {
    let mut files = changes
        .created
        .iter()
        .chain(&changes.changed)
        .chain(&changes.deleted);
    let first = files.next()?;
    let more = match files.count() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(format!(
        "files changed during the comparison ({first}{more})"
    ))
}

/// Each gate a daemon answered (of those named) also runs cold — as the
/// daemon checks it: a language server's files as they are, a command
/// daemon's whole program reported over the same files. A difference is
/// written whole beside the logs, and the daemon is told how each
/// comparison came out: it trusts, distrusts for good, or tries again.
pub(super) struct Comparison<'c, 'p> {
    pub(super) workspace: &'c Workspace,
    pub(super) config: &'c Config,
    pub(super) plans: &'c [GatePlan<'p>],
    pub(super) selections: &'c BTreeMap<String, ToolSelection>,
    pub(super) warm: &'c WarmRequests,
    pub(super) options: &'c RunOptions,
    pub(super) tools: &'c Toolbox<'c>,
    pub(super) before: &'c TreeStamp,
    /// The run covers the whole project (a self-check after a first pass).
    pub(super) whole: bool,
}

impl Comparison<'_, '_> {
    /// Compares the warm answers of the gates at `answered` (indices into
    /// the plans and results).
    pub(super) fn compare(&self, results: &mut [GateResult], answered: Vec<usize>) {
        if answered.is_empty() {
            return;
        }
        let cold_plans: Vec<GatePlan<'_>> = answered
            .iter()
            .map(|i| {
                let plan = &self.plans[*i];
                let request = &self.warm.plans[&plan.gate.id];
                let reported = request
                    .report
                    .iter()
                    .map(String::as_str)
                    .filter(|f| plan.reports(f))
                    .collect();
                whole_program_run(plan, reported, self.selections, self.config, self.workspace)
            })
            .collect();
        let root = &self.workspace.root;
        let ctx = ExecContext::new(self.tools.clone(), &self.config.artifact_logging);
        let verdicts = Verdicts { tools: &ctx.tools };
        let cold = exec::run_all(
            &cold_plans,
            &ctx,
            self.options.jobs,
            &verdicts,
            &exec::Silent,
        );
        let changed = self.before.changed(self.workspace);
        if changed.is_none() {
            for (cold_plan, cold) in cold_plans.iter().zip(&cold) {
                self.keep(cold_plan, cold);
            }
        }
        for (index, cold) in answered.into_iter().zip(cold) {
            let comparison = self.judge(index, &mut results[index], cold, changed.as_deref());
            warm::client::report(root, &self.plans[index].gate.id, comparison);
        }
    }

    /// Keeps a cold run's findings in the result cache, as a run of the
    /// files it reported stores them (the tree unchanged since): a
    /// daemon's self-check after its first pass is a cold run of the whole
    /// program, and with it kept the first warm answers' confirmations
    /// need no tool (uvicorn: the first one, a 5 s cold run, was stopped by
    /// every next run, and no warm green was ever confirmed).
    fn keep(&self, cold_plan: &GatePlan<'_>, cold: &GateResult) {
        let Some(store) = super::cached::store(&self.options.cache) else {
            return;
        };
        let reported: Vec<&str> = cold_plan
            .files
            .iter()
            .copied()
            .filter(|f| cold_plan.reports(f))
            .collect();
        let mut plans = vec![GatePlan {
            files: reported,
            report_only: None,
            native_args: None,
            skip_reason: None,
            ..cold_plan.clone()
        }];
        let project = super::project::Project {
            workspace: self.workspace,
            config: self.config,
            tools: self.tools,
        };
        if let Some(cache) = super::cached::look_up_in_background(project, store, &mut plans) {
            cache.fold_in(&mut [cold.clone()], &mut plans, project);
        }
    }

    /// The gate's result after the comparison, and how it came out.
    fn judge(
        &self,
        index: usize,
        result: &mut GateResult,
        cold: GateResult,
        changed: Option<&str>,
    ) -> warm::record::Comparison {
        use warm::record::Comparison::{Agreed, Differed, Inconclusive};
        let plan = &self.plans[index];
        let gate = plan.gate;
        let compared = match self.whole {
            true => "the whole program".to_string(),
            false => format!(
                "a run's {}",
                crate::report::plural(plan.files.len(), "file")
            ),
        };
        if let Some(changed) = changed {
            result
                .warnings
                .push(format!("not compared with a cold run: {changed}"));
            return Inconclusive {
                reason: changed.to_string(),
            };
        }
        if cold.status == GateStatus::Error {
            let why = cold.error.as_ref().map_or("", |e| e.message.as_str());
            let reason = format!("the cold run erred: {why}");
            *result = cold;
            return Inconclusive { reason };
        }
        let first = {
            let difference = crate::outcome::difference(result, &cold);
            (!difference.is_empty()).then(|| difference.first())
        };
        let Some(first) = first else {
            result.verified = true;
            return Agreed {
                compared,
                job: None,
            };
        };
        let text = crate::outcome::both_sides(gate, result, &cold);
        let log = exec::artifacts::write_text(
            &self.workspace.root,
            &self.config.artifact_logging,
            &format!("{}-warm-vs-cold", gate.id),
            &text,
        )
        .ok();
        let distrust = warm::record::Distrust {
            at: warm::record::now_rfc3339(),
            compared,
            first_difference: first,
            log: log
                .clone()
                .unwrap_or_else(|| "(not written: the artifact log is off or unwritable)".into()),
            withheld: false,
            told: false,
        };
        *result = crate::outcome::verified(gate, result, cold, log.as_deref());
        Differed(distrust)
    }
}

/// The cold run a daemon's answer stands for, reporting `reported`: the
/// same plan for a language server (it is asked about the plan's files);
/// for a command daemon, which checks the tool's whole program, the
/// tool's own run. Either with the daemon's `fresh_args`.
pub(super) fn whole_program_run<'p>(
    plan: &GatePlan<'p>,
    reported: BTreeSet<&'p str>,
    selections: &BTreeMap<String, ToolSelection>,
    config: &'p Config,
    workspace: &Workspace,
) -> GatePlan<'p> {
    let mut cold = plan.clone();
    let Some(spec) = &plan.gate.daemon else {
        return cold;
    };
    cold.extra_args = spec.fresh_args.clone();
    let is_command = matches!(spec.protocol, Protocol::Command(_));
    if !is_command || plan.native_args.is_some() {
        return cold;
    }
    let own_args = match (selections.get(&plan.gate.id), &plan.gate.selection) {
        // Around workspace members the daemon's program is the gate's own
        // files, by name: the tool's own run would check the members too.
        (Some(_), Some(_)) if !plan.gate.left_to_members.is_empty() => {
            match crate::warm::program::whole_program(workspace, config, plan.gate) {
                Ok(program) => program.own_args,
                Err(_) => return cold,
            }
        }
        (Some(selection), Some(spec)) if !selection.names_files => spec.project_args.clone(),
        (Some(_), Some(_)) => Vec::new(),
        _ => return cold,
    };
    cold.native_args = Some(own_args);
    cold.project_scope = Some(config.project_scope.clone());
    cold.report_only = Some(reported);
    cold
}
