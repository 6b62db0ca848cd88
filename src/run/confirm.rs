//! Confirming warm answers with a cold run, in the background: a warm
//! answer is shown at once, and nothing moves on its word until a cold run
//! has found the same.
//!
//! What a warm answer vouches for is checked cold: every file whose
//! findings differ from the last confirmed answer (`.st3/findings.json`) —
//! a new finding (a false red), or one gone (a daemon that forgot it,
//! python/mypy#9655) — and, in an `auto` run, whose state moves on the
//! answer's word (the baseline commit, the failed files), every file it
//! covered: a daemon can miss a new finding as well as invent one. The run
//! marks the answer unconfirmed, holds its state ([`crate::state::pending`])
//! and hands each gate's [`Job`] to its daemon, which runs `qg daemon
//! confirm` at the lowest priority: the gate's plan over those files, as
//! `pyright FILES` or `mypy FILES` check them — then, when a daemon that
//! checks the whole program differs from that, the tool's own whole-program
//! run, which decides (a partial mypy run can report what the whole one
//! does not). Agreement moves the held state; a difference makes the gate
//! answer cold for that tool and config, and the next run opens with what
//! the answer got wrong. `--confirm` does the same in the foreground and
//! reports the cold truth when the two differ.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::compare::{whole_program_run, TreeStamp};
use super::project::{tool_selections, Project};
use super::vouched::{self, Agreement};
use crate::baseline;
use crate::config::{Config, Gate, Protocol};
use crate::error::QgError;
use crate::exec::{self, ExecContext, WarmRequests};
use crate::outcome::{GateResult, GateStatus, Unconfirmed, Verdicts};
use crate::plan::{self, GatePlan};
use crate::scope::Scope;
use crate::selection::ToolSelection;
use crate::state::findings::{self, BranchFindings};
use crate::state::pending::{self, Outcome};
use crate::state::StateStore;
use crate::violation::Violation;
use crate::warm::record::{Comparison, Distrust};
use crate::warm::snapshot::Snapshot;
use crate::warm::{self, WarmPlan};
use crate::workspace::Workspace;

/// A warm answer's confirmation: what `qg daemon confirm` checks cold and
/// compares, written beside the gate's daemon.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Job {
    /// A digest of the gate, its daemon's key, the tree, the files and
    /// the answer: the same answer on the same tree is the same job.
    pub(crate) id: String,
    /// The gate.
    pub(crate) gate: String,
    /// The digest of the daemon key the run asked with: a tool or settings
    /// changed since make the comparison meaningless.
    pub(crate) key: String,
    /// The root-relative files the cold run checks and the comparison
    /// covers.
    pub(crate) files: Vec<String>,
    /// The warm answer's findings in them, as its parser made them.
    pub(crate) warm: Vec<Violation>,
    /// The project's files as they were when the daemon was asked.
    pub(crate) tree: Snapshot,
    /// The branch whose held state waits for it (none: a run that moves
    /// no state, whose answer is confirmed for the gate's trust alone).
    pub(crate) branch: Option<String>,
}

impl Job {
    fn new(
        gate: &str,
        key: &str,
        files: BTreeSet<String>,
        result: &GateResult,
        tree: &Snapshot,
    ) -> Job {
        let mut warm: Vec<Violation> = result
            .violations
            .iter()
            .filter(|v| v.file.as_ref().is_some_and(|f| files.contains(f)))
            .cloned()
            .collect();
        warm.sort_by_key(|v| serde_json::to_string(v).unwrap_or_default());
        let mut hasher = sha1_smol::Sha1::new();
        for part in [gate, key, &tree.digest()] {
            hasher.update(part.as_bytes());
            hasher.update(&[0]);
        }
        for file in &files {
            hasher.update(file.as_bytes());
            hasher.update(&[0]);
        }
        for finding in &warm {
            hasher.update(
                serde_json::to_string(finding)
                    .unwrap_or_default()
                    .as_bytes(),
            );
        }
        Job {
            id: hasher.digest().to_string()[..16].to_string(),
            gate: gate.to_string(),
            key: key.to_string(),
            files: files.into_iter().collect(),
            warm,
            tree: tree.clone(),
            branch: None,
        }
    }

