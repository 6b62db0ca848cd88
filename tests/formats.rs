//! Every output format on one deterministic run: golden files, the official
//! SARIF 2.1.0 schema, XML well-formedness, fingerprint stability, and the
//! book's editor problem matcher against real concise output.
//!
//! Regenerate the golden files after an intended change with
//! `QG_UPDATE_GOLDEN=1 cargo test --test formats`, and review the diff.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use qg::exec::Silent;
use qg::report::RunReport;
use qg::report::{self, Format};
use qg::run::RunOptions;
use qg::scope::{ScopeMode, ScopeRequest};
use serde_json::Value;

/// Findings chosen to stress every format: `%`, `:`, `,`, a newline and
/// non-ASCII in one message; a repeated rule; a multi-line range; a note; a
/// file-level finding; an errored gate; a skipped gate.
const LINT_OUTPUT: &str = r#"[
 {"file":"a.py","line":3,"column":5,"end_line":3,"end_column":9,"code":"E1","message":"100% sure: a, b\nsecond line — ünïcode ✓","severity":"error","fix":true},
 {"file":"a.py","line":7,"column":1,"code":"E2","message":"repeated","severity":"error"},
 {"file":"a.py","line":9,"column":1,"code":"E2","message":"repeated","severity":"error"},
 {"file":"b.py","line":2,"column":1,"end_line":4,"end_column":3,"code":"W1","message":"spans lines","severity":"warning","url":"https://example.invalid/rules/W1"},
 {"file":"n.py","line":1,"column":1,"code":"N1","message":"just a note","severity":"note"}
]"#;

struct Fixture {
    project: tempfile::TempDir,
    tools: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let fixture = Fixture {
            project: tempfile::tempdir().unwrap(),
            tools: tempfile::tempdir().unwrap(),
        };
        for file in ["a.py", "b.py", "c.py", "n.py"] {
            fs::write(fixture.project.path().join(file), "x = 1\n").unwrap();
        }
        fixture.set_lint_output(LINT_OUTPUT);
        fixture.tool(
            "lint",
            &format!(
                "[ \"$1\" = --version ] && {{ echo 'lint 4.2.0 (fast)'; exit 0; }}\ncat '{}'; echo 'lint: note: 1 file skipped [cache]'; exit 1",
                fixture.lint_output().display()
            ),
        );
        fixture.tool(
            "fmt",
            "printf -- '--- c.py\\n+++ c.py\\n@@ -1 +1 @@\\n'; exit 1",
        );
        fixture.tool("broken", "echo 'boom: cannot start' >&2; exit 2");
        let t = |name: &str| fixture.tools.path().join(name).display().to_string();
        let config = format!(
            r#"version: "1"
active_gates: [lint, fmt, broken, docs]
artifact_logging: {{enabled: false}}
gates:
  lint:
    name: "Lint"
    execution: {{command: ["{lint}"]}}
    version_args: ["--version"]
    parsing:
      strategy: json_violations
      field_map: {{file: file, line: line, column: column, end_line: end_line,
                  end_column: end_column, code: code, message: message,
                  severity: severity, url: url, fixable: fix}}
  fmt:
    name: "Format"
    execution: {{command: ["{fmt}"]}}
    parsing:
      strategy: text_violations
      pattern: '^--- (?P<file>[^\n]+)\n\+\+\+ '
      defaults: {{code: FORMAT, message: "File would be reformatted", fixable: "true"}}
  broken:
    name: "Broken"
    execution: {{command: ["{broken}"]}}
    parsing: {{strategy: exit_code}}
  docs:
    name: "Docs"
    execution: {{command: ["{broken}"]}}
    parsing: {{strategy: exit_code}}
    capabilities: {{file_types: [".txt"]}}
"#,
            lint = t("lint"),
            fmt = t("fmt"),
            broken = t("broken")
        );
        fs::create_dir_all(fixture.project.path().join(".st3")).unwrap();
        fs::write(fixture.project.path().join(".st3/quality.yaml"), config).unwrap();
        fixture
    }

    fn tool(&self, name: &str, script: &str) {
        let path = self.tools.path().join(name);
        fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }

    fn lint_output(&self) -> PathBuf {
        self.tools.path().join("lint.json")
    }

    fn set_lint_output(&self, json: &str) {
        fs::write(self.lint_output(), json).unwrap();
    }

    /// A run with timings zeroed and the root made machine-independent.
    fn report(&self) -> RunReport {
        let options = RunOptions {
            cwd: self.project.path().to_path_buf(),
            config: None,
            scope: ScopeRequest {
                mode: Some(ScopeMode::Project),
                ..ScopeRequest::default()
            },
            gates: Vec::new(),
            jobs: 4,
            no_state: true,
            baseline: Default::default(),
            shard: None,
            cancel: Default::default(),
            report_covered: false,
            daemons: Default::default(),
            require_trust: false,
            // Goldens of the tools' own runs: their times and logs.
            cache: qg::run::CacheUse::Off,
            confirm: false,
        };
        let mut report = qg::run::run(&options, &Silent).unwrap();
        report.total_ms = 0;
        report.root = PathBuf::from("/ROOT");
        for gate in &mut report.gates {
            gate.duration_ms = 0;
        }
        report
    }
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("QG_UPDATE_GOLDEN").is_some() {
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {}; run with QG_UPDATE_GOLDEN=1", path.display()));
    assert!(
        expected == actual,
        "{name} differs from its golden file.\n--- expected\n{expected}\n--- actual\n{actual}"
    );
}

