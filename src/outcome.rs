//! Gate results and the rules that decide a gate's status from what its tool
//! did. A broken tool is `error` — never `passed`, never an empty `failed`.

use serde::Serialize;

use crate::config::Gate;
use crate::exec::{Judge, NotRun, Timed, UnitRun};
use crate::parse::Unparsed;
use crate::paths::PathContext;
use crate::plan::GatePlan;
use crate::process::{signal_name, Finished, Termination};
use crate::tools::Toolbox;
use crate::violation::Violation;

/// A gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GateStatus {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum ErrorKind {
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
}

impl ErrorKind {
    /// The snake_case name used in JSON and every other format.
    pub fn as_str(self) -> &'static str {
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
        }
    }
}

impl GateStatus {
    /// The lowercase name used in every format.
    pub fn as_str(self) -> &'static str {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateError {
    /// Category.
    pub kind: ErrorKind,
    /// One-line explanation.
    pub message: String,
    /// Exit code, when the tool exited.
    pub exit_code: Option<i32>,
    /// The last lines of stderr (the whole of it is in the artifact log).
    pub stderr_tail: String,
    /// A few words for the summary line (`not found (install: …)`).
    #[serde(skip)]
    pub short: String,
}

/// One gate's result.
#[derive(Debug, Clone, Serialize)]
pub struct GateResult {
    /// Gate id.
    pub id: String,
    /// Gate name.
    pub name: String,
    /// Verdict.
    pub status: GateStatus,
    /// The tool's own version line (`ruff 0.17.5`), when its gate has
    /// `version_args` and the tool ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    /// Wall time of the tool.
    pub duration_ms: u64,
    /// Files passed to the tool.
    pub files_checked: usize,
    /// Every violation the tool reported, sorted by file and position.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// The command that fixes the failing files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_hint: Option<String>,
    /// The command that checks the failing files again (a gate that cannot
    /// fix its findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_hint: Option<String>,
    /// Root-relative path of the artifact log (of the first batch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Logs of the further batches, when the files were split.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub batch_logs: Vec<String>,
    /// Violations a `project_wide` gate found outside the scoped files and
    /// did not report.
    #[serde(skip_serializing_if = "is_zero")]
    pub outside_scope: usize,
    /// Why the gate did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// What the user should know about this gate's run that is not a
    /// finding (the tool's own notes, qg's advice).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What broke.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<GateError>,
    /// The gate's threshold: violations below it are reported, not failures.
    #[serde(skip)]
    pub fail_on: crate::violation::Severity,
}

impl GateResult {
    /// A gate that had nothing to check.
    pub fn skipped(gate: &Gate, reason: String) -> GateResult {
        GateResult {
            skip_reason: Some(reason),
            ..GateResult::empty(gate, GateStatus::Skipped)
        }
    }

    /// A gate whose tool could not even start.
    pub fn launch_error(gate: &Gate, kind: ErrorKind, message: String) -> GateResult {
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

    fn empty(gate: &Gate, status: GateStatus) -> GateResult {
        GateResult {
            id: gate.id.clone(),
            name: gate.name.clone(),
            status,
            tool_version: None,
            duration_ms: 0,
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
            fail_on: gate.fail_on,
        }
    }

    /// Violations that can be fixed automatically.
    pub fn fixable_count(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.fixable == Some(true))
            .count()
    }
}

/// The outcome stage's judge of the executor's runs: a result for every
/// gate, whether its tool ran, ran in batches, or could not run at all.
pub struct Verdicts<'a> {
    /// Where the tools were found (for paths, hints and advice).
    pub tools: &'a Toolbox<'a>,
}