    /// Where the job is written for its daemon's `qg daemon confirm`.
    fn path(&self, root: &Path) -> PathBuf {
        warm::slot::Slot::new(root, &self.gate)
            .dir
            .join(format!("confirm-{}.json", self.id))
    }
}

/// Per warm answer of a run (an index into its results), the files a cold
/// run must confirm (see the module docs); `state_moves`: the run is an
/// `auto` run that moves the branch's state on the answers' word. The
/// findings record compared with is `branch`'s.
pub(super) fn wanted(
    workspace: &Workspace,
    results: &[GateResult],
    plans: &[GatePlan<'_>],
    branch: &str,
    state_moves: bool,
) -> Wanted {
    let answered: Vec<usize> = (0..results.len())
        .filter(|i| results[*i].warm && !results[*i].verified)
        .filter(|i| matches!(results[*i].status, GateStatus::Passed | GateStatus::Failed))
        .collect();
    if answered.is_empty() {
        return Vec::new();
    }
    let known = findings::read(&workspace.root);
    let empty = BranchFindings::new();
    let confirmed = known.branches.get(branch).unwrap_or(&empty);
    answered
        .into_iter()
        .filter_map(|i| {
            let plan = &plans[i];
            let covered: BTreeSet<&str> = plan
                .files
                .iter()
                .copied()
                .filter(|f| plan.reports(f))
                .collect();
            // Measured on a fingerprinted copy, as the run measures the
            // real one later.
            let mut probe = vec![results[i].clone()];
            baseline::fingerprint::stamp(&workspace.root, &mut probe);
            let mut files = baseline::progress::differing(confirmed, &probe[0], &covered);
            if state_moves {
                files.extend(covered.iter().map(|f| f.to_string()));
            }
            (!files.is_empty()).then_some((i, files))
        })
        .collect()
}

/// Marks each wanted answer unconfirmed and makes its job; `tree` is the
/// project as it was when the daemons were asked.
pub(super) fn hold(
    results: &mut [GateResult],
    wanted: Wanted,
    warm: &WarmRequests,
    tree: &Snapshot,
) -> Vec<Job> {
    wanted
        .into_iter()
        .filter_map(|(index, files)| {
            let result = &mut results[index];
            let key = &warm.plans.get(&result.id)?.key;
            let job = Job::new(&result.id, key, files, result, tree);
            result.unconfirmed = Some(Unconfirmed {
                files: job.files.len(),
                confirming: true,
                job: job.id.clone(),
            });
            Some(job)
        })
        .collect()
}

/// Per warm answer (an index into a run's results), the files a cold run
/// confirms.
pub(super) type Wanted = Vec<(usize, BTreeSet<String>)>;

/// `wanted` split in two: the answers of daemons whose answers have gone
/// unconfirmed for [`crate::warm::record::UNSETTLED_LIMIT`] comparisons in
/// a row (see [`crate::warm::record::Record::unsettled`]), to confirm
/// before they are shown — each says why on its gate line — and the rest,
/// to confirm in the background.
pub(super) fn unsettled(
    root: &Path,
    results: &mut [GateResult],
    wanted: Wanted,
    warm: &WarmRequests,
) -> (Wanted, Wanted) {
    let (now, later): (Vec<_>, Vec<_>) = wanted.into_iter().partition(|(index, _)| {
        let result = &results[*index];
        let Some(request) = warm.plans.get(&result.id) else {
            return false;
        };
        let record = warm::slot::Slot::new(root, &result.id).record();
        record.is_some_and(|r| {
            r.digest == request.key && r.unsettled >= crate::warm::record::UNSETTLED_LIMIT
        })
    });
    for (index, _) in &now {
        results[*index].warnings.push(format!(
            "confirmed before it was shown: {} cold runs in a row could not confirm its daemon's answers (files changed during each)",
            crate::warm::record::UNSETTLED_LIMIT
        ));
    }
    (now, later)
}

/// Drops from `wanted` each answer a cold run already confirmed on this
/// tree under its key (see [`super::vouched`]), and marks it verified: the
/// cold run it would start has run on these very bytes.
pub(super) fn already_confirmed(
    root: &Path,
    results: &mut [GateResult],
    wanted: Wanted,
    warm: &WarmRequests,
    tree: &Snapshot,
) -> Wanted {
    let tree = tree.digest();
    wanted
        .into_iter()
        .filter(|(index, files)| {
            let result = &mut results[*index];
            let Some(request) = warm.plans.get(&result.id) else {
                return true;
            };
            let found = vouched::found(root, &result.id, &request.key, &tree, files);
            let covered = found.is_some_and(|violations| {
                let cold = GateResult {
                    violations,
                    ..result.clone()
                };
                let (warm, cold) = (on_files(result, files), on_files(&cold, files));
                crate::outcome::difference(&warm, &cold).is_empty()
            });
            result.verified |= covered;
            !covered
        })
        .collect()
}

/// Hands each job to its gate's daemon (once the run's held state is
/// written, so no confirmation can land before it). A daemon that already
/// confirmed the same answer on the same tree says so: the answer is
/// confirmed, and its part of the held state with it. A daemon that cannot
/// be asked leaves the answer unconfirmed: the next run checks again.
pub(super) fn hand_over(
    workspace: &Workspace,
    config: &Config,
    jobs: Vec<Job>,
    branch: Option<&str>,
    results: &mut [GateResult],
) {
    // Each daemon starts its confirmation's process before it answers:
    // asked one after the other, the run waited for each in turn.
    let root = workspace.root.as_path();
    let asked: Vec<(Job, PathBuf, Result<warm::client::Confirming, String>)> =
        std::thread::scope(|threads| {
            let asking: Vec<_> = jobs
                .into_iter()
                .filter(|job| results.iter().any(|r| r.id == job.gate))
                .map(|mut job| {
                    job.branch = branch.map(str::to_string);
                    threads.spawn(move || {
                        let path = job.path(root);
                        let asked = write_job(&job, &path).and_then(|()| {
                            warm::client::confirm(root, &job.gate, &job.key, &job.id, &path)
                        });
                        (job, path, asked)
                    })
                })
                .collect();
            asking.into_iter().filter_map(|t| t.join().ok()).collect()
        });
    for (job, path, asked) in asked {
        let Some(result) = results.iter_mut().find(|r| r.id == job.gate) else {
            continue;
        };
        match asked {
            Ok(warm::client::Confirming::Started) => {}
            Ok(warm::client::Confirming::Already) => {
                let _ = std::fs::remove_file(&path);
                result.unconfirmed = None;
                result.verified = true;
                land(workspace, config, &job, &Outcome::Agreed);
            }
            Err(why) => {
                let _ = std::fs::remove_file(&path);
                if let Some(unconfirmed) = result.unconfirmed.as_mut() {
                    unconfirmed.confirming = false;
                }
                result.warnings.push(format!(
                    "not confirmed: its daemon could not be asked to ({why}); the next run checks these files again"
                ));
            }
        }
    }
}

fn write_job(job: &Job, path: &Path) -> Result<(), String> {
    let bytes = serde_json::to_vec(job).map_err(|e| e.to_string())?;
    crate::atomic_file::write_cache(path, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Records how `job` came out in the held state of its branch, and moves
/// that state once every gate it waits for agreed (the findings record
/// with it).
pub(crate) fn land(workspace: &Workspace, config: &Config, job: &Job, outcome: &Outcome) {
    let Some(branch) = &job.branch else {
        return;
    };
    let mut remembered = None;
    let store = StateStore::new(&workspace.root);
    let _ = super::record::with_worktree(workspace, config, |tree| {
        store.update_branch(branch, |entry| {
            let mut entry = entry?;
            if !pending::record_outcome(&mut entry, &job.id, outcome) {
                return Some(entry);
            }
            remembered = pending::settle(&mut entry, tree);
            Some(entry)
        })
    });
    if let Some(update) = remembered {
        let mut known = findings::read(&workspace.root);
        pending::remember(known.branches.entry(branch.clone()).or_default(), &update);
        let _ = findings::write(&workspace.root, &known);
    }
}

/// The cold runs a confirmation makes, and what they decide.
enum Checked {
    /// The cold run found what the warm answer said on the files.
    Agreed,
    /// It did not: the first difference, the log holding both sides, and
    /// the cold result that decided.
    Differed {
        distrust: Distrust,
        cold: Box<GateResult>,
    },
    /// Nothing to conclude, and why; with the cold result, when one ran.
    Inconclusive {
        reason: String,
        cold: Option<Box<GateResult>>,
    },
}

/// What a confirmation compares: a gate's warm answer on some files.
struct Subject<'a> {
    gate: &'a Gate,
    files: &'a BTreeSet<String>,
    warm: &'a GateResult,
}

/// The two sides restricted to the confirmed files: a cold run reports
/// more (the modules `mypy FILES` follows), the warm answer the plan's.
fn on_files(result: &GateResult, files: &BTreeSet<String>) -> GateResult {
    GateResult {
        violations: result
            .violations
            .iter()
            .filter(|v| v.file.as_ref().is_some_and(|f| files.contains(f)))
            .cloned()
            .collect(),
        ..result.clone()
    }
}

/// Compares `cold` with the warm answer on the subject's files; writes
/// both sides beside the logs when they differ.
fn judge(project: Project<'_>, subject: &Subject<'_>, cold: GateResult) -> Checked {
    if cold.status == GateStatus::Error {
        let why = cold.error.as_ref().map_or("", |e| e.message.as_str());
        return Checked::Inconclusive {
            reason: format!("the cold run erred: {why}"),
            cold: Some(Box::new(cold)),
        };
    }
    let warm = on_files(subject.warm, subject.files);
    let cold_here = on_files(&cold, subject.files);
    let difference = crate::outcome::difference(&warm, &cold_here);
    if difference.is_empty() {
        return Checked::Agreed;
    }
    let first = difference.first();
    let text = crate::outcome::both_sides(subject.gate, &warm, &cold_here);
    let log = exec::artifacts::write_text(
        &project.workspace.root,
        &project.config.artifact_logging,
        &format!("{}-warm-vs-cold", subject.gate.id),
        &text,
    )
    .unwrap_or_else(|_| "(not written: the artifact log is off or unwritable)".into());
    let distrust = Distrust {
        at: warm::record::now_rfc3339(),
        compared: format!(
            "a run's {}",
            crate::report::plural(subject.files.len(), "file")
        ),
        first_difference: first,
        log,
        withheld: false,
        told: false,
    };
    Checked::Differed {
        distrust,
        cold: Box::new(cold),
    }
}

/// Whether `gate`'s daemon checks the tool's whole program (a command
/// daemon: dmypy), so a partial cold run does not decide a difference.
fn whole_program_daemon(gate: &Gate) -> bool {
    gate.daemon
        .as_ref()
        .is_some_and(|d| matches!(d.protocol, Protocol::Command(_)))
}

/// The gate's cold plan over exactly `files`, as a run of those files
/// plans it (the package bases of a partial run included), with the
/// daemon's `fresh_args`: no cache of the tool's own can answer for it.
fn plan_over<'a>(
    project: Project<'_>,
    gate: &'a Gate,
    scope: &'a Scope,
    selections: &'a BTreeMap<String, ToolSelection>,
) -> Result<GatePlan<'a>, QgError> {
    let context = plan::Context {
        root: &project.workspace.root,
        project_files: None,
        selections,
        project_scope: &project.config.project_scope,
        argument_budget: crate::process::batch::argument_budget(&[]),
    };
    let mut plans = plan::plan(&[gate], scope, &context);
    super::bases::hand_package_bases(
        project.workspace,
        project.config,
        &mut plans,
        selections,
        scope,
        None,
    )?;
    let mut plan = plans.remove(0);
    if let Some(spec) = &gate.daemon {
        plan.extra_args = spec.fresh_args.clone();
    }
    Ok(plan)
}

