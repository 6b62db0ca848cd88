//! Holding the line: `qg baseline write` records today's violations, and a
//! run fails only on new ones — matched one-to-one through unrelated edits,
//! moved functions, renamed files, reworded messages and edits of the
//! flagged line itself. Real ruff, mypy and pyright in temp git repos.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::fs;

use common::repo::GitRepo;
use serde_json::Value;

const A: &str = "\
import os
import sys


def first() -> int:
    x: int = \"one\"
    return x


def second() -> int:
    y: int = \"two\"
    return y
";

const B: &str = "\
import json


def helper(v: int) -> str:
    return v


def add(a: int, b: int) -> int:
    return a + b


def sub(a: int, b: int) -> int:
    return a - b


def mul(a: int, b: int) -> int:
    return a * b


def div(a: int, b: int) -> float:
    return a / b
";

fn legacy_repo() -> GitRepo {
    GitRepo::new(&[("pkg/__init__.py", ""), ("pkg/a.py", A), ("pkg/b.py", B)])
}

fn project(repo: &GitRepo, extra: &[&str]) -> Value {
    let mut args = vec!["run", "--scope", "project", "--format", "json"];
    args.extend(extra);
    let run = repo.qg(&args);
    assert!(
        run.code == 0 || run.code == 1,
        "{}{}",
        run.stdout,
        run.stderr
    );
    run.json()
}

/// `(file, line, gate:code)` of every violation marked `new`.
fn new_ones(report: &Value) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for gate in report["gates"].as_array().unwrap() {
        for v in gate["violations"].as_array().into_iter().flatten() {
            if v["baseline_state"] == "new" {
                out.push((
                    v["file"].as_str().unwrap_or("").to_string(),
                    v["line"].as_u64().unwrap_or(0),
                    format!(
                        "{}:{}",
                        gate["id"].as_str().unwrap(),
                        v["code"].as_str().unwrap_or("")
                    ),
                ));
            }
        }
    }
    out.sort();
    out
}

fn baseline_entries(repo: &GitRepo) -> usize {
    let text = fs::read_to_string(repo.path().join(".st3/baseline.jsonl")).unwrap();
    text.lines().count() - 1
}

fn write_baseline(repo: &GitRepo) -> usize {
    let run = repo.qg(&["baseline", "write", "--no-progress"]);
    run.assert_code(0);
    let entries = baseline_entries(repo);
    assert!(entries >= 6, "{entries} entries: {}", run.stdout);
    repo.commit("baseline");
    entries
}

#[test]
fn unrelated_edits_keep_every_known_finding_and_only_new_ones_fail() {
    let repo = legacy_repo();
    let known = write_baseline(&repo);
    let report = project(&repo, &[]);
    assert_eq!(report["overall_pass"], true, "{report}");
    assert_eq!(report["baseline"]["known"], known as u64);
    assert_eq!(report["baseline"]["new"], 0);
    assert_eq!(report["baseline"]["reworded"], 0);
    assert_eq!(report.get("warnings"), None, "{report}");
    assert!(report["summary_line"]
        .as_str()
        .unwrap()
        .contains(&format!("+0 new, {known} known")));

    // Ten lines on top of every file, the functions swapped.
    let header = "# a comment\n".repeat(10);
    let def = |name: &str, var: &str, value: &str| {
        format!("def {name}() -> int:\n    {var}: int = \"{value}\"\n    return {var}\n")
    };
    let swapped = format!(
        "{header}import os\nimport sys\n\n\n{}\n\n{}",
        def("second", "y", "two"),
        def("first", "x", "one")
    );
    repo.write("pkg/a.py", &swapped);
    repo.write("pkg/b.py", &format!("{header}{B}"));
    repo.commit("refactor");
    let report = project(&repo, &[]);
    assert_eq!(new_ones(&report), [], "{report}");
    assert_eq!(report["overall_pass"], true);

    // A file renamed (committed or not).
    repo.git(&["mv", "pkg/b.py", "pkg/c.py"]);
    assert_eq!(new_ones(&project(&repo, &["--locked"])), []);
    repo.commit("rename");
    assert_eq!(new_ones(&project(&repo, &[])), []);

    // The flagged line itself edited (in the renamed, shifted file): its
    // findings are found again near where the diff carries their line.
    let c = fs::read_to_string(repo.path().join("pkg/c.py")).unwrap();
    repo.write(
        "pkg/c.py",
        &c.replace("    return v\n", "    return v + 0\n"),
    );
    assert_eq!(new_ones(&project(&repo, &[])), []);

    // One more copy of a known finding in the same file is exactly one new.
    let a = fs::read_to_string(repo.path().join("pkg/a.py")).unwrap();
    repo.write(
        "pkg/a.py",
        &format!("{a}\n\ndef third() -> int:\n    y: int = \"two\"\n    return y\n"),
    );
    let report = project(&repo, &[]);
    let new = new_ones(&report);
    assert_eq!(
        new.len(),
        2,
        "mypy and pyright each report the copy once: {new:?}"
    );
    assert!(new.iter().all(|(file, ..)| file == "pkg/a.py"), "{new:?}");
    assert!(
        new.iter().any(|(_, _, code)| code == "mypy:assignment"),
        "{new:?}"
    );
    assert_eq!(report["overall_pass"], false);
    let sarif = repo.qg(&["run", "--scope", "project", "--format", "sarif", "--locked"]);
    assert!(sarif.stdout.contains("\"baselineState\": \"new\""));
    assert!(sarif.stdout.contains("\"baselineState\": \"unchanged\""));
}

