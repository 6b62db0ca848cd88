//! Splitting one run's work over the jobs of a CI matrix (`qg run --shard
//! I/N`): every shard plans the whole run, assigns the work the same way,
//! and runs only its own share.
//!
//! Per-file gates (a linter, a formatter: `batchable`, given files) are split
//! by file — a file goes to one shard for all of them. A whole-program gate
//! (a type checker, a `project_wide` or file-less gate) is never split: it
//! needs every file at once, so it runs whole in one shard. Units are placed
//! largest first, each on the least loaded shard (LPT), weighed by the
//! durations qg recorded in `.st3/history.jsonl`; ties are broken by name,
//! so the same inputs always give the same plan. Every shard's report
//! carries a digest of the whole plan, and `qg merge` refuses shards whose
//! digests differ — shards that saw different files or histories could
//! otherwise leave a file unchecked.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::file_name;
use crate::plan::GatePlan;
use crate::state::history::RunRecord;

/// Estimated cost of a per-file gate on one file of average size, in
/// microseconds, when the history has no duration for the gate.
const DEFAULT_FILE_COST_US: u64 = 1_000;
/// Estimated cost of a whole-program gate per file it checks, when the
/// history has none: type checkers cost about ten times a linter per file.
const DEFAULT_WHOLE_COST_US: u64 = 10_000;

/// `--shard I/N`: this is job `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    /// How many shards share the run.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not I/N with 1 ≤ I ≤ N (e.g. 2/4)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = index.trim().parse().map_err(|_| bad())?;
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        match index >= 1 && index <= count {
            true => Ok(Shard { index, count }),
            false => Err(bad()),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What a shard's report says of its share, and what `qg merge` needs to
/// put the shards back together (JSON `shard`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardInfo {
    /// 1-based.
    pub(crate) index: usize,
    /// Shards in the run.
    pub(crate) count: usize,
    /// SHA-1 of the whole plan (every shard's share): equal in every shard
    /// of one run.
    pub(crate) plan: String,
    /// Files in the whole run's scope.
    pub(crate) scope_files: usize,
    /// The project root the shard ran in (SARIF's `%SRCROOT%`).
    pub(crate) root: String,
    /// The config it ran with, as reports name it.
    pub(crate) config: String,
    /// The gates this shard ran (all or part of), with their hint
    /// templates: the merged report renders hints for every failing file.
    pub(crate) ran: BTreeMap<String, HintTemplates>,
    /// What the committed baseline made of this shard's findings, beyond
    /// its counts: what `qg merge` needs to count fixed entries once.
    #[serde(default, skip_serializing_if = "BaselineShare::is_empty")]
    pub(crate) baseline: BaselineShare,
}

/// A gate's `fix_hint` and `rerun_hint` templates (`{files}` unexpanded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HintTemplates {
    /// `fix_hint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fix_hint: Option<String>,
    /// `rerun_hint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rerun_hint: Option<String>,
}

/// Baseline entries (indices into `.st3/baseline.jsonl`, the same file in
/// every shard) this shard found fixed, and the entries every shard
/// considers — of deleted files, or of no file — that it matched, with
/// the fingerprint of the finding that matched. Two shards may match one
/// such entry; the merge keeps one match, as a single run would.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BaselineShare {
    /// Entries found fixed here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) fixed: Vec<usize>,
    /// Shared entries matched here: (entry, fingerprint of the finding).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) shared_matches: Vec<(usize, String)>,
}

impl BaselineShare {
    fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.shared_matches.is_empty()
    }
}

/// What a shard's report says of its share.
#[derive(Debug)]
pub(crate) struct Share {
    /// For the report (`root`, `config` and `baseline` are the caller's to
    /// fill).
    pub(crate) info: ShardInfo,
    /// Distinct files this shard's gates check.
    pub(crate) files_checked: usize,
}

/// One piece of work to place: a whole gate, or one file for every per-file
/// gate that checks it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    /// A gate's plan, by index.
    Gate(usize),
    /// A file of the per-file gates.
    File(String),
}

