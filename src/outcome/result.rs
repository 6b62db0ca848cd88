//! What a gate's run amounts to: its status, its findings, and the evidence
//! when its tool could not be trusted.

use serde::{Deserialize, Serialize};

use crate::config::Gate;
use crate::violation::Violation;

/// A gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GateStatus {
    /// Ran fine, nothing at or above `fail_on`.
    Passed,
    /// Ran fine and found violations at or above `fail_on`.
    Failed,
    /// The tool could not be trusted to have checked anything.
    Error,
    /// No file for this gate in scope.
    Skipped,
}

/// What kind of breakage made a gate `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub(crate) enum ErrorKind {
    /// The program is not installed where qg looked.
    NotFound,
    /// The program exists but cannot be executed.
    NotExecutable,
    /// The OS refused to start it.
    SpawnFailed,
    /// It ran past `timeout_seconds`; its process tree was killed.
    Timeout,
    /// A signal killed it.
    Signal,
    /// Its exit code is neither ok nor violations.
    UnexpectedExitCode,
    /// Its output could not be parsed.
    UnparseableOutput,
    /// It signalled violations but none could be parsed.
    NoViolationsParsed,
    /// It said it could not check a file (`success.tool_error_codes`).
    CouldNotCheck,
    /// Its daemon's answer differs from a cold run's (`--verify`).
    WarmDrift,
    /// It stopped before checking anything (`success.stopped`: mypy's
    /// blocking errors).
    Stopped,
    /// Under `--verify`, the importers `interface_aware_importers` left
    /// out change its verdict: the full walk's run differs.
    SkippedImporters,
}

impl ErrorKind {
    /// Every kind, for reading a name back.
    const ALL: [ErrorKind; 12] = [
        ErrorKind::NotFound,
        ErrorKind::NotExecutable,
        ErrorKind::SpawnFailed,
        ErrorKind::Timeout,
        ErrorKind::Signal,
        ErrorKind::UnexpectedExitCode,
        ErrorKind::UnparseableOutput,
        ErrorKind::NoViolationsParsed,
        ErrorKind::CouldNotCheck,
        ErrorKind::WarmDrift,
        ErrorKind::Stopped,
        ErrorKind::SkippedImporters,
    ];

    /// The snake_case name used in JSON and every other format.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::NotExecutable => "not_executable",
            ErrorKind::SpawnFailed => "spawn_failed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Signal => "signal",
            ErrorKind::UnexpectedExitCode => "unexpected_exit_code",
            ErrorKind::UnparseableOutput => "unparseable_output",
            ErrorKind::NoViolationsParsed => "no_violations_parsed",
            ErrorKind::CouldNotCheck => "could_not_check",
            ErrorKind::WarmDrift => "warm_drift",
            ErrorKind::Stopped => "stopped",
            ErrorKind::SkippedImporters => "skipped_importers",
        }
    }
}

impl TryFrom<String> for ErrorKind {
    type Error = String;

    fn try_from(name: String) -> Result<ErrorKind, String> {
        ErrorKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| format!("unknown error kind `{name}`"))
    }
}

impl GateStatus {
    /// The lowercase name used in every format.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GateStatus::Passed => "passed",
            GateStatus::Failed => "failed",
            GateStatus::Error => "error",
            GateStatus::Skipped => "skipped",
        }
    }
}

impl From<ErrorKind> for &'static str {
    fn from(kind: ErrorKind) -> Self {
        kind.as_str()
    }
}

/// Evidence attached to an `error` gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GateError {
    /// Category.
    pub(crate) kind: ErrorKind,
    /// One-line explanation.
    pub(crate) message: String,
    /// Exit code, when the tool exited.
    pub(crate) exit_code: Option<i32>,
    /// The last lines of stderr (the whole of it is in the artifact log).
    pub(crate) stderr_tail: String,
    /// A few words for the summary line (`not found (install: …)`).
    pub(crate) short: String,
}

/// Findings compared with the last run that checked the same files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Progress {
    /// Found then, gone now.
    pub(crate) fixed: usize,
    /// Found now, not then.
    pub(crate) new: usize,
    /// Found both times.
    pub(crate) still: usize,
}

impl Progress {
    /// Adds another gate's counts.
    pub(crate) fn add(&mut self, other: Progress) {
        self.fixed += other.fixed;
        self.new += other.new;
        self.still += other.still;
    }
}

/// A gate's share of the result cache in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CacheShare {
    /// Files whose findings came from the cache.
    pub(crate) hits: usize,
    /// Files the tool checked.
    pub(crate) misses: usize,
    /// Entries written for the files it checked.
    pub(crate) stored: usize,
    /// Of the hits, those a shared store answered.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) shared: usize,
    /// Why the gate's results are not cached (then every file is a miss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) uncached: Option<String>,
    /// What the run did with the tool's own cache (`tool_cache` in the
    /// gate's YAML): put it back from the store, kept it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool_cache: Option<ToolCacheUse>,
}