/// Runs `plans` cold, at most `jobs` at once.
fn run_cold(project: Project<'_>, plans: &[GatePlan<'_>], jobs: usize) -> Vec<GateResult> {
    let ctx = ExecContext::new(project.tools.clone(), &project.config.artifact_logging);
    let verdicts = Verdicts { tools: &ctx.tools };
    exec::run_all(plans, &ctx, jobs, &verdicts, &exec::Silent)
}

/// Runs `plan` cold, the result cache answering for the files it holds:
/// an entry is a cold run's verdict on the same inputs (the file, what it
/// imports, the tool, its settings, the environment), so a confirmation
/// checks with the tool only what no cold run has (uvicorn: a warm answer
/// on 84 files was confirmed by a 5 s cold pyright, which the next run
/// stopped every time; the state never moved). What the tool finds is
/// stored, as any cold run's.
fn run_cold_cached(project: Project<'_>, plan: GatePlan<'_>) -> GateResult {
    let mut plans = vec![plan];
    let cache = super::cached::store(&super::CacheUse::Default)
        .and_then(|store| super::cached::look_up_in_background(project, store, &mut plans));
    let mut results = run_cold(project, &plans, 1);
    if let Some(cache) = cache {
        cache.fold_in(&mut results, &mut plans, project);
    }
    results.remove(0)
}

