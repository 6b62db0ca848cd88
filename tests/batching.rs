//! Splitting a gate's files: under the OS command-line limit, over idle
//! cores, never losing a file; and `project_wide` gates.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::fs;

use common::Project;

/// A checker that logs how many files each run got, and flags files
/// containing BAD.
const CHECKER: &str = r#"echo "$#" >> calls.log
out=""
for f in "$@"; do
  if grep -q BAD "$f"; then out="$out${out:+,}{\"file\":\"$f\",\"line\":1,\"code\":\"BAD\",\"message\":\"bad\"}"; fi
done
echo "[$out]"
[ -z "$out" ]"#;

fn config(extra_execution: &str) -> String {
    format!(
        r#"version: "1"
active_gates: [check]
artifact_logging: {{enabled: false}}
gates:
  check:
    execution: {{command: ["check"]{extra_execution}}}
    parsing:
      strategy: json_violations
      field_map: {{file: file, line: line, code: code, message: message}}
    capabilities: {{file_types: [".py"]}}
"#
    )
}

fn calls(project: &Project) -> Vec<usize> {
    fs::read_to_string(project.path().join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// A checker that only counts its files (fast with 25,000 of them).
const COUNTER: &str = "echo \"$#\" >> calls.log\necho '[]'";

fn project_with_files(count: usize, name_len: usize) -> Project {
    let project = Project::empty();
    let script = if count > 1000 { COUNTER } else { CHECKER };
    project.fake_tool("check", script);
    fs::create_dir_all(project.path().join("src")).unwrap();
    let pad = "x".repeat(name_len);
    for i in 0..count {
        fs::write(project.path().join(format!("src/{i:05}_{pad}.py")), "ok\n").unwrap();
    }
    project
}

#[test]
fn files_beyond_the_os_argument_limit_are_batched_and_none_is_lost() {
    // 25,000 names of ~110 bytes: about 2.7 MB of arguments, past Linux's 2 MiB.
    let project = project_with_files(25_000, 100);
    project.write("c.yaml", &config(""));
    let run = project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", "json", "--jobs", "1",
    ]);
    run.assert_code(0);
    let batches = calls(&project);
    assert!(
        batches.len() >= 2,
        "one command line cannot hold 2.7 MB: {batches:?}"
    );
    assert_eq!(batches.iter().sum::<usize>(), 25_000);
    assert_eq!(run.gate("check")["files_checked"], 25_000);
}

#[test]
fn a_gate_that_must_see_every_file_at_once_errors_instead_of_dropping_any() {
    let project = project_with_files(25_000, 100);
    project.write("c.yaml", &config(", batchable: false"));
    let run = project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", "json",
    ]);
    run.assert_code(2);
    let gate = run.gate("check");
    assert_eq!(gate["status"], "error");
    let message = gate["error"]["message"].as_str().unwrap();
    assert!(message.contains("batchable: true"), "{message}");
    assert!(
        calls(&project).is_empty(),
        "nothing may run with part of the files"
    );
}

#[test]
fn idle_cores_get_a_share_of_a_batchable_gate_and_results_merge() {
    let project = project_with_files(200, 4);
    project.write("src/00007_xxxx.py", "BAD\n");
    project.write("src/00190_xxxx.py", "BAD\n");
    project.write("c.yaml", &config(""));
    let run = project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", "json", "--jobs", "4",
    ]);
    run.assert_code(1);
    let mut split = calls(&project);
    split.sort();
    assert_eq!(split, [50, 50, 50, 50]);
    let gate = run.gate("check");
    let files: Vec<&str> = gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/00007_xxxx.py", "src/00190_xxxx.py"]);
    assert_eq!(gate["files_checked"], 200);
    // The same gate with one job: one run.
    fs::remove_file(project.path().join("calls.log")).unwrap();
    project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--jobs", "1",
    ]);
    assert_eq!(calls(&project), [200]);
}

