//! `qg fix`: runs each gate's fixer on the files that gate finds failing in
//! the scope — never another file — then checks again and reports what was
//! fixed, which files changed and what is left. A fixer that fails leaves
//! no file half-written: what it touched is put back.

use std::collections::{BTreeMap, BTreeSet};

use crate::baseline::BaselineUse;
use crate::config::Gate;
use crate::error::QgError;
use crate::exec::{self, ExecContext, Observer};
use crate::outcome::{GateResult, GateStatus};
use crate::process::{Finished, Termination};
use crate::report::RunReport;
use crate::run::{self, RunOptions};

/// What `qg fix` was asked to do.
#[derive(Debug, Clone)]
pub struct FixOptions {
    /// The scope, gates and config, as for `qg run`.
    pub run: RunOptions,
    /// Also apply fixes the tools call unsafe.
    pub unsafe_fixes: bool,
    /// Show the changes, write nothing.
    pub diff: bool,
}

/// The `qg fix --format json` document.
#[derive(serde::Serialize)]
pub(crate) struct FixDocument<'a> {
    summary_line: String,
    fixed: usize,
    /// What a shortened answer left out of `report` (`qg mcp`).
    #[serde(flatten)]
    omitted: Option<&'a crate::report::json::Omitted>,
    changed_files: &'a [String],
    errors: &'a [String],
    diffs: BTreeMap<&'a str, &'a str>,
    report: Option<crate::report::json::JsonReport<'a>>,
}

/// What `qg fix` did.
pub(crate) struct FixReport {
    /// The check before fixing.
    pub(crate) before: RunReport,
    /// The check after fixing (none with `--diff`).
    pub(crate) after: Option<RunReport>,
    /// Root-relative files whose content the fixers changed, sorted.
    pub(crate) changed: Vec<String>,
    /// With `--diff`: each fixer's printed changes, by gate id.
    pub(crate) diffs: Vec<(String, String)>,
    /// Fixers that failed (their files were put back), one line each.
    pub(crate) errors: Vec<String>,
}

impl FixReport {
    /// Violations gone from the files the fixers changed, between the two
    /// checks (0 with `--diff`). Only those files count: the two checks may
    /// cover different files (the one after records state; an `auto` scope
    /// may move), and a total over both once said "fixed 241" of 2.
    /// Findings are matched by gate, file, rule and message — a fix moves
    /// the lines below it.
    pub(crate) fn fixed(&self) -> usize {
        let Some(after) = &self.after else {
            return 0;
        };
        let changed: BTreeSet<&str> = self.changed.iter().map(String::as_str).collect();
        let tally = |report: &RunReport| {
            let mut counts: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
            for gate in &report.gates {
                for v in &gate.violations {
                    let Some(file) = v.file.as_deref().filter(|f| changed.contains(f)) else {
                        continue;
                    };
                    let key = (
                        gate.id.clone(),
                        file.to_string(),
                        v.code.clone().unwrap_or_default(),
                        v.message.clone(),
                    );
                    *counts.entry(key).or_default() += 1;
                }
            }
            counts
        };
        let (then, now) = (tally(&self.before), tally(after));
        then.iter()
            .map(|(key, n)| n.saturating_sub(now.get(key).copied().unwrap_or(0)))
            .sum()
    }

    /// The `qg fix --format json` document (schema: `schemas/fix.json`):
    /// the summary line, what was fixed, which files changed, the fixers'
    /// errors, the diffs (`--diff`) and the check after fixing.
    pub(crate) fn document(&self) -> FixDocument<'_> {
        let report = self.after.as_ref().map(crate::report::json::document);
        self.document_with(report, None)
    }

    /// [`FixReport::document`] with a check after fixing that lists only
    /// some of its violations, and says what it leaves out.
    pub(crate) fn document_with<'a>(
        &'a self,
        report: Option<crate::report::json::JsonReport<'a>>,
        omitted: Option<&'a crate::report::json::Omitted>,
    ) -> FixDocument<'a> {
        let summary_line = match &self.after {
            Some(after) => format!(
                "🔧 fixed {} in {}; {}",
                crate::report::summary::plural(self.fixed(), "violation"),
                crate::report::summary::plural(self.changed.len(), "file"),
                crate::report::summary::summary_line(after)
            ),
            None => "--diff: nothing was written".to_string(),
        };
        FixDocument {
            summary_line,
            fixed: self.fixed(),
            omitted,
            changed_files: &self.changed,
            errors: &self.errors,
            diffs: self
                .diffs
                .iter()
                .map(|(gate, diff)| (gate.as_str(), diff.as_str()))
                .collect(),
            report,
        }
    }

    /// 2 when a fixer failed, else the final check's exit status.
    pub(crate) fn exit_code(&self) -> i32 {
        if !self.errors.is_empty() {
            return 2;
        }
        self.after
            .as_ref()
            .map_or(self.before.exit_code(), RunReport::exit_code)
    }
}