/// Narrows `plans` (the whole run's) to `shard`'s share: gates with no work
/// here get a skip reason that says where it went. `history` (oldest
/// first) gives the durations; `root` the file sizes; `scope_files` and
/// `config_hash` go into the plan's digest.
pub(crate) fn split(
    plans: &mut [GatePlan<'_>],
    shard: Shard,
    root: &Path,
    history: &[RunRecord],
    scope_files: usize,
    config_hash: &str,
) -> Share {
    let weighed = weigh(plans, root, history);
    let assignment = assign(weighed, shard.count);
    let digest = digest(plans, &assignment, shard.count, scope_files, config_hash);
    let mut ran = BTreeMap::new();
    let mut files = BTreeSet::new();
    for (index, plan) in plans.iter_mut().enumerate() {
        if plan.skip_reason.is_some() {
            continue;
        }
        keep_share(index, plan, shard, &assignment);
        if plan.skip_reason.is_none() {
            ran.insert(
                plan.gate.id.clone(),
                HintTemplates {
                    fix_hint: plan.gate.fix_hint.clone(),
                    rerun_hint: plan.gate.rerun_hint.clone(),
                },
            );
            files.extend(plan.files.iter().copied());
        }
    }
    Share {
        info: ShardInfo {
            index: shard.index,
            count: shard.count,
            plan: digest,
            scope_files,
            root: String::new(),
            config: String::new(),
            ran,
            baseline: BaselineShare::default(),
        },
        files_checked: files.len(),
    }
}

/// Whether a gate's files may go to different shards: a per-file gate that
/// is given its files and reports on all of them.
fn by_file(plan: &GatePlan<'_>) -> bool {
    let gate = plan.gate;
    gate.batchable && gate.pass_files && !gate.project_wide && plan.report_only.is_none()
}

/// Where each unit runs (1-based shard).
type Assignment = BTreeMap<Unit, usize>;

/// Narrows `plan` (index `index`) to the work `shard` was given, or gives
/// it the skip reason that says where its work went.
fn keep_share(index: usize, plan: &mut GatePlan<'_>, shard: Shard, assignment: &Assignment) {
    if !by_file(plan) {
        let owner = assignment[&Unit::Gate(index)];
        if owner != shard.index {
            plan.files.clear();
            plan.skip_reason = Some(format!(
                "shard {shard}: runs in shard {owner}/{}",
                shard.count
            ));
        }
        return;
    }
    let total = plan.files.len();
    plan.files
        .retain(|f| assignment[&Unit::File(f.to_string())] == shard.index);
    // The tool is given this shard's files, never its own whole-project run.
    plan.native_args = None;
    plan.project_scope = None;
    if plan.files.is_empty() {
        plan.skip_reason = Some(format!(
            "shard {shard}: its {total} files are in the other shards"
        ));
    }
}

/// Each unit of the runnable plans with its estimated cost in microseconds.
fn weigh(plans: &[GatePlan<'_>], root: &Path, history: &[RunRecord]) -> Vec<(Unit, u64)> {
    let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut file_costs: BTreeMap<&str, u64> = BTreeMap::new();
    let mut units = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        if plan.skip_reason.is_some() {
            continue;
        }
        let recorded = recorded_cost(history, &plan.gate.id);
        let files = plan.files.len() as u64;
        if !by_file(plan) {
            let cost = match recorded {
                Some((ms, then)) => ms * 1000 * files.max(1) / then,
                None => DEFAULT_WHOLE_COST_US * files.max(1),
            };
            units.push((Unit::Gate(index), cost.max(1)));
            continue;
        }
        let per_file = recorded.map_or(DEFAULT_FILE_COST_US, |(ms, then)| ms * 1000 / then);
        for file in &plan.files {
            sizes.entry(file).or_insert_with(|| size_of(root, file));
        }
        let total: u64 = plan.files.iter().map(|f| sizes[f]).sum();
        for file in &plan.files {
            // The gate's cost per file, scaled by the file's size against
            // the average of its files.
            let cost = u128::from(per_file) * u128::from(sizes[file]) * u128::from(files)
                / u128::from(total.max(1));
            *file_costs.entry(file).or_default() += cost as u64;
        }
    }
    units.extend(
        file_costs
            .into_iter()
            .map(|(file, cost)| (Unit::File(file.to_string()), cost.max(1))),
    );
    units
}

/// A file's size in bytes, at least 1 (an empty or missing file still
/// costs a little).
fn size_of(root: &Path, file: &str) -> u64 {
    std::fs::metadata(file_name::join(root, file)).map_or(1, |m| m.len().max(1))
}

/// The newest recorded run of `gate` that checked files: (milliseconds,
/// files), both at least 1.
fn recorded_cost(history: &[RunRecord], gate: &str) -> Option<(u64, u64)> {
    history
        .iter()
        .rev()
        .flat_map(|run| run.gates.iter())
        .find(|g| g.id == gate && g.files > 0 && matches!(g.status.as_str(), "passed" | "failed"))
        .map(|g| (g.duration_ms.max(1), g.files as u64))
}

/// Longest processing time first: the costliest unit goes to the least
/// loaded shard (the lowest-numbered among equals), and so on down.
fn assign(mut units: Vec<(Unit, u64)>, count: usize) -> Assignment {
    units.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut loads = vec![0u64; count];
    let mut assignment = Assignment::new();
    for (unit, cost) in units {
        let (lightest, _) = loads
            .iter()
            .enumerate()
            .min_by_key(|(i, load)| (**load, *i))
            .expect("at least one shard");
        loads[lightest] += cost;
        assignment.insert(unit, lightest + 1);
    }
    assignment
}

/// SHA-1 over everything that decides the split: the shard count, the
/// config, the scope's size, each gate's plan and where each unit went.
fn digest(
    plans: &[GatePlan<'_>],
    assignment: &Assignment,
    count: usize,
    scope_files: usize,
    config_hash: &str,
) -> String {
    let mut hasher = sha1_smol::Sha1::new();
    let mut line = |text: &str| {
        hasher.update(text.as_bytes());
        hasher.update(b"\n");
    };
    line(&format!(
        "qg shard plan 1\t{count}\t{config_hash}\t{scope_files}"
    ));
    for (index, plan) in plans.iter().enumerate() {
        let owner = assignment
            .get(&Unit::Gate(index))
            .map_or("files".to_string(), usize::to_string);
        let skip = plan.skip_reason.as_deref().unwrap_or("-");
        line(&format!("gate\t{}\t{owner}\t{skip}", plan.gate.id));
        for file in &plan.files {
            line(&format!("\t{file}"));
        }
    }
    for (unit, owner) in assignment {
        if let Unit::File(file) = unit {
            line(&format!("file\t{file}\t{owner}"));
        }
    }
    hasher.digest().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::history::GateRecord;

    #[test]
    fn parses_i_of_n() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "-1/2", ""] {
            let error = bad.parse::<Shard>().unwrap_err();
            assert!(error.contains("I/N"), "{bad}: {error}");
        }
    }

    #[test]
    fn lpt_places_the_costliest_first_on_the_lightest_shard() {
        let units = vec![
            (Unit::File("a".into()), 5),
            (Unit::Gate(0), 10),
            (Unit::File("b".into()), 5),
            (Unit::File("c".into()), 4),
            (Unit::File("d".into()), 1),
        ];
        let assignment = assign(units, 2);
        // 10 → 1; 5 → 2; 5 → 2 (5 < 10); 4 → 1 (10 = 10: the lower);
        // 1 → 2 (11 < 14).
        assert_eq!(assignment[&Unit::Gate(0)], 1);
        assert_eq!(assignment[&Unit::File("a".into())], 2);
        assert_eq!(assignment[&Unit::File("b".into())], 2);
        assert_eq!(assignment[&Unit::File("c".into())], 1);
        assert_eq!(assignment[&Unit::File("d".into())], 2);
    }

    #[test]
    fn the_same_units_in_any_order_give_the_same_plan() {
        let units: Vec<(Unit, u64)> = (0..50)
            .map(|i| (Unit::File(format!("f{i}")), (i % 7) as u64 + 1))
            .collect();
        let mut reversed = units.clone();
        reversed.reverse();
        assert_eq!(assign(units, 3), assign(reversed, 3));
    }

    #[test]
    fn the_newest_recorded_run_that_checked_files_gives_the_cost() {
        let gate = |status: &str, files, ms| GateRecord {
            id: "lint".into(),
            status: status.into(),
            violations: 0,
            unresolved_imports: 0,
            duration_ms: ms,
            files,
        };
        let run = |gates| RunRecord {
            at: String::new(),
            branch: None,
            scope: "project".into(),
            requested: "project".into(),
            files: 0,
            duration_ms: 0,
            gates,
        };
        let history = vec![
            run(vec![gate("passed", 10, 100)]),
            run(vec![gate("failed", 20, 400)]),
            run(vec![gate("error", 5, 9)]),
            run(vec![gate("skipped", 0, 0)]),
        ];
        assert_eq!(recorded_cost(&history, "lint"), Some((400, 20)));
        assert_eq!(recorded_cost(&history, "other"), None);
    }
}
