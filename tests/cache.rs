//! The result cache with the real tools: two clones sharing one store get
//! the tools' own verdict whether a file's findings come from the store or
//! from its tool, an edit to a module's interface misses its importers, an
//! entry that cannot be used is checked instead, and `--verify` finds and
//! replaces an entry that lies. (The suite runs with `QG_NO_CACHE=1` from
//! `.cargo/config.toml`; these tests turn the cache on.)
// Unix: the real tools' Linux virtualenv (tests/windows.rs is the Windows
// binary's).
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{git, tools_venv, Project, Run};
use serde_json::Value;

/// `qg args…` in `dir` with the real tools and the store at `store`.
fn qg(dir: &Path, store: &Path, args: &[&str]) -> Run {
    Run::from(
        Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(args)
            .current_dir(dir)
            .env("VIRTUAL_ENV", tools_venv())
            .env("QG_CACHE_DIR", store)
            .env("QG_NO_CACHE", "0")
            .env("CI", "true")
            .env_remove("NO_COLOR")
            .output()
            .unwrap(),
    )
}

/// A project-scope run's JSON report.
fn project_run(dir: &Path, store: &Path, extra: &[&str]) -> Value {
    let mut args: Vec<&str> = "run --scope project --format json --no-state"
        .split(' ')
        .collect();
    args.extend(extra);
    let run = qg(dir, store, &args);
    assert!(
        run.code == 0 || run.code == 1,
        "{}{}",
        run.stdout,
        run.stderr
    );
    run.json()
}

/// Every gate's findings, as the tools reported them.
fn findings(report: &Value) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for gate in report["gates"].as_array().unwrap() {
        for v in gate["violations"].as_array().into_iter().flatten() {
            found.insert(format!(
                "{} {}:{}:{} {} {}",
                gate["id"], v["file"], v["line"], v["column"], v["code"], v["message"]
            ));
        }
    }
    found
}

/// Both reports hold the same findings (what differs, if not).
fn same(got: &Value, want: &Value) {
    let (got, want) = (findings(got), findings(want));
    let extra: Vec<&String> = got.difference(&want).collect();
    let missing: Vec<&String> = want.difference(&got).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "not the tools' verdict: extra {extra:#?}, missing {missing:#?}"
    );
}

