//! The rules that decide a gate's status from what its tool did: exit code,
//! parsed findings, `fail_on`; and the merging of a gate's batches.

use super::result::{short_for, ErrorKind, GateError, GateResult, GateStatus};
use crate::config::Gate;
use crate::parse::Unparsed;
use crate::paths::PathContext;
use crate::process::{signal_name, Finished, Termination};
use crate::violation::Violation;

/// Decides the status of a gate whose tool ran to an end.
pub(crate) fn judge(
    gate: &Gate,
    files: &[&str],
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
    if let Some(stopped) = gate.stopped.as_ref() {
        if stopped.exit_codes.contains(&code) {
            let findings = gate
                .parser
                .parse(finished, paths)
                .map(|p| p.violations)
                .unwrap_or_default();
            let said: Vec<Stop> = match findings.is_empty() {
                true => last_line(&tail(&finished.stderr.tail(4096).unwrap_or_default()))
                    .map(|what| Stop { what, hint: None })
                    .into_iter()
                    .collect(),
                // The findings that say why it stopped come first (the
                // others — an import not found beside a duplicate module —
                // are not why).
                false => {
                    let (why, rest): (Vec<&Violation>, Vec<&Violation>) = findings
                        .iter()
                        .partition(|v| stopped.marks(v.code.as_deref(), &v.message));
                    why.into_iter().chain(rest).map(describe_stop).collect()
                }
            };
            return result.into_error(stopped_error(gate, Some(code), &said, fail));
        }
    }
    if let Some(said) = nothing_checked(gate, code, finished, paths) {
        result.files_checked = 0;
        result.warnings.push(format!(
            "its settings exclude every file it was given, so it checked none, as its own run of the project would not (it said `{said}`)"
        ));
        return result;
    }
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
    // Its exit code said it did not stop (those that do returned above):
    // a finding coded as a stop is one among others then (mypy's `syntax`
    // for `type X = ...` under an older target: it goes on checking).
    let stops_by_finding = gate
        .stopped
        .as_ref()
        .is_some_and(|s| s.exit_codes.is_empty());
    match take_findings(gate, files, violations, stops_by_finding, &mut result) {
        Some(Unchecked::Files(message)) => {
            result.into_error(fail(ErrorKind::CouldNotCheck, message, Some(code)))
        }
        Some(Unchecked::Stopped(said)) => {
            result.into_error(stopped_error(gate, Some(code), &said, fail))
        }
        None => result,
    }
}

/// What the tool said when its settings left out every file it was given
/// (`success.nothing_checked`), when it exited ok and printed no finding.
fn nothing_checked(
    gate: &Gate,
    code: i32,
    finished: &Finished,
    paths: &PathContext,
) -> Option<String> {
    let pattern = gate.nothing_checked.as_ref()?;
    if !gate.exit_codes_ok.contains(&code) {
        return None;
    }
    let stderr = finished.stderr.tail(4096).unwrap_or_default();
    let said = String::from_utf8_lossy(&stderr)
        .lines()
        .find(|line| pattern.is_match(line))?
        .trim()
        .to_string();
    let found_something = gate
        .parser
        .parse(finished, paths)
        .is_ok_and(|parsed| !parsed.violations.is_empty());
    (!found_something).then_some(said)
}

/// The error of a gate whose tool stopped before checking anything: what
/// it said, first in the one-line `short` the summary shows. Its findings
/// are no verdict (the rest of the code was never looked at) and are never
/// reported as violations, so no baseline can hold them.
fn stopped_error(
    gate: &Gate,
    exit_code: Option<i32>,
    said: &[Stop],
    fail: impl Fn(ErrorKind, String, Option<i32>) -> GateError,
) -> GateError {
    let first = said
        .first()
        .map_or("(it said nothing)", |s| s.what.as_str());
    let code = exit_code
        .map(|c| format!(" (exit code {c})"))
        .unwrap_or_default();
    let each: Vec<String> = said
        .iter()
        .map(|s| match &s.hint {
            Some(hint) => format!("{} ({hint})", s.what),
            None => s.what.clone(),
        })
        .collect();
    let message = format!(
        "{} stopped before checking anything{code}, so no file was checked: {}",
        gate.name,
        each.join("; ")
    );
    let mut error = fail(ErrorKind::Stopped, message, exit_code);
    error.short = format!("stopped before checking anything: {first}");
    error
}

