//! One baseline for every platform: written by the Linux qg, it holds for
//! the Windows `qg.exe` (run under wine) on a checkout whose files have
//! CRLF line endings (`core.autocrlf`), and what `qg.exe` writes holds on
//! Linux. Real ruff on both sides: Linux's from the tools' virtualenv,
//! `ruff.exe` from its win_amd64 wheel in the project's `.venv\Scripts`.
//!
//! Needs what `scripts/windows-tests.sh` builds and sets up (the README's
//! test command runs it first): `qg.exe`, `ruff.exe` and the wine prefix
//! under the target directory. Missing, the tests fail: they never skip.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::repo::GitRepo;
use common::{repo_dir, Run};
use serde_json::Value;

/// The target directory the Linux `qg` was built in.
fn target_dir() -> PathBuf {
    let qg = Path::new(env!("CARGO_BIN_EXE_qg"));
    qg.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// Where `scripts/windows-tests.sh` keeps the wine prefix and `ruff.exe`.
fn windows_tests_dir() -> PathBuf {
    target_dir().join("windows-tests")
}

fn set_up(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing; run scripts/windows-tests.sh (scripts/test.sh runs it first)",
        path.display()
    );
    path
}

fn qg_exe() -> PathBuf {
    set_up(target_dir().join("x86_64-pc-windows-gnu/debug/qg.exe"))
}

/// `ruff.exe` at the version requirements-tools.txt pins.
fn ruff_exe() -> PathBuf {
    let pins = std::fs::read_to_string(repo_dir().join("requirements-tools.txt")).unwrap();
    let version = pins
        .lines()
        .find_map(|line| line.strip_prefix("ruff=="))
        .expect("requirements-tools.txt pins ruff");
    set_up(windows_tests_dir().join(format!("ruff-{}/ruff.exe", version.trim())))
}

/// `qg.exe ARGS` under wine in the repository, with the project's
/// `.venv\Scripts` the only place its tools can come from.
fn windows_qg(repo: &GitRepo, args: &[&str]) -> Run {
    let output = Command::new("wine")
        .arg(qg_exe())
        .args(args)
        .current_dir(repo.path())
        .env("WINEPREFIX", set_up(windows_tests_dir().join("prefix")))
        .env("WINEDEBUG", "-all")
        .env("CI", "true")
        .env_remove("VIRTUAL_ENV")
        .output()
        .expect("wine runs (scripts/windows-tests.sh installs it)");
    // Wine prints console text with the Windows line ending.
    let mut run = Run::from(output);
    run.stdout = run.stdout.replace("\r\n", "\n");
    run
}

/// The ruff check gate alone: the rest of the defaults need mypy and
/// pyright, which have no Windows build here.
fn ruff_check_config() -> String {
    let all = "active_gates: [ruff_format, ruff_check, mypy, pyright]";
    assert!(qg::config::EMBEDDED_DEFAULT.contains(all));
    qg::config::EMBEDDED_DEFAULT.replacen(all, "active_gates: [ruff_check]", 1)
}

const A: &str = "import os\nimport sys\n\n\nprint(sys.argv)\n";
const B: &str = "import json\n\n\ndef f():\n    y = 2\n    return 1\n";
const B_WORSE: &str = "import json\nimport re\n\n\ndef f():\n    y = 2\n    return 1\n";

/// A repository whose Python files have four ruff findings, with
/// `ruff.exe` in its Windows virtualenv (ignored by git).
fn repo() -> GitRepo {
    let repo = GitRepo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", A),
        ("pkg/b.py", B),
        (".st3/quality.yaml", &ruff_check_config()),
        (".gitignore", ".venv/\n"),
    ]);
    let scripts = repo.path().join(".venv/Scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::copy(ruff_exe(), scripts.join("ruff.exe")).unwrap();
    repo.write(".venv/pyvenv.cfg", "home = C:\\Python311\n");
    repo
}

/// The working tree checked out again with `core.autocrlf=true`, as git
/// for Windows does by default: every text file ends its lines with CRLF.
fn check_out_with_crlf(repo: &GitRepo) {
    repo.git(&["config", "core.autocrlf", "true"]);
    for file in ["pkg/__init__.py", "pkg/a.py", "pkg/b.py"] {
        std::fs::remove_file(repo.path().join(file)).unwrap();
    }
    repo.git(&["checkout", "--", "."]);
    let a = std::fs::read(repo.path().join("pkg/a.py")).unwrap();
    assert!(a.windows(2).any(|w| w == b"\r\n"), "git wrote LF");
}

fn project_run(run: Run) -> (i32, Value) {
    let report = run.json();
    (run.code, report)
}

const PROJECT_JSON: [&str; 6] = [
    "run",
    "--scope",
    "project",
    "--format",
    "json",
    "--no-state",
];

#[test]
fn a_baseline_written_on_linux_holds_on_windows_with_crlf_and_back() {
    let repo = repo();
    repo.qg(&["baseline", "write", "--no-progress"])
        .assert_code(0);
    repo.commit("baseline");
    check_out_with_crlf(&repo);

    // qg.exe on the CRLF checkout: the four findings are the baseline's.
    let (code, report) = project_run(windows_qg(&repo, &PROJECT_JSON));
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["baseline"]["known"], 4, "{report}");
    assert_eq!(report["baseline"]["new"], 0, "{report}");

    // A new finding is new on Windows too; qg.exe records it.
    repo.write("pkg/b.py", &B_WORSE.replace('\n', "\r\n"));
    let (code, report) = project_run(windows_qg(&repo, &PROJECT_JSON));
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["baseline"]["new"], 1, "{report}");
    windows_qg(&repo, &["baseline", "write", "--no-progress"]).assert_code(0);
    let written = std::fs::read_to_string(repo.path().join(".st3/baseline.jsonl")).unwrap();
    assert!(written.contains("\"pkg/b.py\""), "{written}");
    assert!(!written.contains("pkg\\\\"), "{written}");

    // Back on Linux with LF endings: qg.exe's baseline holds all five.
    repo.write("pkg/b.py", B_WORSE);
    repo.write("pkg/a.py", A);
    let (code, report) = project_run(repo.qg(&PROJECT_JSON));
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["baseline"]["known"], 5, "{report}");
    assert_eq!(report["baseline"]["new"], 0, "{report}");
}
