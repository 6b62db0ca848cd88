//! Every `--format json` document fits its written schema (`schemas/`),
//! the contract agents and scripts rely on — and the output schema the MCP
//! server declares for the tool answering with it. Real tools on the dirty
//! fixture, with a committed baseline so every optional part shows up.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::{assert_fits_schema, Project};

#[test]
fn every_json_document_fits_its_schema() {
    let project = Project::fixture("dirty");
    let json = |args: &[&str]| project.qg_with_tools(args).json();
    // A first run records a baseline commit and the findings; a committed
    // baseline then marks each violation new or known.
    assert_fits_schema("run-report.json", &json(&["run", "--format", "json"]));
    project.qg_with_tools(&["baseline", "write"]).assert_code(0);
    project.write("pkg/extra.py", "import os\n");
    let report = json(&["run", "--format", "json"]);
    assert_eq!(report["baseline"]["new"], 1, "{report}");
    assert!(report["since_last_run"].is_object(), "{report}");
    assert_fits_schema("run-report.json", &report);

    assert_fits_schema("files.json", &json(&["files", "--format", "json"]));
    project.write("docs/notes.txt", "no Python here\n");
    let named = json(&["files", "pkg", "docs", "--format", "json"]);
    assert_eq!(named["unmatched"][0]["path"], "docs", "{named}");
    assert_fits_schema("files.json", &named);
    assert_fits_schema("history.json", &json(&["history", "--format", "json"]));
    for gate in ["ruff_format", "ruff_check", "mypy", "pyright"] {
        assert_fits_schema(
            "explain.json",
            &json(&["explain", gate, "--format", "json"]),
        );
    }
    assert_fits_schema("fix.json", &json(&["fix", "--diff", "--format", "json"]));
    assert_fits_schema("fix.json", &json(&["fix", "--format", "json"]));
}

#[test]
fn a_history_before_any_run_fits_its_schema() {
    let project = Project::fixture("dirty");
    let history = project
        .qg_with_tools(&["history", "--format", "json"])
        .json();
    assert_eq!(history["trend"], serde_json::Value::Null);
    assert_fits_schema("history.json", &history);
}