#[test]
fn every_format_matches_its_golden_file() {
    let report = Fixture::new().report();
    for (format, file) in [
        (Format::Human, "report.txt"),
        (Format::Json, "report.json"),
        (Format::Concise, "report.concise"),
        (Format::Github, "report.github"),
        (Format::Sarif, "report.sarif"),
        (Format::Gitlab, "report.gitlab.json"),
        (Format::Junit, "report.junit.xml"),
    ] {
        golden(file, &report::render(&report, format, false));
    }
    // Errored, skipped, warned and URL-carrying gates fit the written contract.
    let json: Value = serde_json::from_str(&report::render(&report, Format::Json, false)).unwrap();
    common::assert_fits_schema("run-report.json", &json);
    golden(
        "step_summary.md",
        &report::step_summary::render(&report, 1 << 20),
    );
}

#[test]
fn sarif_is_valid_against_the_official_schema() {
    let report = Fixture::new().report();
    let sarif: Value =
        serde_json::from_str(&report::render(&report, Format::Sarif, false)).unwrap();
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF schema errors:\n{}",
        errors.join("\n")
    );
    // A run per gate, each with a distinct driver name.
    let names: HashSet<&str> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tool"]["driver"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), report.gates.len());
    // Every reported code is a rule of its run.
    for run in sarif["runs"].as_array().unwrap() {
        let rules: HashSet<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        for result in run["results"].as_array().unwrap() {
            assert!(
                rules.contains(result["ruleId"].as_str().unwrap()),
                "{result}"
            );
        }
    }
}

#[test]
fn junit_is_well_formed_with_unique_test_names() {
    let report = Fixture::new().report();
    let xml = report::render(&report, Format::Junit, false);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    for suite in root.children().filter(|n| n.has_tag_name("testsuite")) {
        let names: Vec<&str> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|n| n.attribute("name").unwrap())
            .collect();
        let unique: HashSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "duplicate test names: {names:?}");
        assert_eq!(suite.attribute("tests").unwrap(), names.len().to_string());
    }
    assert_eq!(root.attribute("errors"), Some("1"));
    // The repeated rule in one file got distinct names.
    assert!(xml.contains("name=\"a.py:7:1 E2\"") && xml.contains("name=\"a.py:9:1 E2\""));
}