/// A confirmation in the foreground (`--confirm`): each wanted answer is
/// checked cold before the run reports. Agreement marks it verified; a
/// difference reports the cold run of the gate's plan (the daemon's whole
/// program for a command daemon), says so, and makes the gate answer cold
/// for that tool and config; files changed meanwhile make the cold answer
/// the one reported, as it saw the newer files.
pub(super) struct Foreground<'c, 'p> {
    pub(super) project: Project<'c>,
    pub(super) plans: &'c [GatePlan<'p>],
    pub(super) selections: &'c BTreeMap<String, ToolSelection>,
    pub(super) warm: &'c WarmRequests,
    pub(super) jobs: usize,
    pub(super) before: &'c TreeStamp,
}

impl Foreground<'_, '_> {
    /// Confirms each wanted answer of `results` now.
    pub(super) fn confirm(
        &self,
        results: &mut [GateResult],
        wanted: Wanted,
    ) -> Result<(), QgError> {
        if wanted.is_empty() {
            return Ok(());
        }
        let scopes: Vec<Scope> = wanted
            .iter()
            .map(|(_, files)| Scope::of_files(files.iter().cloned()))
            .collect();
        let mut first = Vec::new();
        for ((index, _), scope) in wanted.iter().zip(&scopes) {
            let gate = self.plans[*index].gate;
            first.push(plan_over(self.project, gate, scope, self.selections)?);
        }
        let warm_ms: BTreeMap<usize, u64> = wanted
            .iter()
            .map(|(index, _)| (*index, results[*index].duration_ms))
            .collect();
        let first = run_cold(self.project, &first, self.jobs);
        let changed = self.before.changed(self.project.workspace);
        let mut decided: Vec<(usize, &BTreeSet<String>, Option<Checked>)> = Vec::new();
        // Each gate's line says what it cost in this run: its warm answer
        // and the cold runs that confirmed it.
        let mut took: BTreeMap<usize, u64> = BTreeMap::new();
        for ((index, files), cold) in wanted.iter().zip(first) {
            *took.entry(*index).or_default() += cold.duration_ms;
            let subject = Subject {
                gate: self.plans[*index].gate,
                files,
                warm: &results[*index],
            };
            let checked = match changed {
                Some(_) => None,
                None => match judge(self.project, &subject, cold) {
                    Checked::Agreed => Some(Checked::Agreed),
                    _ => None,
                },
            };
            decided.push((*index, files, checked));
        }
        // The rest is decided by the cold run of the gate's whole plan.
        let second: Vec<GatePlan<'_>> = decided
            .iter()
            .filter(|(_, _, checked)| checked.is_none())
            .map(|(index, _, _)| self.whole_plan(*index))
            .collect();
        let mut second = run_cold(self.project, &second, self.jobs).into_iter();
        let changed = changed.or_else(|| self.before.changed(self.project.workspace));
        let tree = self.before.snapshot().digest();
        for (index, files, checked) in decided {
            let root = &self.project.workspace.root;
            let gate = self.plans[index].gate;
            let comparison = match checked {
                Some(_) => {
                    results[index].verified = true;
                    agreed(files.len())
                }
                None => {
                    let Some(cold) = second.next() else { continue };
                    *took.entry(index).or_default() += cold.duration_ms;
                    self.decide(&mut results[index], files, cold, changed.as_deref())
                }
            };
            results[index].duration_ms = warm_ms[&index] + took.get(&index).copied().unwrap_or(0);
            if results[index].verified {
                let agreement = Agreement {
                    gate: &gate.id,
                    key: &self.warm.plans[&gate.id].key,
                    tree: &tree,
                    files,
                    findings: &results[index].violations,
                };
                vouched::record(root, &agreement);
            }
            warm::client::report(root, &gate.id, comparison);
        }
        Ok(())
    }

