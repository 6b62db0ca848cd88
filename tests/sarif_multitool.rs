//! qg's SARIF passes Microsoft's SARIF Multitool with the rules of GitHub
//! code scanning *and* GitHub Advanced Security (`--rule-kind
//! "Gh;Ghas;Sarif"`) with zero errors: every rule has a full description
//! and help, and a `helpUri` where the tool documents it. Real tools on
//! the dirty fixture; the Multitool comes from scripts/test.sh.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{repo_dir, Project};
use serde_json::Value;

fn multitool() -> PathBuf {
    let path = std::env::var_os("QG_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_dir().join(".venv"))
        .join("npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    assert!(
        path.is_file(),
        "the SARIF Multitool is not installed at {}; run scripts/test.sh (the README's test command)",
        path.display()
    );
    path
}

/// The Multitool's findings on `sarif` with GitHub's rule sets: (level, text).
fn validate(sarif: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("qg.sarif");
    let output = dir.path().join("validation.sarif");
    std::fs::write(&input, sarif).unwrap();
    let out = Command::new(multitool())
        .args(["validate", "--rule-kind", "Gh;Ghas;Sarif", "-o"])
        .arg(&output)
        .arg(&input)
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&std::fs::read(&output).unwrap_or_else(|e| {
        panic!(
            "the Multitool wrote no log ({e}):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }))
    .unwrap();
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["level"].as_str().unwrap_or("warning").to_string(),
                format!("{} {}", r["ruleId"], r["message"]),
            )
        })
        .collect()
}

#[test]
fn sarif_passes_the_github_and_advanced_security_rules_with_zero_errors() {
    let project = Project::fixture("dirty");
    let run = project.qg_with_tools(&["run", "--scope", "project", "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
    let errors: Vec<_> = validate(&run.stdout)
        .into_iter()
        .filter(|(level, _)| level == "error")
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // Every rule is described, and documented where the tool documents it.
    let mut with_uri = Vec::new();
    for run in sarif["runs"].as_array().unwrap() {
        for rule in run["tool"]["driver"]["rules"].as_array().unwrap() {
            assert!(rule["fullDescription"]["text"].is_string(), "{rule}");
            assert!(rule["help"]["text"].is_string(), "{rule}");
            if let Some(uri) = rule["helpUri"].as_str() {
                with_uri.push(format!("{}: {uri}", rule["id"].as_str().unwrap()));
            }
        }
    }
    assert!(
        with_uri.contains(&"F401: https://docs.astral.sh/ruff/rules/unused-import".to_string()),
        "{with_uri:#?}"
    );
    assert!(
        with_uri.contains(
            &"return-value: https://mypy.rtfd.io/en/stable/_refs.html#code-return-value"
                .to_string()
        ),
        "{with_uri:#?}"
    );
}

#[test]
fn a_merged_sharded_run_is_one_upload_that_passes_too() {
    let project = Project::fixture("dirty");
    let mut reports = Vec::new();
    for i in 1..=3 {
        let name = format!("shard-{i}.json");
        let shard = format!("{i}/3");
        project.qg_with_tools(&[
            "run",
            "--scope",
            "project",
            "--shard",
            &shard,
            "--quiet",
            "--report",
            &format!("json={name}"),
        ]);
        reports.push(name);
    }
    let mut args = vec!["merge", "--format", "sarif"];
    args.extend(reports.iter().map(String::as_str));
    let merged = project.qg_with_tools(&args);
    merged.assert_code(1);
    let errors: Vec<_> = validate(&merged.stdout)
        .into_iter()
        .filter(|(level, _)| level == "error")
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let sarif: Value = serde_json::from_str(&merged.stdout).unwrap();
    let results: usize = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["results"].as_array().unwrap().len())
        .sum();
    assert_eq!(results, 11, "one SARIF log with every gate's findings");
}
