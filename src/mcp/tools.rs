//! The tools `qg mcp` offers: their arguments (typed; the input schemas are
//! derived from these types), their answers (the documents the CLI prints
//! with `--format json`), and the library calls behind them.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{Tool, ToolAnnotations};
use rmcp::schemars::{self, JsonSchema};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::schemas::{self, JsonObject};
use super::shorten;
use crate::baseline::BaselineUse;
use crate::error::QgError;
use crate::exec::Observer;
use crate::fix::FixOptions;
use crate::outcome::GateResult;
use crate::process::Cancel;
use crate::report::json::Omitted;
use crate::run::RunOptions;
use crate::scope::{ScopeMode, ScopeRequest};

/// The project the server serves, as `qg mcp` was started.
#[derive(Debug, Clone)]
pub struct Project {
    /// The directory qg was started in (paths in arguments are relative to it).
    pub cwd: PathBuf,
    /// `--config`.
    pub config: Option<PathBuf>,
    /// At most this many tools at once, per call.
    pub jobs: usize,
}

/// What one call works with besides its arguments.
pub(super) struct Call<'a> {
    /// The project.
    pub(super) project: &'a Project,
    /// Stops the call's tools when the client cancels it.
    pub(super) cancel: Cancel,
    /// Hears about gates starting and finishing (progress notifications).
    pub(super) observer: &'a dyn Observer<GateResult>,
}

/// Why a call has no answer.
#[derive(Debug)]
pub(super) enum Failure {
    /// The arguments do not fit the tool's input schema.
    Arguments(String),
    /// qg refused or could not finish (bad config, unknown gate, cancelled…).
    Qg(QgError),
}

impl From<QgError> for Failure {
    fn from(e: QgError) -> Self {
        Failure::Qg(e)
    }
}

/// One tool: what clients see of it, and what runs when it is called.
pub(super) struct Definition {
    /// Its name.
    pub(super) name: &'static str,
    /// Runs gates (long; progress and cancellation matter).
    pub(super) runs_tools: bool,
    tool: fn() -> Tool,
    call: fn(&Call<'_>, JsonObject) -> Result<Answer, Failure>,
}

impl Definition {
    /// The tool as `tools/list` shows it.
    pub(super) fn tool(&self) -> Tool {
        (self.tool)()
    }

    /// Checks and parses `arguments` and runs the tool (blocking). An
    /// argument the input schema does not name is refused, not ignored: a
    /// typo must not quietly widen or narrow a run.
    pub(super) fn call(&self, call: &Call<'_>, arguments: JsonObject) -> Result<Answer, Failure> {
        let schema = self.tool().input_schema;
        let known: Vec<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if let Some(unknown) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(Failure::Arguments(format!(
                "unknown argument `{unknown}`; {}",
                crate::suggest::hint(unknown, &known)
            )));
        }
        // An agent's call is no user's explicit act: nothing of the
        // repository's runs until the user has trusted it (`qg trust`).
        crate::trust::require(&call.project.cwd, call.project.config.as_deref())
            .map_err(Failure::Qg)?;
        (self.call)(call, arguments)
    }
}

/// Every tool, in the order `tools/list` gives them.
pub(super) const TOOLS: &[Definition] = &[
    Definition {
        name: "run_gates",
        runs_tools: true,
        tool: run_gates_tool,
        call: run_gates,
    },
    Definition {
        name: "list_scope",
        runs_tools: false,
        tool: list_scope_tool,
        call: list_scope,
    },
    Definition {
        name: "fix",
        runs_tools: true,
        tool: fix_tool,
        call: fix,
    },
    Definition {
        name: "explain_gate",
        runs_tools: false,
        tool: explain_gate_tool,
        call: explain_gate,
    },
    Definition {
        name: "history",
        runs_tools: false,
        tool: history_tool,
        call: history,
    },
];

/// The tool called `name`.
pub(super) fn find(name: &str) -> Option<&'static Definition> {
    TOOLS.iter().find(|t| t.name == name)
}

/// `--scope`, as an argument.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Scope {
    /// What changed since the last green run, plus what failed last time
    /// (and, for type checkers, the files importing what changed).
    Auto,
    /// What changed since the branch left its parent.
    Branch,
    /// Every project file, as each tool's own whole-project run checks.
    Project,
    /// The `paths` given.
    Files,
}

