//! The baseline state machine, scenario by scenario, in temp git repos. A
//! fake checker flags every file containing `BAD`, so each scenario controls
//! exactly which files fail.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Run;
use serde_json::Value;

/// A repo on `main` whose one gate runs the fake checker.
struct Repo {
    dir: tempfile::TempDir,
    tools: tempfile::TempDir,
}

const CHECKER: &str = r#"#!/bin/sh
out=""
for f in "$@"; do
  printf '%s\n' "$f" >> "$CHECK_LOG"
  if grep -q BAD "$f"; then
    out="$out${out:+,}{\"file\":\"$f\",\"line\":1,\"code\":\"BAD\",\"message\":\"bad\"}"
  fi
done
echo "[$out]"
[ -z "$out" ]
"#;

impl Repo {
    fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::Builder::new()
                .prefix("qg-auto-")
                .tempdir()
                .unwrap(),
            tools: tempfile::tempdir().unwrap(),
        };
        let checker = repo.tools.path().join("checker");
        fs::write(&checker, CHECKER).unwrap();
        fs::set_permissions(
            &checker,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        repo.git(&["init", "-q", "-b", "main"]);
        repo.write(".st3/quality.yaml", &repo.config());
        repo.write("a.py", "a = 1\n");
        repo.write("b.py", "b = 1\n");
        repo.commit("initial");
        repo
    }

    fn config(&self) -> String {
        format!(
            r#"version: "1"
active_gates: [check]
parent_branch: main
artifact_logging: {{enabled: false}}
gates:
  check:
    execution: {{command: ["{}"]}}
    parsing:
      strategy: json_violations
      field_map: {{file: file, line: line, code: code, message: message}}
    capabilities: {{file_types: [".py"]}}
"#,
            self.tools.path().join("checker").display()
        )
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, relative: &str, contents: &str) {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    fn remove(&self, relative: &str) {
        fs::remove_file(self.path().join(relative)).unwrap();
    }

    fn git(&self, args: &[&str]) -> String {
        common::git(self.path(), args)
    }

    fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.head()
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    fn log_path(&self) -> PathBuf {
        self.tools.path().join("checked.log")
    }

    fn qg(&self, args: &[&str]) -> Run {
        let _ = fs::remove_file(self.log_path());
        Run::from(
            Command::new(env!("CARGO_BIN_EXE_qg"))
                .args(args)
                .current_dir(self.path())
                .env("CHECK_LOG", self.log_path())
                .env_remove("VIRTUAL_ENV")
                .env("CI", "true")
                .output()
                .unwrap(),
        )
    }

    /// `qg run --format json` (auto scope).
    fn run(&self) -> Value {
        let run = self.qg(&["run", "--format", "json"]);
        assert!(
            run.code == 0 || run.code == 1,
            "exit {}: {}{}",
            run.code,
            run.stdout,
            run.stderr
        );
        run.json()
    }

    /// Files the checker was given in the last run.
    fn checked(&self) -> Vec<String> {
        let mut files: Vec<String> = fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        files.sort();
        files
    }

    fn files(&self) -> Value {
        let run = self.qg(&["files", "--format", "json"]);
        run.assert_code(0);
        run.json()
    }

    fn state(&self, branch: &str) -> Value {
        let text = fs::read_to_string(self.path().join(".st3/state.json")).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        json["quality_gates"]["branches"][branch].clone()
    }
}

use common::scope_paths as paths;

fn reasons(files: &Value, path: &str) -> Value {
    files["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {files}"))["reasons"]
        .clone()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// A repo whose last run was green at HEAD.
fn green_repo() -> Repo {
    let repo = Repo::new();
    let json = repo.run();
    assert_eq!(json["overall_pass"], true, "{json}");
    repo
}

#[test]
fn first_run_without_baseline_checks_the_project_and_records_head() {
    let repo = Repo::new();
    repo.write("b.py", "BAD\n");
    let head = repo.commit("bad b");
    let json = repo.run();
    assert_eq!(json["scope"]["mode"], "project");
    assert_eq!(
        json["scope"]["fallback_reason"],
        "no green run yet on branch main"
    );
    assert!(json["summary_line"]
        .as_str()
        .unwrap()
        .contains("(auto → project: no green run yet on branch main)"));
    assert_eq!(repo.checked(), ["a.py", "b.py"]);
    // A red full run still records HEAD, so the next run is not a full one.
    let state = repo.state("main");
    assert_eq!(state["baseline_sha"], head.as_str());
    assert_eq!(strings(&state["failed_files"]), ["b.py"]);
    repo.run();
    assert_eq!(repo.checked(), ["b.py"]);
}