/// What a tool said when it stopped: one finding, or its last words.
struct Stop {
    /// `file:line: message`.
    what: String,
    /// The tool's advice (mypy: how to resolve duplicate module names),
    /// on one line.
    hint: Option<String>,
}

/// A finding that stopped the tool, as its [`Stop`].
fn describe_stop(v: &Violation) -> Stop {
    let place = match (&v.file, v.line) {
        (Some(file), Some(line)) if line > 0 => format!("{file}:{line}: "),
        (Some(file), _) => format!("{file}: "),
        (None, _) => String::new(),
    };
    Stop {
        what: format!("{place}{}", v.message),
        hint: v
            .hint
            .as_deref()
            .map(|h| h.split_whitespace().collect::<Vec<_>>().join(" ")),
    }
}

/// The last non-empty line of a tool's stream.
fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// What a run's findings say it did not check.
enum Unchecked {
    /// Files it could not read (`tool_error_codes`): the message.
    Files(String),
    /// It stopped before checking anything (`success.stopped`): each
    /// finding that says so.
    Stopped(Vec<Stop>),
}

/// The verdict on findings a live daemon reported (a language server's
/// diagnostics): what a cold run decides after parsing, decided the same way.
pub(crate) fn judge_findings(
    gate: &Gate,
    files: &[&str],
    violations: Vec<Violation>,
) -> GateResult {
    let mut result = GateResult::empty(gate, GateStatus::Passed);
    result.files_checked = files.len();
    let fail = |kind, message, exit_code| GateError {
        kind,
        short: short_for(kind, exit_code, gate),
        message,
        exit_code,
        stderr_tail: String::new(),
    };
    // No exit code to tell: the findings say whether it stopped.
    match take_findings(gate, files, violations, true, &mut result) {
        Some(Unchecked::Files(message)) => {
            result.into_error(fail(ErrorKind::CouldNotCheck, message, None))
        }
        Some(Unchecked::Stopped(said)) => result.into_error(stopped_error(gate, None, &said, fail)),
        None => result,
    }
}

