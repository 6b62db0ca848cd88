//! `--verify` with `interface_aware_importers`: a run that left out the
//! importers of a body-only edit is run again with every importer, and a
//! gate whose verdict the left-out importers change becomes an error
//! showing the difference. It is the one optimisation that can make qg
//! wrong, so a user who asks for proof gets it, not an assumption.

use super::{gates, measure_against_baseline, resolve_scope, DaemonUse, RunOptions};
use crate::baseline::{self, BaselineUse};
use crate::config;
use crate::error::QgError;
use crate::exec;
use crate::outcome::{ErrorKind, GateResult, GateStatus};
use crate::scope::Scope;

/// Whether the run must be compared with its full walk: `--verify`, the
/// option on, a body-only edit whose importers were left out, and a
/// whole run (a shard's share of the full walk would be cut differently).
pub(super) fn wanted(options: &RunOptions, config: &config::Config, scope: &Scope) -> bool {
    options.daemons == DaemonUse::Verify
        && config.interface_aware_importers
        && !scope.body_only.is_empty()
        && options.shard.is_none()
}

/// Runs the gates that check importers again with every importer (cold,
/// recording nothing, measured against the baseline without changing it)
/// and judges each of `results` against its full-walk run. The other gates
/// are left out: the importers never enter their files.
pub(super) fn compare(
    project: gates::Project<'_>,
    gates: &[&config::Gate],
    options: &RunOptions,
    results: &mut [GateResult],
) -> Result<(), QgError> {
    let gates::Project {
        workspace,
        config,
        tools,
    } = project;
    let gates: Vec<&config::Gate> = gates.iter().copied().filter(|g| g.importers).collect();
    if gates.is_empty() {
        return Ok(());
    }
    let records = options.records();
    let mut full_config = config.clone();
    full_config.interface_aware_importers = false;
    let options = RunOptions {
        no_state: true,
        daemons: DaemonUse::Ignore,
        // It checks again what a run left out: with the tool, not its
        // stored answers.
        cache: crate::run::CacheUse::Off,
        report_covered: false,
        ..options.clone()
    };
    let resolved = resolve_scope(
        workspace,
        &full_config,
        &options.scope,
        &gates,
        false,
        tools,
    )?;
    let listing = gates::project_listing(workspace, &full_config, &gates, &resolved.scope)?;
    let runs = gates::run_gates(
        gates::Project {
            workspace,
            config: &full_config,
            tools,
        },
        &gates,
        &resolved.scope,
        listing.as_deref(),
        &options,
        gates::Vouching {
            branch: "",
            state_moves: false,
        },
        &exec::Silent,
    )?;
    let mut full = runs.results;
    baseline::fingerprint::stamp(&workspace.root, &mut full);
    measure_against_baseline(
        workspace,
        &full_config,
        BaselineUse::Locked,
        &mut full,
        &runs.covered,
        &mut Vec::new(),
    )?;
    for full in full {
        let result = results.iter_mut().find(|r| r.id == full.id);
        if let Some((result, gate)) = result.zip(config.gates.get(&full.id)) {
            judge(gate, result, full);
            // A run that records: its red verdict keeps the importer failed.
            if let Some(found) = proof_against_leaving_out(result).filter(|_| records) {
                super::left_out::keep_proof(&workspace.root, &found);
            }
        }
    }
    Ok(())
}

/// When the comparison found the left-out importers change the verdict:
/// what, in the gate's error message.
fn proof_against_leaving_out(result: &GateResult) -> Option<String> {
    let error = result.error.as_ref()?;
    (error.kind == ErrorKind::SkippedImporters).then(|| format!("{}: {}", result.id, error.message))
}

/// One gate's result after the comparison with its full-walk run.
fn judge(gate: &config::Gate, result: &mut GateResult, full: GateResult) {
    if result.status == GateStatus::Error {
        return;
    }
    if full.status == GateStatus::Error {
        let why = full.error.as_ref().map_or("", |e| e.message.as_str());
        result.warnings.push(format!(
            "not compared with a run checking every importer: that run erred ({why})"
        ));
        return;
    }
    *result = crate::outcome::full_walk(gate, result, full);
}