#[test]
fn a_reworded_message_is_known_after_a_tool_upgrade_and_new_with_the_same_tool() {
    let repo = legacy_repo();
    write_baseline(&repo);
    let path = repo.path().join(".st3/baseline.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let reworded = text.replace(
        "Incompatible types in assignment",
        "Incompatible assignment",
    );
    assert_ne!(text, reworded);
    fs::write(&path, reworded).unwrap();
    // The mypy that wrote the baseline: another message at an unchanged
    // line is a changed finding (an upstream edit changed its types).
    let report = project(&repo, &["--locked"]);
    assert_eq!(new_ones(&report).len(), 2, "{report}");
    assert_eq!(report["overall_pass"], false);
    assert_eq!(report["baseline"]["reworded"], 0, "{report}");

    // Written with another mypy: tools reword between versions, so the
    // findings are the known ones, and one warning names the upgrade.
    let mut lines: Vec<String> = fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    header["tools"]["mypy"] = "mypy 1.0.0".into();
    lines[0] = header.to_string();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    let report = project(&repo, &["--locked"]);
    assert_eq!(new_ones(&report), []);
    assert_eq!(report["overall_pass"], true);
    let reworded: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("reworded"))
        .collect();
    assert_eq!(reworded.len(), 1, "{report}");
    assert!(
        reworded[0].starts_with("mypy: 2 known findings matched by their line")
            && reworded[0].contains("reworded them (mypy 1.0.0 → mypy "),
        "{report}"
    );
    assert_eq!(report["baseline"]["reworded"], 2, "{report}");
}

#[test]
fn fixed_entries_drop_out_only_where_qg_looked_and_never_when_locked() {
    let repo = legacy_repo();
    let known = write_baseline(&repo);
    let a = A.replace("import sys\n", "");
    repo.write("pkg/a.py", &a);

    // Locked (CI): the fixed finding is reported, the file untouched.
    let report = project(&repo, &["--locked"]);
    assert_eq!(report["baseline"]["fixed"], 1, "{report}");
    assert_eq!(baseline_entries(&repo), known);
    let check = repo.qg(&["baseline", "check", "--no-progress"]);
    check.assert_code(1);
    assert!(check.stdout.contains("stale"), "{}", check.stdout);

    // A local auto run checks a.py only: its fixed entry goes, b.py's stay.
    let run = repo.qg(&["run", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["baseline"]["updated"], true);
    assert_eq!(baseline_entries(&repo), known - 1);
    let text = fs::read_to_string(repo.path().join(".st3/baseline.jsonl")).unwrap();
    assert!(text.contains("pkg/b.py"), "{text}");
    repo.qg(&["baseline", "check", "--no-progress"])
        .assert_code(0);

    // It never grows: a new finding fails and is not added.
    repo.write("pkg/a.py", &format!("import re\n{a}"));
    let run = repo.qg(&["run", "--format", "json"]);
    run.assert_code(1);
    assert_eq!(baseline_entries(&repo), known - 1);
    // The fix hint names the file with the new finding, not b.py's known one.
    let report = project(&repo, &["--locked"]);
    let lint = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "ruff_check")
        .unwrap();
    assert_eq!(lint["fix_hint"], "ruff check --fix pkg/a.py", "{report}");
}