/// Puts a run's findings into `result` and settles it; returns what the
/// tool said it did not check (`tool_error_codes`, `success.stopped` when
/// `stops_by_finding`: no exit code told), when it said so.
fn take_findings(
    gate: &Gate,
    files: &[&str],
    mut violations: Vec<Violation>,
    stops_by_finding: bool,
    result: &mut GateResult,
) -> Option<Unchecked> {
    reclaim_file_names(&mut violations, files);
    if let Some(stopped) = gate.stopped.as_ref().filter(|_| stops_by_finding) {
        let said: Vec<Stop> = violations
            .iter()
            .filter(|v| stopped.marks(v.code.as_deref(), &v.message))
            .map(describe_stop)
            .collect();
        if !said.is_empty() {
            // None of its findings is a verdict: it checked nothing else.
            result.violations.clear();
            return Some(Unchecked::Stopped(said));
        }
    }
    // In place: a second vector of 100,000 violations would double the peak.
    let unchecked: Vec<Violation> = violations
        .extract_if(.., |v| {
            v.code
                .as_ref()
                .is_some_and(|c| gate.tool_error_codes.contains(c))
        })
        .collect();
    result.violations = violations;
    settle(gate, result);
    // The other findings stay: they are real; the gate is not a verdict.
    (!unchecked.is_empty()).then(|| {
        let each: Vec<String> = unchecked
            .iter()
            .map(|v| format!("{}: {}", v.file.as_deref().unwrap_or("-"), v.message))
            .collect();
        Unchecked::Files(format!("{} could not check {}", gate.name, each.join("; ")))
    })
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
fn reclaim_file_names(violations: &mut [Violation], files: &[&str]) {
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
pub(crate) fn settle(gate: &Gate, result: &mut GateResult) {
    result
        .violations
        .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    if let Some(template) = &gate.rule_url {
        for v in result.violations.iter_mut().filter(|v| v.url.is_none()) {
            v.url = v.code.as_ref().map(|code| template.replace("{code}", code));
        }
    }
    if result.status == GateStatus::Error {
        return;
    }
    let failed = result.violations.iter().any(|v| v.fails_at(gate.fail_on));
    result.status = if failed {
        GateStatus::Failed
    } else {
        GateStatus::Passed
    };
    render_hints(gate, result);
}

/// Sets the gate's fix and re-run hints from the files with failing
/// findings — not those a baseline knows, which fail nothing — and none
/// when no finding fails.
pub(crate) fn render_hints(gate: &Gate, result: &mut GateResult) {
    render_hints_from(gate.fix_hint.as_deref(), gate.rerun_hint.as_deref(), result);
}

/// [`render_hints`] from the templates themselves (`qg merge` has no
/// config), judged by the result's own `fail_on`.
pub(crate) fn render_hints_from(
    fix_hint: Option<&str>,
    rerun_hint: Option<&str>,
    result: &mut GateResult,
) {
    let fail_on = result.fail_on;
    let counts = |v: &Violation| v.fails_gate(fail_on);
    let failing = result.violations.iter().any(counts);
    let run_from = result.run_from.as_str();
    let render = |hint: Option<&str>, counts: &dyn Fn(&Violation) -> bool| {
        hint.filter(|_| failing)
            .map(|hint| render_fix_hint(hint, &result.violations, counts, run_from))
    };
    // Where the tool says which findings it can fix, the fixer is offered
    // the files that hold one: a rule without a fix lists no file (ruff's
    // hint once named all 159 files of such a rule).
    let says_fixable = result.violations.iter().any(|v| v.fixable.is_some());
    let fixes = |v: &Violation| counts(v) && (!says_fixable || v.fixable == Some(true));
    let cd = match run_from {
        "" => String::new(),
        dir => format!("cd {} && ", crate::quote::shell_quote(dir)),
    };
    let runner = &result.runner;
    let command = |hint: String| format!("{}{}", runner.prefix, by_path(hint, runner));
    result.fix_hint = match result.violations.iter().any(fixes) {
        true => render(fix_hint, &fixes).map(|hint| format!("{cd}{}", command(hint))),
        false => None,
    };
    let env = match &result.package_bases {
        Some(bases) => bases.shown_for(failing_files(&result.violations, &counts)),
        None => String::new(),
    };
    result.rerun_hint =
        render(rerun_hint, &counts).map(|hint| format!("{cd}{env}{}", command(hint)));
}

/// The hint with its program named by the path the runner gives
/// (`mypy a.py` → `.venv/bin/mypy a.py`); a hint that starts with another
/// word is left as it is.
fn by_path(hint: String, runner: &crate::tools::HintRunner) -> String {
    let Some((program, path)) = &runner.program else {
        return hint;
    };
    match hint.strip_prefix(program.as_str()) {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => format!("{path}{rest}"),
        _ => hint,
    }
}

/// One result from the results of a gate's batches: an error in any batch
/// makes the gate an error (the other batches' violations are kept).
pub(crate) fn merge(gate: &Gate, parts: Vec<GateResult>) -> GateResult {
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
pub(crate) fn restrict(gate: &Gate, result: &mut GateResult, keep: impl Fn(&str) -> bool) {
    let before = result.violations.len();
    result
        .violations
        .retain(|v| v.file.as_deref().is_none_or(&keep));
    result.outside_scope += before - result.violations.len();
    settle(gate, result);
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
        tracking: Default::default(),
    }
}

/// `{files}` becomes the files with failing violations, shell-quoted.
/// `hint` with `{files}` the failing files, named from `run_from` (the
/// root-relative directory the hint runs in; `""`: the root).
fn render_fix_hint(
    hint: &str,
    violations: &[Violation],
    counts: &dyn Fn(&Violation) -> bool,
    run_from: &str,
) -> String {
    let mut files: Vec<String> = failing_files(violations, counts)
        .map(|file| named_from(file, run_from))
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

/// The root-relative files of the `violations` that `counts`.
fn failing_files<'v>(
    violations: &'v [Violation],
    counts: &'v dyn Fn(&Violation) -> bool,
) -> impl Iterator<Item = &'v str> {
    violations
        .iter()
        .filter(move |v| counts(v))
        .filter_map(|v| v.file.as_deref())
}

/// The root-relative `file` as named from the root-relative directory
/// `dir` (`""`: the root); a path outside the root stays as it is.
fn named_from(file: &str, dir: &str) -> String {
    if dir.is_empty() || std::path::Path::new(file).is_absolute() {
        return file.to_string();
    }
    match file.strip_prefix(dir).and_then(|f| f.strip_prefix('/')) {
        Some(inside) => inside.to_string(),
        None => {
            let up: Vec<&str> = dir.split('/').map(|_| "..").collect();
            format!("{}/{file}", up.join("/"))
        }
    }
}

/// The last lines of a stream, for the error summary (the log has it all).
pub(super) fn tail(bytes: &[u8]) -> String {
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
