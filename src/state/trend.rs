//! Reading the history: over the last runs on comparable scope, is the
//! project getting better, stuck, worse, or going back and forth (fixes
//! fighting each other)? And which gates fail most, or error now and then
//! (a flaky tool)?

use serde::Serialize;

use super::history::RunRecord;

/// One branch's recent runs and where they are heading: the `qg history
/// --format json` document (schema: `schemas/history.json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BranchHistory {
    /// The branch, or none outside git.
    pub(crate) branch: Option<String>,
    /// The verdict over the comparable runs; none before the first run.
    pub(crate) trend: Option<Trend>,
    /// The latest runs, oldest first.
    pub(crate) runs: Vec<RunRecord>,
}

/// `branch`'s history (the current branch's when `None`), its `limit`
/// latest runs listed.
pub(crate) fn branch_history(
    workspace: &crate::workspace::Workspace,
    branch: Option<String>,
    limit: usize,
) -> Result<BranchHistory, crate::error::QgError> {
    let branch = match (branch, &workspace.repo) {
        (Some(branch), _) => Some(branch),
        (None, Some(repo)) => Some(repo.head()?.branch),
        (None, None) => None,
    };
    let mut runs: Vec<RunRecord> = super::history::read(&workspace.root)
        .into_iter()
        .filter(|r| r.branch == branch)
        .collect();
    let trend = trend(&runs);
    runs.drain(..runs.len().saturating_sub(limit));
    Ok(BranchHistory {
        branch,
        trend,
        runs,
    })
}

/// Runs a verdict looks at, at most.
pub(crate) const WINDOW: usize = 10;

/// Where the violation count is heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// Fewer than three comparable runs.
    NotEnoughRuns,
    /// Fewer violations than before.
    Improving,
    /// No change for the last two runs or more.
    Plateau,
    /// More violations than before.
    Degrading,
    /// Up, down, up (or down, up, down): fixes are undoing each other.
    Oscillating,
}

impl Verdict {
    /// The words for it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::NotEnoughRuns => "not enough runs",
            Verdict::Improving => "improving",
            Verdict::Plateau => "plateau",
            Verdict::Degrading => "degrading",
            Verdict::Oscillating => "oscillating",
        }
    }
}

/// The verdict and what it was drawn from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Trend {
    /// The verdict.
    pub(crate) verdict: Verdict,
    /// The scope mode the compared runs share (the latest run's).
    pub(crate) scope: String,
    /// Outside `project` scope, the number of files the compared runs
    /// share (runs over another number of files are not compared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<usize>,
    /// Total violations of each compared run, oldest first.
    pub(crate) violations: Vec<usize>,
    /// Per gate, over the compared runs.
    pub(crate) gates: Vec<GateHealth>,
}

/// How one gate fared over the compared runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct GateHealth {
    /// Gate id.
    pub(crate) id: String,
    /// Runs it took part in (not skipped).
    pub(crate) runs: usize,
    /// Runs it failed.
    pub(crate) failed: usize,
    /// Runs it errored.
    pub(crate) errored: usize,
    /// It errored in some runs and ran fine in others: a flaky tool.
    pub(crate) flaky: bool,
}

/// The trend of `runs` (one branch's, oldest first): the last [`WINDOW`]
/// runs comparable with the newest — same scope mode, and outside
/// `project` scope the same number of files (two `auto` runs over
/// different files say nothing about each other); the counts leave out
/// runs in which a gate errored. `None` without runs.
pub(crate) fn trend(runs: &[RunRecord]) -> Option<Trend> {
    let latest = runs.last()?;
    let comparable: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.scope == latest.scope && (r.scope == "project" || r.files == latest.files))
        .collect();
    let window = &comparable[comparable.len().saturating_sub(WINDOW)..];
    // A run with an errored gate did not count that gate's findings: its
    // total would fake a dip.
    let complete: Vec<&&RunRecord> = window
        .iter()
        .filter(|r| r.gates.iter().all(|g| g.status != "error"))
        .collect();
    let violations: Vec<usize> = complete
        .iter()
        .map(|r| r.gates.iter().map(|g| g.violations).sum())
        .collect();
    Some(Trend {
        verdict: verdict(&violations),
        scope: latest.scope.clone(),
        files: (latest.scope != "project").then_some(latest.files),
        violations,
        gates: gate_health(window),
    })
}

/// The verdict over a series of counts, oldest first.
pub(crate) fn verdict(counts: &[usize]) -> Verdict {
    if counts.len() < 3 {
        return Verdict::NotEnoughRuns;
    }
    let deltas: Vec<i64> = counts
        .windows(2)
        .map(|w| w[1] as i64 - w[0] as i64)
        .collect();
    let last = &deltas[deltas.len().saturating_sub(3)..];
    if deltas[deltas.len() - 2..].iter().all(|d| *d == 0) {
        return Verdict::Plateau;
    }
    let alternating = last.len() == 3
        && last.iter().all(|d| *d != 0)
        && last.windows(2).all(|w| w[0].signum() != w[1].signum());
    if alternating {
        return Verdict::Oscillating;
    }
    let net: i64 = last.iter().sum();
    let latest = *deltas.last().expect("three counts make two deltas");
    match (net.signum(), latest.signum()) {
        (-1, _) | (0, -1) => Verdict::Improving,
        (1, _) | (0, 1) => Verdict::Degrading,
        _ => Verdict::Plateau,
    }
}

fn gate_health(runs: &[&RunRecord]) -> Vec<GateHealth> {
    let mut gates: Vec<GateHealth> = Vec::new();
    for run in runs {
        for gate in run.gates.iter().filter(|g| g.status != "skipped") {
            let index = match gates.iter().position(|h| h.id == gate.id) {
                Some(index) => index,
                None => {
                    gates.push(GateHealth {
                        id: gate.id.clone(),
                        runs: 0,
                        failed: 0,
                        errored: 0,
                        flaky: false,
                    });
                    gates.len() - 1
                }
            };
            let health = &mut gates[index];
            health.runs += 1;
            health.failed += usize::from(gate.status == "failed");
            health.errored += usize::from(gate.status == "error");
        }
    }
    for health in &mut gates {
        health.flaky = health.errored > 0 && health.errored < health.runs;
    }
    // Most failures first: where the attention should go.
    gates.sort_by(|a, b| {
        (b.failed + b.errored)
            .cmp(&(a.failed + a.errored))
            .then(a.id.cmp(&b.id))
    });
    gates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(verdict(&[5, 4]), Verdict::NotEnoughRuns);
        assert_eq!(verdict(&[9, 7, 4]), Verdict::Improving);
        assert_eq!(verdict(&[4, 7, 9]), Verdict::Degrading);
        assert_eq!(verdict(&[9, 5, 5, 5]), Verdict::Plateau);
        assert_eq!(verdict(&[5, 7, 4, 6]), Verdict::Oscillating);
        assert_eq!(verdict(&[10, 9, 9, 8]), Verdict::Improving);
        assert_eq!(verdict(&[3, 3, 5]), Verdict::Degrading);
    }
}
