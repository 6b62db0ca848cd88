//! The package bases a partial run must be handed. A type checker that
//! crawls up from each file it is given to the directory above its
//! outermost package searches those directories for imports (mypy). Its
//! own run on the project is given every file, so it searches the bases of
//! all of them; a run given some files searches theirs alone. Edit a test
//! of a src/ layout and the run on `tests/test_x.py` no longer searches
//! `src/`: the package comes from site-packages through the editable
//! install, an installed package the tool calls untyped or silences — a
//! verdict the project's own `mypy` never gives. A gate whose
//! `search_paths` names a `bases_env` gets the missing bases there.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::config::Gate;
use crate::error::QgError;
use crate::graph::roots;
use crate::plan::{GatePlan, PackageBases};
use crate::scope::{self, Scope, ScopeMode};
use crate::selection::ToolSelection;
use crate::workspace::Workspace;

/// Sets each partial plan's `bases_env` variable (see the module docs),
/// and keeps every plan's bases for its hints.
/// `listing` is the project's files when the run already has them.
pub(super) fn hand_package_bases(
    workspace: &Workspace,
    config: &crate::config::Config,
    plans: &mut [GatePlan<'_>],
    selections: &BTreeMap<String, ToolSelection>,
    scope: &Scope,
    listing: Option<&[String]>,
) -> Result<(), QgError> {
    // A whole-project run (the tool's own `.`) is handed nothing, but its
    // hints name files as a partial run's do, so it keeps the bases too.
    let needs = |plan: &GatePlan<'_>| {
        plan.skip_reason.is_none() && plan.gate.pass_files && variable(plan.gate).is_some()
    };
    if !plans.iter().any(needs) {
        return Ok(());
    }
    let owned;
    let project: Vec<&str> = match (listing, scope.mode) {
        (Some(listing), _) => listing.iter().map(String::as_str).collect(),
        (None, ScopeMode::Project) => scope.paths().collect(),
        (None, _) => {
            owned = scope::project_files(workspace, config)?;
            owned.iter().map(String::as_str).collect()
        }
    };
    let known: HashSet<&str> = project.iter().copied().collect();
    let packages: Arc<HashSet<String>> = Arc::new(
        roots::package_dirs(project.iter().copied())
            .into_iter()
            .map(str::to_string)
            .collect(),
    );
    for plan in plans.iter_mut().filter(|p| needs(p)) {
        let gate = plan.gate;
        let selection = selections.get(&gate.id);
        let checked = project.iter().copied().filter(|file| {
            gate.handles_file_type(file)
                && gate.owns(file)
                && selection.is_none_or(|s| s.checks(file, &workspace.root))
        });
        let spec = gate
            .search_paths
            .as_ref()
            .expect("a bases_env has its search_paths");
        let bases = roots::bases_of_all(&gate.config_dir(&workspace.root), spec, checked, &known);
        let name = variable(gate).expect("planned with one");
        let before = match gate.env.get(name) {
            Some(value) => Some(value.into()),
            None => std::env::var_os(name),
        };
        let Some(bases) =
            PackageBases::new(name, &workspace.root, bases, before, Arc::clone(&packages))
        else {
            continue;
        };
        plan.package_bases = Some(Arc::new(bases));
        if plan.native_args.is_none() {
            hand_to_partial_run(plan);
        }
    }
    Ok(())
}

/// Hands a partial run of `plan` the package bases of all the tool's
/// files (its `bases_env`), as planned: a plan planned as the tool's own
/// whole-project run gets them when it is cut to some of its files.
pub(super) fn hand_to_partial_run(plan: &mut GatePlan<'_>) {
    let (Some(bases), Some(spec)) = (&plan.package_bases, &plan.gate.search_paths) else {
        return;
    };
    if let Some(variable) = bases.for_run() {
        plan.env.push(variable);
        plan.extra_args
            .extend(spec.bases_cache_args.iter().cloned());
    }
}

/// The gate's `bases_env`.
fn variable(gate: &Gate) -> Option<&str> {
    gate.search_paths.as_ref()?.bases_env.as_deref()
}
