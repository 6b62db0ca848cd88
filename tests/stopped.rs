//! A tool that stops before checking anything (mypy's blocking errors:
//! two modules of one name, a package directory that is no identifier, a
//! syntax error) makes its gate an error — never a pass with the cause as
//! its one finding, which a baseline would then keep green while the tool
//! checks nothing. With the real mypy.
#![cfg(unix)]

mod common;

use common::repo::GitRepo;
use serde_json::Value;

fn gate(report: &Value, id: &str) -> Value {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id)
        .unwrap_or_else(|| panic!("no gate {id} in {report}"))
        .clone()
}

/// A package with a real finding, beside two scripts of one module name
/// outside any package: `mypy .` stops on them and checks nothing.
fn two_scripts_named_alike() -> GitRepo {
    GitRepo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/core.py", "def value() -> int:\n    return 1\n"),
        ("scripts/run.py", "print(1)\n"),
        ("docs/examples/run.py", "print(2)\n"),
    ])
}

#[test]
fn duplicate_modules_make_mypy_an_error_that_names_them_and_no_baseline_can_hold() {
    let repo = two_scripts_named_alike();
    let run = repo.qg(&[
        "run", "--scope", "project", "--format", "json", "--gate", "mypy",
    ]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let mypy = gate(&run.json(), "mypy");
    assert_eq!(mypy["status"], "error");
    assert_eq!(mypy["error"]["kind"], "stopped");
    let short = mypy["error"]["short"].as_str().unwrap();
    assert!(short.contains("Duplicate module named \"run\""), "{short}");
    assert!(mypy.get("violations").is_none(), "{mypy}");
    // Nothing to record: the baseline is not written.
    let write = repo.qg(&["baseline", "write", "--gate", "mypy"]);
    assert_eq!(write.code, 2, "{}{}", write.stdout, write.stderr);
    assert!(!repo.path().join(".st3/baseline.jsonl").exists());
}

#[test]
fn a_baseline_holding_a_blocking_error_says_so_and_does_not_make_the_gate_pass() {
    let repo = two_scripts_named_alike();
    // As an earlier qg wrote it: the blocking error as mypy's one finding.
    repo.write(
        ".st3/baseline.jsonl",
        "{\"qg_baseline\":1,\"tools\":{}}\n{\"path\":\"scripts/run.py\",\"gate\":\"mypy\",\"code\":\"\",\"message\":\"Duplicate module named \\\"run\\\" (also at \\\"./docs/examples/run.py\\\")\",\"line_hash\":\"\"}\n",
    );
    repo.commit("old baseline");
    let run = repo.qg(&[
        "run", "--scope", "project", "--format", "json", "--gate", "mypy",
    ]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let report = run.json();
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains(
            "the baseline holds a finding saying that Mypy stopped before checking anything"
        ),
        "{warnings}"
    );
}

#[test]
fn doctor_finds_what_will_stop_mypy_and_its_fix_makes_mypy_check_again() {
    let repo = two_scripts_named_alike();
    repo.write("my-lib/__init__.py", "");
    repo.write("my-lib/util.py", "X = 1\n");
    let doctor = repo.qg(&["doctor"]);
    assert_eq!(doctor.code, 1, "{}", doctor.stdout);
    assert!(
        doctor
            .stdout
            .contains("`run` is docs/examples/run.py and scripts/run.py"),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor
            .stdout
            .contains("my-lib holds an __init__.py but is no valid Python package name"),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor
            .stdout
            .contains("add \"^scripts/\" to `exclude` in pyproject.toml [tool.mypy]"),
        "{}",
        doctor.stdout
    );
    // The fixes doctor names, and a real finding behind the stop appears.
    repo.write(
        "pyproject.toml",
        "[tool.mypy]\nexclude = [\"^scripts/\", \"^my-lib/\"]\n",
    );
    repo.write("pkg/core.py", "def value() -> int:\n    return \"x\"\n");
    let doctor = repo.qg(&["doctor"]);
    assert!(!doctor.stdout.contains("mypy stops"), "{}", doctor.stdout);
    let run = repo.qg(&[
        "run", "--scope", "project", "--format", "json", "--gate", "mypy",
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let codes: Vec<String> = gate(&run.json(), "mypy")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["return-value"]);
}

#[test]
fn a_syntax_error_stops_mypy_while_ruff_reports_it_as_a_finding() {
    let repo = GitRepo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/core.py", "def value() -> int:\n    return 1\n"),
    ]);
    repo.write("pkg/core.py", "def value(:\n");
    let run = repo.qg(&["run", "--format", "json"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let report = run.json();
    assert_eq!(gate(&report, "mypy")["error"]["kind"], "stopped");
    assert!(
        gate(&report, "mypy")["error"]["short"]
            .as_str()
            .unwrap()
            .contains("pkg/core.py:1:"),
        "{report}"
    );
    assert_eq!(gate(&report, "ruff_check")["status"], "failed");
}

/// Syntax newer than the target (`type` statements under Python 3.11) is a
/// `syntax` finding mypy goes on past: it exits 1 and reports the rest, as
/// on cattrs 26.2.1 in a 3.11 environment (1,705 findings behind 12 such
/// lines). Its exit code says it checked, so the gate is a verdict with
/// every finding, not an error saying nothing was checked.
#[test]
fn syntax_newer_than_the_target_is_a_finding_mypy_checks_past() {
    let repo = GitRepo::new(&[
        ("pyproject.toml", "[tool.mypy]\npython_version = \"3.11\"\n"),
        ("pkg/__init__.py", ""),
        ("pkg/alias.py", "type Number = int\n"),
        ("pkg/core.py", "def value() -> int:\n    return \"one\"\n"),
    ]);
    let run = repo.qg(&["run", "--scope", "project", "--format", "json"]);
    let report = run.json();
    let mypy = gate(&report, "mypy");
    assert_eq!(mypy["status"], "failed", "{report}");
    let mut codes: Vec<String> = mypy["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    assert_eq!(codes, ["return-value", "syntax"], "{report}");
}