/// A run's use of a tool's own cache.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ToolCacheUse {
    /// The commit whose archive was put back where the checkout had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) restored_from: Option<String>,
    /// How many first-parent commits back from HEAD that commit is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) commits_back: Option<usize>,
    /// Whether the run kept the tool's cache as HEAD's archive.
    #[serde(default)]
    pub(crate) stored: bool,
}

/// A warm answer being confirmed by a cold run in the background.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Unconfirmed {
    /// The files the cold run checks.
    pub(crate) files: usize,
    /// Whether a daemon is confirming it (false: none could be asked —
    /// it stopped, or changed key — and the next run checks again).
    pub(crate) confirming: bool,
    /// The confirmation's id (see `run::confirm::Job`).
    #[serde(skip)]
    pub(crate) job: String,
}

/// One gate's result. Serialized, it is a gate of the `--format json`
/// report, and reads back from one (`qg merge`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateResult {
    /// Gate id.
    pub id: String,
    /// Gate name.
    pub(crate) name: String,
    /// Verdict.
    pub(crate) status: GateStatus,
    /// The tool's own version line (`ruff 0.17.5`), when its gate has
    /// `version_args` and the tool ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool_version: Option<String>,
    /// Wall time of the tool.
    pub duration_ms: u64,
    /// The workspace member this run is of (its directory, the gate it is
    /// a run of); none for a gate run at the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) member: Option<crate::config::GateMember>,
    /// Whether a live daemon answered (else the tool ran for this run).
    #[serde(default)]
    pub(crate) warm: bool,
    /// A warm answer this run compared with a cold run of the tool and
    /// found equal (`--verify`, `--confirm`, or an answer a cold run
    /// already confirmed for the same files and tree).
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) verified: bool,
    /// A warm answer shown before a cold run confirmed it: one checks the
    /// files it vouches for in the background, and the state moves only
    /// when it agrees (none: a cold answer, or one confirmed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unconfirmed: Option<Unconfirmed>,
    /// Why a gate whose daemon was asked was answered cold in this run (the
    /// daemon is starting, busy comparing, gone, or failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cold_because: Option<String>,
    /// What the gate's daemon found wrong in its earlier answers since the
    /// last run (the run's report opens with it).
    #[serde(skip)]
    pub(crate) notice: Option<String>,
    /// What the result cache answered for (none: the gate is not cached,
    /// or no cache is in use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<CacheShare>,
    /// Files passed to the tool.
    pub(crate) files_checked: usize,
    /// Every violation the tool reported, sorted by file and position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) violations: Vec<Violation>,
    /// The command that fixes the failing files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fix_hint: Option<String>,
    /// The command that checks the failing files again (a gate that cannot
    /// fix its findings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rerun_hint: Option<String>,
    /// Root-relative path of the artifact log (of the first batch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) log: Option<String>,
    /// Logs of the further batches, when the files were split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) batch_logs: Vec<String>,
    /// Violations a `project_wide` gate found outside the scoped files and
    /// did not report.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) outside_scope: usize,
    /// Why the gate did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) skip_reason: Option<String>,
    /// What the user should know about this gate's run that is not a
    /// finding (the tool's own notes, qg's advice).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) warnings: Vec<String>,
    /// What broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<GateError>,
    /// What changed since the last run that checked these files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) since_last_run: Option<Progress>,
    /// The gate's threshold: violations below it are reported, not failures.
    pub(crate) fail_on: crate::violation::Severity,
    /// The gate's `baseline.match_lines`: whether the flagged line is part
    /// of a finding's identity.
    #[serde(skip, default = "matches_lines")]
    pub(crate) match_lines: bool,
    /// The package bases the run's tool was handed, of which the rerun
    /// hint sets those its files need (see
    /// [`crate::plan::PackageBases::shown_for`]).
    #[serde(skip)]
    pub(crate) package_bases: Option<std::sync::Arc<crate::plan::PackageBases>>,
    /// How the fix and re-run hints reach the tool from the user's shell
    /// (`uv run `, `.venv/bin/mypy`): see [`crate::tools::Toolbox::hint_runner`].
    #[serde(skip)]
    pub(crate) runner: crate::tools::HintRunner,
    /// The gate's `working_dir` (a workspace member's), root-relative and
    /// `/`-separated, `""` at the root: the hints change into it first and
    /// name their files from there, as the member's own run does.
    #[serde(skip)]
    pub(crate) run_from: String,
}