#[test]
fn green_run_moves_the_baseline() {
    let repo = green_repo();
    assert_eq!(repo.state("main")["baseline_sha"], repo.head().as_str());
    repo.write("c.py", "c = 1\n");
    let head = repo.commit("add c");
    let files = repo.files();
    assert_eq!(paths(&files), ["c.py"]);
    assert_eq!(reasons(&files, "c.py"), serde_json::json!(["changed"]));
    assert_eq!(repo.run()["overall_pass"], true);
    assert_eq!(repo.state("main")["baseline_sha"], head.as_str());
    let json = repo.run();
    assert!(
        json["summary_line"]
            .as_str()
            .unwrap()
            .starts_with("⏭️ nothing to check"),
        "{json}"
    );
    assert!(repo.checked().is_empty());
}

#[test]
fn red_run_keeps_the_baseline_and_records_failed_files() {
    let repo = green_repo();
    let baseline = repo.head();
    repo.write("a.py", "BAD\n");
    repo.commit("break a");
    assert_eq!(repo.run()["overall_pass"], false);
    let state = repo.state("main");
    assert_eq!(state["baseline_sha"], baseline.as_str());
    assert_eq!(strings(&state["failed_files"]), ["a.py"]);
    let files = repo.files();
    assert_eq!(
        reasons(&files, "a.py"),
        serde_json::json!(["changed", "failed_last_run"])
    );
}

#[test]
fn fixing_one_of_two_failed_files_keeps_only_the_other() {
    let repo = green_repo();
    repo.write("a.py", "BAD\n");
    repo.write("b.py", "BAD\n");
    repo.run();
    assert_eq!(
        strings(&repo.state("main")["failed_files"]),
        ["a.py", "b.py"]
    );
    repo.write("a.py", "a = 2\n");
    assert_eq!(repo.run()["overall_pass"], false);
    assert_eq!(repo.checked(), ["a.py", "b.py"]);
    assert_eq!(strings(&repo.state("main")["failed_files"]), ["b.py"]);
    repo.write("b.py", "b = 2\n");
    assert_eq!(repo.run()["overall_pass"], true);
    let state = repo.state("main");
    assert_eq!(strings(&state["failed_files"]), Vec::<String>::new());
    assert_eq!(state["baseline_sha"], repo.head().as_str());
}

#[test]
fn committed_staged_and_unstaged_edits_are_all_in_scope() {
    let repo = green_repo();
    repo.write("committed.py", "x = 1\n");
    repo.commit("add committed");
    repo.write("staged.py", "x = 1\n");
    repo.git(&["add", "staged.py"]);
    repo.write("a.py", "a = 3\n");
    let files = repo.files();
    assert_eq!(paths(&files), ["a.py", "committed.py", "staged.py"]);
    for path in ["a.py", "committed.py", "staged.py"] {
        assert_eq!(
            reasons(&files, path),
            serde_json::json!(["changed"]),
            "{path}"
        );
    }
}

#[test]
fn untracked_files_are_in_scope_and_ignored_ones_are_not() {
    let repo = green_repo();
    repo.write(".gitignore", "ignored.py\n");
    repo.commit("ignore");
    repo.run();
    repo.write("ignored.py", "BAD\n");
    // New, then passed and edited since: untracked both times, never "changed".
    for content in ["u = 1\n", "u = 2\n"] {
        repo.write("new/u.py", content);
        let files = repo.files();
        assert_eq!(paths(&files), ["new/u.py"]);
        assert_eq!(
            reasons(&files, "new/u.py"),
            serde_json::json!(["untracked"])
        );
        assert_eq!(repo.run()["overall_pass"], true);
    }
}