impl From<Scope> for ScopeMode {
    fn from(scope: Scope) -> Self {
        match scope {
            Scope::Auto => ScopeMode::Auto,
            Scope::Branch => ScopeMode::Branch,
            Scope::Project => ScopeMode::Project,
            Scope::Files => ScopeMode::Files,
        }
    }
}

/// Which files, as `qg run`'s `--scope`, PATHS and `--parent` say it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
struct ScopeArgs {
    /// `auto` (default; `files` when paths are given), `branch`, `project` or `files`.
    #[serde(default)]
    scope: Option<Scope>,
    /// Files or directories, relative to the directory qg mcp was started
    /// in; they imply scope `files`.
    #[serde(default)]
    paths: Vec<String>,
    /// Parent branch for scope `branch` (default: the config's, origin/HEAD, main, master).
    #[serde(default)]
    parent: Option<String>,
}

impl ScopeArgs {
    fn request(&self) -> ScopeRequest {
        ScopeRequest {
            mode: self.scope.map(ScopeMode::from),
            paths: self.paths.iter().map(PathBuf::from).collect(),
            parent: self.parent.clone(),
        }
    }
}

/// How much of a run report an answer lists.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct ListingArgs {
    /// List only the violations the committed baseline (.st3/baseline.jsonl)
    /// does not know — the ones that fail the run; the others are counted
    /// in `known_not_listed`. No effect without a baseline.
    #[serde(default = "yes")]
    new_only: bool,
    /// List at most this many violations, errors first; the others are
    /// counted in `truncated` and the whole report is written to `full_report`.
    #[serde(default = "default_max_violations")]
    max_violations: usize,
}

fn yes() -> bool {
    true
}

fn default_max_violations() -> usize {
    50
}

/// `run_gates` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct RunGatesArgs {
    #[serde(flatten)]
    scope: ScopeArgs,
    /// Run only these gates (ids from the config); default: the active gates.
    #[serde(default)]
    gates: Vec<String>,
    #[serde(flatten)]
    listing: ListingArgs,
    /// Neither move the baseline nor record the run (qg run --no-state).
    #[serde(default)]
    no_state: bool,
    /// Wait until a cold run has confirmed each warm answer (qg run
    /// --confirm): before a commit. Otherwise a warm answer comes at once,
    /// marked `unconfirmed`, and is confirmed in the background.
    #[serde(default)]
    confirm: bool,
}

/// `list_scope` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct ListScopeArgs {
    #[serde(flatten)]
    scope: ScopeArgs,
}

/// `fix` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct FixArgs {
    #[serde(flatten)]
    scope: ScopeArgs,
    /// Fix only these gates' findings; default: every active gate with a fixer.
    #[serde(default)]
    gates: Vec<String>,
    /// Also apply the fixes the tools call unsafe.
    #[serde(default, rename = "unsafe")]
    unsafe_fixes: bool,
    /// Show the changes (in `diffs`) and write nothing.
    #[serde(default)]
    diff: bool,
    #[serde(flatten)]
    listing: ListingArgs,
}

/// `explain_gate` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct ExplainGateArgs {
    /// The gate id: a key under `gates` in the project's qg config.
    gate: String,
}

/// `history` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct HistoryArgs {
    /// The branch (default: the current one).
    #[serde(default)]
    branch: Option<String>,
    /// How many of the latest runs to list (default 10).
    #[serde(default = "default_history_limit")]
    limit: usize,
}

fn default_history_limit() -> usize {
    10
}

fn arguments<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, Failure> {
    serde_json::from_value(Value::Object(arguments)).map_err(|e| Failure::Arguments(e.to_string()))
}

/// A tool whose title is its annotations'.
fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    output: Arc<JsonObject>,
    annotations: ToolAnnotations,
) -> Tool {
    let title = annotations
        .title
        .clone()
        .unwrap_or_else(|| name.to_string());
    Tool::new(name, description, schema_for_type::<T>())
        .with_title(title)
        .with_raw_output_schema(output)
        .with_annotations(annotations)
}

/// Changes nothing but qg's own state under .st3/.
fn reads_the_code(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
        .open_world(false)
}

