//! `--format junit`: JUnit XML as GitLab and Jenkins read it. One suite per
//! gate; each failing finding is a failed test with a unique name (GitLab
//! keeps only the first of duplicate names); a gate with no failures is one
//! passing test; an errored gate is an `<error>`; a skipped gate `<skipped>`.

use std::collections::HashMap;
use std::io::{self, Write};

use super::RunReport;
use super::{findings, rule_id, Finding};
use crate::file_name::display;
use crate::outcome::GateResult;

/// Emits `--format junit`: the XML document: the totals first, then each gate's suite.
pub(crate) struct JunitEmitter;

impl super::Emitter for JunitEmitter {
    fn emit(&self, report: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let all = findings(report);
        let suites: Vec<(&GateResult, Vec<&Finding<'_>>, Vec<&str>)> = report
            .gates
            .iter()
            .enumerate()
            .map(|(index, gate)| {
                let mine: Vec<&Finding<'_>> = all.iter().filter(|f| f.gate.id == gate.id).collect();
                let mut warnings: Vec<&str> = gate.warnings.iter().map(String::as_str).collect();
                // The run's own warnings travel with the first suite.
                if index == 0 {
                    warnings.extend(report.warnings.iter().map(String::as_str));
                }
                (gate, mine, warnings)
            })
            .collect();
        let counts: Vec<Counts> = suites
            .iter()
            .map(|(g, mine, _)| Counts::of(g, mine))
            .collect();
        let total = |f: fn(&Counts) -> usize| counts.iter().map(f).sum::<usize>();
        writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
        writeln!(
            out,
            "<testsuites name=\"qg\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
            total(|c| c.tests),
            total(|c| c.failures),
            total(|c| c.errors),
            seconds(report.total_ms)
        )?;
        for ((gate, mine, warnings), counts) in suites.iter().zip(&counts) {
            write_suite(out, gate, mine, warnings, counts)?;
        }
        writeln!(out, "</testsuites>")
    }
}

/// A suite's tallies, which its opening tag carries.
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    /// One test for the gate itself when it errored, was skipped or found
    /// nothing; one per finding, a failure at or above `fail_on`.
    fn of(gate: &GateResult, mine: &[&Finding<'_>]) -> Counts {
        let failures = mine
            .iter()
            .filter(|f| f.violation.fails_at(gate.fail_on))
            .count();
        let errors = usize::from(gate.error.is_some());
        let skipped = usize::from(gate.error.is_none() && gate.skip_reason.is_some());
        let gate_case = errors + skipped + usize::from(errors + skipped == 0 && mine.is_empty());
        Counts {
            tests: gate_case + mine.len(),
            failures,
            errors,
            skipped,
        }
    }
}

/// The suite of one gate; `warnings` (the gate's, and the run's for the
/// first suite) go to its `<system-err>`.
fn write_suite(
    out: &mut dyn Write,
    gate: &GateResult,
    mine: &[&Finding<'_>],
    warnings: &[&str],
    counts: &Counts,
) -> io::Result<()> {
    let class = attr(&gate.id);
    writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        attr(&gate.name),
        counts.tests,
        counts.failures,
        counts.errors,
        counts.skipped,
        seconds(gate.duration_ms)
    )?;
    // A workspace member's run: which member, and the gate it is a run of.
    if let Some(member) = &gate.member {
        writeln!(
            out,
            "    <properties>\n      <property name=\"member\" value=\"{}\"/>\n      <property name=\"run_of\" value=\"{}\"/>\n    </properties>",
            attr(&member.dir),
            attr(&member.of)
        )?;
    }
    if let Some(error) = &gate.error {
        writeln!(
            out,
            "    <testcase classname=\"{class}\" name=\"{class}\" time=\"{}\">\n      <error type=\"{}\" message=\"{}\">{}</error>\n    </testcase>",
            seconds(gate.duration_ms),
            error.kind.as_str(),
            attr(&error.message),
            text(&error.stderr_tail)
        )?;
    } else if let Some(reason) = &gate.skip_reason {
        writeln!(
            out,
            "    <testcase classname=\"{class}\" name=\"{class}\" time=\"0\">\n      <skipped message=\"{}\"/>\n    </testcase>",
            attr(reason)
        )?;
    } else if mine.is_empty() {
        writeln!(
            out,
            "    <testcase classname=\"{class}\" name=\"{class}\" time=\"{}\"/>",
            seconds(gate.duration_ms)
        )?;
    }
    // Every finding is a test: a failure at or above `fail_on`, else a
    // passing test that carries the note in its output.
    let mut used: HashMap<String, usize> = HashMap::new();
    for finding in mine {
        let name = unique_name(finding, &mut used);
        let failing = finding.violation.fails_at(gate.fail_on);
        out.write_all(finding_case(&class, &name, finding, failing).as_bytes())?;
    }
    if !warnings.is_empty() {
        let lines: String = warnings.iter().map(|w| format!("warning: {w}\n")).collect();
        writeln!(out, "    <system-err>{}</system-err>", text(&lines))?;
    }
    writeln!(out, "  </testsuite>")
}

fn finding_case(class: &str, name: &str, finding: &Finding<'_>, failing: bool) -> String {
    let v = &*finding.by_file_line();
    let file_attrs = match (&v.file, v.line) {
        (Some(file), Some(line)) => format!(" file=\"{}\" line=\"{line}\"", attr(&display(file))),
        (Some(file), None) => format!(" file=\"{}\"", attr(&display(file))),
        _ => String::new(),
    };
    let mut body = v.message.clone();
    if let Some(hint) = &v.hint {
        body.push('\n');
        body.push_str(hint);
    }
    let inner = if failing {
        format!(
            "<failure type=\"{}\" message=\"{}\">{}</failure>",
            attr(rule_id(finding.gate, v)),
            attr(&format!(
                "{}: {}",
                v.severity.as_str(),
                first_line(&v.message)
            )),
            text(&body)
        )
    } else {
        format!(
            "<system-out>{}: {}</system-out>",
            v.severity.as_str(),
            text(&body)
        )
    };
    format!(
        "    <testcase classname=\"{class}\" name=\"{}\"{file_attrs} time=\"0\">\n      {inner}\n    </testcase>\n",
        attr(name)
    )
}

/// `path:line:col code`, with ` (2)`, ` (3)` … for repeats.
fn unique_name(finding: &Finding<'_>, used: &mut HashMap<String, usize>) -> String {
    let v = finding.violation;
    let mut base = match &v.file {
        Some(file) => display(file).into_owned(),
        None => finding.gate.id.clone(),
    };
    if let Some(cell) = v.cell {
        base.push_str(&format!(":cell {cell}"));
    }
    if let Some(line) = v.line {
        base.push_str(&format!(":{line}"));
        if let Some(col) = v.column {
            base.push_str(&format!(":{col}"));
        }
    }
    base.push(' ');
    base.push_str(rule_id(finding.gate, v));
    let count = used.entry(base.clone()).or_insert(0);
    *count += 1;
    if *count == 1 {
        base
    } else {
        format!("{base} ({count})")
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn seconds(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// Escapes text content; characters XML 1.0 cannot carry become `\u{…}`.
fn text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes an attribute value (quotes and line breaks too).
fn attr(value: &str) -> String {
    text(value)
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(attr("a\"<b>&\n\u{1b}"), "a&quot;&lt;b&gt;&amp;&#10;\\u{1b}");
        assert_eq!(text("x\u{0}y"), "x\\u{0}y");
    }
}