/// The working tree is stat-ed in two halves split by top-level entry:
/// changes under every entry, tracked or new, must come back from both.
#[test]
fn changes_under_every_top_level_entry_are_found() {
    let repo = Repo::new();
    for (dir, count) in [("big", 12), ("mid", 6), ("[glob]*", 3), ("small", 1)] {
        for i in 0..count {
            repo.write(&format!("{dir}/m{i}.py"), "x = 1\n");
        }
    }
    repo.commit("layout");
    assert_eq!(repo.run()["overall_pass"], true);
    let expected = [
        "[glob]*/m2.py",
        "a.py",
        "big/m11.py",
        "fresh/new.py",
        "mid/m0.py",
        "small/m0.py",
        "top.py",
    ];
    for (i, path) in expected.iter().enumerate() {
        repo.write(path, &format!("changed = {i}\n"));
    }
    repo.git(&["add", "mid/m0.py"]);
    assert_eq!(paths(&repo.files()), expected);
}

#[test]
fn a_rename_counts_as_its_new_path() {
    let repo = green_repo();
    repo.git(&["mv", "a.py", "renamed.py"]);
    assert_eq!(paths(&repo.files()), ["renamed.py"]);
    repo.commit("rename");
    assert_eq!(paths(&repo.files()), ["renamed.py"]);
}

#[test]
fn a_deleted_failed_file_leaves_scope_and_state() {
    let repo = green_repo();
    repo.write("b.py", "BAD\n");
    repo.run();
    assert_eq!(strings(&repo.state("main")["failed_files"]), ["b.py"]);
    repo.remove("b.py");
    assert!(paths(&repo.files()).is_empty());
    assert_eq!(repo.run()["overall_pass"], true);
    assert_eq!(
        strings(&repo.state("main")["failed_files"]),
        Vec::<String>::new()
    );
}

#[test]
fn edit_pass_edit_back_uses_clean_blobs() {
    let repo = green_repo();
    repo.write("a.py", "a = 'v1'\n");
    assert_eq!(repo.run()["overall_pass"], true);
    assert_eq!(repo.checked(), ["a.py"]);
    assert!(repo.state("main")["clean_blobs"]["a.py"].is_string());
    // Unchanged since it passed: not re-checked.
    repo.run();
    assert!(repo.checked().is_empty());
    // Broken, then restored to the content that passed: still re-checked,
    // because it failed in between.
    repo.write("a.py", "BAD\n");
    assert_eq!(repo.run()["overall_pass"], false);
    assert!(repo.state("main")["clean_blobs"].get("a.py").is_none());
    repo.write("a.py", "a = 'v1'\n");
    assert_eq!(repo.run()["overall_pass"], true);
    assert_eq!(repo.checked(), ["a.py"]);
    repo.run();
    assert!(repo.checked().is_empty());
}

/// A file whose only difference from HEAD is its executable bit passed
/// once: like any clean content it is not checked again until it changes,
/// and committing the mode change leaves nothing to watch.
#[test]
fn a_mode_change_that_passed_is_not_checked_again() {
    let repo = green_repo();
    let chmod = |mode: u32| {
        let path = repo.path().join("a.py");
        fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    };
    chmod(0o755);
    assert_eq!(repo.run()["overall_pass"], true);
    assert_eq!(repo.checked(), ["a.py"]);
    repo.run();
    assert_eq!(repo.checked(), [""; 0], "re-checked");
    // Another commit moves HEAD while the mode change stays uncommitted.
    repo.write("b.py", "b = 2\n");
    repo.git(&["commit", "-q", "-m", "edit b", "--", "b.py"]);
    repo.run();
    assert_eq!(repo.checked(), ["b.py"]);
    repo.run();
    assert_eq!(repo.checked(), [""; 0], "re-checked");
    // Committed: HEAD holds what passed, nothing is left to remember.
    repo.commit("make a executable");
    repo.run();
    assert_eq!(repo.checked(), [""; 0], "re-checked");
    assert_eq!(repo.state("main")["clean_blobs"], serde_json::json!({}));
    // Back to HEAD's old mode: a change again.
    chmod(0o644);
    repo.run();
    assert_eq!(repo.checked(), ["a.py"]);
    // New content that passed as an executable has not passed as a plain
    // file: the mode alone changing back is checked.
    repo.write("a.py", "a = 'v2'\n");
    chmod(0o755);
    repo.run();
    assert_eq!(repo.checked(), ["a.py"]);
    chmod(0o644);
    repo.run();
    assert_eq!(repo.checked(), ["a.py"]);
    repo.run();
    assert_eq!(repo.checked(), [""; 0], "re-checked");
}

