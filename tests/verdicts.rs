//! Verdicts that must be the truth, found by running qg on real projects:
//! each test reproduces one way qg's answer used to differ from the tools'.

mod common;

use common::{violation_keys, Project};

/// mypy prints `setup.cfg: note: unused section(s)` after its JSON lines
/// (warn_unused_configs, implied by strict): the findings before it count,
/// and the note is surfaced as a warning, not lost.
#[test]
fn a_tool_note_after_json_lines_keeps_the_findings_and_is_surfaced() {
    let project = Project::empty();
    project.write(
        "setup.cfg",
        "[mypy]\nwarn_unused_configs = True\n[mypy-nonexistent.*]\nignore_missing_imports = True\n",
    );
    project.write("pkg/__init__.py", "");
    project.write("pkg/a.py", "x: int = \"a\"\n");
    let run = project.qg_with_tools(&["run", "pkg/a.py", "--gate", "mypy", "--format", "json"]);
    run.assert_code(1);
    let gate = run.gate("mypy");
    assert_eq!(gate["status"], "failed", "{gate}");
    assert_eq!(
        violation_keys(&gate),
        [(
            "pkg/a.py".to_string(),
            Some(1),
            "assignment".to_string(),
            "error".to_string()
        )]
    );
    assert_eq!(
        gate["warnings"],
        serde_json::json!([
            "output line 2 is not a finding: `setup.cfg: note: unused section(s): [mypy-nonexistent.*]`"
        ])
    );
    let human = project.qg_with_tools(&["run", "pkg/a.py", "--gate", "mypy"]);
    assert!(
        human.stdout.contains(
            "warning: output line 2 is not a finding: `setup.cfg: note: unused section(s)"
        ),
        "{}",
        human.stdout
    );
}
