//! Comparing warm answers with a cold run of the tool: every warm answer
//! under `--verify` (and in the daemon's self-checks), and — on every run —
//! each warm answer that would fail it (a user, or an agent, is never told
//! to fix what is not there) or that clears a finding the last run
//! reported (a green is never taken on the word of a daemon that forgot
//! it). A difference found so makes the gate answer cold for that tool
//! and config (see [`crate::warm::standing`]).

use std::collections::{BTreeMap, BTreeSet};

use super::RunOptions;
use crate::baseline::{self, BaselineUse};
use crate::config::{Config, Protocol};
use crate::exec::{self, ExecContext, WarmRequests};
use crate::outcome::{GateResult, GateStatus, Verdicts};
use crate::plan::{self, GatePlan};
use crate::scope;
use crate::selection::ToolSelection;
use crate::state::findings::{self, BranchFindings};
use crate::tools::Toolbox;
use crate::warm::{self, WarmPlan};
use crate::workspace::Workspace;

/// The project's files as a comparison started with them.
pub(super) struct TreeStamp {
    files: Vec<String>,
    snapshot: warm::snapshot::Snapshot,
}

impl TreeStamp {
    pub(super) fn take(workspace: &Workspace, config: &Config) -> TreeStamp {
        let files = scope::project_files(workspace, config).unwrap_or_default();
        let snapshot = warm::snapshot::Snapshot::take(&workspace.root, &files, &Default::default());
        TreeStamp { files, snapshot }
    }

    /// What changed since, in words, if anything did.
    fn changed(&self, workspace: &Workspace) -> Option<String> {
        let now = warm::snapshot::Snapshot::take(&workspace.root, &self.files, &self.snapshot);
        let changes = self.snapshot.changes_to(&now);
        let mut files = changes
            .created
            .iter()
            .chain(&changes.changed)
            .chain(&changes.deleted);
        let first = files.next()?;
        let more = files.count();
        let more = match more {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Some(format!(
            "files changed during the comparison ({first}{more})"
        ))
    }
}

/// Why warm answers are compared with a cold run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// `--verify` (and the daemon's self-checks): a difference is the
    /// gate's error, showing both answers.
    Verify,
    /// A warm answer that would fail the run, or that clears a finding:
    /// the cold run's verdict is reported, whatever the warm one said.
    Confirm,
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
    pub(super) warm: &'c WarmRequests<'c>,
    pub(super) options: &'c RunOptions,
    pub(super) tools: &'c Toolbox<'c>,
    pub(super) before: &'c TreeStamp,
    /// The run covers the whole project (a self-check after a first pass).
    pub(super) whole: bool,
    pub(super) purpose: Purpose,
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
                cold_equivalent(plan, request, self.selections, self.config, self.workspace)
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
        for (index, cold) in answered.into_iter().zip(cold) {
            let comparison = self.judge(index, &mut results[index], cold, changed.as_deref());
            warm::client::report(root, &self.plans[index].gate.id, comparison);
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
            if self.purpose == Purpose::Confirm {
                // The cold run saw the newer files: its verdict is the one.
                *result = cold;
            }
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
            return Agreed { compared };
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
            withheld: self.purpose == Purpose::Confirm,
        };
        match self.purpose {
            Purpose::Verify => {
                *result = crate::outcome::verified(gate, result, cold, log.as_deref());
            }
            Purpose::Confirm => {
                *result = cold;
                result.warnings.push(format!(
                    "answered cold: its warm answer differed from a cold run ({}; both sides: {}); the cold one is reported, and the gate answers cold for this tool and config until they change",
                    distrust.first_difference, distrust.log
                ));
            }
        }
        Differed(distrust)
    }
}

