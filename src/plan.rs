//! The planner: which of the scope's files each gate gets, or why it is skipped.

use std::collections::BTreeSet;

use crate::config::{Config, Gate};
use crate::error::QgError;
use crate::scope::Scope;
use crate::suggest;

/// One gate's share of the scope.
#[derive(Debug, Clone)]
pub struct GatePlan<'c> {
    /// The gate.
    pub gate: &'c Gate,
    /// Root-relative files to check, sorted.
    pub files: Vec<String>,
    /// Set when the gate has nothing to do.
    pub skip_reason: Option<String>,
    /// For a `project_wide` gate: the scoped files whose violations are
    /// reported (the tool itself runs on `files`, the whole project).
    pub report_only: Option<BTreeSet<String>>,
}

/// The gates to run: `--gate` ids (any defined gate), else `active_gates`.
pub fn select_gates<'c>(
    config: &'c Config,
    requested: &[String],
) -> Result<Vec<&'c Gate>, QgError> {
    let ids: &[String] = if requested.is_empty() {
        &config.active_gates
    } else {
        requested
    };
    let defined: Vec<&str> = config.gates.keys().map(String::as_str).collect();
    let mut selected: Vec<&Gate> = Vec::new();
    for id in ids {
        let gate = config.gates.get(id).ok_or_else(|| {
            QgError::Usage(format!(
                "--gate {id}: no such gate in {}; {}",
                config.origin,
                suggest::hint(id, &defined)
            ))
        })?;
        if !selected.iter().any(|g| g.id == gate.id) {
            selected.push(gate);
        }
    }
    Ok(selected)
}

/// Plans every selected gate against the scope.
/// `project_files` (every file of `project` scope) is needed only by
/// `project_wide` gates; pass `None` when none is selected.
pub fn plan<'c>(
    gates: &[&'c Gate],
    scope: &Scope,
    project_files: Option<&[String]>,
) -> Vec<GatePlan<'c>> {
    gates
        .iter()
        .map(|gate| {
            let mut plan = plan_gate(gate, scope);
            let importers_unknown = gate.importers && scope.importers_unknown.is_some();
            match (project_files, &plan.skip_reason) {
                // Even with nothing changed of its own (a deleted module).
                (Some(all), _) if importers_unknown => check_everything(&mut plan, all),
                (Some(all), None) if gate.project_wide => widen(&mut plan, all),
                _ => {}
            }
            plan
        })
        .collect()
}

/// A gate that checks importers, when they cannot be known, checks every
/// project file it accepts and reports them all: never a narrower scope in
/// silence.
fn check_everything(plan: &mut GatePlan<'_>, project_files: &[String]) {
    let gate = plan.gate;
    let files: Vec<String> = project_files
        .iter()
        .filter(|p| has_file_type(gate, p) && gate.scope.matches(p))
        .cloned()
        .collect();
    if !files.is_empty() {
        plan.files = files;
        plan.skip_reason = None;
    }
}

/// A `project_wide` gate runs on every project file it accepts (the scoped
/// ones included) and reports only the scoped ones.
fn widen(plan: &mut GatePlan<'_>, project_files: &[String]) {
    let gate = plan.gate;
    let scoped: BTreeSet<String> = plan.files.iter().cloned().collect();
    let mut files: BTreeSet<String> = project_files
        .iter()
        .filter(|p| has_file_type(gate, p) && gate.scope.matches(p))
        .cloned()
        .collect();
    files.extend(scoped.iter().cloned());
    plan.files = files.into_iter().collect();
    plan.report_only = Some(scoped);
}

fn plan_gate<'c>(gate: &'c Gate, scope: &Scope) -> GatePlan<'c> {
    // Importers are in scope for the gates that check them, and only those.
    let typed: Vec<&str> = scope
        .files
        .iter()
        .filter(|f| gate.importers || !f.only_imports_changed())
        .map(|f| f.path.as_str())
        .filter(|p| has_file_type(gate, p))
        .collect();
    let files: Vec<String> = typed
        .iter()
        .filter(|p| gate.scope.matches(p))
        .map(|p| p.to_string())
        .collect();
    let skip_reason = if !files.is_empty() {
        None
    } else if scope.files.is_empty() {
        Some("no files in scope".to_string())
    } else if typed.is_empty() {
        Some(format!(
            "none of the {} files in scope is of type {} (capabilities.file_types)",
            scope.files.len(),
            gate.file_types.join(", ")
        ))
    } else {
        Some(format!(
            "none of the {} {} files in scope passes gates.{}.scope include/exclude globs",
            typed.len(),
            gate.file_types.join("/"),
            gate.id
        ))
    };
    GatePlan {
        gate,
        files,
        skip_reason,
        report_only: None,
    }
}

fn has_file_type(gate: &Gate, path: &str) -> bool {
    gate.file_types.is_empty()
        || gate
            .file_types
            .iter()
            .any(|suffix| path.ends_with(suffix.as_str()))
}