impl Judge<GateResult> for Verdicts<'_> {
    fn not_run(&self, plan: &GatePlan<'_>, why: NotRun) -> GateResult {
        let gate = plan.gate;
        let program = &gate.command[0];
        let (kind, message, install) = match why {
            NotRun::Skipped(reason) => return GateResult::skipped(gate, reason),
            NotRun::NotFound { searched, install } => {
                let places: Vec<String> =
                    searched.iter().map(|p| p.display().to_string()).collect();
                let searched = match places.is_empty() {
                    true => "PATH is empty".to_string(),
                    false => places.join(", "),
                };
                let message = format!("`{program}` not found (searched: {searched})");
                (ErrorKind::NotFound, message, install)
            }
            NotRun::NotExecutable(path) => {
                let message = format!("{} is not executable (chmod +x it)", path.display());
                (
                    ErrorKind::NotExecutable,
                    message,
                    self.tools.install_hint(gate),
                )
            }
            NotRun::TooLong {
                files,
                needed,
                budget,
            } => {
                let message = format!(
                    "the command line for {files} files needs {needed} bytes but this OS allows {budget}; set execution.batchable: true, or pass_files: false and let the tool find its files"
                );
                (ErrorKind::SpawnFailed, message, None)
            }
        };
        let message = match &install {
            Some(install) => format!("{message}; install: {install}"),
            None => message,
        };
        let mut result = GateResult::launch_error(gate, kind, message);
        result.files_checked = plan.files.len();
        if let (ErrorKind::NotFound, Some(install), Some(error)) =
            (kind, install, &mut result.error)
        {
            error.short = format!("not found (install: {install})");
        }
        result
    }

    fn unit(&self, plan: &GatePlan<'_>, run: UnitRun<'_>) -> GateResult {
        let gate = plan.gate;
        let finished = match run.finished {
            Ok(finished) => finished,
            Err(e) => {
                let message = format!("could not start {}: {e}", run.program.display());
                let mut result = GateResult::launch_error(gate, ErrorKind::SpawnFailed, message);
                result.files_checked = run.files.len();
                return result;
            }
        };
        let paths = PathContext::new(self.tools.root, run.cwd);
        let mut result = judge(gate, run.files, &finished, &paths);
        match run.log {
            Ok(log) => result.log = log,
            Err(e) => result
                .warnings
                .push(format!("could not write the artifact log: {e}")),
        }
        result
    }

    fn gate(&self, plan: &GatePlan<'_>, units: Vec<Timed<GateResult>>) -> GateResult {
        let started = units.iter().map(|u| u.started).min();
        let ended = units.iter().map(|u| u.ended).max();
        let mut result = merge(plan.gate, units.into_iter().map(|u| u.result).collect());
        if let (Some(started), Some(ended)) = (started, ended) {
            result.duration_ms = ended.duration_since(started).as_millis() as u64;
        }
        if plan.report_only.is_some() || plan.project_scope.is_some() {
            restrict(plan.gate, &mut result, |f| plan.reports(f));
        }
        if let Some(unresolved) = &plan.gate.unresolved_imports {
            let advice = self.tools.expand_venv_bin(&unresolved.advice);
            advise_on_unresolved_imports(&mut result, &unresolved.codes, &advice);
        }
        result
    }
}