    /// The cold run of the whole plan of the answer at `index`: what the
    /// daemon's answer stands for (see [`whole_program_run`]).
    fn whole_plan(&self, index: usize) -> GatePlan<'_> {
        let plan = &self.plans[index];
        let request = &self.warm.plans[&plan.gate.id];
        let reported = reported_by(plan, request);
        whole_program_run(
            plan,
            reported,
            self.selections,
            self.project.config,
            self.project.workspace,
        )
    }

    /// The result after the decisive cold run, and how it came out.
    fn decide(
        &self,
        result: &mut GateResult,
        files: &BTreeSet<String>,
        cold: GateResult,
        changed: Option<&str>,
    ) -> Comparison {
        let gate = self
            .plans
            .iter()
            .find(|p| p.gate.id == result.id)
            .map(|p| p.gate);
        let Some(gate) = gate else {
            return Comparison::Inconclusive {
                reason: "no such gate".into(),
            };
        };
        if let Some(changed) = changed {
            // The cold run saw the newer files: its verdict is the one.
            *result = cold;
            result
                .warnings
                .push(format!("not compared with a cold run: {changed}"));
            return Comparison::Inconclusive {
                reason: changed.to_string(),
            };
        }
        let subject = Subject {
            gate,
            files,
            warm: result,
        };
        match judge(self.project, &subject, cold) {
            Checked::Agreed => {
                result.verified = true;
                agreed(files.len())
            }
            Checked::Inconclusive { reason, cold } => {
                if let Some(cold) = cold {
                    *result = *cold;
                }
                Comparison::Inconclusive { reason }
            }
            Checked::Differed { mut distrust, cold } => {
                *result = *cold;
                distrust.withheld = true;
                result.warn_answered_cold(&format!(
                    "its warm answer differed from a cold run ({}; both sides: {}); the cold one is reported, and the gate answers cold for this tool and config until they change",
                    distrust.first_difference, distrust.log
                ));
                Comparison::Differed(distrust)
            }
        }
    }
}