impl GateResult {
    /// A gate that had nothing to check.
    pub(crate) fn skipped(gate: &Gate, reason: String) -> GateResult {
        GateResult {
            skip_reason: Some(reason),
            ..GateResult::empty(gate, GateStatus::Skipped)
        }
    }

    /// A gate whose tool could not even start.
    pub(crate) fn launch_error(gate: &Gate, kind: ErrorKind, message: String) -> GateResult {
        GateResult {
            error: Some(GateError {
                kind,
                message,
                exit_code: None,
                stderr_tail: String::new(),
                short: short_for(kind, None, gate),
            }),
            ..GateResult::empty(gate, GateStatus::Error)
        }
    }

    /// A passed result of `gate` with nothing in it (a side of a
    /// comparison to fill).
    pub(crate) fn named(gate: &Gate) -> GateResult {
        GateResult::empty(gate, GateStatus::Passed)
    }

    pub(super) fn empty(gate: &Gate, status: GateStatus) -> GateResult {
        GateResult {
            id: gate.id.clone(),
            name: gate.name.clone(),
            status,
            tool_version: None,
            duration_ms: 0,
            member: gate.member.clone(),
            warm: false,
            verified: false,
            unconfirmed: None,
            cold_because: None,
            notice: None,
            cache: None,
            files_checked: 0,
            violations: Vec::new(),
            fix_hint: None,
            rerun_hint: None,
            log: None,
            batch_logs: Vec::new(),
            outside_scope: 0,
            skip_reason: None,
            warnings: Vec::new(),
            error: None,
            since_last_run: None,
            fail_on: gate.fail_on,
            match_lines: gate.match_lines,
            package_bases: None,
            runner: Default::default(),
            run_from: gate
                .working_dir
                .as_deref()
                .map(crate::paths::to_slash)
                .unwrap_or_default(),
        }
    }

    /// Findings at or above the gate's `fail_on`: its violations.
    pub(crate) fn violation_count(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.fails_at(self.fail_on))
            .count()
    }

    /// Findings below the gate's `fail_on`: notes beside its violations.
    pub(crate) fn note_count(&self) -> usize {
        self.violations.len() - self.violation_count()
    }

    /// Violations that can be fixed automatically.
    pub(crate) fn fixable_count(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.fixable == Some(true))
            .count()
    }
}

/// How a warning that a gate was answered cold, and why, begins.
const ANSWERED_COLD: &str = "answered cold: ";

impl GateResult {
    /// Warns that the gate was answered cold, and why.
    pub(crate) fn warn_answered_cold(&mut self, why: &str) {
        self.warnings.push(format!("{ANSWERED_COLD}{why}"));
    }

    /// Why the gate was answered cold, if a warning says so.
    pub(crate) fn answered_cold_warning(&self) -> Option<&str> {
        self.warnings
            .iter()
            .find_map(|w| w.strip_prefix(ANSWERED_COLD))
    }

    pub(super) fn into_error(mut self, error: GateError) -> GateResult {
        self.status = GateStatus::Error;
        self.error = Some(error);
        self
    }
}

/// The summary line's few words for an error of `kind`.
pub(super) fn short_for(kind: ErrorKind, exit_code: Option<i32>, gate: &Gate) -> String {
    let code = exit_code.map(|c| c.to_string()).unwrap_or_default();
    match kind {
        ErrorKind::Timeout => format!("timed out after {}s", gate.timeout.as_secs_f64()),
        ErrorKind::Signal => "killed by a signal".to_string(),
        ErrorKind::UnexpectedExitCode => format!("unexpected exit code {code}"),
        ErrorKind::UnparseableOutput => "unparseable output".to_string(),
        ErrorKind::CouldNotCheck => "could not check a file".to_string(),
        ErrorKind::WarmDrift => "its warm answer differs from a cold run".to_string(),
        ErrorKind::Stopped => "stopped before checking anything".to_string(),
        ErrorKind::SkippedImporters => "the importers it left out change its verdict".to_string(),
        ErrorKind::NoViolationsParsed => {
            format!("exit code {code} but no violations could be parsed")
        }
        // The executor adds the install command it resolved.
        ErrorKind::NotFound => "not found".to_string(),
        ErrorKind::NotExecutable => "not executable".to_string(),
        ErrorKind::SpawnFailed => "could not start".to_string(),
    }
}

/// A gate read back from a report matches its findings by line, as
/// gates do unless their config says otherwise.
fn matches_lines() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_have_their_json_names() {
        let names: Vec<&str> = [
            GateStatus::Passed,
            GateStatus::Failed,
            GateStatus::Error,
            GateStatus::Skipped,
        ]
        .into_iter()
        .map(GateStatus::as_str)
        .collect();
        assert_eq!(names, ["passed", "failed", "error", "skipped"]);
        for status in [GateStatus::Passed, GateStatus::Error] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
    }
}