#[test]
fn switching_branches_keeps_both_baselines() {
    let repo = green_repo();
    let main_baseline = repo.head();
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("f.py", "f = 1\n");
    repo.commit("feature work");
    // No baseline on feature yet: HEAD is ahead of main, so branch scope.
    let json = repo.run();
    assert_eq!(json["scope"]["mode"], "branch");
    assert_eq!(
        json["scope"]["fallback_reason"],
        "no green run yet on branch feature"
    );
    assert_eq!(repo.checked(), ["f.py"]);
    repo.git(&["checkout", "-q", "main"]);
    assert_eq!(repo.state("main")["baseline_sha"], main_baseline.as_str());
    assert!(repo.state("feature")["baseline_sha"].is_string());
    let json = repo.run();
    assert!(
        json["summary_line"].as_str().unwrap().starts_with("⏭️"),
        "{json}"
    );
}

#[test]
fn amended_baseline_still_diffs_by_content_and_a_missing_one_falls_back() {
    let repo = green_repo();
    repo.write("a.py", "a = 'amended'\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "--amend", "-m", "amended"]);
    // The old commit is still in the object store: its tree is the truth.
    assert_eq!(paths(&repo.files()), ["a.py"]);
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    repo.git(&["gc", "-q", "--prune=now"]);
    let files = repo.files();
    assert_eq!(files["mode"], "project");
    assert!(
        files["fallback_reason"]
            .as_str()
            .unwrap()
            .contains("no longer exists"),
        "{files}"
    );
}

#[test]
fn editing_the_config_invalidates_the_baseline() {
    let repo = green_repo();
    let config = repo
        .config()
        .replace("version: \"1\"", "version: \"1\"\n# edited");
    repo.write(".st3/quality.yaml", &config);
    let files = repo.files();
    assert_eq!(files["mode"], "project");
    assert!(files["fallback_reason"]
        .as_str()
        .unwrap()
        .starts_with("config changed since the last green run"));
}

#[test]
fn a_changed_tool_makes_its_gate_check_the_whole_project() {
    let repo = green_repo();
    let checker = repo.tools.path().join("checker");
    fs::write(&checker, format!("{CHECKER}\n# upgraded\n")).unwrap();
    let files = repo.files();
    assert_eq!(files["mode"], "auto", "{files}");
    assert!(
        files["whole_project"]["check"]
            .as_str()
            .unwrap()
            .starts_with("its tool changed since the last green run ("),
        "{files}"
    );
}

#[test]
fn detached_head_has_its_own_state_key() {
    let repo = green_repo();
    repo.git(&["checkout", "-q", "--detach"]);
    repo.write("d.py", "d = 1\n");
    let json = repo.run();
    assert_eq!(
        json["scope"]["fallback_reason"],
        "no green run yet on branch (detached HEAD)"
    );
    assert!(repo.state("(detached HEAD)")["baseline_sha"].is_string());
    assert!(repo.state("main")["baseline_sha"].is_string());
}

#[test]
fn paths_with_spaces_and_unicode() {
    let repo = green_repo();
    let name = "dir with space/ünïcödé 名前.py";
    repo.write(name, "BAD\n");
    let json = repo.run();
    assert_eq!(json["gates"][0]["violations"][0]["file"], name);
    assert_eq!(strings(&repo.state("main")["failed_files"]), [name]);
    assert_eq!(
        reasons(&repo.files(), name),
        serde_json::json!(["untracked", "failed_last_run"])
    );
}

/// Like real tools: prints a name that is not UTF-8 with U+FFFD.
const LOSSY_CHECKER: &str = r#"#!/usr/bin/env python3
import json, os, sys
found = []
with open(os.environ["CHECK_LOG"], "ab") as log:
    for name in map(os.fsencode, sys.argv[1:]):
        log.write(name + b"\n")
        with open(name, "rb") as f:
            if b"BAD" in f.read():
                found.append({"file": name.decode("utf-8", "replace"),
                              "line": 1, "code": "BAD", "message": "bad"})
print(json.dumps(found))
sys.exit(1 if found else 0)
"#;

#[test]
fn a_non_utf8_name_fails_stays_failed_and_passes_like_any_other() {
    use std::os::unix::ffi::OsStrExt;
    let repo = Repo::new();
    fs::write(repo.tools.path().join("checker"), LOSSY_CHECKER).unwrap();
    assert_eq!(repo.run()["overall_pass"], true);
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    let file = repo.path().join(name);
    let checked = || fs::read(repo.log_path()).unwrap_or_default();
    fs::write(&file, "BAD\n").unwrap();
    let json = repo.run();
    assert_eq!(
        json["gates"][0]["violations"][0]["file"], r#""caf\xE9.py""#,
        "{json}"
    );
    assert_eq!(checked(), b"caf\xe9.py\n");
    // Nothing changed, but it failed last time: checked again, same bytes.
    assert_eq!(repo.run()["overall_pass"], false);
    assert_eq!(checked(), b"caf\xe9.py\n");
    fs::write(&file, "fixed\n").unwrap();
    assert_eq!(repo.run()["overall_pass"], true);
    assert!(repo.state("main")["failed_files"]
        .as_array()
        .unwrap()
        .is_empty());
    // Green and unchanged since: nothing left to check.
    repo.run();
    assert_eq!(checked(), b"");
}

#[test]
fn absolute_tool_paths_are_matched_to_scope_files() {
    let repo = green_repo();
    let checker = repo.tools.path().join("checker");
    // Like ruff and pyright: report absolute paths.
    let absolute = CHECKER.replace("\"file\\\":\\\"$f\\\"", "\"file\\\":\\\"$PWD/$f\\\"");
    assert_ne!(
        absolute, CHECKER,
        "the checker must now print absolute paths"
    );
    fs::write(&checker, absolute).unwrap();
    repo.write("sub/x.py", "BAD\n");
    let json = repo.run();
    assert_eq!(
        json["gates"][0]["violations"][0]["file"], "sub/x.py",
        "{json}"
    );
    assert_eq!(strings(&repo.state("main")["failed_files"]), ["sub/x.py"]);
}

#[test]
fn an_errored_run_names_the_fallback_too() {
    let repo = Repo::new();
    let checker = repo.tools.path().join("checker");
    fs::write(&checker, "#!/bin/sh\nexit 3\n").unwrap();
    let run = repo.qg(&["run"]);
    run.assert_code(2);
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.ends_with("(auto → project: no green run yet on branch main)"),
        "{first}"
    );
}