#[test]
fn an_error_in_one_batch_makes_the_whole_gate_an_error() {
    let project = project_with_files(200, 4);
    project.fake_tool(
        "check",
        &format!("case \"$*\" in *00150_*) echo crashed >&2; exit 3;; esac\n{CHECKER}"),
    );
    project.write("c.yaml", &config(""));
    let run = project.qg(&[
        "run", "--config", "c.yaml", "--scope", "project", "--format", "json", "--jobs", "4",
    ]);
    run.assert_code(2);
    let gate = run.gate("check");
    assert_eq!(gate["status"], "error");
    assert_eq!(gate["error"]["stderr_tail"], "crashed");
}

#[test]
fn project_wide_gate_checks_everything_but_reports_only_the_scope() {
    let project = Project::empty();
    project.fake_tool("check", CHECKER);
    project.write("a.py", "fine\n");
    project.write("b.py", "BAD\n");
    project.write("c.yaml", &config(", project_wide: true"));
    project.git_init();
    let run = project.qg(&["run", "--config", "c.yaml", "a.py", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(calls(&project), [2], "the tool saw the whole project");
    let gate = run.gate("check");
    assert_eq!(gate["status"], "passed");
    assert_eq!(gate["outside_scope"], 1);
    assert!(gate.get("violations").is_none());
    let run = project.qg(&["run", "--config", "c.yaml", "b.py", "--format", "json"]);
    run.assert_code(1);
    assert_eq!(run.gate("check")["violations"][0]["file"], "b.py");
    // Some reported, some counted: the count is of the others alone.
    project.write("c.py", "BAD\n");
    project.write("d.py", "BAD\n");
    let run = project.qg(&["run", "--config", "c.yaml", "b.py", "--format", "json"]);
    let gate = run.gate("check");
    assert_eq!(gate["violations"].as_array().unwrap().len(), 1);
    assert_eq!(gate["outside_scope"], 2);
    // The human report says so too.
    let run = project.qg(&["run", "--config", "c.yaml", "b.py"]);
    assert!(
        run.stdout
            .contains("1 violation, 4 files, +2 outside the scope not reported"),
        "{}",
        run.stdout
    );
}

/// A whole-program checker: given files, it checks them; given `.`, it
/// finds every `.py` file itself (as mypy and pyright do).
const WHOLE_PROGRAM_CHECKER: &str = r#"echo "$#" >> calls.log
if [ "$1" = "." ]; then files=$(grep -rl --include='*.py' BAD . | sed 's|^\./||'); else files=$(grep -l BAD "$@"); fi
out=""
for f in $files; do out="$out${out:+,}{\"file\":\"$f\",\"line\":1,\"code\":\"BAD\",\"message\":\"bad\"}"; done
echo "[$out]"
[ -z "$out" ]"#;

#[test]
fn a_whole_program_gate_whose_files_do_not_fit_runs_as_the_tools_own_run() {
    let project = project_with_files(25_000, 100);
    project.fake_tool("check", WHOLE_PROGRAM_CHECKER);
    let pad = "x".repeat(100);
    let named = format!("src/00007_{pad}.py");
    project.write(&named, "BAD\n");
    project.write(&format!("src/00190_{pad}.py"), "BAD\n");
    let whole_program = config(", batchable: false, project_wide: true")
        + "    selection: {project_args: [\".\"]}\n";
    project.write("c.yaml", &whole_program);
    // One named file: the gate checks the whole project (project_wide),
    // whose 25,000 names exceed the OS limit on a command line.
    let run = project.qg(&["run", "--config", "c.yaml", "--format", "json", &named]);
    run.assert_code(1);
    let gate = run.gate("check");
    assert_eq!(
        common::violation_keys(&gate),
        [(named.clone(), Some(1), "BAD".into(), "error".into())]
    );
    assert_eq!(gate["outside_scope"], 1, "{gate}");
    let warnings = gate["warnings"].to_string();
    assert!(
        warnings.contains("the tool's own whole-project run"),
        "{warnings}"
    );
    assert_eq!(calls(&project), [1], "one run, given `.`");
}
