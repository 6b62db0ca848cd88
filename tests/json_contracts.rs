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

#[test]
fn a_report_answered_by_the_result_cache_fits_its_schema() {
    let project = Project::fixture("dirty");
    let store = tempfile::tempdir().unwrap();
    let store = store.path().to_str().unwrap();
    let vars = [("QG_NO_CACHE", "0"), ("QG_CACHE_DIR", store)];
    let run = || {
        project
            .qg_with_venv_and(
                &common::tools_venv(),
                &vars,
                &["run", "--scope", "project", "--format", "json"],
            )
            .json()
    };
    let filled = run();
    assert_fits_schema("run-report.json", &filled);
    let answered = run();
    assert_eq!(answered["gates"][0]["cache"]["misses"], 0, "{answered}");
    assert_fits_schema("run-report.json", &answered);
    let stats = project
        .qg_with_venv_and(
            &common::tools_venv(),
            &vars,
            &["cache", "stats", "--format", "json"],
        )
        .json();
    assert!(stats["entries"].as_u64().unwrap() > 0, "{stats}");
}