#[test]
fn foreign_keys_in_state_are_preserved() {
    let repo = Repo::new();
    let foreign = r#"{"editor": {"theme": "dark", "ratio": 1.50}, "list": [1, "two", null]}"#;
    repo.write(".st3/state.json", foreign);
    repo.run();
    let text = fs::read_to_string(repo.path().join(".st3/state.json")).unwrap();
    assert!(
        text.contains(r#""editor": {"theme": "dark", "ratio": 1.50}"#),
        "{text}"
    );
    assert!(text.contains(r#""list": [1, "two", null]"#), "{text}");
    assert!(repo.state("main")["baseline_sha"].is_string());
}

#[test]
fn a_corrupt_state_file_is_moved_aside_and_never_means_nothing_to_check() {
    let repo = green_repo();
    repo.write(
        ".st3/state.json",
        "{\"quality_gates\": {\"version\": 1, \"branches\": ",
    );
    let run = repo.qg(&["run", "--format", "json"]);
    run.assert_code(0);
    // The warning reaches the report (every format), not only a terminal.
    let warning = run.json()["warnings"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        warning.contains("unusable") && warning.contains("state.json.corrupt-"),
        "{}",
        run.stdout
    );
    assert_eq!(run.json()["scope"]["mode"], "project");
    assert_eq!(repo.checked(), ["a.py", "b.py"]);
    let aside = fs::read_dir(repo.path().join(".st3"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("state.json.corrupt-")
        })
        .count();
    assert_eq!(aside, 1);
}

#[test]
fn twenty_concurrent_runs_leave_valid_state() {
    let repo = Repo::new();
    repo.write(".st3/state.json", r#"{"keep": "me"}"#);
    repo.write("b.py", "BAD\n");
    let children: Vec<_> = (0..20)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_qg"))
                .args(["run", "--format", "json"])
                .current_dir(repo.path())
                .env("CHECK_LOG", repo.tools.path().join(format!("log{i}")))
                .env("CI", "true")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = fs::read_to_string(repo.path().join(".st3/state.json")).unwrap();
    let json: Value = serde_json::from_str(&text).expect("state.json is valid JSON");
    assert_eq!(json["keep"], "me");
    let state = &json["quality_gates"]["branches"]["main"];
    assert_eq!(strings(&state["failed_files"]), ["b.py"]);
    assert_eq!(state["baseline_sha"], repo.head().as_str());
    let leftovers: Vec<_> = fs::read_dir(repo.path().join(".st3"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn no_state_flag_neither_writes_nor_moves_anything() {
    let repo = Repo::new();
    let run = repo.qg(&["run", "--no-state", "--format", "json"]);
    run.assert_code(0);
    assert!(!repo.path().join(".st3/state.json").exists());
    let repo = green_repo();
    let before = fs::read(repo.path().join(".st3/state.json")).unwrap();
    repo.write("c.py", "c = 1\n");
    repo.commit("c");
    repo.qg(&["run", "--no-state"]).assert_code(0);
    assert_eq!(
        fs::read(repo.path().join(".st3/state.json")).unwrap(),
        before
    );
}

#[test]
fn an_errored_gate_never_advances_the_baseline() {
    let repo = green_repo();
    let baseline = repo.head();
    repo.write("c.py", "c = 1\n");
    repo.commit("c");
    let checker = repo.tools.path().join("checker");
    fs::write(&checker, "#!/bin/sh\necho crashed >&2\nexit 3\n").unwrap();
    let run = repo.qg(&["run", "--format", "json"]);
    run.assert_code(2);
    assert_eq!(repo.state("main")["baseline_sha"], baseline.as_str());
}

#[test]
fn a_gate_subset_does_not_move_state() {
    let repo = green_repo();
    let before = fs::read(repo.path().join(".st3/state.json")).unwrap();
    repo.write("c.py", "c = 1\n");
    repo.qg(&["run", "--gate", "check"]).assert_code(0);
    // --gate check is every active gate here, so state does move.
    assert_ne!(
        fs::read(repo.path().join(".st3/state.json")).unwrap(),
        before
    );
}

#[test]
fn unborn_head_falls_back_to_project() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    drop(repo);
    fs::write(dir.path().join("a.py"), "a = 1\n").unwrap();
    let run = common::qg_in(dir.path(), &["files", "--format", "json"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["mode"], "project");
    assert_eq!(json["fallback_reason"], "no commits yet (unborn HEAD)");
    assert_eq!(paths(&json), ["a.py"]);
}

#[test]
fn branch_scope_uses_the_merge_base_and_untracked_files() {
    let repo = green_repo();
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write("t.py", "t = 1\n");
    repo.commit("topic");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("m.py", "m = 1\n");
    repo.commit("main moves on");
    repo.git(&["checkout", "-q", "topic"]);
    repo.write("u.py", "u = 1\n");
    let run = repo.qg(&["files", "--scope", "branch", "--format", "json"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["mode"], "branch");
    // m.py changed on main after the merge-base: not this branch's change.
    assert_eq!(paths(&json), ["t.py", "u.py"]);
    let run = repo.qg(&["files", "--scope", "branch", "--parent", "nope"]);
    run.assert_fails_with(2, "--parent nope: no such branch");
}

#[test]
fn branch_scope_without_a_merge_base_falls_back_to_project() {
    // An orphan branch shares no history with main, as a shallow clone
    // without the merge-base would not.
    let repo = green_repo();
    repo.git(&["checkout", "-q", "--orphan", "island"]);
    repo.write("i.py", "i = 1\n");
    repo.commit("island");
    let run = repo.qg(&["files", "--scope", "branch", "--format", "json"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["mode"], "project");
    assert!(
        json["fallback_reason"]
            .as_str()
            .unwrap()
            .contains("no merge-base"),
        "{json}"
    );
}

#[test]
fn state_show_and_reset() {
    let repo = green_repo();
    let run = repo.qg(&["state", "show"]);
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["branch"], "main");
    assert_eq!(json["state"]["baseline_sha"], repo.head().as_str());
    repo.qg(&["state", "reset"]).assert_code(0);
    assert_eq!(repo.qg(&["state", "show"]).json()["state"], Value::Null);
    assert_eq!(
        repo.files()["fallback_reason"],
        "no green run yet on branch main"
    );
}

#[test]
fn dubious_ownership_is_a_clear_error() {
    // Needs root to hand the repo to another user; CI runs as root.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: not root");
        return;
    }
    let repo = Repo::new();
    let status = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(repo.path())
        .status()
        .unwrap();
    assert!(status.success());
    let run = repo.qg(&["files"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("dubious ownership") && run.stderr.contains("safe.directory"),
        "{}",
        run.stderr
    );
}

/// The baseline vouches only for content that was checked: a green run over
/// an uncommitted fix does not vouch for HEAD's broken version of the file.
#[test]
fn a_green_run_over_an_uncommitted_fix_does_not_vouch_for_head() {
    for restore in [&["stash"][..], &["checkout", "--", "b.py"][..]] {
        let repo = green_repo();
        repo.write("b.py", "BAD\n");
        repo.commit("commit a broken b");
        repo.write("b.py", "b = 'fixed in the working tree only'\n");
        assert_eq!(repo.run()["overall_pass"], true);
        assert_eq!(repo.checked(), ["b.py"]);
        repo.git(restore);
        let files = repo.files();
        assert_eq!(paths(&files), ["b.py"], "after git {restore:?}");
        assert_eq!(reasons(&files, "b.py"), serde_json::json!(["changed"]));
        let json = repo.run();
        assert_eq!(json["overall_pass"], false, "after git {restore:?}: {json}");
        assert_eq!(repo.checked(), ["b.py"]);
        // Fixed and committed: the checked content is HEAD's, and nothing
        // is left to watch.
        repo.write("b.py", "b = 'fixed'\n");
        repo.commit("fix b");
        assert_eq!(repo.run()["overall_pass"], true);
        assert_eq!(repo.state("main")["clean_blobs"], serde_json::json!({}));
        repo.run();
        assert!(repo.checked().is_empty());
    }
}

/// Narrowing `include_globs` takes the files it drops out of every scope,
/// failed_files included, and out of the state after the next run.
#[test]
fn failed_files_outside_a_narrowed_project_are_neither_checked_nor_kept() {
    let repo = green_repo();
    repo.write("tests/t.py", "BAD\n");
    repo.write("src/s.py", "s = 1\n");
    repo.commit("add tests and src");
    assert_eq!(repo.run()["overall_pass"], false);
    assert_eq!(strings(&repo.state("main")["failed_files"]), ["tests/t.py"]);
    let narrowed = repo.config().replace(
        "parent_branch: main",
        "parent_branch: main\nproject_scope: {include_globs: [\"src/**/*.py\"]}",
    );
    repo.write(".st3/quality.yaml", &narrowed);
    repo.commit("narrow the project to src/");
    let files = repo.files();
    assert_eq!(files["mode"], "project", "{files}");
    assert_eq!(paths(&files), ["src/s.py"]);
    let json = repo.run();
    assert_eq!(json["overall_pass"], true, "{json}");
    assert_eq!(repo.checked(), ["src/s.py"]);
    assert_eq!(
        strings(&repo.state("main")["failed_files"]),
        Vec::<String>::new()
    );
    // A change outside the project is not checked by auto either.
    repo.write("tests/t2.py", "BAD\n");
    repo.write("src/s.py", "s = 2\n");
    assert_eq!(paths(&repo.files()), ["src/s.py"]);
}

/// qg's own files never show up in `git status`, with or without a
/// committed config, and a stale `.st3/.gitignore` of qg's is brought up to date.
#[test]
fn qg_leaves_git_status_clean() {
    let repo = green_repo();
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    repo.write(
        ".st3/.gitignore",
        "# Created by qg: local state, not source.\nstate.json\n",
    );
    repo.write("a.py", "a = 2\n");
    repo.run();
    repo.git(&["checkout", "--", "a.py"]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let bare = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new("git")
            .args(["-c", "user.name=qg", "-c", "user.email=qg@example.invalid"])
            .args(args)
            .current_dir(bare.path())
            .output()
            .unwrap()
    };
    run(&["init", "-q"]);
    fs::write(bare.path().join("a.py"), "a = 1\n").unwrap();
    run(&["add", "-A"]);
    run(&["commit", "-qm", "init"]);
    let qg = Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(["run", "--no-progress"])
        .current_dir(bare.path())
        .output()
        .unwrap();
    assert!(bare.path().join(".st3/state.json").exists(), "{qg:?}");
    let status = run(&["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}

/// A CI-style shallow, single-branch clone of a feature branch: `main` is
/// absent and origin/HEAD names the branch itself. A parent that is HEAD's
/// own branch (or its upstream) is no parent: branch scope falls back,
/// named, instead of comparing the branch with itself.
#[test]
fn branch_scope_never_takes_the_branch_itself_as_its_parent() {
    let origin = green_repo();
    origin.git(&["checkout", "-q", "-b", "feature"]);
    origin.write("f.py", "BAD\n");
    origin.commit("feature adds a broken file");
    origin.git(&["checkout", "-q", "main"]);
    let clones = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    let status = Command::new("git")
        .args([
            "clone", "-q", "--depth", "1", "--branch", "feature", &url, "clone",
        ])
        .current_dir(clones.path())
        .status()
        .unwrap();
    assert!(status.success());
    let clone = clones.path().join("clone");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&clone)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
    };
    git(&[
        "symbolic-ref",
        "refs/remotes/origin/HEAD",
        "refs/remotes/origin/feature",
    ]);
    let qg = |args: &[&str]| {
        common::Run::from(
            Command::new(env!("CARGO_BIN_EXE_qg"))
                .args(args)
                .current_dir(&clone)
                .env("CHECK_LOG", origin.log_path())
                .env("CI", "true")
                .output()
                .unwrap(),
        )
    };
    let files = qg(&["files", "--scope", "branch", "--format", "json"]).json();
    assert_eq!(files["mode"], "project", "{files}");
    assert_eq!(
        files["fallback_reason"],
        "no parent branch found (tried main, origin/HEAD → origin/feature, which is this branch's own upstream, master)"
    );
    let run = qg(&["run", "--scope", "branch", "--format", "json"]);
    run.assert_code(1);
    // On main itself, main is no parent either.
    git(&["checkout", "-q", "-b", "main"]);
    git(&[
        "symbolic-ref",
        "refs/remotes/origin/HEAD",
        "refs/remotes/origin/main",
    ]);
    let files = qg(&["files", "--scope", "branch", "--format", "json"]).json();
    assert_eq!(
        files["fallback_reason"],
        "no parent branch found (tried main, which is this branch, origin/HEAD → origin/main, master)"
    );
}

/// A run whose warm answer awaits its confirmation holds its next state
/// (`pending`): the files it found failing are not yet `failed_files`, yet
/// the next run checks them as it checks failed files — the fix after a
/// red step checks what was red (on platformdirs a fix checked 1 file
/// warm where the cold run's fix checked the 11 the red run failed).
#[test]
fn files_a_held_run_found_failing_are_checked_again() {
    let repo = Repo::new();
    assert_eq!(repo.run()["overall_pass"], true);
    let path = repo.path().join(".st3/state.json");
    let mut state: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let branch = &mut state["quality_gates"]["branches"]["main"];
    branch["pending"] = serde_json::json!({
        "run": "a-red-warm-run",
        "at": "2026-11-29T08:00:00Z",
        "gates": {"check": {"job": "j", "files": 1}},
        "facts": {
            "head_sha": repo.head(),
            "checked": ["b.py"],
            "failing": ["b.py"],
            "any_error": false,
            "full_check": false,
            "fell_back": false,
            "dirty_blobs": {},
            "config_hash": "",
            "tools": {},
            "tool_settings": {},
            "now": "2026-11-29T08:00:00Z"
        }
    });
    fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let files = repo.files();
    assert_eq!(
        reasons(&files, "b.py"),
        serde_json::json!(["failed_last_run"]),
        "{files}"
    );
}