/// Fixers run again while they still change something (one tool's fix can
/// leave work for another: an import removed, then reformatted).
const MAX_ROUNDS: usize = 3;

/// Checks the scope, fixes what the gates with a fixer found, checks again.
pub(crate) fn fix(
    options: &FixOptions,
    observer: &dyn Observer<GateResult>,
) -> Result<FixReport, QgError> {
    let check = RunOptions {
        no_state: true,
        baseline: BaselineUse::Locked,
        ..options.run.clone()
    };
    let before = run::run(&check, observer)?;
    let (workspace, config) = run::prepare(&options.run.cwd, options.run.config.as_deref())?;
    // The fixers come from this config: trusted (where trust is asked) as
    // it is now, not only as the check before saw it.
    if options.run.require_trust {
        let tools = crate::tools::Toolbox::from_env(&workspace.root);
        run::require_trust(&workspace, &config, &tools)?;
    }
    let targets = targets(&config.gates, &before);
    let ctx = ExecContext::from_env(
        &workspace.root,
        &config.artifact_logging,
        &options.run.cancel,
    );
    // Every file a fixer may touch: later rounds only narrow this down.
    let files: BTreeSet<String> = targets
        .iter()
        .flat_map(|(_, files)| files.iter().cloned())
        .collect();
    let original = snapshot(&workspace.root, files.iter());
    let mut report = FixReport {
        before,
        after: None,
        changed: Vec::new(),
        diffs: Vec::new(),
        errors: Vec::new(),
    };
    if options.diff {
        for (gate, files) in &targets {
            let argv = argv(gate, options.unsafe_fixes, true);
            match run_fixer(&ctx, gate, &argv, files, true) {
                Ok(runs) => report.diffs.push((gate.id.clone(), stdout_of(&runs))),
                Err(why) => report.errors.push(format!("{}: {why}", gate.id)),
            }
            abandon_if_cancelled(options, &workspace.root, &original)?;
        }
        // A diff that wrote anyway is undone: `--diff` never changes a file.
        for path in changed_since(&workspace.root, &original) {
            restore(&workspace.root, &path, &original[&path])?;
            report
                .errors
                .push(format!("{path}: changed by a `--diff` run; put back"));
        }
        return Ok(report);
    }
    let mut targets = targets;
    for round in 1..=MAX_ROUNDS {
        let before_round = snapshot(&workspace.root, files.iter());
        for (gate, files) in &targets {
            let start = snapshot(&workspace.root, files.iter());
            let argv = argv(gate, options.unsafe_fixes, false);
            let fixed = run_fixer(&ctx, gate, &argv, files, false);
            abandon_if_cancelled(options, &workspace.root, &original)?;
            if let Err(why) = fixed {
                for path in changed_since(&workspace.root, &start) {
                    restore(&workspace.root, &path, &start[&path])?;
                }
                report
                    .errors
                    .push(format!("{}: {why}; its files were put back", gate.id));
            }
        }
        let changed = !changed_since(&workspace.root, &before_round).is_empty();
        if !changed || !report.errors.is_empty() || round == MAX_ROUNDS {
            break;
        }
        // One fixer's change can leave work for another (an import removed,
        // then the file reformatted): the gates with a fixer check again.
        let fixers: Vec<String> = targets_gates(&config, &options.run.gates);
        let recheck = RunOptions {
            gates: fixers,
            ..check.clone()
        };
        let rechecked = run::run(&recheck, observer);
        abandon_if_cancelled(options, &workspace.root, &original)?;
        targets = self::targets(&config.gates, &rechecked?)
            .into_iter()
            .map(|(gate, found)| {
                (
                    gate,
                    found.into_iter().filter(|f| files.contains(f)).collect(),
                )
            })
            .filter(|(_, found): &(&Gate, Vec<String>)| !found.is_empty())
            .collect();
        if targets.is_empty() {
            break;
        }
    }
    report.changed = changed_since(&workspace.root, &original);
    let after = run::run(&options.run, observer);
    abandon_if_cancelled(options, &workspace.root, &original)?;
    report.after = Some(after?);
    Ok(report)
}

/// A cancelled fix has no effect: every file any fixer touched is put
/// back as it was before `qg fix` began (a fixer killed mid-write may have
/// left one half-written).
fn abandon_if_cancelled(
    options: &FixOptions,
    root: &std::path::Path,
    original: &BTreeMap<String, Vec<u8>>,
) -> Result<(), QgError> {
    if !options.run.cancel.is_cancelled() {
        return Ok(());
    }
    for path in changed_since(root, original) {
        restore(root, &path, &original[&path])?;
    }
    Err(QgError::Cancelled)
}