/// The warm answers among `results` a cold run must confirm before they
/// are reported: those that would fail the run ([`failing_warm`]) and, in
/// a run that records its outcome (and so may move the baseline), those
/// that clear a finding the last run reported ([`clearing_warm`]). A run
/// that records nothing (a file opened in the editor, `--no-state`) leaves
/// the record as it was, so the same fix would be confirmed again on every
/// such run; its answers are sampled as any are.
pub(super) fn to_confirm(
    workspace: &Workspace,
    results: &[GateResult],
    plans: &[GatePlan<'_>],
    options: &RunOptions,
) -> Vec<usize> {
    let mut answered = failing_warm(workspace, results, plans, options.baseline_use());
    if options.records() {
        answered.extend(clearing_warm(workspace, results, plans));
    }
    answered.sort_unstable();
    answered.dedup();
    answered
}

/// The warm answers among `results` in which a finding the last run on
/// this branch reported, in a file they cover, is gone. A daemon can
/// forget a finding that is still there — dmypy drops the `unused-ignore`
/// of a module it rechecks after an edit in another one (python/mypy#9655;
/// seen on flask after an edit in markupsafe) — and a run made green on
/// its word would move the baseline past it, never to look again. A fix
/// costs one cold run of its gate; a step that fixes nothing stays warm.
fn clearing_warm(
    workspace: &Workspace,
    results: &[GateResult],
    plans: &[GatePlan<'_>],
) -> Vec<usize> {
    let answered: Vec<usize> = (0..results.len())
        .filter(|i| results[*i].warm)
        .filter(|i| matches!(results[*i].status, GateStatus::Passed | GateStatus::Failed))
        .collect();
    if answered.is_empty() {
        return answered;
    }
    let head = workspace.repo.as_ref().and_then(|repo| repo.head().ok());
    let branch = findings::branch_key(head.as_ref());
    let known = findings::read(&workspace.root);
    let Some(last) = known.branches.get(&branch) else {
        return Vec::new();
    };
    answered
        .into_iter()
        .filter(|i| last.contains_key(&results[*i].id))
        .filter(|i| clears_a_finding(workspace, last, &results[*i], &plans[*i]))
        .collect()
}

/// Whether `result` lacks a finding `last` holds for a file its plan
/// reports on (compared on a copy, as the run compares the real one later).
fn clears_a_finding(
    workspace: &Workspace,
    last: &BranchFindings,
    result: &GateResult,
    plan: &GatePlan<'_>,
) -> bool {
    let (probe, covered) = probe(workspace, result, plan);
    let files = &covered[&result.id];
    baseline::progress::since(last, &probe[0], files).fixed > 0
}

/// A fingerprinted copy of `result`, and the files its plan reports on:
/// what to measure it with before the run measures the real one.
fn probe<'p>(
    workspace: &Workspace,
    result: &GateResult,
    plan: &GatePlan<'p>,
) -> (Vec<GateResult>, plan::Covered<'p>) {
    let mut probe = vec![result.clone()];
    baseline::fingerprint::stamp(&workspace.root, &mut probe);
    let files: BTreeSet<&str> = plan
        .files
        .iter()
        .copied()
        .filter(|f| plan.reports(f))
        .collect();
    (probe, [(result.id.clone(), files)].into_iter().collect())
}

/// The warm answers among `results` that would fail the run — failing
/// findings the committed baseline (as the run uses it) does not know:
/// the ones a cold run must confirm before they are reported.
fn failing_warm(
    workspace: &Workspace,
    results: &[GateResult],
    plans: &[GatePlan<'_>],
    usage: BaselineUse,
) -> Vec<usize> {
    let known = match usage {
        BaselineUse::Ignore => None,
        _ => baseline::file::read(&workspace.root).ok().flatten(),
    };
    (0..results.len())
        .filter(|i| results[*i].warm && results[*i].status == GateStatus::Failed)
        .filter(|i| match &known {
            None => true,
            Some(file) => fails_against(workspace, file, &results[*i], &plans[*i]),
        })
        .collect()
}

/// Whether `result` still fails once the baseline `file` knows its
/// findings (measured on a copy; the run measures the real one later).
fn fails_against(
    workspace: &Workspace,
    file: &baseline::file::Baseline,
    result: &GateResult,
    plan: &GatePlan<'_>,
) -> bool {
    let (mut probe, covered) = probe(workspace, result, plan);
    baseline::apply(workspace, file, &mut probe, &covered, &mut Vec::new());
    probe[0].status == GateStatus::Failed
}

/// The cold run a daemon's answer stands for: the same plan for a language
/// server (it is asked about the plan's files); for a command daemon, which
/// checks the tool's whole program, the tool's own run reported over the
/// plan's files.
pub(super) fn cold_equivalent<'p>(
    plan: &GatePlan<'p>,
    request: &'p WarmPlan,
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
    let reported: BTreeSet<&str> = request
        .report
        .iter()
        .map(String::as_str)
        .filter(|f| plan.reports(f))
        .collect();
    cold.report_only = Some(reported);
    cold
}
