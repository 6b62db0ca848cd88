//! The planner: which of the scope's files each gate gets, or why it is skipped.

mod package_bases;

pub(crate) use package_bases::PackageBases;

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Gate;
use crate::scope::{Scope, ScopeMode};
use crate::selection::ToolSelection;

/// Gate id → the root-relative files whose findings it reported: what a
/// baseline entry may be found fixed in, and what the last run's findings
/// are compared over.
pub(crate) type Covered<'a> = BTreeMap<String, BTreeSet<&'a str>>;

/// One gate's share of the scope. Its files are borrowed from the scope
/// (or the project listing): on 100,000 files, a copy per gate was a third
/// of the run's memory.
#[derive(Debug, Clone)]
pub(crate) struct GatePlan<'a> {
    /// The gate.
    pub(crate) gate: &'a Gate,
    /// Root-relative files to check, sorted.
    pub(crate) files: Vec<&'a str>,
    /// Set when the gate has nothing to do.
    pub(crate) skip_reason: Option<String>,
    /// For a `project_wide` gate: the scoped files whose violations are
    /// reported (the tool itself runs on `files`, the whole project).
    pub(crate) report_only: Option<BTreeSet<&'a str>>,
    /// Set on `--scope project` for a gate whose tool picks its own files:
    /// run the tool's own whole-project invocation, `command` plus these
    /// arguments and no file list (`files` then says what it checks).
    pub(crate) native_args: Option<Vec<String>>,
    /// For a tool's own run: qg's `project_scope`, whose globs (and the
    /// gate's own) still apply to what is reported: findings in files they
    /// leave out are counted in `outside_scope`, not shown.
    pub(crate) project_scope: Option<crate::globs::GlobFilter>,
    /// What the gate's result should say about how it was planned (its
    /// files did not fit one command line).
    pub(crate) note: Option<String>,
    /// Arguments added after the gate's own (the `daemon.fresh_args` of a
    /// cold run a warm answer is compared with).
    pub(crate) extra_args: Vec<String>,
    /// Environment variables set for this run besides the gate's own: a
    /// partial run's `search_paths.bases_env`, the package bases of all
    /// the tool's files, filled in by the run after planning.
    pub(crate) env: Vec<(String, std::ffi::OsString)>,
    /// The package bases of all the tool's files, for a gate with a
    /// `search_paths.bases_env`: what `env` hands a partial run, and what
    /// a rerun hint sets (see [`PackageBases::shown_for`]).
    pub(crate) package_bases: Option<std::sync::Arc<PackageBases>>,
}

impl<'a> GatePlan<'a> {
    /// Whether a finding in `file` is reported.
    pub(crate) fn reports(&self, file: &str) -> bool {
        let in_scope = self
            .report_only
            .as_ref()
            .is_none_or(|keep| keep.contains(file));
        // A file outside qg's project scope is one no partial scope ever
        // checks: reporting it here would make `project` red where `auto`
        // stays green. (A finding outside the root is the tool's own word.)
        let in_project = self.project_scope.as_ref().is_none_or(|project| {
            let outside_root = std::path::Path::new(file).is_absolute();
            (outside_root || project.is_included(file))
                && !project.is_excluded(file)
                && self.gate.scope.matches(file)
        });
        in_scope && in_project
    }
}

/// What the planner needs besides the gates and the scope (`'a`: what
/// the plans borrow their files from).
pub(crate) struct Context<'c, 'a> {
    /// The project root, for stub lookups.
    pub(crate) root: &'c std::path::Path,
    /// Every file of `project` scope, when a gate needs the whole project
    /// (`project_wide`, importers unknown); `None` otherwise.
    pub(crate) project_files: Option<&'c [&'a str]>,
    /// Each gate's tool's own file selection, by gate id.
    pub(crate) selections: &'c BTreeMap<String, ToolSelection>,
    /// The config's `project_scope`.
    pub(crate) project_scope: &'c crate::globs::GlobFilter,
    /// Bytes of file arguments one command line can take here (see
    /// `process::batch::argument_budget`).
    pub(crate) argument_budget: usize,
}

