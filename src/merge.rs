//! `qg merge`: the shards of one run (`qg run --shard I/N --format json`)
//! put back together into one report, which renders in any format — one
//! SARIF upload, one GitLab or JUnit artifact for the whole matrix.
//!
//! A merge never hides a hole: every shard of the run must be there, once,
//! and all must come from the same plan (the digest each shard's report
//! carries); otherwise it is an error naming what is missing or different.
//! Findings are de-duplicated by fingerprint; per-file gates split over
//! several shards become one result again, with its hints rendered for
//! every failing file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::baseline::BaselineSummary;
use crate::error::QgError;
use crate::outcome::{self, GateResult, GateStatus, Progress};
use crate::report::{ReportScope, RunReport};
use crate::shard::ShardInfo;
use crate::violation::BaselineState;

/// A shard's `--format json` report, as much of it as the merge reads.
#[derive(Debug, Deserialize)]
struct ShardReport {
    scope: ReportScope,
    gates: Vec<GateResult>,
    #[serde(default)]
    baseline: Option<BaselineSummary>,
    #[serde(default)]
    since_last_run: Option<Progress>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    shard: Option<ShardInfo>,
    timings: Timings,
}

#[derive(Debug, Deserialize)]
struct Timings {
    total_ms: u64,
}

/// One shard's report and where it came from.
struct Part {
    path: PathBuf,
    report: ShardReport,
    shard: ShardInfo,
}

/// Reads the shards' reports at `paths` and merges them into the report of
/// the whole run.
pub fn merge(paths: &[PathBuf]) -> Result<RunReport, QgError> {
    let parts = paths
        .iter()
        .map(|path| read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let parts = in_order(parts)?;
    let first = &parts[0];
    let mut gates: Vec<GateResult> = Vec::new();
    for (index, gate) in first.report.gates.iter().enumerate() {
        let results = parts
            .iter()
            .map(|p| same_gate(p, index, &gate.id))
            .collect::<Result<Vec<_>, _>>()?;
        gates.push(merge_gate(&parts, results));
    }
    let baseline = merge_baseline(&parts, &mut gates);
    let mut since_last_run: Option<Progress> = None;
    for progress in parts.iter().filter_map(|p| p.report.since_last_run) {
        since_last_run
            .get_or_insert_with(Progress::default)
            .add(progress);
    }
    let scope = ReportScope {
        files_checked: first.shard.scope_files,
        ..first.report.scope.clone()
    };
    Ok(RunReport {
        root: PathBuf::from(&first.shard.root),
        cwd: String::new(),
        config_origin: first.shard.config.clone(),
        scope,
        gates,
        warnings: distinct(parts.iter().flat_map(|p| p.report.warnings.iter())),
        baseline,
        since_last_run,
        shard: None,
        covered: Default::default(),
        contradicted: Vec::new(),
        background: Vec::new(),
        total_ms: parts
            .iter()
            .map(|p| p.report.timings.total_ms)
            .max()
            .unwrap_or(0),
    })
}

/// Reads one shard's report.
fn read(path: &Path) -> Result<Part, QgError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| QgError::io(format!("cannot read {}", path.display()), e))?;
    let report: ShardReport = serde_json::from_str(&text).map_err(|e| {
        QgError::Usage(format!(
            "{}: not a qg JSON report ({e}); give the files `qg run --shard I/N --format json` wrote",
            path.display()
        ))
    })?;
    let shard = report.shard.clone().ok_or_else(|| {
        QgError::Usage(format!(
            "{}: not a shard's report (it has no `shard`); merge the reports of `qg run --shard I/N --format json`",
            path.display()
        ))
    })?;
    Ok(Part {
        path: path.to_path_buf(),
        report,
        shard,
    })
}

/// The parts in shard order, once each shard of one plan is there exactly
/// once; otherwise the error that names what is missing or different.
fn in_order(mut parts: Vec<Part>) -> Result<Vec<Part>, QgError> {
    let Some(first) = parts.first() else {
        return Err(QgError::Usage(
            "no reports to merge; give every shard's JSON report".into(),
        ));
    };
    let (count, plan, first_path) = (
        first.shard.count,
        first.shard.plan.clone(),
        first.path.clone(),
    );
    for part in &parts {
        if part.shard.count != count || part.shard.plan != plan {
            return Err(QgError::Usage(format!(
                "{} and {} are shards of different runs ({} of plan {}, {} of plan {}): \
                 every shard must run on the same commit with the same config, options and \
                 .st3/history.jsonl",
                first_path.display(),
                part.path.display(),
                label(&parts[0].shard),
                short(&plan),
                label(&part.shard),
                short(&part.shard.plan),
            )));
        }
    }
    parts.sort_by_key(|p| p.shard.index);
    for pair in parts.windows(2) {
        if pair[0].shard.index == pair[1].shard.index {
            return Err(QgError::Usage(format!(
                "{} and {} are both shard {}: give each shard's report once",
                pair[0].path.display(),
                pair[1].path.display(),
                label(&pair[0].shard)
            )));
        }
    }
    let present: BTreeSet<usize> = parts.iter().map(|p| p.shard.index).collect();
    let missing: Vec<String> = (1..=count)
        .filter(|i| !present.contains(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(QgError::Usage(format!(
            "shard {} missing: a merge of part of the shards would leave their files unchecked",
            match missing.len() {
                1 => format!("{} is", missing[0]),
                _ => format!("{} are", missing.join(", ")),
            }
        )));
    }
    Ok(parts)
}

fn label(shard: &ShardInfo) -> String {
    format!("{}/{}", shard.index, shard.count)
}

fn short(plan: &str) -> &str {
    &plan[..plan.len().min(7)]
}

/// The part's result for the gate at `index`, which must be `id`.
fn same_gate<'p>(part: &'p Part, index: usize, id: &str) -> Result<&'p GateResult, QgError> {
    match part.report.gates.get(index) {
        Some(gate) if gate.id == id => Ok(gate),
        _ => Err(QgError::Usage(format!(
            "{}: its gates differ from the other shards' (expected `{id}` at position {}); \
             every shard must run the same gates",
            part.path.display(),
            index + 1
        ))),
    }
}

