//! `qg fix`: each gate's fixer runs on the files that gate finds failing in
//! the scope and nowhere else; then the gates check again. Real ruff on the
//! dirty fixture; a fake fixer that breaks for the failure path.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::fs;

use common::{Project, Run};

/// Every file's content, to tell exactly what a command changed.
fn contents(project: &Project) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in walk(project.path()) {
        let relative = entry
            .strip_prefix(project.path())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // Source only: not git, qg's state or the tools' caches.
        if !relative.starts_with('.') {
            out.insert(relative, fs::read(&entry).unwrap());
        }
    }
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn changed(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    after
        .iter()
        .filter(|(path, bytes)| before.get(*path) != Some(*bytes))
        .map(|(path, _)| path.clone())
        .collect()
}

fn codes_left(run: &Run) -> Vec<String> {
    let mut codes: Vec<String> = run.json()["report"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            let id = g["id"].as_str().unwrap().to_string();
            g["violations"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |v| {
                    format!(
                        "{}:{}:{}",
                        v["file"].as_str().unwrap(),
                        id,
                        v["code"].as_str().unwrap_or("")
                    )
                })
        })
        .collect();
    codes.sort();
    codes
}

#[test]
fn fixes_exactly_the_failing_files_in_scope_and_reports_what_is_left() {
    let project = Project::fixture("dirty");
    let before = contents(&project);
    let run = project.qg_with_tools(&[
        "fix",
        "pkg/lint.py",
        "pkg/typing_errors.py",
        "--format",
        "json",
        "--no-progress",
    ]);
    run.assert_code(1);
    let json = run.json();
    // badformat.py is unformatted too, but not in the scope: untouched.
    assert_eq!(changed(&before, &contents(&project)), ["pkg/lint.py"]);
    assert_eq!(json["changed_files"], serde_json::json!(["pkg/lint.py"]));
    assert_eq!(json["fixed"], 1, "{json}");
    let lint = fs::read_to_string(project.path().join("pkg/lint.py")).unwrap();
    assert!(!lint.contains("import os"), "{lint}");
    assert_eq!(
        codes_left(&run),
        [
            "pkg/lint.py:ruff_check:F841",
            "pkg/typing_errors.py:mypy:assignment",
            "pkg/typing_errors.py:mypy:return-value",
            "pkg/typing_errors.py:pyright:reportAssignmentType",
            "pkg/typing_errors.py:pyright:reportReturnType",
        ]
    );
}