/// The files a cold run of `plan` reports for the daemon's answer
/// `request` (its files, and the modules they import for a tool that
/// reports those).
fn reported_by<'p>(plan: &GatePlan<'p>, request: &'p WarmPlan) -> BTreeSet<&'p str> {
    request
        .report
        .iter()
        .map(String::as_str)
        .filter(|f| plan.reports(f))
        .collect()
}

fn agreed(files: usize) -> Comparison {
    Comparison::Agreed {
        compared: format!("a run's {}", crate::report::plural(files, "file")),
        job: None,
    }
}

/// How the last confirmation of a gate's answer came out, beside its
/// daemon: what `qg watch` and `qg lsp` wait for to show the cold truth.
#[derive(Debug, Serialize, Deserialize)]
struct Landed {
    job: String,
    outcome: Outcome,
}

fn landed_file(root: &Path, gate: &str) -> PathBuf {
    warm::slot::Slot::new(root, gate).dir.join("confirmed.json")
}

/// How the confirmation `job` of `gate`'s answer came out, once it has
/// (`None` meanwhile, and when a newer answer superseded it).
pub(crate) fn landed(root: &Path, gate: &str, job: &str) -> Option<Outcome> {
    let bytes = std::fs::read(landed_file(root, gate)).ok()?;
    let landed: Landed = serde_json::from_slice(&bytes).ok()?;
    (landed.job == job).then_some(landed.outcome)
}

/// The confirmations a run's report waits for: gate id and job, of each
/// answer a daemon is confirming.
pub(crate) fn awaited(gates: &[GateResult]) -> Vec<(String, String)> {
    gates
        .iter()
        .filter_map(|g| {
            let unconfirmed = g.unconfirmed.as_ref().filter(|u| u.confirming)?;
            Some((g.id.clone(), unconfirmed.job.clone()))
        })
        .collect()
}