/// One gate's result from each shard's (in shard order): the shards that
/// ran it make up its result; a gate no shard ran was skipped for the
/// whole run, as every shard says.
fn merge_gate(parts: &[Part], results: Vec<&GateResult>) -> GateResult {
    let ran: Vec<(&Part, &GateResult)> = parts
        .iter()
        .zip(results.iter().copied())
        .filter(|(part, gate)| part.shard.ran.contains_key(&gate.id))
        .collect();
    let Some(((owner, first), rest)) = ran.split_first() else {
        return results[0].clone();
    };
    let mut merged = (*first).clone();
    for (_, part) in rest {
        absorb(&mut merged, part);
    }
    let mut seen = BTreeSet::new();
    merged
        .violations
        .retain(|v| v.tracking.fingerprint.is_none_or(|f| seen.insert(f)));
    merged
        .violations
        .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    merged.warnings = distinct(merged.warnings.iter());
    let versions = distinct(ran.iter().filter_map(|(_, g)| g.tool_version.as_ref()));
    if versions.len() > 1 {
        merged.warnings.push(format!(
            "the shards ran different versions of the tool: {}",
            versions.join("; ")
        ));
    }
    settle(&mut merged, owner);
    merged
}

/// Adds another shard's share of a gate to `merged`.
fn absorb(merged: &mut GateResult, part: &GateResult) {
    merged.duration_ms += part.duration_ms;
    merged.files_checked += part.files_checked;
    merged.outside_scope += part.outside_scope;
    merged.violations.extend(part.violations.iter().cloned());
    merged.warnings.extend(part.warnings.iter().cloned());
    merged.batch_logs.extend(part.log.iter().cloned());
    merged.batch_logs.extend(part.batch_logs.iter().cloned());
    if merged.error.is_none() && part.error.is_some() {
        merged.error = part.error.clone();
    }
    merged.since_last_run = match (merged.since_last_run, part.since_last_run) {
        (Some(mut a), Some(b)) => {
            a.add(b);
            Some(a)
        }
        (a, b) => a.or(b),
    };
}

/// The merged gate's status (an error in any shard makes it an error) and
/// its hints, rendered for every failing file from the templates `owner`
/// carried.
fn settle(gate: &mut GateResult, owner: &Part) {
    // A finding the committed baseline knows fails nothing.
    gate.status = if gate.error.is_some() {
        GateStatus::Error
    } else if gate.violations.iter().any(|v| v.fails_gate(gate.fail_on)) {
        GateStatus::Failed
    } else {
        GateStatus::Passed
    };
    if gate.status == GateStatus::Error {
        return;
    }
    let templates = owner.shard.ran.get(&gate.id).cloned().unwrap_or_default();
    outcome::render_hints_from(
        templates.fix_hint.as_deref(),
        templates.rerun_hint.as_deref(),
        gate,
    );
}

/// The committed baseline's counts for the whole run. A shared entry (of a
/// deleted file, or of no file) that two shards matched is matched once, as
/// one run would: the later shard's finding becomes new and fails its gate.
/// An entry is fixed when a shard found it so and no shard matched it.
fn merge_baseline(parts: &[Part], gates: &mut [GateResult]) -> Option<BaselineSummary> {
    let mut summary: Option<BaselineSummary> = None;
    for baseline in parts.iter().filter_map(|p| p.report.baseline.as_ref()) {
        let total = summary.get_or_insert_with(BaselineSummary::default);
        total.new += baseline.new;
        total.known += baseline.known;
        total.reworded += baseline.reworded;
    }
    let summary = summary.as_mut()?;
    let mut matched: BTreeMap<usize, &str> = BTreeMap::new();
    let mut rematched: BTreeSet<&str> = BTreeSet::new();
    for part in parts {
        for (entry, fingerprint) in &part.shard.baseline.shared_matches {
            if matched.insert(*entry, fingerprint).is_some() {
                rematched.insert(fingerprint);
            }
        }
    }
    for gate in gates.iter_mut() {
        let mut flipped = 0;
        for v in &mut gate.violations {
            let fingerprint = v.tracking.fingerprint.map(|f| f.to_string());
            if fingerprint.is_some_and(|f| rematched.contains(f.as_str())) {
                v.tracking.baseline_state = Some(BaselineState::New);
                flipped += 1;
            }
        }
        summary.known -= flipped;
        summary.new += flipped;
        let owner = parts.iter().find(|p| p.shard.ran.contains_key(&gate.id));
        if let Some(owner) = owner.filter(|_| flipped > 0) {
            settle(gate, owner);
        }
    }
    let fixed: BTreeSet<usize> = parts
        .iter()
        .flat_map(|p| p.shard.baseline.fixed.iter().copied())
        .filter(|entry| !matched.contains_key(entry))
        .collect();
    summary.fixed = fixed.len();
    Some(summary.clone())
}

/// The distinct strings of `items`, in their first order.
fn distinct<'a>(items: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    items
        .filter(|item| seen.insert(item.as_str()))
        .cloned()
        .collect()
}