/// Per gate: (status, hits, misses, files checked).
fn shares(report: &Value) -> Vec<(String, String, u64, u64, u64)> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let cache = &g["cache"];
            (
                g["id"].as_str().unwrap().to_string(),
                g["status"].as_str().unwrap().to_string(),
                cache["hits"].as_u64().unwrap_or(0),
                cache["misses"].as_u64().unwrap_or(0),
                g["files_checked"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn hits_and_misses(report: &Value, gate: &str) -> (u64, u64) {
    let share = shares(report).into_iter().find(|s| s.0 == gate).unwrap();
    (share.2, share.3)
}

/// The warm fixture and a clone of it beside, with one store.
struct Clones {
    first: Project,
    second: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Clones {
    fn new() -> Clones {
        let first = Project::fixture("warm");
        let second = tempfile::tempdir().unwrap();
        git(
            second.path(),
            &["clone", "-q", first.path().to_str().unwrap(), "."],
        );
        Clones {
            first,
            second,
            store: tempfile::tempdir().unwrap(),
        }
    }

    fn second(&self) -> PathBuf {
        self.second.path().to_path_buf()
    }
}

#[test]
fn two_clones_share_one_store_and_every_verdict_is_the_tools() {
    let clones = Clones::new();
    let store = clones.store.path();
    let filled = project_run(clones.first.path(), store, &[]);
    for (gate, _, hits, misses, _) in shares(&filled) {
        assert_eq!(hits, 0, "{gate}: an empty store has nothing: {filled}");
        assert!(misses > 0, "{gate} looked nothing up: {filled}");
    }
    assert_eq!(
        tool_cache(&filled, "mypy")["stored"],
        true,
        "mypy's own cache is kept at the commit: {filled}"
    );

    // The other clone: every file's findings from the store, none run.
    let second = clones.second();
    let answered = project_run(&second, store, &[]);
    same(&answered, &filled);
    for (gate, status, hits, misses, files) in shares(&answered) {
        assert_eq!(misses, 0, "{gate} ran its tool: {answered}");
        assert!(hits > 0 && files > 0, "{gate}: {answered}");
        assert_eq!(status, "passed", "{gate}: {answered}");
    }

    // An interface change in the other clone: `area` returns a str, so
    // geometry's sum breaks. The type checkers check again every module
    // that reaches shapes: all of them, as the package's `__init__` (which
    // each module's import runs) imports geometry. ruff only the file.
    let shapes = second.join("app/shapes.py");
    let text = std::fs::read_to_string(&shapes).unwrap();
    std::fs::write(
        &shapes,
        text.replace(
            "def area(shape: Square) -> float:\n    \"\"\"The area of a shape.\"\"\"\n    return shape.side * shape.side",
            "def area(shape: Square) -> str:\n    \"\"\"The area of a shape.\"\"\"\n    return str(shape.side * shape.side)",
        ),
    )
    .unwrap();
    let broken = project_run(&second, store, &[]);
    // mypy, run on the misses, started from the first clone's cache.
    let head = git_out(&second, &["rev-parse", "HEAD"]);
    assert_eq!(
        tool_cache(&broken, "mypy")["restored_from"],
        head.as_str(),
        "{broken}"
    );
    assert_eq!(tool_cache(&broken, "mypy")["commits_back"], 0, "{broken}");
    assert!(second.join(".mypy_cache").is_dir());
    let tools_say = project_run(&second, store, &["--no-cache"]);
    same(&broken, &tools_say);
    assert!(
        findings(&broken).iter().any(|f| f.contains("geometry.py")),
        "the importer's break is found: {broken}"
    );
    for gate in ["mypy", "pyright"] {
        assert_eq!(hits_and_misses(&broken, gate), (0, 6), "{gate}: {broken}");
    }
    assert_eq!(hits_and_misses(&broken, "ruff_check").1, 1, "{broken}");

    // A body-only edit to a leaf: only that file is checked again.
    let util = second.join("app/util.py");
    let leaf = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, format!("{leaf}\n# a comment\n")).unwrap();
    let leaf_edit = project_run(&second, store, &[]);
    let leaf_truth = project_run(&second, store, &["--no-cache"]);
    same(&leaf_edit, &leaf_truth);
    for gate in ["mypy", "pyright"] {
        assert_eq!(
            hits_and_misses(&leaf_edit, gate).1,
            1,
            "{gate}: {leaf_edit}"
        );
    }

    // Back in the first clone, the same break: all from the store.
    std::fs::copy(&shapes, clones.first.path().join("app/shapes.py")).unwrap();
    std::fs::copy(&util, clones.first.path().join("app/util.py")).unwrap();
    let again = project_run(clones.first.path(), store, &[]);
    same(&again, &leaf_truth);
    for (gate, _, _, misses, _) in shares(&again) {
        assert_eq!(misses, 0, "{gate} ran its tool: {again}");
    }

    // The auto scope uses the store too, with the same verdict.
    let auto = qg(
        clones.first.path(),
        store,
        &["run", "--format", "json", "--no-state"],
    );
    let auto: Value = serde_json::from_str(&auto.stdout).unwrap();
    same(&auto, &leaf_truth);
}

/// What a gate's run did with its tool's own cache.
fn tool_cache(report: &Value, gate: &str) -> Value {
    let gates = report["gates"].as_array().unwrap();
    let gate = gates.iter().find(|g| g["id"] == gate).unwrap();
    gate["cache"]["tool_cache"].clone()
}

/// `git args…`'s output in `dir`, trimmed.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_fresh_clone_starts_mypy_from_the_nearest_commits_cache_and_an_unusable_archive_is_passed_over()
{
    let clones = Clones::new();
    let store = clones.store.path();
    let base = git_out(clones.first.path(), &["rev-parse", "HEAD"]);
    project_run(clones.first.path(), store, &["--gate", "mypy"]);

    // A commit of the second clone's own, which left no archive: the
    // nearest is its parent's, one commit back.
    let second = clones.second();
    let util = second.join("app/util.py");
    let leaf = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, format!("{leaf}\n# a comment\n")).unwrap();
    git(&second, &["commit", "-qam", "a comment"]);
    let restored = project_run(&second, store, &["--gate", "mypy"]);
    let used = tool_cache(&restored, "mypy");
    assert_eq!(used["restored_from"], base.as_str(), "{restored}");
    assert_eq!(used["commits_back"], 1, "{restored}");
    assert_eq!(used["stored"], true, "kept for its own commit: {restored}");
    let human = qg(
        &second,
        store,
        &["run", "--scope", "project", "--gate", "mypy", "--no-state"],
    );
    assert!(
        !human.stdout.contains("own cache from"),
        "a checkout with a cache of its own is left alone: {}",
        human.stdout
    );

    // Archives cut short: a warning, and mypy starts without one.
    let third = tempfile::tempdir().unwrap();
    git(
        third.path(),
        &["clone", "-q", second.to_str().unwrap(), "."],
    );
    let third_util = third.path().join("app/util.py");
    std::fs::write(&third_util, format!("{leaf}\n# another\n")).unwrap();
    let archives = files_in(store, "tool-caches-v1");
    assert_eq!(archives.len(), 2, "{archives:?}");
    for archive in &archives {
        let bytes = std::fs::read(archive).unwrap();
        std::fs::write(archive, &bytes[..bytes.len() / 2]).unwrap();
    }
    let passed_over = project_run(third.path(), store, &["--gate", "mypy"]);
    let warnings = passed_over["gates"][0]["warnings"].to_string();
    assert!(warnings.contains("cannot be put back"), "{passed_over}");
    let truth = project_run(third.path(), store, &["--gate", "mypy", "--no-cache"]);
    same(&passed_over, &truth);
    same(
        &restored,
        &project_run(&second, store, &["--gate", "mypy", "--no-cache"]),
    );
}

#[test]
fn an_entry_that_cannot_be_used_is_checked_and_verify_replaces_one_that_lies() {
    let project = Project::fixture("warm");
    let store = tempfile::tempdir().unwrap();
    let store = store.path();
    let truth = project_run(project.path(), store, &["--gate", "ruff_check"]);
    let entries = entry_files(store);
    assert!(!entries.is_empty());

    // Cut short: a warning, the tool's verdict, the entry written again.
    let cut = &entries[0];
    let bytes = std::fs::read(cut).unwrap();
    std::fs::write(cut, &bytes[..bytes.len() / 2]).unwrap();
    let run = project_run(project.path(), store, &["--gate", "ruff_check"]);
    same(&run, &truth);
    let warnings = run["gates"][0]["warnings"].to_string();
    assert!(warnings.contains("not a whole entry"), "{run}");
    assert_eq!(hits_and_misses(&run, "ruff_check").1, 1, "{run}");
    assert_eq!(
        std::fs::read(cut).unwrap(),
        bytes,
        "the entry is written again"
    );

    // An entry that lies (a finding the tool never gave, under the right
    // key) is believed by a plain run — it is only as good as its key —
    // and found by --verify, which replaces it.
    let mut entry: Value = serde_json::from_slice(&bytes).unwrap();
    let file = entry["file"].as_str().unwrap().to_string();
    entry["violations"] = serde_json::json!([{
        "file": file, "line": 1, "column": 1, "code": "F999",
        "message": "invented", "severity": "error"
    }]);
    std::fs::write(cut, entry.to_string()).unwrap();
    let believed = project_run(project.path(), store, &["--gate", "ruff_check"]);
    assert!(
        findings(&believed).iter().any(|f| f.contains("invented")),
        "{believed}"
    );
    let verified = project_run(project.path(), store, &["--gate", "ruff_check", "--verify"]);
    same(&verified, &truth);
    assert!(
        verified["gates"][0]["warnings"]
            .to_string()
            .contains("its entry is replaced"),
        "{verified}"
    );
    let after = project_run(project.path(), store, &["--gate", "ruff_check"]);
    same(&after, &truth);
}

#[test]
fn cache_commands_say_where_and_what_and_prune() {
    let project = Project::fixture("warm");
    let store = tempfile::tempdir().unwrap();
    let store = store.path();
    project_run(project.path(), store, &["--gate", "ruff_check"]);
    project_run(project.path(), store, &["--gate", "ruff_check"]);
    let dir = qg(project.path(), store, &["cache", "dir"]);
    assert_eq!(dir.stdout.trim(), store.display().to_string());
    let stats = qg(
        project.path(),
        store,
        &["cache", "stats", "--format", "json"],
    );
    let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
    let files = entry_files(store).len() as u64;
    assert_eq!(stats["entries"], files);
    assert_eq!(stats["gates"]["ruff_check"]["hits"], files, "{stats}");
    assert_eq!(stats["gates"]["ruff_check"]["misses"], files, "{stats}");
    let human = qg(project.path(), store, &["cache", "stats"]).stdout;
    assert!(
        human.contains("ruff_check: ") && human.contains("(50% hits)"),
        "{human}"
    );

    let bad = qg(
        project.path(),
        store,
        &["cache", "prune", "--max-size", "lots"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("not a size"), "{}", bad.stderr);
    let neither = qg(project.path(), store, &["cache", "prune"]);
    assert_eq!(neither.code, 2);
    let pruned = qg(
        project.path(),
        store,
        &["cache", "prune", "--max-size", "0"],
    );
    assert_eq!(pruned.code, 0, "{}", pruned.stderr);
    assert!(
        pruned
            .stdout
            .starts_with(&format!("removed {files} entries")),
        "{}",
        pruned.stdout
    );
    assert!(entry_files(store).is_empty());
}

#[test]
fn two_runs_at_once_on_one_store_both_get_the_tools_verdict() {
    let clones = Clones::new();
    let store = clones.store.path();
    let truth = project_run(clones.first.path(), store, &["--no-cache"]);
    let second = clones.second();
    let (a, b) = std::thread::scope(|threads| {
        let a = threads.spawn(|| project_run(clones.first.path(), store, &[]));
        let b = threads.spawn(|| project_run(&second, store, &[]));
        (a.join().unwrap(), b.join().unwrap())
    });
    same(&a, &truth);
    same(&b, &truth);
    let after = project_run(&second, store, &[]);
    same(&after, &truth);
    for (gate, _, _, misses, _) in shares(&after) {
        assert_eq!(misses, 0, "{gate}: {after}");
    }
}

fn entry_files(store: &Path) -> Vec<PathBuf> {
    files_in(store, "results-v1")
}

/// The files in the fan-out directories of `kind` in a store.
fn files_in(store: &Path, kind: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for fan in std::fs::read_dir(store.join(kind))
        .into_iter()
        .flatten()
        .flatten()
    {
        for entry in std::fs::read_dir(fan.path()).unwrap().flatten() {
            found.push(entry.path());
        }
    }
    found.sort();
    found
}

#[test]
fn the_step_summary_says_what_came_from_the_cache() {
    let project = Project::fixture("warm");
    let store = tempfile::tempdir().unwrap();
    let store = store.path();
    project_run(project.path(), store, &["--gate", "ruff_check"]);
    let summary = project.path().join("summary.md");
    let run = Command::new(env!("CARGO_BIN_EXE_qg"))
        .args([
            "run",
            "--scope",
            "project",
            "--gate",
            "ruff_check",
            "--format",
            "github",
        ])
        .current_dir(project.path())
        .env("VIRTUAL_ENV", tools_venv())
        .env("QG_CACHE_DIR", store)
        .env("QG_NO_CACHE", "0")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("| 6 (6 from the cache) |"), "{text}");
}

#[test]
fn a_background_check_of_sampled_hits_finds_an_entry_that_lies_and_the_next_run_says_so() {
    let project = Project::fixture("warm");
    let store = tempfile::tempdir().unwrap();
    let store = store.path();
    let truth = project_run(project.path(), store, &["--gate", "ruff_check"]);
    // Every entry lies: an invented finding under its own key.
    for path in entry_files(store) {
        let mut entry: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let file = entry["file"].as_str().unwrap().to_string();
        entry["violations"] = serde_json::json!([{
            "file": file, "line": 1, "column": 1, "code": "F999",
            "message": "invented", "severity": "error"
        }]);
        std::fs::write(&path, entry.to_string()).unwrap();
    }
    // A run believes them, and leaves a sample for the background check.
    let sampled = Run::from(
        Command::new(env!("CARGO_BIN_EXE_qg"))
            .args("run --scope project --format json --no-state --gate ruff_check".split(' '))
            .current_dir(project.path())
            .env("VIRTUAL_ENV", tools_venv())
            .env("QG_CACHE_DIR", store)
            .env("QG_NO_CACHE", "0")
            .env("QG_CACHE_SAMPLE", "1")
            .output()
            .unwrap(),
    );
    assert!(sampled.stdout.contains("invented"), "{}", sampled.stdout);
    let samples = store.join("samples");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_dir(&samples).map_or(0, |d| d.count()) > 0 {
        assert!(
            std::time::Instant::now() < until,
            "the background check did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Its check has run: the next run says which entries were wrong, and
    // its tool checks those files again.
    let next = project_run(project.path(), store, &["--gate", "ruff_check"]);
    let warnings = next["warnings"].to_string();
    assert!(
        warnings.contains("differed from the tool's own check of it in the background"),
        "{next}"
    );
    let caught = warnings.matches("differed from").count() as u64;
    assert!((1..=3).contains(&caught), "at most 3 sampled: {warnings}");
    assert_eq!(next["gates"][0]["cache"]["misses"], caught, "{next}");
    // Told once.
    let after = project_run(project.path(), store, &["--gate", "ruff_check"]);
    assert!(
        !after["warnings"].to_string().contains("differed from"),
        "{after}"
    );
    let _ = truth;
}

/// A tool's version, asked in one clone, is known to every other clone on
/// the machine (by the binary's path, size and mtime): a fresh clone does
/// not start the tool to ask again. With the cache off, each asks.
#[test]
fn a_tools_version_asked_in_one_clone_is_not_asked_again_in_another() {
    let tools = tempfile::tempdir().unwrap();
    let asked = tools.path().join("asked.log");
    let script = tools.path().join("counted");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo asked >> '{}'; echo 'counted 1.0'; exit 0; fi\necho '[]'\n",
            asked.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = r#"version: "1"
active_gates: [counted]
gates:
  counted:
    execution: {command: [counted], timeout_seconds: 30}
    version_args: ["--version"]
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
"#;
    let store = tempfile::tempdir().unwrap();
    let times_asked = || {
        std::fs::read_to_string(&asked)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let run_in_a_new_clone = |cache_off: bool| {
        let project = Project::empty();
        project.write(".st3/quality.yaml", config);
        project.write("a.py", "x = 1\n");
        project.git_init();
        let run = Command::new(env!("CARGO_BIN_EXE_qg"))
            .args(["run", "--scope", "project", "--format", "json"])
            .current_dir(project.path())
            .env("PATH", format!("{}:/usr/bin:/bin", tools.path().display()))
            .env("QG_CACHE_DIR", store.path())
            .env("QG_NO_CACHE", if cache_off { "1" } else { "0" })
            .env("CI", "true")
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(
            report["gates"][0]["tool_version"], "counted 1.0",
            "{report}"
        );
    };
    run_in_a_new_clone(false);
    assert_eq!(times_asked(), 1);
    run_in_a_new_clone(false);
    assert_eq!(times_asked(), 1, "a second clone asked the tool again");
    run_in_a_new_clone(true);
    assert_eq!(times_asked(), 2, "with the cache off, a clone asks");
}

/// The background check of a sampled hit runs on the tree as it is when
/// the check gets to it. A tree changed since the sampling run (here while
/// the check's tool runs: a file the tool's verdict depends on is edited
/// back) proves nothing about the entry: it stays, and nothing is said.
#[test]
fn a_background_check_of_a_tree_changed_since_the_run_distrusts_nothing() {
    let project = Project::empty();
    project.fake_tool(
        "held",
        "if [ \"$1\" = --version ]; then echo 'held 1.0'; exit 0; fi\n\
         if [ -e hold ]; then touch waiting; fi\n\
         while [ -e hold ]; do sleep 0.05; done\n\
         if grep -q BREAK b.py; then echo '[{\"file\": \"a.py\", \"line\": 1, \"code\": \"X1\", \"message\": \"b is broken\"}]'; exit 1; fi\n\
         echo '[]'",
    );
    project.write(
        ".st3/quality.yaml",
        r#"version: "1"
active_gates: [held]
gates:
  held:
    execution: {command: [held], timeout_seconds: 60}
    success: {exit_codes_ok: [0], exit_codes_violations: [1]}
    version_args: ["--version"]
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
"#,
    );
    project.write(".gitignore", "bin/\nhold\nwaiting\n");
    project.write("a.py", "x = 1\n");
    project.write("b.py", "# BREAK\n");
    project.git_init();
    let store = tempfile::tempdir().unwrap();
    let run = |sample: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_qg"));
        cmd.args("run --scope project --format json --no-state".split(' '))
            .current_dir(project.path())
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", project.path().join("bin").display()),
            )
            .env("QG_CACHE_DIR", store.path())
            .env("QG_NO_CACHE", "0")
            .env("QG_CACHE_SAMPLE", sample)
            .env("CI", "true");
        Run::from(cmd.output().unwrap()).json()
    };
    let filled = run("0");
    assert!(filled.to_string().contains("b is broken"), "{filled}");

    // The next run's hits are sampled; the check's tool waits until the
    // tree has changed.
    project.write("hold", "");
    let sampled = run("1");
    assert_eq!(sampled["gates"][0]["cache"]["hits"], 2, "{sampled}");
    let waiting = project.path().join("waiting");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !waiting.exists() {
        assert!(
            std::time::Instant::now() < until,
            "the background check did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    project.write("b.py", "# mended\n");
    std::fs::remove_file(project.path().join("hold")).unwrap();
    let samples = store.path().join("samples");
    while std::fs::read_dir(&samples).map_or(0, |d| d.count()) > 0 {
        assert!(
            std::time::Instant::now() < until,
            "the background check did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !store.path().join("distrusted.jsonl").exists(),
        "a check of another tree distrusted an entry"
    );
    let next = run("0");
    assert!(!next.to_string().contains("differed from"), "{next}");
}