/// Decides the status of a gate whose tool ran to an end.
pub fn judge(
    gate: &Gate,
    files: &[String],
    finished: &Finished,
    paths: &PathContext,
) -> GateResult {
    let mut result = GateResult::empty(gate, GateStatus::Passed);
    result.duration_ms = finished.duration.as_millis() as u64;
    result.files_checked = files.len();
    let fail = |kind, message: String, exit_code| GateError {
        kind,
        short: short_for(kind, exit_code, gate),
        message,
        exit_code,
        stderr_tail: tail(&finished.stderr.tail(16 * 1024).unwrap_or_default()),
    };
    let code = match finished.termination {
        Termination::TimedOut => {
            let message = format!(
                "timed out after {}s; its process tree was killed",
                gate.timeout.as_secs_f64()
            );
            return result.into_error(fail(ErrorKind::Timeout, message, None));
        }
        Termination::Signaled(signal) => {
            let message = format!("killed by {}", signal_name(signal));
            return result.into_error(fail(ErrorKind::Signal, message, None));
        }
        Termination::Exited(code) => code,
    };
    let signals_violations = gate.exit_codes_violations.contains(&code);
    if !signals_violations && !gate.exit_codes_ok.contains(&code) {
        let message = format!(
            "exited with code {code} (ok: {:?}, violations: {:?})",
            gate.exit_codes_ok, gate.exit_codes_violations
        );
        return result.into_error(fail(ErrorKind::UnexpectedExitCode, message, Some(code)));
    }
    let parsed = match gate.parser.parse(finished, paths) {
        Ok(parsed) => parsed,
        Err(failure) => {
            let message = format!("exit code {code}, but {}", failure.0);
            return result.into_error(fail(ErrorKind::UnparseableOutput, message, Some(code)));
        }
    };
    let mut violations = parsed.violations;
    reclaim_file_names(&mut violations, files);
    if matches!(gate.parser, crate::parse::ParserSpec::ExitCode) && signals_violations {
        violations.push(exit_code_violation(gate, code));
    }
    result.warnings = unparsed_warnings(&parsed.unparsed);
    if signals_violations && violations.is_empty() {
        let mut message = format!(
            "exit code {code} signals violations, but none could be parsed from its output"
        );
        if let Some((number, text)) = parsed.unparsed.lines.first() {
            message.push_str(&format!(" (line {number}: `{text}`)"));
        }
        return result.into_error(fail(ErrorKind::NoViolationsParsed, message, Some(code)));
    }
    let (unchecked, violations): (Vec<Violation>, Vec<Violation>) =
        violations.into_iter().partition(|v| {
            v.code
                .as_ref()
                .is_some_and(|c| gate.tool_error_codes.contains(c))
        });
    result.violations = violations;
    settle(gate, &mut result);
    if !unchecked.is_empty() {
        // The other findings stay: they are real; the gate is not a verdict.
        let each: Vec<String> = unchecked
            .iter()
            .map(|v| format!("{}: {}", v.file.as_deref().unwrap_or("-"), v.message))
            .collect();
        let message = format!("{} could not check {}", gate.name, each.join("; "));
        return result.into_error(fail(ErrorKind::CouldNotCheck, message, Some(code)));
    }
    result
}

/// One warning per output line that was not a finding, so a tool's notes
/// reach every report instead of costing the findings around them.
fn unparsed_warnings(unparsed: &Unparsed) -> Vec<String> {
    let mut warnings: Vec<String> = unparsed
        .lines
        .iter()
        .map(|(number, text)| format!("output line {number} is not a finding: `{text}`"))
        .collect();
    let more = unparsed.total - unparsed.lines.len();
    if more > 0 {
        let lines = match more {
            1 => "line that is not a finding",
            _ => "lines that are not findings",
        };
        warnings.push(format!("and {more} more {lines} (the log has them all)"));
    }
    warnings
}

/// Tools print a name that is not UTF-8 lossily; give such findings back
/// the real name of the file the tool was given.
fn reclaim_file_names(violations: &mut [Violation], files: &[String]) {
    let reclaimer = crate::file_name::Reclaimer::new(files);
    if reclaimer.is_empty() {
        return;
    }
    for file in violations.iter_mut().filter_map(|v| v.file.as_mut()) {
        reclaimer.reclaim(file);
    }
}

/// Sorts the violations and, unless the gate errored, decides passed or
/// failed from them (with the fix hint for a failure).
fn settle(gate: &Gate, result: &mut GateResult) {
    result
        .violations
        .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    if result.status == GateStatus::Error {
        return;
    }
    let failed = result.violations.iter().any(|v| v.fails_at(gate.fail_on));
    result.status = if failed {
        GateStatus::Failed
    } else {
        GateStatus::Passed
    };
    let render = |hint: &Option<String>| match failed {
        true => hint
            .as_deref()
            .map(|hint| render_fix_hint(hint, &result.violations, gate)),
        false => None,
    };
    result.fix_hint = render(&gate.fix_hint);
    result.rerun_hint = render(&gate.rerun_hint);
}