fn run_options(
    call: &Call<'_>,
    scope: &ScopeArgs,
    gates: Vec<String>,
    no_state: bool,
    confirm: bool,
) -> RunOptions {
    RunOptions {
        cwd: call.project.cwd.clone(),
        config: call.project.config.clone(),
        scope: scope.request(),
        gates,
        jobs: call.project.jobs,
        no_state,
        baseline: BaselineUse::Ratchet,
        shard: None,
        cancel: call.cancel.clone(),
        report_covered: false,
        require_trust: true,
        daemons: Default::default(),
        cache: Default::default(),
        confirm,
    }
}

fn run_gates_tool() -> Tool {
    let annotations = ToolAnnotations::with_title("Run quality gates")
        .read_only(false)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    tool::<RunGatesArgs>(
        "run_gates",
        "Run the project's quality gates (linters, formatters, type checkers from its qg config) on the \
         files that need checking, and return the verdict: `summary_line` first, then counts, the scope, \
         and each gate's status and violations (file, line, column, code, message, severity, fixable). \
         Scope `auto` (default) checks what changed since the last green run plus what failed last time \
         (type checkers also check the files importing what changed); `project` checks everything. \
         A tool that is missing, crashes or prints nonsense makes its gate `error`, never a pass. \
         `overall_pass` is the answer to \"may I move on?\". Violations are capped (`max_violations`, \
         errors first); `truncated` counts the rest and `full_report` names the file holding them all.",
        schemas::run_gates(),
        annotations,
    )
}

fn run_gates(call: &Call<'_>, args: JsonObject) -> Result<Answer, Failure> {
    let args: RunGatesArgs = arguments(args)?;
    let options = run_options(call, &args.scope, args.gates, args.no_state, args.confirm);
    let report = crate::run::run(&options, call.observer)?;
    let json = crate::report::json::document_with;
    match shortened(call, &report, &args.listing, |whole| {
        json_bytes(&crate::report::json::document(whole))
    })? {
        Some((listed, omitted)) => answer(&json(&report, &listed, Some(&omitted))),
        None => answer(&json(&report, &report.gates, Some(&Omitted::default()))),
    }
}

fn list_scope_tool() -> Tool {
    tool::<ListScopeArgs>(
        "list_scope",
        "List the files a run would check, without running anything, and why each is in scope: \
         `changed`, `untracked`, `failed_last_run`, `project_glob`, `explicit`, or `imports_changed` \
         (with `depends_on`: the changed files it imports). Says when and why the requested scope \
         fell back to a wider one (`fallback_reason`).",
        schemas::list_scope(),
        reads_the_code("List the files in scope"),
    )
}

fn list_scope(call: &Call<'_>, args: JsonObject) -> Result<Answer, Failure> {
    let args: ListScopeArgs = arguments(args)?;
    let project = call.project;
    let resolved = crate::run::scope_of(
        &project.cwd,
        project.config.as_deref(),
        &args.scope.request(),
        &call.cancel,
    )?;
    answer(&resolved.scope)
}

fn fix_tool() -> Tool {
    let annotations = ToolAnnotations::with_title("Fix what the tools can fix")
        .read_only(false)
        .destructive(true)
        .idempotent(true)
        .open_world(false);
    tool::<FixArgs>(
        "fix",
        "Run each gate's own fixer (the formatter; the linter's safe fixes, `unsafe` adds the unsafe \
         ones) on the files that gate finds failing in the scope — never another file — then check \
         again. Returns how many violations were fixed, `changed_files`, fixers that failed (their \
         files are put back: nothing is left half-written), and `report`: the check after fixing, \
         listed as run_gates lists it. `diff: true` writes nothing and returns the changes in `diffs`.",
        schemas::fix(),
        annotations,
    )
}

