//! The invariant behind `auto`: from a green state, a change that can alter
//! a gate's `--scope project` verdict is in the `auto` scope — the changed
//! file, or (for a change to the tool's settings) the gate's whole project
//! — so `qg run` finds exactly what `qg run --scope project` finds. Checked
//! as a property over configs (qg's include and exclude globs, the gate's
//! file types and globs, a tool that picks its own files or is given them)
//! and edits (a finding added to any kind of file, the tool's settings
//! made stricter), with a fake tool whose findings the test controls.
//!
//! Cases: PROPTEST_CASES (default here 256, some 10 s: each case is a git repository
//! and three runs of qg).
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use serde_json::Value;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// Flags every file holding `BAD`, and with `strict` in its settings file
/// (`flagger.cfg`) every file holding `MEH`. Without file arguments it
/// checks, as its own run, every file of its types ($TYPES) below `.`.
const FLAGGER: &str = r#"#!/bin/sh
strict=0
grep -q strict flagger.cfg 2>/dev/null && strict=1
if [ $# -eq 0 ]; then
  set -- $(find . -type f -not -path './.git/*' -not -path './.st3/*' | sed 's|^\./||' | sort)
fi
out=""
for f in "$@"; do
  keep=0
  for t in $TYPES; do case "$f" in *"$t") keep=1;; esac; done
  [ $keep = 1 ] || continue
  if grep -q BAD "$f" || { [ $strict = 1 ] && grep -q MEH "$f"; }; then
    out="$out${out:+,}{\"file\":\"$f\",\"line\":1,\"code\":\"X\",\"message\":\"flagged\"}"
  fi
done
echo "[$out]"
[ -z "$out" ]
"#;

/// The files of the project, committed clean (one holds `MEH`, which only
/// the strict settings flag).
const FILES: &[&str] = &[
    "a.py",
    "src/m.py",
    "src/meh.py",
    "src/s.pyi",
    "docs/guide.md",
    "README.md",
    "build/gen.py",
    "nb.ipynb",
    "notes.txt",
];

const INCLUDES: &[&str] = &["**/*.py", "**/*.pyi", "**/*.md", "**/*.ipynb", "src/**"];
const EXCLUDES: &[&str] = &["build/**", "docs/**"];
const TYPES: &[&str] = &[".py", ".pyi", ".md", ".ipynb", ".txt"];

/// One generated config.
#[derive(Debug, Clone)]
struct Shape {
    includes: Vec<&'static str>,
    excludes: Vec<&'static str>,
    types: Vec<&'static str>,
    /// The tool picks its own files on `--scope project` (`selection`).
    own_run: bool,
    /// The gate's own include globs.
    gate_includes: Vec<&'static str>,
}

/// One generated edit.
#[derive(Debug, Clone)]
enum Edit {
    /// A finding appears in this file (created when missing).
    Flag(&'static str),
    /// The tool's settings turn strict: `src/meh.py` is flagged.
    Strict,
}

fn subset(pool: &'static [&'static str]) -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::subsequence(pool, 0..=pool.len())
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        subset(INCLUDES),
        subset(EXCLUDES),
        prop::sample::subsequence(TYPES, 1..=TYPES.len()),
        any::<bool>(),
        prop::sample::subsequence(&["src/**", "**/*.py"][..], 0..=1),
    )
        .prop_map(
            |(includes, excludes, types, own_run, gate_includes)| Shape {
                includes,
                excludes,
                types,
                own_run,
                gate_includes,
            },
        )
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => prop::sample::select(FILES).prop_map(Edit::Flag),
        1 => prop::sample::select(&["new.py", "src/new.md", "docs/new.py"][..]).prop_map(Edit::Flag),
        1 => Just(Edit::Strict),
    ]
}

fn flow(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

fn config(shape: &Shape, flagger: &Path) -> String {
    let selection = match shape.own_run {
        true => "    selection: {project_args: []}\n",
        false => "",
    };
    format!(
        r#"version: "1"
active_gates: [flag]
parent_branch: main
artifact_logging: {{enabled: false}}
project_scope:
  include_globs: {includes}
  exclude_globs: {excludes}
gates:
  flag:
    execution:
      command: ["{flagger}"]
      batchable: false
      env: {{TYPES: "{types}"}}
    parsing:
      strategy: json_violations
      field_map: {{file: file, line: line, code: code, message: message}}
    capabilities: {{file_types: {file_types}}}
    scope: {{include_globs: {gate_includes}}}
    tool_config: [{{file: flagger.cfg}}]
{selection}"#,
        includes = flow(&shape.includes),
        excludes = flow(&shape.excludes),
        flagger = flagger.display(),
        types = shape.types.join(" "),
        file_types = flow(&shape.types),
        gate_includes = flow(&shape.gate_includes),
    )
}

fn git(dir: &Path, args: &[&str]) {
    common::git(dir, args);
}

fn qg(dir: &Path, args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(args)
        .args(["--format", "json"])
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "qg {args:?} exited {:?}:\n{stdout}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

/// The files a report flags.
fn flagged(report: &Value) -> BTreeSet<String> {
    report["gates"][0]["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["file"].as_str().map(str::to_string))
        .collect()
}

fn check(shape: &Shape, edits: &[Edit]) -> Result<(), TestCaseError> {
    let repo = tempfile::Builder::new()
        .prefix("qg-inv-")
        .tempdir()
        .unwrap();
    let dir = repo.path();
    let flagger = dir.join(".tools/flagger");
    fs::create_dir_all(flagger.parent().unwrap()).unwrap();
    fs::write(&flagger, FLAGGER).unwrap();
    fs::set_permissions(
        &flagger,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    fs::write(dir.join(".gitignore"), ".tools/\n.st3/\n").unwrap();
    for file in FILES {
        let path = dir.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = if *file == "src/meh.py" {
            "MEH = 1\n"
        } else {
            "ok = 1\n"
        };
        fs::write(path, text).unwrap();
    }
    fs::write(dir.join("flagger.cfg"), "lenient\n").unwrap();
    fs::create_dir_all(dir.join(".st3")).unwrap();
    fs::write(dir.join(".st3/quality.yaml"), config(shape, &flagger)).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "-m",
            "green",
        ],
    );
    let first = qg(dir, &["run"]);
    prop_assert!(flagged(&first).is_empty(), "not green at first: {first}");
    for edit in edits {
        match edit {
            Edit::Flag(file) => {
                let path = dir.join(file);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, "BAD = 1\n").unwrap();
            }
            Edit::Strict => fs::write(dir.join("flagger.cfg"), "strict\n").unwrap(),
        }
    }
    let project = qg(dir, &["run", "--scope", "project", "--no-state"]);
    let auto = qg(dir, &["run"]);
    prop_assert_eq!(
        flagged(&auto),
        flagged(&project),
        "auto and project disagree\nconfig:\n{}\nauto: {}\nproject: {}",
        config(shape, &flagger),
        auto["summary_line"],
        project["summary_line"]
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn auto_finds_what_project_finds_after_any_edit_from_green(
        shape in shape(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        check(&shape, &edits)?;
    }
}