#[test]
fn a_red_run_keeps_the_findings_its_break_masked() {
    let repo = GitRepo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", A),
        ("pkg/b.py", B),
        (
            "pkg/c.py",
            "from pkg.b import helper\n\nN: int = helper(1)\n",
        ),
    ]);
    let known = write_baseline(&repo);
    // Renaming helper breaks its importer: c.py's known findings (a str
    // assigned to an int) vanish behind the new "no attribute" ones.
    repo.write("pkg/b.py", &B.replace("def helper(", "def helper2("));
    let run = repo.qg(&["run", "--format", "json"]);
    run.assert_code(1);
    let report = run.json();
    assert!(
        report["baseline"]["fixed"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert_eq!(report["baseline"]["updated"], false, "{report}");
    assert_eq!(baseline_entries(&repo), known);
    // Mended: every finding is known again, and the run is green.
    repo.write("pkg/b.py", B);
    let run = repo.qg(&["run", "--format", "json"]);
    let report = run.json();
    assert_eq!(new_ones(&report), [], "{report}");
    run.assert_code(0);
    assert_eq!(baseline_entries(&repo), known);
}

#[test]
fn a_broken_baseline_file_is_a_one_line_error() {
    let repo = legacy_repo();
    write_baseline(&repo);
    let path = repo.path().join(".st3/baseline.jsonl");
    fs::write(&path, fs::read_to_string(&path).unwrap() + "<<<<<<< HEAD\n").unwrap();
    let run = repo.qg(&["run"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains(".st3/baseline.jsonl:"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    // Not text at all (a bad checkout, a binary merge): an error too, never
    // a run as if there were no baseline.
    fs::write(&path, b"\xff\xfe{\n").unwrap();
    let run = repo.qg(&["run"]);
    run.assert_fails_with(2, "cannot read .st3/baseline.jsonl");
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
}

#[test]
fn a_baseline_reordered_by_hand_knows_every_finding_and_is_written_sorted_again() {
    let repo = legacy_repo();
    write_baseline(&repo);
    let path = repo.path().join(".st3/baseline.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 3, "{text}");
    lines[1..].reverse();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    let report = project(&repo, &["--locked"]);
    assert_eq!(new_ones(&report), [], "{report}");
    assert_eq!(report["overall_pass"], true, "{report}");
    // A fix drops its entry, and the file is written sorted again, as
    // `qg baseline write` wrote it: a diff shows only the dropped entry.
    repo.write("pkg/a.py", &A.replace("import sys\n", ""));
    let report = project(&repo, &[]);
    assert_eq!(report["baseline"]["fixed"], 1, "{report}");
    let rewritten = fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| rewritten.lines().any(|l| l == *line))
        .collect();
    assert_eq!(kept.len() + 1, text.lines().count(), "{rewritten}");
    assert_eq!(rewritten, kept.join("\n") + "\n");
}

#[test]
fn every_run_says_what_it_fixed_and_what_is_new_since_the_last_one() {
    let repo = legacy_repo();
    let run = |repo: &GitRepo| {
        let run = repo.qg(&[
            "run",
            "--scope",
            "project",
            "--gate",
            "ruff_check",
            "--format",
            "json",
        ]);
        run.assert_code(1);
        run.json()
    };
    let first = run(&repo);
    assert!(
        first.get("since_last_run").is_none(),
        "nothing to compare with yet"
    );
    // `sys` fixed, `re` added: one fixed, one new, the rest still there.
    repo.write("pkg/a.py", &A.replace("import sys\n", "import re\n"));
    let second = run(&repo);
    assert_eq!(second["since_last_run"]["fixed"], 1, "{second}");
    assert_eq!(second["since_last_run"]["new"], 1);
    assert_eq!(second["since_last_run"]["still"], 2);
    assert_eq!(second["gates"][0]["since_last_run"]["fixed"], 1);
    assert!(
        second["summary_line"]
            .as_str()
            .unwrap()
            .contains("(1 fixed, 1 new since the last run)"),
        "{second}"
    );
    // A run of one file compares only that file.
    repo.write("pkg/b.py", &B.replace("import json\n", ""));
    let one = repo.qg(&[
        "run",
        "pkg/b.py",
        "--gate",
        "ruff_check",
        "--format",
        "json",
    ]);
    one.assert_code(0);
    let progress = &one.json()["since_last_run"];
    assert_eq!(
        (progress["fixed"].as_u64(), progress["new"].as_u64()),
        (Some(1), Some(0)),
        "{progress}"
    );
}

/// Known findings fail nothing, so their files are not "failed last run":
/// once a run is green against the baseline, the next `auto` run has
/// nothing to check — a legacy project's TDD loop costs what the change
/// costs, not a re-check of every file with old findings.
#[test]
fn known_findings_do_not_keep_their_files_in_the_auto_scope() {
    let repo = legacy_repo();
    write_baseline(&repo);
    let first = repo.run();
    assert_eq!(first.json()["overall_pass"], true, "{}", first.stdout);
    assert!(first.json()["baseline"]["known"].as_u64().unwrap() > 0);
    let files = repo.qg(&["files", "--format", "json"]).json();
    assert_eq!(files["files"], serde_json::json!([]), "{files}");
    let second = repo.run();
    assert!(
        second.json()["summary_line"]
            .as_str()
            .unwrap()
            .starts_with("⏭️ nothing to check"),
        "{}",
        second.stdout
    );
    // A new finding still puts its file back in the scope until it is fixed.
    repo.write("pkg/a.py", &format!("import json\n{A}"));
    let red = repo.run();
    assert_eq!(red.json()["overall_pass"], false);
    repo.write("pkg/c.py", "VALUE = 1\n");
    let files = repo.qg(&["files", "--format", "json"]).json();
    let paths = common::scope_paths(&files);
    assert_eq!(paths, ["pkg/a.py", "pkg/c.py"], "{files}");
}

/// The formatter's one finding per file points at the first line it would
/// change. An edit that moves that point — new unformatted code far above
/// the old — leaves the file as unformatted as the baseline accepted: the
/// finding stays known (the default config's `match_lines: false`).
#[test]
fn a_formatter_finding_stays_known_wherever_its_first_change_moves() {
    let old = "def f() -> int:\n    return 1\n\n\nx = {  'a':1 }\n";
    let repo = GitRepo::new(&[("pkg/__init__.py", ""), ("pkg/fmt.py", old)]);
    repo.qg(&["baseline", "write", "--no-progress"])
        .assert_code(0);
    repo.commit("baseline");
    let before = project(&repo, &["--no-state"]);
    assert_eq!(before["baseline"]["new"], 0, "{before}");
    assert_eq!(before["gates"][0]["violations"][0]["line"], 5, "{before}");
    let top = "y = {  'b':2 }\n# one\n# two\n# three\n# four\n";
    repo.write("pkg/fmt.py", &format!("{top}{old}"));
    let after = project(&repo, &["--no-state"]);
    let format: Vec<_> = new_ones(&after)
        .into_iter()
        .filter(|(_, _, gate)| gate.starts_with("ruff_format:"))
        .collect();
    assert_eq!(format, [], "{after}");
    assert_eq!(after["baseline"]["fixed"], 0, "{after}");
}

#[test]
fn a_known_finding_in_a_module_the_tool_followed_into_is_still_known() {
    // mypy follows `import pkg` from app.py into pkg/mod.pyi and reports
    // what it finds there, though it was given app.py alone.
    let repo = GitRepo::new(&[
        ("pkg/__init__.py", "from pkg.mod import f\n"),
        ("pkg/mod.py", "def f(x):\n    return x\n"),
        ("pkg/mod.pyi", "def f(x: Undefined) -> int: ...\n"),
        ("app.py", "from pkg import f\n\nprint(f(1))\n"),
    ]);
    let run = repo.qg(&["baseline", "write", "--gate", "mypy", "--no-progress"]);
    run.assert_code(0);
    repo.commit("baseline");
    repo.write("app.py", "from pkg import f\n\nprint(f(2))\n");
    let run = repo.qg(&[
        "run", "--gate", "mypy", "--format", "json", "--locked", "app.py",
    ]);
    let report = run.json();
    let mypy = &report["gates"][0];
    let files: Vec<&str> = mypy["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["pkg/mod.pyi"], "{report}");
    assert_eq!(new_ones(&report), [], "{report}");
    assert_eq!(report["baseline"]["known"], 1, "{report}");
    run.assert_code(0);
}

/// A file split away (deleted, its code moved into another file, too little
/// alike for git to call it a rename): its findings are still known there.
/// The same finding made anew in another file while the original is fixed
/// in a file that is still there is new.
#[test]
fn findings_follow_code_out_of_a_deleted_file_but_not_out_of_a_fixed_one() {
    let repo = legacy_repo();
    let known = write_baseline(&repo);
    fs::remove_file(repo.path().join("pkg/a.py")).unwrap();
    repo.write("pkg/b.py", &format!("{A}\n\n{B}"));
    let report = project(&repo, &["--locked"]);
    assert_eq!(new_ones(&report), [], "{report}");
    assert_eq!(report["baseline"]["known"], known as u64, "{report}");
    assert_eq!(report["baseline"]["fixed"], 0, "{report}");
    assert_eq!(report["overall_pass"], true, "{report}");

    repo.git(&["checkout", "--", "pkg/a.py", "pkg/b.py"]);
    repo.write("pkg/a.py", &A.replace("import os\n", ""));
    repo.write(
        "pkg/b.py",
        &B.replace("import json\n", "import json\nimport os\n"),
    );
    let report = project(&repo, &["--locked"]);
    assert_eq!(
        new_ones(&report),
        [("pkg/b.py".to_string(), 2, "ruff_check:F401".to_string())],
        "{report}"
    );
    assert_eq!(report["baseline"]["fixed"], 1, "{report}");
    assert_eq!(report["overall_pass"], false, "{report}");

    // a.py deleted and a finding with its message made near one of its old
    // lines, on other code: new, and every finding of a.py fixed.
    repo.git(&["checkout", "--", "pkg/a.py", "pkg/b.py"]);
    fs::remove_file(repo.path().join("pkg/a.py")).unwrap();
    let third = "# third\n\n\ndef third() -> int:\n    # its value\n    z: int = \"three\"\n    return z\n\n\n";
    repo.write("pkg/b.py", &format!("{third}{B}"));
    let report = project(&repo, &["--locked"]);
    assert_eq!(
        new_ones(&report),
        [
            ("pkg/b.py".to_string(), 6, "mypy:assignment".to_string()),
            (
                "pkg/b.py".to_string(),
                6,
                "pyright:reportAssignmentType".to_string()
            ),
        ],
        "{report}"
    );
    assert_eq!(report["baseline"]["fixed"], 6, "{report}");
}

/// A remembered finding whose line was fixed is not found again in a new
/// finding of the same rule and message further up the file than the
/// edit could have carried it.
#[test]
fn a_new_finding_above_a_fixed_one_is_new() {
    let repo = legacy_repo();
    write_baseline(&repo);
    let edited = A
        .replace("y: int = \"two\"", "y: int = 2")
        .replace("import sys\n\n\n", "import sys\n\nw: int = \"w\"\n\n\n");
    repo.write("pkg/a.py", &edited);
    let report = project(&repo, &["--locked"]);
    assert_eq!(
        new_ones(&report),
        [
            ("pkg/a.py".to_string(), 4, "mypy:assignment".to_string()),
            (
                "pkg/a.py".to_string(),
                4,
                "pyright:reportAssignmentType".to_string()
            ),
        ],
        "{report}"
    );
    assert_eq!(report["baseline"]["fixed"], 2, "{report}");
}

/// A gate whose fake tool flags every line holding `BAD` (rule B, one
/// message), so a test decides exactly where findings are.
fn bad_line_repo(file: &str) -> GitRepo {
    let config = r#"version: "1"
active_gates: [bad]
artifact_logging: {enabled: false}
gates:
  bad:
    execution: {command: ["python3", "bad_tool"]}
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
    capabilities: {file_types: [".py"]}
"#;
    let tool = r#"import json, sys
found = []
for path in sys.argv[1:]:
    for number, line in enumerate(open(path), 1):
        if "BAD" in line:
            found.append({"file": path, "line": number, "code": "B", "message": "bad"})
print(json.dumps(found))
sys.exit(1 if found else 0)
"#;
    let repo = GitRepo::new(&[
        (".st3/quality.yaml", config),
        ("bad_tool", tool),
        ("f.py", file),
    ]);
    repo.qg(&["baseline", "write", "--no-progress"])
        .assert_code(0);
    repo.commit("baseline");
    repo
}

/// The flagged line edited and moved up to two lines from where the diff
/// carries it is still the known finding; three lines away it is new.
#[test]
fn an_edited_finding_is_known_up_to_two_lines_from_where_its_line_went() {
    let repo = bad_line_repo("a\nc\nBAD x\n");
    // "BAD x" (line 3) replaced by "e"; "a" (line 1) by "BAD y": two lines
    // above where line 3 went.
    repo.write("f.py", "BAD y\nc\ne\n");
    let report = project(&repo, &["--locked"]);
    assert_eq!(new_ones(&report), [], "{report}");
    assert_eq!(report["baseline"]["known"], 1, "{report}");
    assert_eq!(report["overall_pass"], true, "{report}");
    // Three lines above: another finding.
    repo.write("f.py", "BAD y\nz\nc\ne\n");
    let report = project(&repo, &["--locked"]);
    assert_eq!(
        new_ones(&report),
        [("f.py".to_string(), 1, "bad:B".to_string())],
        "{report}"
    );
    assert_eq!(report["overall_pass"], false, "{report}");
}

/// Messages that differ only where qg normalizes them — whitespace, the
/// absolute path of the checkout — name the same finding: known, and not
/// counted as reworded.
#[test]
fn a_message_respaced_or_from_another_checkout_is_the_same_finding() {
    let config = r#"version: "1"
active_gates: [said]
artifact_logging: {enabled: false}
gates:
  said:
    execution: {command: ["python3", "said_tool"]}
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
    capabilities: {file_types: [".py"]}
"#;
    // Flags each file's first line with the message said.json gives it,
    // `{root}` being the directory the tool runs in.
    let tool = r#"import json, os, sys
said = json.load(open("said.json"))
found = [{"file": p, "line": 1, "code": "S", "message": said[p].replace("{root}", os.getcwd())}
         for p in sys.argv[1:]]
print(json.dumps(found))
sys.exit(1 if found else 0)
"#;
    let before = serde_json::json!({
        "a.py": "unused\tx",
        "b.py": " name y is unused",
        "c.py": "name z is unused ",
        "d.py": "cannot import {root}/pkg/e",
    });
    let repo = GitRepo::new(&[
        (".st3/quality.yaml", config),
        ("said_tool", tool),
        ("said.json", &before.to_string()),
        ("a.py", "x = 1\n"),
        ("b.py", "y = 1\n"),
        ("c.py", "z = 1\n"),
        ("d.py", "import e\n"),
    ]);
    repo.qg(&["baseline", "write", "--no-progress"])
        .assert_code(0);
    repo.commit("baseline");
    // Another clone, where the tool spaces its messages tidily. Its path
    // has no digit, so only the path makes d.py's message vary.
    let letters: String = format!("{}", std::process::id())
        .bytes()
        .map(|digit| char::from(b'a' + digit - b'0'))
        .collect();
    let other = tempfile::Builder::new()
        .prefix(&format!("qg-clone-{letters}"))
        .rand_bytes(0)
        .tempdir()
        .unwrap();
    let clone = other.path().join("elsewhere");
    assert!(!clone
        .to_str()
        .unwrap()
        .contains(|c: char| c.is_ascii_digit()));
    common::git(repo.path(), &["clone", "-q", ".", clone.to_str().unwrap()]);
    let after = serde_json::json!({
        "a.py": "unused x",
        "b.py": "name y is unused",
        "c.py": "name z is unused",
        "d.py": "cannot import {root}/pkg/e",
    });
    fs::write(clone.join("said.json"), after.to_string()).unwrap();
    let run = common::qg_in(
        &clone,
        &["run", "--scope", "project", "--locked", "--format", "json"],
    );
    run.assert_code(0);
    let report = run.json();
    assert_eq!(new_ones(&report), [], "{report}");
    let counts = &report["baseline"];
    assert_eq!([&counts["known"], &counts["reworded"]], [4, 0], "{report}");
}

#[test]
fn github_annotations_are_notices_for_known_findings_and_errors_for_new_ones() {
    let repo = legacy_repo();
    write_baseline(&repo);
    repo.write("pkg/a.py", &format!("{A}import json\n"));
    let run = repo.qg(&[
        "run",
        "--scope",
        "project",
        "--format",
        "github",
        "--gate",
        "ruff_check",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let annotations: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("::")).collect();
    let new: Vec<&&str> = annotations
        .iter()
        .filter(|l| l.contains("file=pkg/a.py") && l.contains("`json`"))
        .collect();
    assert_eq!(new.len(), 1, "{annotations:#?}");
    assert!(
        new[0].starts_with("::error ") && !new[0].contains("[known]"),
        "{}",
        new[0]
    );
    let known: Vec<&&str> = annotations
        .iter()
        .filter(|l| l.contains("`os`") || l.contains("`sys`"))
        .collect();
    assert!(!known.is_empty(), "{annotations:#?}");
    for line in known {
        assert!(
            line.starts_with("::notice ") && line.contains("[known]"),
            "{line}"
        );
    }
}

/// The GitHub job summary of a run over a legacy codebase lists the new
/// findings and counts the known ones: a green run's summary once listed
/// 286 known findings as errors (73 KB).
#[test]
fn the_github_step_summary_lists_new_findings_and_counts_the_known() {
    let repo = legacy_repo();
    let known = write_baseline(&repo);
    repo.write("pkg/c.py", "def f() -> int:\n    return \"new\"\n");
    let summary = repo.path().join("summary.md");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_qg"))
        .args([
            "run",
            "--scope",
            "project",
            "--format",
            "github",
            "--no-state",
        ])
        .current_dir(repo.path())
        .envs(repo.env())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let text = fs::read_to_string(&summary).unwrap();
    assert!(
        text.contains(&format!(
            "\n{known} known findings (held by the committed baseline) not listed.\n"
        )),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| pkg/")).collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.starts_with("| pkg/c.py |")),
        "{text}"
    );
}

#[test]
fn one_known_finding_is_counted_in_the_singular() {
    let repo = GitRepo::new(&[("pkg/__init__.py", ""), ("pkg/c.py", "import os\n")]);
    repo.qg(&["baseline", "write", "--no-progress", "--gate", "ruff_check"])
        .assert_code(0);
    repo.commit("baseline");
    let run = repo.qg(&["run", "--scope", "project", "--gate", "ruff_check"]);
    assert!(
        run.stdout
            .contains("1 known violation from the baseline is not listed"),
        "{}",
        run.stdout
    );
}

/// `baseline write --gate X` keeps the other gates' entries, which the file
/// holds sorted by path (gates interleaved): the count it prints is of the
/// gates in the file, not of the runs of equal gate ids in its order.
#[test]
fn a_partial_rewrite_counts_each_gate_in_the_baseline_once() {
    let bad = "import os\n\n\ndef f() -> int:\n    return  'x'\n";
    let repo = GitRepo::new(&[
        (
            ".st3/quality.yaml",
            "active_gates: [ruff_check, ruff_format, mypy]\n",
        ),
        ("a.py", bad),
        ("b.py", bad),
    ]);
    let all = repo.qg(&["baseline", "write", "--no-progress"]);
    all.assert_code(0);
    assert!(
        all.stdout.contains("6 known violations of 3 gates"),
        "{}",
        all.stdout
    );
    let one = repo.qg(&["baseline", "write", "--gate", "ruff_check", "--no-progress"]);
    one.assert_code(0);
    assert!(
        one.stdout.contains("6 known violations of 3 gates"),
        "{}",
        one.stdout
    );
}