fn fix(call: &Call<'_>, args: JsonObject) -> Result<Answer, Failure> {
    let args: FixArgs = arguments(args)?;
    let options = FixOptions {
        run: run_options(call, &args.scope, args.gates, false, false),
        unsafe_fixes: args.unsafe_fixes,
        diff: args.diff,
    };
    let fixed = crate::fix::fix(&options, call.observer)?;
    // The counts of what is left out go at the top, not in `report`.
    let nothing_left_out = Omitted::default();
    let Some(after) = &fixed.after else {
        return answer(&fixed.document_with(None, Some(&nothing_left_out)));
    };
    let json = crate::report::json::document_with;
    match shortened(call, after, &args.listing, |_| {
        json_bytes(&fixed.document())
    })? {
        Some((listed, omitted)) => {
            let report = json(after, &listed, None);
            answer(&fixed.document_with(Some(report), Some(&omitted)))
        }
        None => {
            let report = json(after, &after.gates, None);
            answer(&fixed.document_with(Some(report), Some(&nothing_left_out)))
        }
    }
}

fn explain_gate_tool() -> Tool {
    tool::<ExplainGateArgs>(
        "explain_gate",
        "What one gate runs: its command, the program it resolves to and that program's version (or \
         why it cannot run and the command that installs it), where its files come from (the tool's \
         own config or qg's list), whether it checks importers, how its output is read, its fixer \
         and its fix hint.",
        schemas::explain_gate(),
        reads_the_code("Explain a gate"),
    )
}

fn explain_gate(call: &Call<'_>, args: JsonObject) -> Result<Answer, Failure> {
    let args: ExplainGateArgs = arguments(args)?;
    let project = call.project;
    let (workspace, config) = crate::run::prepare(&project.cwd, project.config.as_deref())?;
    answer(&crate::explain::explain(&workspace, &config, &args.gate)?)
}

fn history_tool() -> Tool {
    tool::<HistoryArgs>(
        "history",
        "This branch's recent runs (newest last) and where they are heading over comparable runs: \
         `improving`, `plateau`, `degrading`, `oscillating` (fixes undoing each other) or \
         `not_enough_runs`; the gates that fail most, and gates that error now and then (flaky \
         tools). `trend` is null before the first run.",
        schemas::history(),
        reads_the_code("Run history and trend"),
    )
}

fn history(call: &Call<'_>, args: JsonObject) -> Result<Answer, Failure> {
    let args: HistoryArgs = arguments(args)?;
    let workspace = crate::workspace::Workspace::discover(&call.project.cwd)?;
    answer(&crate::state::trend::branch_history(
        &workspace,
        args.branch,
        args.limit,
    )?)
}

/// A tool's answer: its document as structured content, and as JSON text
/// in the document's own field order (summary line first) for a reader
/// that takes the text.
pub(super) struct Answer {
    /// The document as a JSON value.
    pub(super) value: Value,
    /// The same, as compact JSON text.
    pub(super) text: String,
}

fn answer(document: &impl serde::Serialize) -> Result<Answer, Failure> {
    let failed = |e: serde_json::Error| {
        Failure::Qg(QgError::Internal(format!(
            "a document does not serialize: {e}"
        )))
    };
    Ok(Answer {
        value: serde_json::to_value(document).map_err(failed)?,
        text: serde_json::to_string(document).map_err(failed)?,
    })
}

fn json_bytes(document: &impl serde::Serialize) -> Result<Vec<u8>, QgError> {
    serde_json::to_vec(document)
        .map_err(|e| QgError::Internal(format!("a report does not serialize: {e}")))
}

/// When `listing` leaves something of `report` out: the gates as listed,
/// and what they leave out — the whole document (`whole`) written down
/// first, beside the logs. `None` when everything is listed.
fn shortened(
    call: &Call<'_>,
    report: &crate::report::RunReport,
    listing: &ListingArgs,
    whole: impl FnOnce(&crate::report::RunReport) -> Result<Vec<u8>, QgError>,
) -> Result<Option<(Vec<crate::outcome::GateResult>, Omitted)>, Failure> {
    if !shorten::would_shorten(&report.gates, listing.new_only, listing.max_violations) {
        return Ok(None);
    }
    let project = call.project;
    let (workspace, config) = crate::run::prepare(&project.cwd, project.config.as_deref())?;
    let bytes = whole(report)?;
    let path =
        crate::exec::artifacts::write_report(&workspace.root, &config.artifact_logging, &bytes)
            .map_err(|e| QgError::io("cannot write the whole report", e))?;
    let mut listed = report.gates.clone();
    let mut omitted = shorten::shorten(&mut listed, listing.new_only, listing.max_violations);
    omitted.full_report = Some(path);
    Ok(Some((listed, omitted)))
}