/// The gates of this run that have a fixer.
fn targets_gates(config: &crate::config::Config, asked: &[String]) -> Vec<String> {
    let selected: &[String] = match asked.is_empty() {
        true => &config.active_gates,
        false => asked,
    };
    selected
        .iter()
        .filter(|id| config.gates.get(*id).is_some_and(|g| g.fix.is_some()))
        .cloned()
        .collect()
}

/// Per gate with a fixer, the files with findings at its threshold — the
/// baseline's known ones too: fixing them is welcome (the ratchet then
/// drops them). Only files the gate checked in the scope can be among them.
fn targets<'c>(
    gates: &'c BTreeMap<String, Gate>,
    report: &RunReport,
) -> Vec<(&'c Gate, Vec<String>)> {
    report
        .gates
        .iter()
        .filter(|r| matches!(r.status, GateStatus::Failed | GateStatus::Passed))
        .filter_map(|r| {
            let gate = gates.get(&r.id).filter(|g| g.fix.is_some())?;
            let files: BTreeSet<String> = r
                .violations
                .iter()
                .filter(|v| v.fails_at(r.fail_on))
                .filter_map(|v| v.file.clone())
                .collect();
            (!files.is_empty()).then(|| (gate, files.into_iter().collect()))
        })
        .collect()
}

fn argv(gate: &Gate, unsafe_fixes: bool, diff: bool) -> Vec<String> {
    let fix = gate.fix.as_ref().expect("targets are gates with a fixer");
    let mut argv = fix.command.clone();
    if unsafe_fixes {
        argv.extend(fix.unsafe_args.iter().cloned());
    }
    if diff {
        argv.extend(fix.diff_args.iter().cloned());
    }
    argv
}

/// Runs a fixer; an exit code it does not list as success, a signal or a
/// timeout is a failure described by its stderr.
fn run_fixer(
    ctx: &ExecContext<'_>,
    gate: &Gate,
    argv: &[String],
    files: &[String],
    diff: bool,
) -> Result<Vec<Finished>, String> {
    let runs = exec::run_on_files(ctx, gate, argv, files)?;
    fixer_succeeded(gate, argv, &runs, diff)?;
    Ok(runs)
}

/// Whether every run of a fixer did its job: an exit code it does not
/// list as success, a signal or a timeout is a failure described by its
/// stderr.
pub(crate) fn fixer_succeeded(
    gate: &Gate,
    argv: &[String],
    runs: &[Finished],
    diff: bool,
) -> Result<(), String> {
    let fix = gate.fix.as_ref().expect("targets are gates with a fixer");
    for run in runs {
        let ok = match run.termination {
            // A diff exits 1 when it has something to show.
            Termination::Exited(code) => fix.exit_codes_ok.contains(&code) || (diff && code == 1),
            _ => false,
        };
        if !ok {
            let tail = run.stderr.tail(400).unwrap_or_default();
            let how = match run.termination {
                Termination::Exited(code) => format!("exited with code {code}"),
                Termination::Signaled(signal) => {
                    format!("killed by {}", crate::process::signal_name(signal))
                }
                Termination::TimedOut => "timed out".to_string(),
            };
            return Err(format!(
                "`{}` {how}: {}",
                argv.join(" "),
                String::from_utf8_lossy(&tail).trim()
            ));
        }
    }
    Ok(())
}

fn stdout_of(runs: &[Finished]) -> String {
    runs.iter()
        .filter_map(|r| r.stdout.read_all().ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .collect()
}

/// The content of each file (a file that cannot be read is left out).
fn snapshot<'a>(
    root: &std::path::Path,
    files: impl Iterator<Item = &'a String>,
) -> BTreeMap<String, Vec<u8>> {
    files
        .filter_map(|f| {
            let bytes = std::fs::read(crate::file_name::join(root, f)).ok()?;
            Some((f.clone(), bytes))
        })
        .collect()
}

/// The files of `snapshot` whose content is no longer the same.
fn changed_since(root: &std::path::Path, snapshot: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    snapshot
        .iter()
        .filter(|(f, bytes)| {
            std::fs::read(crate::file_name::join(root, f)).ok().as_ref() != Some(*bytes)
        })
        .map(|(f, _)| f.clone())
        .collect()
}

fn restore(root: &std::path::Path, file: &str, bytes: &[u8]) -> Result<(), QgError> {
    let path = crate::file_name::join(root, file);
    crate::atomic_file::write(&path, bytes)
        .map_err(|e| QgError::io(format!("cannot put back {file}"), e))
}
