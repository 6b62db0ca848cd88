//! `qg run --shard I/N` and `qg merge`: with the REAL tools, the shards of a
//! run merged back are the unsharded run in every format; whole-program
//! gates run whole, per-file gates split by file; recorded durations decide
//! the split; a merge refuses any set of shards that could hide a file.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::fs;

use common::{assert_fits_schema, Project, Run};
use serde_json::Value;

/// The shards of an `n`-way run, each run with `args` and its JSON report
/// written to `shard-I.json` in the project; returns the reports' names.
fn run_shards(project: &Project, n: usize, args: &[&str]) -> Vec<String> {
    run_shards_as(project, "shard", n, args)
}

/// [`run_shards`], the reports named `<prefix>-I.json`.
fn run_shards_as(project: &Project, prefix: &str, n: usize, args: &[&str]) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let name = format!("{prefix}-{i}.json");
            let shard = format!("{i}/{n}");
            let mut all = vec!["run", "--shard", &shard, "--format", "json"];
            all.extend_from_slice(args);
            let run = project.qg_with_tools(&all);
            assert!(
                run.code == 0 || run.code == 1,
                "shard {shard}: {}",
                run.stderr
            );
            assert_fits_schema("run-report.json", &run.json());
            fs::write(project.path().join(&name), &run.stdout).unwrap();
            name
        })
        .collect()
}

fn merge(project: &Project, reports: &[String], format: &str) -> Run {
    let mut args = vec!["merge", "--format", format];
    args.extend(reports.iter().map(String::as_str));
    project.qg_with_tools(&args)
}

/// A report `qg run --format json` wrote to `name` in the project.
fn read_report(project: &Project, name: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(project.path().join(name)).unwrap()).unwrap()
}

/// A JSON report without what differs between any two runs: timings and
/// where the logs went.
fn timeless(mut report: Value) -> Value {
    report.as_object_mut().unwrap().remove("timings");
    for gate in report["gates"].as_array_mut().unwrap() {
        let gate = gate.as_object_mut().unwrap();
        for key in ["duration_ms", "log", "batch_logs"] {
            gate.remove(key);
        }
    }
    report
}

