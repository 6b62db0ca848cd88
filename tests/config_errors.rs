//! Invalid configs: exit 2, one line naming file, line and key, and no tool run.

mod common;

use common::Project;

/// A valid config whose only gate would leave a marker file if it ran.
const BASE: &str = r#"version: "1"
active_gates: [fake]
gates:
  fake:
    name: "Fake"
    execution:
      command: ["bin/marker"]
    success:
      fail_on: warning
    parsing:
      strategy: text_violations
      pattern: '^(?P<file>[^:]+):(?P<line>\d+): (?P<message>.*)$'
      defaults: {code: "X1"}
"#;

struct Case {
    name: &'static str,
    yaml: String,
    line: usize,
    key: &'static str,
    message: &'static str,
}

fn case(
    name: &'static str,
    yaml: String,
    line: usize,
    key: &'static str,
    message: &'static str,
) -> Case {
    Case {
        name,
        yaml,
        line,
        key,
        message,
    }
}

fn cases() -> Vec<Case> {
    vec![
        case("unknown key with suggestion", BASE.replace("fail_on", "fial_on"), 9,
             "gates.fake.success.fial_on", "did you mean `fail_on`?"),
        case("unknown top-level key", format!("{BASE}gatez: {{}}\n"), 14,
             "gatez", "unknown key `gatez`"),
        case("unknown strategy", BASE.replace("text_violations", "text_violation"), 11,
             "gates.fake.parsing.strategy", "did you mean `text_violations`?"),
        case("invalid regex", BASE.replace(r"(?P<line>\d+)", r"(?P<line>\d+"), 12,
             "gates.fake.parsing.pattern", "invalid regex"),
        case("placeholder without group", BASE.replace("\"X1\"", "\"{kind}\""), 13,
             "gates.fake.parsing.defaults.code", "`{kind}` is not a named group"),
        case("empty command", BASE.replace("[\"bin/marker\"]", "[]"), 7,
             "gates.fake.execution.command", "is empty"),
        case("active gate not defined", BASE.replace("[fake]", "[fake, pyrite]"), 2,
             "active_gates[1]", "`pyrite` is not defined"),
        case("wrong type", BASE.replace("fail_on: warning", "fail_on: [warning]"), 9,
             "gates.fake.success.fail_on", "expected"),
        case("negative timeout", BASE.replace("command: [\"bin/marker\"]", "command: [\"bin/marker\"]\n      timeout_seconds: -1"), 8,
             "gates.fake.execution.timeout_seconds", "positive"),
        case("duplicate gate id", format!("{BASE}  fake:\n    execution: {{command: [x]}}\n    parsing: {{strategy: exit_code}}\n"), 14,
             "gates.fake", "defined twice"),
        case("key of another strategy", BASE.replace("      defaults:", "      violations_path: \"/\"\n      defaults:"), 13,
             "gates.fake.parsing.violations_path", "does not apply"),
        case("tab indentation", BASE.replace("    name:", "\tname:"), 5,
             "", "tabs"),
        case("yaml syntax error", BASE.replace("[fake]", "[fake"), 3,
             "", "did not find expected"),
        case("bad glob", format!("{BASE}project_scope: {{exclude_globs: [\"a/[\"]}}\n"), 14,
             "project_scope.exclude_globs[0]", "invalid glob"),
        case("bad json pointer escape",
             BASE.replace("strategy: text_violations", "strategy: json_violations\n      field_map: {file: \"a~2\", message: m}")
                 .replace("      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$'\n      defaults: {code: \"X1\"}\n", ""),
             12, "gates.fake.parsing.field_map.file", "~0"),
        case("empty active gates", BASE.replace("[fake]", "[]"), 2, "active_gates", "is empty"),
    ]
}

#[test]
fn every_invalid_config_is_one_located_line_and_exit_2() {
    let project = Project::empty();
    project.fake_tool("marker", "touch ran.marker");
    project.write("a.py", "x = 1\n");
    let mut failures = Vec::new();
    for case in cases() {
        project.write("c.yaml", &case.yaml);
        let run = project.qg(&["run", "--config", "c.yaml", "--scope", "project"]);
        let stderr = run.stderr.trim_end();
        let expected_prefix = format!("qg: error: invalid config: c.yaml:{}:", case.line);
        let ok = run.code == 2
            && run.stdout.is_empty()
            && stderr.lines().count() == 1
            && stderr.starts_with(&expected_prefix)
            && stderr.contains(case.key)
            && stderr.contains(case.message)
            && !project.path().join("ran.marker").exists();
        if !ok {
            failures.push(format!(
                "{}: exit {} stderr {stderr:?}",
                case.name, run.code
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "cases failed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn base_config_is_valid_and_runs_the_tool() {
    let project = Project::empty();
    project.fake_tool("marker", "touch ran.marker");
    project.write("a.py", "x = 1\n");
    project.write("c.yaml", BASE);
    project
        .qg(&["run", "--config", "c.yaml", "--scope", "project"])
        .assert_code(0);
    assert!(project.path().join("ran.marker").exists());
}

#[test]
fn missing_config_file_is_an_error() {
    let project = Project::empty();
    let run = project.qg(&["run", "--config", "nope.yaml", "--scope", "project"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("nope.yaml") && run.stderr.contains("cannot read"),
        "{}",
        run.stderr
    );
}

#[test]
fn unknown_gate_flag_suggests_the_right_one() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    let run = project.qg(&["run", "--gate", "mypi", "--scope", "project"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("did you mean `mypy`?"),
        "{}",
        run.stderr
    );
}
