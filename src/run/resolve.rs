//! The scope of a run, with the git and state facts it was resolved from,
//! and the importers of what changed.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{self, Config};
use crate::error::QgError;
use crate::git::Head;
use crate::graph;
use crate::scope::{self, Baseline, Reason, Scope, ScopeMode, ScopeRequest};
use crate::state::pending::Pending;
use crate::state::{StateStore, ToolStamp};
use crate::tools::{resolve, Toolbox};
use crate::workspace::Workspace;

/// A resolved scope with the git and state facts it was resolved from.
pub(crate) struct ResolvedScope {
    /// The scope.
    pub(crate) scope: Scope,
    /// HEAD, when in a repository.
    pub(crate) head: Option<Head>,
    /// The tool each active gate resolves to now.
    pub(crate) tools: BTreeMap<String, ToolStamp>,
    /// What the report should say (a corrupt state file moved aside).
    pub(crate) warnings: Vec<String>,
    /// The branch's state held for an earlier run's confirmations, if any.
    pub(crate) held: Option<Pending>,
}

impl ResolvedScope {
    /// What the warm answers of the run that held the branch's state got
    /// wrong, found by their confirmations: gate id → a sentence.
    pub(crate) fn contradicted(&self) -> Vec<(String, String)> {
        let Some(held) = &self.held else {
            return Vec::new();
        };
        held.contradictions()
            .into_iter()
            .map(|(gate, said)| {
                let sentence = format!(
                    "the last warm answer of {gate} was wrong: {said}; it answers cold until its tool or settings change"
                );
                (gate, sentence)
            })
            .collect()
    }
}

/// Resolves the scope, reading this branch's state for `auto`; on a
/// partial scope, adds the importers of what changed when one of `gates`
/// checks importers. `remember`: whether caches may be written; `tools`
/// are the run's (its cancel stops the import analyzer).
pub(crate) fn resolve_scope(
    workspace: &Workspace,
    config: &Config,
    request: &ScopeRequest,
    gates: &[&config::Gate],
    remember: bool,
    tools: &Toolbox<'_>,
) -> Result<ResolvedScope, QgError> {
    let auto = request.effective_mode()? == ScopeMode::Auto;
    let head = workspace.repo.as_ref().map(|r| r.head()).transpose()?;
    let store = StateStore::new(&workspace.root);
    let loaded = match &head {
        Some(head) => store.load_branch(&head.branch)?,
        None => None,
    };
    let held = loaded.as_ref().and_then(|s| s.pending.clone());
    let state = loaded.filter(|_| auto);
    let stamps = if auto {
        tool_stamps(tools, config)
    } else {
        BTreeMap::new()
    };
    let baseline = Baseline {
        state: state.as_ref(),
        tools: stamps.clone(),
    };
    let mut scope = scope::resolve(workspace, config, request, &baseline)?;
    let mut warnings = store.take_warnings();
    if scope.mode != ScopeMode::Project && gates.iter().any(|g| g.importers) {
        let known = ImportersContext {
            remember,
            tools,
            state: state.as_ref(),
        };
        add_importers(workspace, config, &mut scope, &known, &mut warnings);
    }
    Ok(ResolvedScope {
        scope,
        head,
        tools: stamps,
        warnings,
        held,
    })
}

/// What finding the importers needs besides the scope.
struct ImportersContext<'t> {
    /// Whether caches may be written.
    remember: bool,
    /// The run's tools.
    tools: &'t Toolbox<'t>,
    /// This branch's state (`auto`): which content of a file the last
    /// green run checked, when it is not the base commit's.
    state: Option<&'t crate::state::BranchState>,
}

/// Adds every project file that imports a changed or deleted file (reason
/// `imports_changed`), or records why they cannot be known.
fn add_importers(
    workspace: &Workspace,
    config: &Config,
    scope: &mut Scope,
    known: &ImportersContext<'_>,
    warnings: &mut Vec<String>,
) {
    let Some(spec) = &config.import_graph else {
        return;
    };
    let mut seeds: BTreeSet<String> = scope
        .files
        .iter()
        .filter(|f| {
            f.reasons
                .iter()
                .any(|r| matches!(r, Reason::Changed | Reason::Untracked | Reason::Explicit))
        })
        .map(|f| f.path.clone())
        .collect();
    let proved_wrong = config
        .interface_aware_importers
        .then(|| crate::state::importers_off::read(&workspace.root))
        .flatten();
    if let Some(off) = &proved_wrong {
        warnings.push(off.describe());
    }
    if config.interface_aware_importers && proved_wrong.is_none() {
        let found = super::body_only::find(workspace, scope, &seeds, known.state, known.remember);
        seeds.retain(|seed| !found.body_only.contains(seed));
        scope.body_only = found.body_only;
        scope.interface_changed = found.interface_changed;
    }
    let deleted = scope
        .diff
        .as_ref()
        .map(|d| d.deleted.clone())
        .unwrap_or_default();
    if seeds.is_empty() && deleted.is_empty() {
        return;
    }
    let request = graph::Request {
        ws: workspace,
        config,
        spec,
        seeds,
        deleted,
        in_scope: scope.paths().map(str::to_string).collect(),
        diff: scope.diff.as_ref(),
        remember: known.remember,
        tools: known.tools,
    };
    match graph::importers(&request) {
        Ok(importers) => {
            warnings.extend(assumed_warning(spec, &importers.assumed));
            scope::add_importers(scope, importers.found);
        }
        Err(reason) => scope.importers_unknown = Some(reason),
    }
}

/// What the run says when importers came in only through imports the
/// analyzer could not resolve: they are checked, to be safe, and the
/// search roots are what would make the graph exact.
fn assumed_warning(
    spec: &config::ImportGraph,
    assumed: &BTreeMap<String, String>,
) -> Option<String> {
    let (first, why) = assumed.iter().next()?;
    let (checked, names) = match assumed.len() {
        1 => (
            "checked as an importer of the changes only through an import".to_string(),
            "it names a project module, add its source root",
        ),
        n => (
            format!(
                "and {} more checked as importers of the changes only through imports",
                n - 1
            ),
            "they name project modules, add their source roots",
        ),
    };
    Some(format!(
        "{} {checked} the import analyzer ({}) could not resolve ({why}): checked to be safe; if {names} to the tools' search paths (`qg doctor` lists the roots the import graph uses)",
        crate::file_name::display(first),
        spec.command[0],
    ))
}

/// What each active gate's `command[0]` resolves to now.
fn tool_stamps(tools: &Toolbox<'_>, config: &Config) -> BTreeMap<String, ToolStamp> {
    config
        .active_gates
        .iter()
        .map(|id| {
            (
                id.clone(),
                resolve::stamp(&tools.resolve(&config.gates[id])),
            )
        })
        .collect()
}