/// SARIF without timings and log locations: each run's tool, rules and results.
fn sarif_findings(text: &str) -> Value {
    let log: Value = serde_json::from_str(text).unwrap();
    let runs: Vec<Value> = log["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| serde_json::json!([run["tool"], run["results"]]))
        .collect();
    Value::Array(runs)
}

/// Drops the attributes and lines that carry times or log paths.
fn without_times(text: &str) -> String {
    let time = regex::Regex::new(r#" time="[0-9.]+"| \d+ ms|\.st3/logs/\S+"#).unwrap();
    time.replace_all(text, "").into_owned()
}

#[test]
fn merged_shards_are_the_unsharded_run_in_every_format() {
    let project = Project::fixture("dirty");
    let whole = project.qg_with_tools(&[
        "run",
        "--scope",
        "project",
        "--no-state",
        "--format",
        "json",
    ]);
    whole.assert_code(1);
    for n in [1, 2, 3, 5] {
        let reports = run_shards(&project, n, &["--scope", "project"]);
        let merged = merge(&project, &reports, "json");
        merged.assert_code(1);
        assert_fits_schema("run-report.json", &merged.json());
        assert_eq!(
            timeless(merged.json()),
            timeless(whole.json()),
            "{n} shards"
        );
        // A gate took as long as its shares together: what the next
        // shards plan from (`qg merge --record`).
        let shards: Vec<Value> = reports.iter().map(|r| read_report(&project, r)).collect();
        for (index, gate) in merged.json()["gates"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let shares: u64 = shards
                .iter()
                .map(|s| s["gates"][index]["duration_ms"].as_u64().unwrap())
                .sum();
            assert_eq!(gate["duration_ms"].as_u64(), Some(shares), "{gate}");
        }
        for format in ["concise", "gitlab", "github"] {
            let unsharded = project.qg_with_tools(&[
                "run",
                "--scope",
                "project",
                "--no-state",
                "--format",
                format,
            ]);
            assert_eq!(
                without_times(&merge(&project, &reports, format).stdout),
                without_times(&unsharded.stdout),
                "{format}, {n} shards"
            );
        }
        let sarif = project.qg_with_tools(&[
            "run",
            "--scope",
            "project",
            "--no-state",
            "--format",
            "sarif",
        ]);
        assert_eq!(
            sarif_findings(&merge(&project, &reports, "sarif").stdout),
            sarif_findings(&sarif.stdout),
            "sarif, {n} shards"
        );
        let junit = merge(&project, &reports, "junit").stdout;
        assert!(roxmltree::Document::parse(&junit).is_ok(), "{junit}");
    }
}

/// The files each per-file gate's command was given in one shard's run
/// (`--verbose` prints each command): gate id → files.
fn files_given(run: &Run) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let mut given = std::collections::BTreeMap::<String, BTreeSet<String>>::new();
    for line in run.stderr.lines() {
        let Some((gate, argv)) = line.strip_prefix("qg: ").and_then(|l| l.split_once(": ")) else {
            continue;
        };
        let files = argv
            .split(' ')
            .filter(|a| a.ends_with(".py"))
            .map(str::to_string);
        given.entry(gate.to_string()).or_default().extend(files);
    }
    given
}

#[test]
fn whole_program_gates_run_whole_and_per_file_gates_split_by_file() {
    let project = Project::fixture("dirty");
    for i in 0..30 {
        project.write(&format!("pkg/gen_{i:02}.py"), &format!("VALUE_{i} = {i}\n"));
    }
    // Recorded: the linters cost as much as the type checkers, so the
    // files are spread over every shard.
    project.write(
        ".st3/history.jsonl",
        &history_line(&[
            ("mypy", 900, 36),
            ("pyright", 900, 36),
            ("ruff_check", 900, 36),
            ("ruff_format", 900, 36),
        ]),
    );
    let mut reports = Vec::new();
    let mut per_file: Vec<BTreeSet<String>> = Vec::new();
    let mut whole_gates: Vec<String> = Vec::new();
    for i in 1..=3 {
        let shard = format!("{i}/3");
        let run = project.qg_with_tools(&[
            "run",
            "--scope",
            "project",
            "--shard",
            &shard,
            "--verbose",
            "--no-progress",
            "--format",
            "json",
        ]);
        assert!(run.code <= 1, "{}", run.stderr);
        let given = files_given(&run);
        // A file goes to one shard for every per-file gate.
        assert_eq!(
            given.get("ruff_check"),
            given.get("ruff_format"),
            "shard {shard}"
        );
        per_file.push(given.get("ruff_check").cloned().unwrap_or_default());
        for id in ["mypy", "pyright"] {
            let gate = run.gate(id);
            if gate["status"] != "skipped" {
                assert_eq!(gate["files_checked"], 36, "{id} runs whole");
                whole_gates.push(id.to_string());
            }
        }
        let name = format!("shard-{i}.json");
        fs::write(project.path().join(&name), &run.stdout).unwrap();
        reports.push(name);
    }
    whole_gates.sort();
    assert_eq!(
        whole_gates,
        ["mypy", "pyright"],
        "each in exactly one shard"
    );
    let total: usize = per_file.iter().map(BTreeSet::len).sum();
    let union: BTreeSet<&String> = per_file.iter().flatten().collect();
    assert_eq!(
        (total, union.len()),
        (36, 36),
        "every file once: {per_file:?}"
    );
    assert!(
        per_file.iter().all(|f| !f.is_empty()),
        "split over every shard: {per_file:?}"
    );
    let merged = merge(&project, &reports, "json");
    let whole = project.qg_with_tools(&[
        "run",
        "--scope",
        "project",
        "--no-state",
        "--format",
        "json",
    ]);
    assert_eq!(timeless(merged.json()), timeless(whole.json()));
    assert_eq!(merged.json()["scope"]["files_checked"], 36);
}

/// A history line for `durations`: (gate, milliseconds, files).
fn history_line(durations: &[(&str, u64, usize)]) -> String {
    let gates: Vec<Value> = durations
        .iter()
        .map(|(id, ms, files)| {
            serde_json::json!({"id": id, "status": "passed", "violations": 0,
                               "duration_ms": ms, "files": files})
        })
        .collect();
    let run = serde_json::json!({"at": "2026-11-01T00:00:00Z", "branch": "main", "scope": "project",
                                 "requested": "project", "files": 6, "duration_ms": 1, "gates": gates});
    format!("{run}\n")
}

#[test]
fn recorded_durations_decide_where_the_work_goes() {
    let project = Project::fixture("dirty");
    let ran = |history: &str| -> Vec<Vec<String>> {
        project.write(".st3/history.jsonl", history);
        run_shards(&project, 2, &["--scope", "project"])
            .iter()
            .map(|r| {
                let report: Value =
                    serde_json::from_str(&fs::read_to_string(project.path().join(r)).unwrap())
                        .unwrap();
                report["shard"]["ran"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect()
            })
            .collect()
    };
    // mypy is the slow one: it has a shard to itself.
    let slow_mypy = history_line(&[
        ("mypy", 90_000, 6),
        ("pyright", 900, 6),
        ("ruff_check", 6, 6),
        ("ruff_format", 6, 6),
    ]);
    assert_eq!(
        ran(&slow_mypy),
        [vec!["mypy"], vec!["pyright", "ruff_check", "ruff_format"]]
    );
    // pyright is: the same inputs otherwise, the other way round.
    let slow_pyright = history_line(&[
        ("mypy", 900, 6),
        ("pyright", 90_000, 6),
        ("ruff_check", 6, 6),
        ("ruff_format", 6, 6),
    ]);
    assert_eq!(
        ran(&slow_pyright),
        [vec!["pyright"], vec!["mypy", "ruff_check", "ruff_format"]]
    );
    // The newest record of a gate counts.
    let both = format!("{slow_mypy}{slow_pyright}");
    assert_eq!(ran(&both), ran(&slow_pyright));
}

#[test]
fn a_merge_refuses_shards_that_could_leave_a_file_unchecked() {
    let project = Project::fixture("dirty");
    let reports = run_shards(&project, 3, &["--scope", "project"]);
    let pick = |indices: &[usize]| -> Vec<String> {
        indices.iter().map(|i| reports[*i].clone()).collect()
    };
    merge(&project, &pick(&[0, 2]), "json").assert_fails_with(2, "shard 2/3 is missing");
    merge(&project, &pick(&[0, 1, 1, 2]), "json")
        .assert_fails_with(2, "are both shard 2/3: give each shard's report once");
    // A shard planned from other inputs (a new file) is another run's.
    project.write("pkg/late.py", "LATE = 1\n");
    let other = run_shards_as(&project, "other", 3, &["--scope", "project"]);
    let mixed = vec![reports[0].clone(), other[1].clone(), reports[2].clone()];
    let run = merge(&project, &mixed, "json");
    run.assert_fails_with(2, "are shards of different runs");
    // The message names both plans, so the user can see which shard is stale.
    let plans: Vec<&str> = run
        .stderr
        .split("of plan ")
        .skip(1)
        .map(|rest| rest.split([',', ')']).next().unwrap())
        .collect();
    assert_eq!(plans.len(), 2, "{}", run.stderr);
    assert!(plans.iter().all(|p| p.len() == 7), "{}", run.stderr);
    assert_ne!(plans[0], plans[1], "{}", run.stderr);
    // A 2-way shard is never part of a 3-way run.
    let two = run_shards_as(&project, "two", 2, &["--scope", "project"]);
    merge(&project, &[other[0].clone(), two[1].clone()], "json")
        .assert_fails_with(2, "are shards of different runs");
    // Not a shard's report, not a report, not there.
    let unsharded = project.qg_with_tools(&[
        "run",
        "--scope",
        "project",
        "--no-state",
        "--format",
        "json",
    ]);
    fs::write(project.path().join("whole.json"), &unsharded.stdout).unwrap();
    merge(&project, &["whole.json".into()], "json").assert_fails_with(2, "not a shard's report");
    fs::write(project.path().join("junk.json"), "{\"summary_line\": 1}").unwrap();
    merge(&project, &["junk.json".into()], "json")
        .assert_fails_with(2, "junk.json: not a qg JSON report");
    merge(&project, &["gone.json".into()], "json").assert_fails_with(2, "cannot read gone.json");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    // A shard's report whose gates were reordered by hand is not merged
    // gate by gate with the wrong gate.
    let mut shuffled: Value = read_report(&project, &reports[1]);
    shuffled["gates"].as_array_mut().unwrap().reverse();
    fs::write(project.path().join("shuffled.json"), shuffled.to_string()).unwrap();
    merge(
        &project,
        &[
            reports[0].clone(),
            "shuffled.json".into(),
            reports[2].clone(),
        ],
        "json",
    )
    .assert_fails_with(2, "its gates differ from the other shards'");
    project
        .qg_with_tools(&["run", "--shard", "4/3"])
        .assert_fails_with(2, "is not I/N with 1 ≤ I ≤ N");
}

#[test]
fn a_shard_records_nothing_and_never_writes_the_baseline() {
    let project = Project::fixture("dirty");
    project
        .qg_with_tools(&["baseline", "write", "--gate", "ruff_check"])
        .assert_code(0);
    let baseline = fs::read_to_string(project.path().join(".st3/baseline.jsonl")).unwrap();
    // F401 fixed: a ratcheting run would drop its entry.
    project.write(
        "pkg/lint.py",
        &fs::read_to_string(project.path().join("pkg/lint.py"))
            .unwrap()
            .replace("import os\n", ""),
    );
    for i in 1..=2 {
        let run = project.qg_with_tools(&["run", "--shard", &format!("{i}/2"), "--format", "json"]);
        assert!(run.code <= 1, "{}", run.stderr);
    }
    for file in ["state.json", "history.jsonl", "findings.json"] {
        assert!(
            !project.path().join(".st3").join(file).exists(),
            "{file} written by a shard"
        );
    }
    assert_eq!(
        fs::read_to_string(project.path().join(".st3/baseline.jsonl")).unwrap(),
        baseline
    );
}

#[test]
fn a_known_finding_of_a_deleted_file_is_matched_once_across_shards() {
    let project = Project::empty();
    let body: String = (0..40).map(|i| format!("OLD_{i} = {i}\n")).collect();
    project.write("old.py", &format!("import os\n\n{body}"));
    project.git_init();
    let lint = ["--gate", "ruff_check"];
    project
        .qg_with_tools(&["baseline", "write", lint[0], lint[1]])
        .assert_code(0);
    // old.py is gone (nothing like it left for git to call a rename), its
    // finding moved — twice, into two files of equal size, which two
    // shards check.
    fs::remove_file(project.path().join("old.py")).unwrap();
    project.write("a.py", "import os\n\nA = 1\n");
    project.write("b.py", "import os\n\nB = 1\n");
    let whole = project.qg_with_tools(&[
        "run",
        "--scope",
        "project",
        "--no-state",
        "--locked",
        "--format",
        "json",
        lint[0],
        lint[1],
    ]);
    whole.assert_code(1);
    assert_eq!(whole.json()["baseline"]["new"], 1, "{}", whole.stdout);
    assert_eq!(whole.json()["baseline"]["known"], 1);
    let reports = run_shards(&project, 2, &["--scope", "project", lint[0], lint[1]]);
    for report in &reports {
        let shard: Value = read_report(&project, report);
        assert_eq!(
            shard["overall_pass"], true,
            "each shard alone matches the entry: {shard}"
        );
    }
    let merged = merge(&project, &reports, "json");
    merged.assert_code(1);
    let json = merged.json();
    assert_eq!(json["baseline"]["new"], 1, "{json}");
    assert_eq!(json["baseline"]["known"], 1);
    assert_eq!(json["baseline"]["fixed"], 0);
    assert_eq!(json["summary"], whole.json()["summary"]);
}

#[test]
fn the_baseline_counts_of_a_merge_are_the_unsharded_run_s() {
    let project = Project::empty();
    for name in ["a", "b", "c", "d"] {
        project.write(&format!("{name}.py"), "import os\n");
    }
    project.git_init();
    let lint = ["--gate", "ruff_check"];
    project
        .qg_with_tools(&["baseline", "write", lint[0], lint[1]])
        .assert_code(0);
    // A tool upgrade rewords every known finding's message, every file
    // gets a new finding and one loses its known one: the shards have new,
    // known, reworded and fixed ones.
    let path = project.path().join(".st3/baseline.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let reworded = text.replace("imported but unused", "is unused");
    assert_eq!(reworded.matches("is unused").count(), 4, "{text}");
    // ...written by another ruff (with the same one, a reworded finding at
    // an unchanged line is a changed finding: new).
    let mut lines: Vec<String> = reworded.lines().map(str::to_string).collect();
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    header["tools"]["ruff_check"] = "ruff 0.0.1".into();
    lines[0] = header.to_string();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    for name in ["a", "b", "c"] {
        project.write(&format!("{name}.py"), "import os\nimport sys\n");
    }
    project.write("d.py", "import sys\n");
    let args = ["--scope", "project", lint[0], lint[1]];
    let whole = project.qg_with_tools(
        &[
            &["run", "--no-state", "--locked", "--format", "json"][..],
            &args,
        ]
        .concat(),
    );
    whole.assert_code(1);
    let counts = &whole.json()["baseline"];
    assert_eq!(
        [
            &counts["new"],
            &counts["known"],
            &counts["reworded"],
            &counts["fixed"]
        ],
        [4, 3, 3, 1],
        "{}",
        whole.stdout
    );
    let reports = run_shards(&project, 2, &args);
    for report in &reports {
        let shard = read_report(&project, report);
        assert_eq!(shard["baseline"]["new"], 2, "{shard}");
    }
    let merged = merge(&project, &reports, "json");
    merged.assert_code(1);
    assert_eq!(merged.json()["baseline"], whole.json()["baseline"]);
}

#[test]
fn a_recorded_merge_gives_the_next_shards_their_durations() {
    let project = Project::fixture("dirty");
    let reports = run_shards(&project, 2, &["--scope", "project"]);
    let mut args = vec!["merge", "--record", "--quiet"];
    args.extend(reports.iter().map(String::as_str));
    project.qg_with_tools(&args).assert_code(1);
    let history = fs::read_to_string(project.path().join(".st3/history.jsonl")).unwrap();
    assert_eq!(history.lines().count(), 1, "{history}");
    let run: Value = serde_json::from_str(history.trim()).unwrap();
    assert_eq!(
        (run["scope"].as_str(), run["files"].as_u64()),
        (Some("project"), Some(6))
    );
    for gate in run["gates"].as_array().unwrap() {
        // Each gate's files over all shards, and the time they took.
        assert_eq!(gate["files"], 6, "{gate}");
        assert_eq!(gate["status"], "failed", "{gate}");
        assert!(gate["duration_ms"].as_u64().unwrap() > 0, "{gate}");
    }
    // The next shards plan from it: the same inputs in every shard, so
    // their merge holds.
    let next = run_shards_as(&project, "next", 2, &["--scope", "project"]);
    merge(&project, &next, "json").assert_code(1);
    project
        .qg_with_tools(&["merge", "--config", "x.yaml", &next[0]])
        .assert_fails_with(2, "--record");
}

/// A gate that errors in a shard errors in the merge exactly as in the
/// unsharded run: same kind, message and exit code.
/// `qg run --shard I/2 args...` with only the project's fake tools, `before(I)`
/// first, each report written to `shard-I.json`; returns the reports' names.
fn fake_shards(project: &Project, args: &[&str], mut before: impl FnMut(usize)) -> Vec<String> {
    (1..=2)
        .map(|i| {
            before(i);
            let shard = format!("{i}/2");
            let run = project.qg(&[&["run", "--shard", &shard][..], args].concat());
            let name = format!("shard-{i}.json");
            fs::write(project.path().join(&name), &run.stdout).unwrap();
            name
        })
        .collect()
}

/// `qg merge --format json` of `reports`, with only the fake tools.
fn fake_merge(project: &Project, reports: &[String]) -> Run {
    let mut args = vec!["merge", "--format", "json"];
    args.extend(reports.iter().map(String::as_str));
    project.qg(&args)
}

#[test]
fn a_gate_error_survives_the_merge_unchanged() {
    let project = Project::empty();
    // The error names the first file it was given: each shard's differs.
    project.fake_tool("crash", "echo \"internal error in $1\" >&2\nexit 3");
    project.fake_tool("clean", "echo '[]'");
    let config = r#"version: "1"
active_gates: [crash, clean]
gates:
  crash:
    execution: {command: [crash], timeout_seconds: 30}
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
  clean:
    execution: {command: [clean], timeout_seconds: 30}
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
"#;
    project.write(".st3/quality.yaml", config);
    for name in ["a", "b", "c", "d"] {
        project.write(&format!("pkg/{name}.py"), "x = 1\n");
    }
    project.git_init();
    let args = ["--scope", "project", "--no-state", "--format", "json"];
    let whole = project.qg(&[&["run"][..], &args].concat());
    whole.assert_code(2);
    let reports = fake_shards(&project, &args, |_| {});
    let merged = fake_merge(&project, &reports);
    merged.assert_code(2);
    let error = &merged.gate("crash")["error"];
    assert_eq!(error["kind"], "unexpected_exit_code", "{}", merged.stdout);
    assert_eq!(error["exit_code"], 3);
    // Both shards failed; the merge keeps the first shard's error, as the
    // unsharded run reports its first batch's.
    let first: Value = read_report(&project, &reports[0]);
    let first_error = &first["gates"][0]["error"];
    assert!(first_error["message"].is_string(), "{first}");
    assert_eq!(error, first_error);
    assert_eq!(timeless(merged.json()), timeless(whole.json()));
}

#[test]
fn a_tool_s_notes_and_versions_survive_the_merge() {
    let project = Project::empty();
    let noisy = |version: &str| {
        format!(
            "if [ \"$1\" = --version ]; then echo 'noisy {version}'; exit 0; fi\n\
             echo 'note: the cache is cold'\n\
             echo '[]'"
        )
    };
    project.fake_tool("noisy", &noisy("1.0"));
    let config = r#"version: "1"
active_gates: [noisy]
gates:
  noisy:
    execution: {command: [noisy], timeout_seconds: 30}
    version_args: ["--version"]
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
"#;
    project.write(".st3/quality.yaml", config);
    for name in ["a", "b", "c", "d"] {
        project.write(&format!("pkg/{name}.py"), "x = 1\n");
    }
    project.write(".gitignore", "bin/\n");
    project.git_init();
    let args = ["--scope", "project", "--no-state", "--format", "json"];
    let whole = project.qg(&[&["run"][..], &args].concat());
    whole.assert_code(0);
    let note = "output line 1 is not a finding: `note: the cache is cold`";
    assert_eq!(whole.gate("noisy")["warnings"], serde_json::json!([note]));
    // The second shard runs after an upgrade of the tool.
    let reports = fake_shards(&project, &args, |i| {
        if i == 2 {
            project.fake_tool("noisy", &noisy("2.10"));
        }
    });
    let merged = fake_merge(&project, &reports);
    merged.assert_code(0);
    assert_eq!(
        merged.gate("noisy")["warnings"],
        serde_json::json!([
            note,
            "the shards ran different versions of the tool: noisy 1.0; noisy 2.10"
        ]),
        "{}",
        merged.stdout
    );
}

/// Each shard's share of a `whole`/`each` fake-tool run with `history`:
/// (the gates it ran, the files its `each` gate checked).
fn shares(project: &Project, history: &str, gates: &[&str]) -> Vec<(Vec<String>, u64)> {
    project.write(".st3/history.jsonl", history);
    (1..=2)
        .map(|i| {
            let shard = format!("{i}/2");
            let mut args = vec!["run", "--shard", &shard, "--scope", "project"];
            args.extend(["--no-state", "--format", "json"]);
            args.extend_from_slice(gates);
            let run = project.qg(&args);
            run.assert_code(0);
            let report = run.json();
            let ran = report["shard"]["ran"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            let each = report["gates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["id"] == "each")
                .map_or(0, |g| g["files_checked"].as_u64().unwrap());
            (ran, each)
        })
        .collect()
}

#[test]
fn a_gate_s_cost_scales_with_its_files_and_a_file_s_with_its_size() {
    let project = Project::empty();
    project.fake_tool("whole", "echo '[]'");
    project.fake_tool("each", "echo '[]'");
    let config = r#"version: "1"
active_gates: [whole, each]
gates:
  whole:
    execution: {command: [whole], batchable: false, timeout_seconds: 30}
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
  each:
    execution: {command: [each], batchable: true, timeout_seconds: 30}
    parsing:
      strategy: json_violations
      field_map: {file: file, line: line, code: code, message: message}
"#;
    project.write(".st3/quality.yaml", config);
    for i in 0..12 {
        project.write(&format!("pkg/m{i:02}.py"), "x = 1\n");
    }
    project.write(".gitignore", "bin/\n.st3/history.jsonl\n");
    project.git_init();
    let alone = |whole: u64| {
        vec![
            (vec!["whole".to_string()], whole),
            (vec!["each".to_string()], 12 - whole),
        ]
    };
    // Unrecorded: the whole-program gate costs ten files' worth per file
    // it checks, more than the twelve files of `each` together.
    assert_eq!(shares(&project, "", &[]), alone(0));
    // Recorded: 1 s on one file is 12 s on twelve, four times what `each`
    // took on them; a newer record of no files says nothing of the cost.
    let recorded = format!(
        "{}{}",
        history_line(&[("whole", 1_000, 1), ("each", 3_000, 12)]),
        history_line(&[("whole", 5, 0)])
    );
    assert_eq!(shares(&project, &recorded, &[]), alone(0));
    // A file's cost goes with its size: one big file weighs as much as
    // the eleven small ones together, and more.
    project.write("pkg/m00.py", &"x = 1\n".repeat(3_000));
    let big_first = vec![
        (vec!["each".to_string()], 1),
        (vec!["each".to_string()], 11),
    ];
    let each_only = ["--gate", "each"];
    let recorded = history_line(&[("each", 12_000, 12)]);
    assert_eq!(shares(&project, &recorded, &each_only), big_first);
}