#[test]
fn gitlab_fingerprints_are_distinct_and_survive_unrelated_edits() {
    let fixture = Fixture::new();
    let fingerprints = |report: &RunReport| -> Vec<String> {
        let json: Value =
            serde_json::from_str(&report::render(report, Format::Gitlab, false)).unwrap();
        json.as_array()
            .unwrap()
            .iter()
            .map(|i| i["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    let before = fingerprints(&fixture.report());
    let unique: HashSet<&String> = before.iter().collect();
    assert_eq!(
        unique.len(),
        before.len(),
        "fingerprints must be distinct: {before:?}"
    );
    // Ten lines inserted at the top of every file: positions move, identity does not.
    let shifted = LINT_OUTPUT
        .replace("\"line\":3", "\"line\":13")
        .replace("\"end_line\":3", "\"end_line\":13")
        .replace("\"line\":7", "\"line\":17")
        .replace("\"line\":9", "\"line\":19")
        .replace("\"line\":2", "\"line\":12");
    assert_ne!(shifted, LINT_OUTPUT);
    fixture.set_lint_output(&shifted);
    assert_eq!(fingerprints(&fixture.report()), before);
}

/// What the matcher captures: file, line, column, severity, code.
type MatchedLine = (String, Option<u64>, Option<u64>, String, String);

/// The VS Code problem matcher regex published in the book's Editors page.
fn readme_matcher() -> regex::Regex {
    let readme = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/how-to/editors.md"),
    )
    .unwrap();
    let line = readme
        .lines()
        .find(|l| l.trim_start().starts_with("\"regexp\":"))
        .expect("the Editors page has a problem matcher regexp");
    let json = format!("{{{}}}", line.trim().trim_end_matches(','));
    let value: Value = serde_json::from_str(&json).unwrap();
    regex::Regex::new(value["regexp"].as_str().unwrap()).unwrap()
}

#[test]
fn readme_problem_matcher_parses_concise_output() {
    let report = Fixture::new().report();
    let concise = report::render(&report, Format::Concise, false);
    let matcher = readme_matcher();
    let mut parsed = Vec::new();
    for line in concise.lines().skip(1).filter(|l| !l.starts_with("qg: ")) {
        let caps = matcher
            .captures(line)
            .unwrap_or_else(|| panic!("the Editors page matcher does not parse: {line}"));
        parsed.push((
            caps[1].to_string(),
            caps.get(2).map(|m| m.as_str().parse::<u64>().unwrap()),
            caps.get(3).map(|m| m.as_str().parse::<u64>().unwrap()),
            caps[4].to_string(),
            caps[6].to_string(),
        ));
    }
    let expected: Vec<MatchedLine> = report
        .findings()
        .iter()
        .map(|(gate, v)| {
            (
                v.file.clone().unwrap(),
                v.line,
                v.column,
                v.severity.as_str().to_string(),
                match &v.code {
                    Some(code) => format!("{}:{code}", gate.id),
                    None => gate.id.clone(),
                },
            )
        })
        .collect();
    assert_eq!(parsed, expected);
}

#[test]
fn report_flag_writes_several_formats_in_one_run() {
    let fixture = Fixture::new();
    let out = tempfile::tempdir().unwrap();
    let summary = out.path().join("summary.md");
    fs::write(&summary, "earlier step output\n").unwrap();
    let sarif = out.path().join("qg.sarif");
    let junit = out.path().join("reports/junit.xml");
    let run = common::Run::from(
        std::process::Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(["run", "--scope", "project", "--format", "github"])
            .arg(format!("--report=sarif={}", sarif.display()))
            .arg(format!("--report=junit={}", junit.display()))
            .env("GITHUB_STEP_SUMMARY", &summary)
            .current_dir(fixture.project.path())
            .output()
            .unwrap(),
    );
    run.assert_code(2);
    assert!(
        run.stdout.lines().nth(1).unwrap().starts_with("::"),
        "{}",
        run.stdout
    );
    assert!(fs::read_to_string(&sarif)
        .unwrap()
        .contains("\"version\": \"2.1.0\""));
    assert!(fs::read_to_string(&junit).unwrap().starts_with("<?xml"));
    let markdown = fs::read_to_string(&summary).unwrap();
    assert!(
        markdown.starts_with("earlier step output\n### ⚠️ 1/4 gates errored"),
        "{markdown}"
    );
    let run = common::qg_in(fixture.project.path(), &["run", "--report", "yaml=x"]);
    run.assert_fails_with(2, "unknown format `yaml`");
}

#[test]
fn step_summary_stays_within_its_budget() {
    let report = Fixture::new().report();
    let full = report::step_summary::render(&report, 1 << 20);
    let small = report::step_summary::render(&report, 700);
    assert!(small.len() <= 700, "{}", small.len());
    assert!(full.len() > small.len());
    assert!(small.contains("more: the full list"), "{small}");
}