/// Plans every selected gate against the scope.
pub(crate) fn plan<'a>(
    gates: &[&'a Gate],
    scope: &'a Scope,
    context: &Context<'_, 'a>,
) -> Vec<GatePlan<'a>> {
    gates
        .iter()
        .map(|gate| {
            let mut plan = plan_gate(gate, scope);
            let selection = context.selections.get(&gate.id);
            let accepts = |path: &str| {
                gate.handles_file_type(path)
                    && gate.scope.matches(path)
                    && selection.is_none_or(|s| s.checks(path, context.root))
            };
            if let (Some(selection), Some(spec)) = (selection, &gate.selection) {
                plan.files.retain(|f| selection.checks(f, context.root));
                // The tool's own run: exactly what the project's checks —
                // unless workspace members take some of its files, which
                // it would check too (then its own files, by name).
                let own_run = gate.left_to_members.is_empty();
                if scope.mode == ScopeMode::Project && plan.skip_reason.is_none() && own_run {
                    plan.native_args = Some(own_run_args(selection, spec));
                    plan.project_scope = Some(context.project_scope.clone());
                }
                if plan.files.is_empty() && plan.skip_reason.is_none() {
                    plan.skip_reason = Some(format!(
                        "the tool's own selection ({}) leaves out every file in scope",
                        selection.source
                    ));
                }
            }
            if let (Some(why), Some(all)) =
                (scope.whole_project.get(&gate.id), context.project_files)
            {
                check_whole_project(&mut plan, all, &accepts, context, why);
                if scope.uncached.contains(&gate.id) {
                    from_scratch(&mut plan);
                }
                return plan;
            }
            let importers_unknown = gate.importers && scope.importers_unknown.is_some();
            match (context.project_files, &plan.skip_reason) {
                // Even with nothing changed of its own (a deleted module).
                (Some(all), _) if importers_unknown && plan.native_args.is_none() => {
                    check_everything(&mut plan, all, &accepts)
                }
                (Some(all), None) if gate.project_wide && plan.native_args.is_none() => {
                    widen(&mut plan, all, &accepts)
                }
                _ => {}
            }
            if let (Some(selection), Some(spec)) = (selection, &gate.selection) {
                run_as_own_when_too_long(&mut plan, own_run_args(selection, spec), context);
            }
            plan
        })
        .collect()
}

/// How a skip reason opens for `count` files of `kind` (`".py/.pyi "`, or
/// `""`) in scope, none of which the gate takes: `none of the 3 files in
/// scope is`, `the 1 file in scope is not`.
fn none_of(count: usize, kind: &str) -> String {
    match count {
        1 => format!("the 1 {kind}file in scope is not"),
        n => format!("none of the {n} {kind}files in scope is"),
    }
}

/// The arguments of the tool's own whole-project run: none when its config
/// names its files, else the gate's `selection.project_args`.
fn own_run_args(selection: &ToolSelection, spec: &crate::config::SelectionSpec) -> Vec<String> {
    match selection.names_files {
        true => Vec::new(),
        false => spec.project_args.clone(),
    }
}

/// Bytes the program, its own arguments and what the kernel adds may take
/// besides the files, in the planner's estimate.
const COMMAND_ALLOWANCE: usize = 16 * 1024;

/// A gate that must see its files at once, given more than one command
/// line can hold (a change every file imports, a `project_wide` gate on
/// 100,000 files), runs as the tool's own whole-project run instead, and
/// reports only the files it was planned for — never a file left out.
fn run_as_own_when_too_long(
    plan: &mut GatePlan<'_>,
    own_args: Vec<String>,
    context: &Context<'_, '_>,
) {
    let gate = plan.gate;
    let given_files = gate.pass_files && plan.native_args.is_none() && plan.skip_reason.is_none();
    if gate.batchable || !given_files {
        return;
    }
    let prefix = match gate.working_dir {
        Some(_) => context.root.as_os_str().len() + 1,
        None => 0,
    };
    let needed: usize = plan
        .files
        .iter()
        .map(|f| crate::process::batch::cost_of_length(prefix + f.len() + 2))
        .sum();
    let budget = context.argument_budget.saturating_sub(COMMAND_ALLOWANCE);
    if needed <= budget {
        return;
    }
    plan.note = Some(format!(
        "its {} files need {needed} bytes of command line, more than this OS allows ({budget}): \
         it ran as the tool's own whole-project run, and only the files in scope are reported",
        plan.files.len()
    ));
    if plan.report_only.is_none() {
        plan.report_only = Some(plan.files.iter().copied().collect());
    }
    plan.native_args = Some(own_args);
    plan.project_scope = Some(context.project_scope.clone());
}

