//! `qg history`: each run is recorded per branch, and the verdict over the
//! last comparable runs says improving, plateau, degrading or oscillating,
//! and names a gate that errors now and then. A fake tool whose output a
//! test controls.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::{one_gate_config, Project};

/// A project whose tool reports as many violations as `count` says, and
/// exits 3 (an error) when `count` says `crash`.
fn project() -> Project {
    let project = Project::empty();
    project.fake_tool(
        "lint",
        r#"n=$(cat count)
[ "$n" = crash ] && exit 3
printf '['
i=0
while [ $i -lt $n ]; do
  [ $i -gt 0 ] && printf ','
  printf '{"file":"a.py","line":%d,"code":"X","message":"m%d"}' $((i+1)) $i
  i=$((i+1))
done
printf ']'
[ $n -gt 0 ] && exit 1
exit 0"#,
    );
    project.write(".st3/quality.yaml", &one_gate_config(r#"["lint"]"#, ""));
    project.write("a.py", "x = 1\n");
    project.git_init();
    project
}

fn runs(project: &Project, counts: &[&str]) {
    for count in counts {
        project.write("count", count);
        project.qg(&["run", "--scope", "project", "-q"]);
    }
}

fn verdict(project: &Project) -> serde_json::Value {
    let run = project.qg(&["history", "--format", "json"]);
    run.assert_code(0);
    run.json()["trend"].clone()
}

#[test]
fn the_verdict_follows_the_counts() {
    let project = project();
    let first = project.qg(&["history"]);
    assert!(
        first.stdout.starts_with("no runs recorded on "),
        "{}",
        first.stdout
    );
    runs(&project, &["9", "7"]);
    assert_eq!(verdict(&project)["verdict"], "not_enough_runs");
    runs(&project, &["4"]);
    assert_eq!(verdict(&project)["verdict"], "improving");
    assert_eq!(
        verdict(&project)["violations"],
        serde_json::json!([9, 7, 4])
    );
    runs(&project, &["4", "4"]);
    assert_eq!(verdict(&project)["verdict"], "plateau");
    runs(&project, &["6", "3", "5"]);
    assert_eq!(verdict(&project)["verdict"], "oscillating");
    runs(&project, &["8", "9"]);
    assert_eq!(verdict(&project)["verdict"], "degrading");
    let human = project.qg(&["history"]);
    assert!(
        human
            .stdout
            .starts_with("📈 degrading — violations over the last 10 project runs"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_gate_that_errors_now_and_then_is_named_flaky() {
    let project = project();
    runs(&project, &["1", "crash", "1", "1"]);
    let trend = verdict(&project);
    assert_eq!(
        trend["violations"],
        serde_json::json!([1, 1, 1]),
        "an errored run's count is left out"
    );
    let gate = &trend["gates"][0];
    assert_eq!(
        (
            gate["errored"].as_u64(),
            gate["runs"].as_u64(),
            gate["flaky"].as_bool()
        ),
        (Some(1), Some(4), Some(true)),
        "{trend}"
    );
    let human = project.qg(&["history"]);
    assert!(
        human
            .stdout
            .contains("fake errored in 1 of 4 runs but not the others"),
        "{}",
        human.stdout
    );
}

/// Outside project scope only runs over as many files as the latest are
/// compared: the trend line says so, and a run of one file reads `1 file`.
#[test]
fn the_trend_line_says_it_compares_runs_over_as_many_files() {
    let project = project();
    project.write("b.py", "y = 2\n");
    for (count, files) in [
        ("2", &["a.py"][..]),
        ("3", &["a.py", "b.py"]),
        ("1", &["a.py"]),
    ] {
        project.write("count", count);
        let mut args = vec!["run", "-q"];
        args.extend_from_slice(files);
        project.qg(&args);
    }
    assert_eq!(verdict(&project)["files"], 1);
    let human = project.qg(&["history"]).stdout;
    let first = human.lines().next().unwrap();
    assert!(
        first.contains(
            "violations over the last 2 files runs of 1 file (runs over another number of files are left out) on "
        ) && first.ends_with(": 2 → 1"),
        "{human}"
    );
    assert!(
        human.contains(" 1 file ") && !human.contains("1 files"),
        "{human}"
    );
    assert!(human.contains(" 2 files "), "{human}");
    runs(&project, &["4"]);
    assert!(
        verdict(&project).get("files").is_none(),
        "a project run compares every project run"
    );
}