/// `qg daemon confirm`: checks one job cold (the daemon started it at the
/// lowest priority), records the outcome in the held state of its branch,
/// and tells the daemon. A job stopped by its daemon (a newer answer
/// supersedes it) tells nothing.
pub(crate) fn confirm_job(
    cwd: &Path,
    config: Option<&Path>,
    path: &Path,
    cancel: &crate::process::Cancel,
) -> Result<(), QgError> {
    let bytes = std::fs::read(path)
        .map_err(|e| QgError::io(format!("cannot read {}", path.display()), e))?;
    let job: Job = serde_json::from_slice(&bytes)
        .map_err(|e| QgError::Usage(format!("{} is not a confirmation: {e}", path.display())))?;
    let (workspace, config) = super::prepare(cwd, config)?;
    let gate = config.gate(&job.gate)?;
    let tools = crate::tools::Toolbox::from_env(&workspace.root).cancelled_by(cancel);
    let project = Project {
        workspace: &workspace,
        config: &config,
        tools: &tools,
    };
    let checked = check_in_background(project, gate, &job)?;
    let _ = std::fs::remove_file(path);
    if cancel.is_cancelled() {
        return Err(QgError::Cancelled);
    }
    if matches!(checked, Checked::Agreed) {
        let agreement = Agreement {
            gate: &job.gate,
            key: &job.key,
            tree: &job.tree.digest(),
            files: &job.files.iter().cloned().collect(),
            findings: &job.warm,
        };
        vouched::record(&workspace.root, &agreement);
    }
    let (outcome, comparison) = match checked {
        Checked::Agreed => (
            Outcome::Agreed,
            Comparison::Agreed {
                compared: format!("a run's {}", crate::report::plural(job.files.len(), "file")),
                job: Some(job.id.clone()),
            },
        ),
        Checked::Differed { distrust, .. } => (
            Outcome::Differed {
                said: format!(
                    "a cold run of {} found otherwise ({}; both sides: {})",
                    crate::report::plural(job.files.len(), "file"),
                    distrust.first_difference,
                    distrust.log
                ),
            },
            Comparison::Differed(Distrust {
                told: job.branch.is_some(),
                ..distrust
            }),
        ),
        Checked::Inconclusive { reason, .. } => (
            Outcome::Inconclusive {
                why: reason.clone(),
            },
            Comparison::Inconclusive { reason },
        ),
    };
    land(&workspace, &config, &job, &outcome);
    let landed = Landed {
        job: job.id.clone(),
        outcome,
    };
    if let Ok(bytes) = serde_json::to_vec(&landed) {
        let _ = crate::atomic_file::write_cache(&landed_file(&workspace.root, &job.gate), &bytes);
    }
    warm::client::report(&workspace.root, &job.gate, comparison);
    Ok(())
}

/// The cold runs of a background confirmation: the gate's plan over the
/// job's files and, when a whole-program daemon differs from it, the
/// tool's own whole-program run reported over them. The tree must be the
/// one the answer was given on, before and after.
fn check_in_background(project: Project<'_>, gate: &Gate, job: &Job) -> Result<Checked, QgError> {
    let inconclusive = |reason: String| Checked::Inconclusive { reason, cold: None };
    let key =
        warm::key::DaemonKey::now(&project.workspace.root, project.config, gate, project.tools)
            .digest();
    if key != job.key {
        return Ok(inconclusive(
            "the tool, its settings or the environment changed since the answer".into(),
        ));
    }
    let stamp = TreeStamp::of(project.workspace, project.config, &job.tree);
    if let Some(changed) = stamp.since(&job.tree) {
        return Ok(inconclusive(format!("{changed} since the answer")));
    }
    let files: BTreeSet<String> = job.files.iter().cloned().collect();
    let (selections, _) = tool_selections(project.workspace, &[gate]);
    let scope = Scope::of_files(job.files.iter().cloned());
    let first = plan_over(project, gate, &scope, &selections)?;
    let warm = GateResult {
        violations: job.warm.clone(),
        ..GateResult::named(gate)
    };
    let subject = Subject {
        gate,
        files: &files,
        warm: &warm,
    };
    let cold = run_cold_cached(project, first.clone());
    let mut checked = judge(project, &subject, cold);
    if matches!(checked, Checked::Differed { .. }) && whole_program_daemon(gate) {
        let reported = files.iter().map(String::as_str).collect();
        let whole = whole_program_run(
            &first,
            reported,
            &selections,
            project.config,
            project.workspace,
        );
        let cold = run_cold(project, std::slice::from_ref(&whole), 1).remove(0);
        checked = judge(project, &subject, cold);
    }
    if let Some(changed) = stamp.changed(project.workspace) {
        return Ok(inconclusive(changed));
    }
    Ok(checked)
}