/// A gate whose tool or settings changed checks what `--scope project`
/// would have it check: the tool's own whole-project run when it picks its
/// files itself, else every project file it accepts; all reported.
fn check_whole_project<'a>(
    plan: &mut GatePlan<'a>,
    project_files: &[&'a str],
    accepts: &dyn Fn(&str) -> bool,
    context: &Context<'_, 'a>,
    why: &str,
) {
    let gate = plan.gate;
    plan.files = project_files
        .iter()
        .copied()
        .filter(|p| accepts(p))
        .collect();
    plan.report_only = None;
    plan.note = Some(format!("checked its whole project scope: {why}"));
    if plan.files.is_empty() {
        plan.skip_reason = Some("no project file is of its types or passes its globs".to_string());
        return;
    }
    plan.skip_reason = None;
    let own = context
        .selections
        .get(&gate.id)
        .zip(gate.selection.as_ref());
    if let Some((selection, spec)) = own {
        plan.native_args = Some(own_run_args(selection, spec));
        plan.project_scope = Some(context.project_scope.clone());
    }
}

/// Code the tool's plugin imports changed (a settings module), which the
/// tool's own cache does not key on: the run reads no cache
/// (`uncached_args`), and writes one the next runs can trust, and says so.
fn from_scratch(plan: &mut GatePlan<'_>) {
    let uncached = &plan.gate.uncached_args;
    if uncached.is_empty() {
        return;
    }
    plan.extra_args = uncached.clone();
    if let Some(note) = &mut plan.note {
        note.push_str(
            ", from scratch: its plugin imports what changed, which its cache does not key on",
        );
    }
}

/// A gate that checks importers, when they cannot be known, checks every
/// project file it accepts and reports them all: never a narrower scope in
/// silence.
fn check_everything<'a>(
    plan: &mut GatePlan<'a>,
    project_files: &[&'a str],
    accepts: &dyn Fn(&str) -> bool,
) {
    let files: Vec<&str> = project_files
        .iter()
        .copied()
        .filter(|p| accepts(p))
        .collect();
    if !files.is_empty() {
        plan.files = files;
        plan.skip_reason = None;
    }
}

/// A `project_wide` gate runs on every project file it accepts (the scoped
/// ones included) and reports only the scoped ones.
fn widen<'a>(plan: &mut GatePlan<'a>, project_files: &[&'a str], accepts: &dyn Fn(&str) -> bool) {
    let scoped: BTreeSet<&str> = plan.files.iter().copied().collect();
    let mut files: BTreeSet<&str> = project_files
        .iter()
        .copied()
        .filter(|p| accepts(p))
        .collect();
    files.extend(scoped.iter().copied());
    plan.files = files.into_iter().collect();
    plan.report_only = Some(scoped);
}

fn plan_gate<'a>(gate: &'a Gate, scope: &'a Scope) -> GatePlan<'a> {
    // Importers are in scope for the gates that check them, and only those.
    let typed: Vec<&str> = scope
        .files
        .iter()
        .filter(|f| gate.importers || !f.only_imports_changed())
        .map(|f| f.path.as_str())
        .filter(|p| gate.handles_file_type(p))
        .collect();
    let files: Vec<&str> = typed
        .iter()
        .copied()
        .filter(|p| gate.scope.matches(p))
        .collect();
    let skip_reason = if !files.is_empty() {
        None
    } else if scope.files.is_empty() {
        Some("no files in scope".to_string())
    } else if typed.is_empty() {
        let what = none_of(scope.files.len(), "");
        Some(format!(
            "{what} of type {} (capabilities.file_types)",
            gate.file_kinds(", ")
        ))
    } else if let Some(member) = &gate.member {
        let what = none_of(typed.len(), &format!("{} ", gate.file_kinds("/")));
        Some(format!(
            "{what} in {} (or passes gates.{}.scope)",
            member.dir, member.of
        ))
    } else {
        let what = none_of(typed.len(), &format!("{} ", gate.file_kinds("/")));
        let id = &gate.id;
        Some(match gate.runs_per_member {
            // A workspace member holding the tool's own config takes its files.
            true => format!(
                "{what} left to it: each is in a workspace member checked by its own run, \
                 or outside gates.{id}.scope"
            ),
            false => format!("{what} within gates.{id}.scope include/exclude globs"),
        })
    };
    GatePlan {
        gate,
        files,
        skip_reason,
        report_only: None,
        native_args: None,
        project_scope: None,
        note: None,
        extra_args: Vec::new(),
        env: Vec::new(),
        package_bases: None,
    }
}

#[cfg(test)]
mod tests {
    use super::none_of;

    #[test]
    fn a_skip_reason_counts_one_file_as_one() {
        assert_eq!(none_of(1, ""), "the 1 file in scope is not");
        assert_eq!(
            none_of(3, ".py/.pyi "),
            "none of the 3 .py/.pyi files in scope is"
        );
    }
}