/// One result from the results of a gate's batches: an error in any batch
/// makes the gate an error (the other batches' violations are kept).
pub fn merge(gate: &Gate, parts: Vec<GateResult>) -> GateResult {
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    let mut merged = GateResult::empty(gate, GateStatus::Passed);
    for part in parts {
        merged.files_checked += part.files_checked;
        merged.violations.extend(part.violations);
        merged.warnings.extend(part.warnings);
        if merged.error.is_none() && part.status == GateStatus::Error {
            merged.status = GateStatus::Error;
            merged.error = part.error;
        }
        match (&merged.log, part.log) {
            (None, log) => merged.log = log,
            (Some(_), Some(log)) => merged.batch_logs.push(log),
            (Some(_), None) => {}
        }
    }
    settle(gate, &mut merged);
    merged
}

/// Keeps only violations in files `keep` accepts (and file-less ones): a
/// `project_wide` gate reports on the scoped files alone; the rest is
/// counted in `outside_scope`, not lost.
pub fn restrict(gate: &Gate, result: &mut GateResult, keep: impl Fn(&str) -> bool) {
    let before = result.violations.len();
    result
        .violations
        .retain(|v| v.file.as_deref().is_none_or(&keep));
    result.outside_scope += before - result.violations.len();
    settle(gate, result);
}

/// Most findings are unresolved imports when at least this many are and
/// they outnumber the rest: one import of a typo is not an environment.
const UNRESOLVED_IMPORTS_AT_LEAST: usize = 3;

/// How many of the gate's findings carry one of `codes`.
pub fn count_unresolved_imports(result: &GateResult, codes: &[String]) -> usize {
    result
        .violations
        .iter()
        .filter(|v| v.code.as_ref().is_some_and(|c| codes.contains(c)))
        .count()
}

/// Whether `unresolved` of `total` findings is "mostly unresolved imports".
pub fn mostly_unresolved(unresolved: usize, total: usize) -> bool {
    unresolved >= UNRESOLVED_IMPORTS_AT_LEAST && unresolved * 2 > total
}

/// Warns when most of a gate's findings say an import cannot be resolved:
/// the tool does not see the project's dependencies, and its other
/// findings are mostly their echo.
pub fn advise_on_unresolved_imports(result: &mut GateResult, codes: &[String], advice: &str) {
    let unresolved = count_unresolved_imports(result, codes);
    let total = result.violations.len();
    if mostly_unresolved(unresolved, total) {
        result.warnings.push(format!(
            "{unresolved} of {total} findings are unresolved imports: {advice}"
        ));
    }
}

impl GateResult {
    fn into_error(mut self, error: GateError) -> GateResult {
        self.status = GateStatus::Error;
        self.error = Some(error);
        self
    }
}

/// The summary line's few words for an error of `kind`.
fn short_for(kind: ErrorKind, exit_code: Option<i32>, gate: &Gate) -> String {
    let code = exit_code.map(|c| c.to_string()).unwrap_or_default();
    match kind {
        ErrorKind::Timeout => format!("timed out after {}s", gate.timeout.as_secs_f64()),
        ErrorKind::Signal => "killed by a signal".to_string(),
        ErrorKind::UnexpectedExitCode => format!("unexpected exit code {code}"),
        ErrorKind::UnparseableOutput => "unparseable output".to_string(),
        ErrorKind::CouldNotCheck => "could not check a file".to_string(),
        ErrorKind::NoViolationsParsed => {
            format!("exit code {code} but no violations could be parsed")
        }
        // The executor adds the install command it resolved.
        ErrorKind::NotFound => "not found".to_string(),
        ErrorKind::NotExecutable => "not executable".to_string(),
        ErrorKind::SpawnFailed => "could not start".to_string(),
    }
}

fn exit_code_violation(gate: &Gate, code: i32) -> Violation {
    Violation {
        file: None,
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        code: Some(format!("exit-{code}")),
        message: format!("{} exited with code {code}; see its log", gate.name),
        severity: crate::violation::Severity::Error,
        fixable: None,
        hint: None,
        url: None,
        cell: None,
    }
}