#[test]
fn diff_shows_the_changes_and_writes_nothing() {
    let project = Project::fixture("dirty");
    let before = contents(&project);
    let run = project.qg_with_tools(&["fix", "--scope", "project", "--diff", "--no-progress"]);
    run.assert_code(1);
    assert!(run.stdout.contains("-import os"), "{}", run.stdout);
    assert!(
        run.stdout.contains("+def double(a: int) -> int:"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("nothing was written"));
    assert_eq!(changed(&before, &contents(&project)), Vec::<String>::new());
}

#[test]
fn unsafe_adds_the_fixes_the_tool_calls_unsafe() {
    let project = Project::fixture("dirty");
    let run = project.qg_with_tools(&[
        "fix",
        "pkg/lint.py",
        "--gate",
        "ruff_check",
        "--unsafe",
        "--format",
        "json",
        "--no-progress",
    ]);
    run.assert_code(0);
    assert_eq!(run.json()["fixed"], 2, "{}", run.stdout);
    let lint = fs::read_to_string(project.path().join("pkg/lint.py")).unwrap();
    assert!(!lint.contains("unused ="), "{lint}");
}

#[test]
fn a_fixer_that_fails_leaves_no_file_half_written() {
    let project = Project::empty();
    project.fake_tool("lint", r#"for f in "$@"; do printf '[{"file":"%s","line":1,"code":"X","message":"bad"}]' "$f"; done; exit 1"#);
    // Truncates the file it was asked to fix, then dies.
    project.fake_tool(
        "fixer",
        r#"for f in "$@"; do : > "$f"; done; echo 'fixer: out of memory' >&2; exit 3"#,
    );
    project.write(
        ".st3/quality.yaml",
        &common::one_gate_config(
            r#"["lint"]"#,
            "    capabilities: {supports_autofix: true}\n    fix: {command: [fixer]}\n",
        ),
    );
    project.write("a.py", "x = 1\n");
    project.git_init();
    let run = project.qg(&["fix", "a.py", "--no-progress"]);
    run.assert_code(2);
    assert!(
        run.stdout.contains("fixer: out of memory"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("put back"), "{}", run.stdout);
    assert_eq!(
        fs::read_to_string(project.path().join("a.py")).unwrap(),
        "x = 1\n"
    );
}

#[test]
fn findings_the_baseline_knows_are_fixed_too() {
    let project = Project::fixture("dirty");
    project
        .qg_with_tools(&[
            "baseline",
            "write",
            "--gate",
            "ruff_format",
            "--no-progress",
        ])
        .assert_code(0);
    let run = project.qg_with_tools(&[
        "fix",
        "--scope",
        "project",
        "--gate",
        "ruff_format",
        "--format",
        "json",
        "--no-progress",
    ]);
    run.assert_code(0);
    assert_eq!(
        run.json()["changed_files"],
        serde_json::json!(["pkg/badformat.py"]),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.json()["report"]["baseline"]["fixed"],
        1,
        "{}",
        run.stdout
    );
}

/// Right after `qg baseline write` and a green run, `auto` holds no file:
/// `qg fix` fixes nothing, and says which scope it used, why, and what
/// fixes the known findings elsewhere.
#[test]
fn a_fix_that_changed_nothing_in_a_narrow_scope_names_it_and_the_project_fix() {
    let project = Project::fixture("dirty");
    // Every gate: only a run of all of them moves the last green commit.
    project
        .qg_with_tools(&["baseline", "write", "--no-progress"])
        .assert_code(0);
    project
        .qg_with_tools(&["run", "-q", "--no-progress"])
        .assert_code(0);
    let gate = ["--gate", "ruff_format", "--no-progress"];
    let run = project.qg_with_tools(&[&["fix"][..], &gate].concat());
    run.assert_code(0);
    let first = run.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "🔧 fixed 0 violations, no file changed — the auto scope held no file (what changed since \
         the last green run, and what failed); `qg fix --scope project` fixes every file",
        "{}",
        run.stdout
    );
    let project_fix = project.qg_with_tools(&[&["fix", "--scope", "project"][..], &gate].concat());
    assert!(
        project_fix
            .stdout
            .starts_with("🔧 fixed 1 violation in 1 file (pkg/badformat.py)\n"),
        "{}",
        project_fix.stdout
    );
}

/// "fixed N" counts the findings gone from the files the fixers changed,
/// never the difference of two checks' totals: here mypy, following the
/// unused import ruff removes, reported two findings of the imported
/// module before the fix and none after — which once read "fixed 3".
#[test]
fn fixed_counts_only_what_the_fixers_removed_from_the_files_they_changed() {
    let project = Project::fixture("dirty");
    project.write("pkg/uses.py", "import pkg.typing_errors\n");
    let run = project.qg_with_tools(&["fix", "pkg/uses.py", "--format", "json", "--no-progress"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["changed_files"], serde_json::json!(["pkg/uses.py"]));
    assert_eq!(json["fixed"], 1, "{json}");
    let quiet = project.qg_with_tools(&["fix", "pkg/lint.py", "--quiet", "--no-progress"]);
    quiet.assert_code(1);
    assert_eq!(quiet.stdout.lines().count(), 2, "{}", quiet.stdout);
    assert!(
        quiet
            .stdout
            .starts_with("🔧 fixed 1 violation in 1 file (pkg/lint.py)\n❌ "),
        "{}",
        quiet.stdout
    );
}

/// A fix hint names only the files holding a finding the tool can fix:
/// with only an unused variable left (ruff's fix for it is unsafe), the
/// lint gate offers no `ruff check --fix` at all.
#[test]
fn the_fix_hint_names_only_files_with_a_fixable_finding() {
    let project = Project::fixture("dirty");
    let before = project.qg_with_tools(&[
        "run",
        "pkg/lint.py",
        "--format",
        "json",
        "--gate",
        "ruff_check",
    ]);
    assert_eq!(
        before.gate("ruff_check")["fix_hint"],
        "ruff check --fix pkg/lint.py"
    );
    project.qg_with_tools(&[
        "fix",
        "pkg/lint.py",
        "--gate",
        "ruff_check",
        "--no-progress",
    ]);
    let after = project.qg_with_tools(&[
        "run",
        "pkg/lint.py",
        "--format",
        "json",
        "--gate",
        "ruff_check",
    ]);
    let gate = after.gate("ruff_check");
    assert_eq!(gate["status"], "failed", "{gate}");
    assert!(gate.get("fix_hint").is_none(), "{gate}");
}