/// `{files}` becomes the files with failing violations, shell-quoted.
fn render_fix_hint(hint: &str, violations: &[Violation], gate: &Gate) -> String {
    let mut files: Vec<&str> = violations
        .iter()
        .filter(|v| v.fails_at(gate.fail_on))
        .filter_map(|v| v.file.as_deref())
        .collect();
    files.dedup();
    // A file named like an option must not become one when the hint is pasted.
    let quoted: Vec<String> = files
        .iter()
        .map(|f| match f.starts_with('-') {
            true => crate::quote::shell_quote(&format!("./{f}")),
            false => crate::quote::shell_quote(f),
        })
        .collect();
    hint.replace("{files}", &quoted.join(" "))
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The last lines of a stream, for the error summary (the log has it all).
fn tail(bytes: &[u8]) -> String {
    const MAX_LINES: usize = 20;
    const MAX_BYTES: usize = 4096;
    let text = String::from_utf8_lossy(bytes);
    let trimmed = text.trim_end();
    let lines: Vec<&str> = trimmed.lines().collect();
    let start = lines.len().saturating_sub(MAX_LINES);
    let joined = lines[start..].join("\n");
    if joined.len() <= MAX_BYTES {
        return joined;
    }
    let mut cut = joined.len() - MAX_BYTES;
    while !joined.is_char_boundary(cut) {
        cut += 1;
    }
    joined[cut..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unparsed_lines_past_the_kept_ones_are_counted_in_one_more_warning() {
        let mut unparsed = Unparsed::default();
        for n in 1..=103 {
            unparsed.push(n, format!("note {n}").as_bytes());
        }
        let warnings = unparsed_warnings(&unparsed);
        assert_eq!(warnings.len(), Unparsed::KEPT + 1);
        assert_eq!(warnings[0], "output line 1 is not a finding: `note 1`");
        assert_eq!(
            warnings.last().unwrap(),
            "and 3 more lines that are not findings (the log has them all)"
        );
        let mut one_more = Unparsed::default();
        for n in 1..=101 {
            one_more.push(n, b"x");
        }
        assert_eq!(
            unparsed_warnings(&one_more).last().unwrap(),
            "and 1 more line that is not a finding (the log has them all)"
        );
        let mut few = Unparsed::default();
        few.push(7, b"only");
        assert_eq!(
            unparsed_warnings(&few),
            ["output line 7 is not a finding: `only`"]
        );
    }

    #[test]
    fn mostly_unresolved_means_at_least_three_and_more_than_half() {
        assert!(mostly_unresolved(3, 5));
        assert!(mostly_unresolved(3, 3));
        assert!(!mostly_unresolved(3, 6), "half is not more than half");
        assert!(
            !mostly_unresolved(2, 2),
            "two imports are not an environment"
        );
        assert!(!mostly_unresolved(0, 0));
        assert!(mostly_unresolved(153, 229));
    }

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

    #[test]
    fn tail_keeps_last_lines() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let t = tail(text.as_bytes());
        assert!(t.starts_with("line 80") && t.ends_with("line 99"), "{t}");
        assert_eq!(t.lines().count(), 20);
        assert_eq!(tail(b"only\n\n"), "only");
        assert_eq!(tail(b""), "");
    }

    #[test]
    fn tail_caps_long_last_lines_at_a_char_boundary() {
        // Twenty lines of 300 three-byte characters: 18 KB, past the 4 KiB cap,
        // with no cut point that is a char boundary by luck.
        let line = "é€".repeat(150);
        let text: String = (0..25).map(|i| format!("{i}{line}\n")).collect();
        let t = tail(text.as_bytes());
        assert!(t.len() <= 4096, "{}", t.len());
        assert!(t.len() > 4090, "kept {} bytes", t.len());
        assert!(t.ends_with(&line), "the last line survives whole");
        assert!(text.trim_end().ends_with(&t));
        // One line far beyond the cap: its end is kept.
        let huge = format!("start{}end", "ü".repeat(10_000));
        let t = tail(huge.as_bytes());
        assert!(t.ends_with("üüend") && t.len() <= 4096 && t.len() > 4090);
        // Bytes that are not UTF-8 do not panic either.
        let raw: Vec<u8> = std::iter::repeat_n(0xffu8, 9000).collect();
        assert!(tail(&raw).len() <= 4096);
    }
}
