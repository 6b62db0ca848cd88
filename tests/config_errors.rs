//! Invalid configs: exit 2, one line naming file, line and key, and no tool run.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

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
    text: Vec<u8>,
    /// `None` for whole-file problems (no line to point at).
    line: Option<usize>,
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
        text: yaml.into_bytes(),
        line: Some(line),
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
        case("min_version without a number", BASE.replace("    name: \"Fake\"", "    name: \"Fake\"\n    min_version: latest"), 6,
             "gates.fake.min_version", "`latest` is no version number (write it as `1.11`)"),
        case("older_versions without version_args", BASE.replace("    name: \"Fake\"", "    name: \"Fake\"\n    older_versions: [{below: \"1.0\", why: old, daemon: false}]"), 6,
             "gates.fake.older_versions", "needs `version_args`: the tool's version decides which entry applies"),
        case("older_versions entry changing nothing", BASE.replace("    name: \"Fake\"", "    name: \"Fake\"\n    version_args: [\"--version\"]\n    older_versions:\n      - below: \"1.0\"\n        why: old"), 8,
             "gates.fake.older_versions[0]", "changes nothing: give a `command`, `parsing`, `file_types`, `project_args` or `daemon: false`"),
        case("older_versions bound without a number", BASE.replace("    name: \"Fake\"", "    name: \"Fake\"\n    version_args: [\"--version\"]\n    older_versions:\n      - below: next\n        why: old\n        daemon: false"), 8,
             "gates.fake.older_versions[0].below", "`next` is no version number"),
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
             "", "illegal placement"),
        case("bad glob", format!("{BASE}project_scope: {{exclude_globs: [\"a/[\"]}}\n"), 14,
             "project_scope.exclude_globs[0]", "invalid glob"),
        case("bad json pointer escape",
             BASE.replace("strategy: text_violations", "strategy: json_violations\n      field_map: {file: \"a~2\", message: m}")
                 .replace("      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$'\n      defaults: {code: \"X1\"}\n", ""),
             12, "gates.fake.parsing.field_map.file", "~0"),
        case("empty active gates", BASE.replace("[fake]", "[]"), 2, "active_gates", "is empty"),
        case("pattern and patterns together",
             BASE.replace("      defaults:", "      patterns: [{pattern: '(?P<file>x)'}]\n      defaults:"), 13,
             "gates.fake.parsing.patterns", "not both"),
        case("bad regex in a patterns entry",
             BASE.replace("      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$'\n      defaults: {code: \"X1\"}\n",
                          "      patterns:\n        - pattern: '(?P<file>x)'\n        - pattern: '(?P<file>'\n"), 14,
             "gates.fake.parsing.patterns[1].pattern", "invalid regex"),
        case("unknown key in project_scope", format!("{BASE}project_scope: {{include_glob: []}}\n"), 14,
             "project_scope.include_glob", "did you mean `include_globs`?"),
        case("unknown key in artifact_logging", format!("{BASE}artifact_logging: {{enable: true}}\n"), 14,
             "artifact_logging.enable", "did you mean `enabled`?"),
        case("unknown key in a gate", BASE.replace("    name:", "    nmae:"), 5,
             "gates.fake.nmae", "did you mean `name`?"),
        case("unknown key in execution", BASE.replace("      command:", "      timeout: 5\n      command:"), 7,
             "gates.fake.execution.timeout", "did you mean `timeout_seconds`?"),
        case("unknown key in capabilities", format!("{BASE}    capabilities: {{file_type: [.py]}}\n"), 14,
             "gates.fake.capabilities.file_type", "did you mean `file_types`?"),
        case("unknown key in a gate's scope", format!("{BASE}    scope: {{include: []}}\n"), 14,
             "gates.fake.scope.include", "did you mean `include_globs`?"),
        case("unsupported version", BASE.replace("version: \"1\"", "version: \"2\""), 1,
             "version", "unsupported version"),
        case("active_gates not a list", BASE.replace("[fake]", "fake"), 2,
             "active_gates", "expected sequence"),
        case("timeout not a number", BASE.replace("command: [\"bin/marker\"]", "command: [\"bin/marker\"]\n      timeout_seconds: ten"), 8,
             "gates.fake.execution.timeout_seconds", "invalid floating point"),
        case("exit code both ok and violations", BASE.replace("      fail_on: warning", "      fail_on: warning\n      exit_codes_ok: [0, 1]"), 8,
             "gates.fake.success", "in both"),
        case("file type without a dot", format!("{BASE}    capabilities: {{file_types: [py]}}\n"), 14,
             "gates.fake.capabilities.file_types[0]", "starting with `.`"),
        case("unknown fix_hint placeholder", format!("{BASE}    fix_hint: \"fix {{file}}\"\n"), 14,
             "gates.fake.fix_hint", "only `{files}`"),
        case("unknown install_hint placeholder", format!("{BASE}    install_hint: \"{{pip}} install x\"\n"), 14,
             "gates.fake.install_hint", "known: `{venv_bin}`, `{install}`, `{install_project}`"),
        case("working_dir outside the root", BASE.replace("command: [\"bin/marker\"]", "command: [\"bin/marker\"]\n      working_dir: ../x"), 8,
             "gates.fake.execution.working_dir", "without `..`"),
        case("zero max_files", format!("{BASE}artifact_logging: {{max_files: 0}}\n"), 14,
             "artifact_logging.max_files", "at least 1"),
        case("gate id with a space", BASE.replace("[fake]", "[\"bad id\"]").replace("  fake:", "  \"bad id\":"), 4,
             "gates.bad id", "letters, digits"),
        case("missing active_gates", "version: \"1\"\ngates: {}\n".to_string(), 1,
             "", "missing field `active_gates`"),
        case("unknown severity", BASE.replace("fail_on: warning", "fail_on: critical"), 9,
             "gates.fake.success.fail_on", "expected one of `info`, `warning`, `error`"),
        case("deeply nested yaml", format!("version: {}{}\n", "[".repeat(300), "]".repeat(300)), 1,
             "", "recursion limit exceeded"),
        case("aliases as a billion laughs", BASE.replace(
            "      command: [\"bin/marker\"]",
            "      command: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n      env: {A: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], B: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b], C: [*c,*c,*c,*c,*c,*c,*c,*c,*c]}"), 8,
             "gates.fake.execution.env.A", "expected string"),
        case("search path args without the placeholder",
             format!("{BASE}import_graph:\n  command: [\"bin/marker\"]\n  search_paths: {{args: [\"--src\"]}}\n"), 16,
             "import_graph.search_paths.args", "needs `{search_paths}`"),
        case("search path keys without a config to read",
             format!("{BASE}    search_paths: {{keys: [mypy_path]}}\n"), 14,
             "gates.fake.search_paths.keys", "needs `config`"),
        case("search path args on a gate",
             format!("{BASE}    search_paths: {{args: [x]}}\n"), 14,
             "gates.fake.search_paths.args", "belongs to `import_graph.search_paths`"),
        case("bases handed to the import analyzer",
             format!("{BASE}import_graph:\n  command: [\"bin/marker\"]\n  search_paths: {{package_bases: true, bases_env: MYPYPATH}}\n"), 16,
             "import_graph.search_paths.bases_env", "belongs to a gate's `search_paths`"),
        case("bases handed without package bases",
             format!("{BASE}    search_paths: {{bases_env: MYPYPATH}}\n"), 14,
             "gates.fake.search_paths.bases_env", "needs `package_bases: true`"),
        case("an explicit bases key without package bases",
             format!("{BASE}    search_paths: {{explicit_bases_key: explicit_package_bases}}\n"), 14,
             "gates.fake.search_paths.explicit_bases_key", "needs `package_bases: true`"),
        case("unknown key in search_paths",
             format!("{BASE}    search_paths: {{key: [x]}}\n"), 14,
             "gates.fake.search_paths.key", "unknown key"),
        Case {
            name: "non-UTF-8 bytes",
            text: [BASE.as_bytes(), b"# caf\xe9\n"].concat(),
            line: Some(14),
            key: "",
            message: "not valid UTF-8",
        },
        Case {
            name: "a 10 MB file",
            text: format!("{BASE}huge: [{}]\n", vec!["1"; 5_000_000].join(",")).into_bytes(),
            line: None,
            key: "",
            message: "larger than 1048576 bytes",
        },
    ]
}

#[test]
fn every_invalid_config_is_one_located_line_and_exit_2() {
    let project = Project::empty();
    project.fake_tool("marker", "touch ran.marker");
    project.write("a.py", "x = 1\n");
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 30, "the corpus has {} cases", all.len());
    for case in all {
        std::fs::write(project.path().join("c.yaml"), &case.text).unwrap();
        let run = project.qg(&["run", "--config", "c.yaml", "--scope", "project"]);
        let stderr = run.stderr.trim_end();
        let expected_prefix = match case.line {
            Some(line) => format!("qg: error: invalid config: c.yaml:{line}:"),
            None => "qg: error: invalid config: c.yaml: ".to_string(),
        };
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
    run.assert_fails_with(2, "did you mean `mypy`?");
}

/// [`BASE`] as a `[tool.qg]` table in a pyproject.toml beside another
/// table, to show the lines keep their numbers.
const PYPROJECT: &str = r#"[project]
name = "demo"

[tool.qg]
version = "1"
active_gates = ["fake"]

[tool.qg.gates.fake]
name = "Fake"
execution = { command = ["bin/marker"] }
success = { fail_on = "warning" }

[tool.qg.gates.fake.parsing]
strategy = "text_violations"
pattern = '^(?P<file>[^:]+):(?P<line>\d+): (?P<message>.*)$'
defaults = { code = "X1" }
"#;

/// A project with `text` as its pyproject.toml and a marker tool.
fn pyproject_project(text: &str) -> Project {
    let project = Project::empty();
    project.fake_tool("marker", "touch ran.marker");
    project.write("a.py", "x = 1\n");
    project.write("pyproject.toml", text);
    project
}

#[test]
fn a_tool_qg_table_is_the_config_when_there_is_no_yaml() {
    let project = pyproject_project(PYPROJECT);
    project.qg(&["run", "--scope", "project"]).assert_code(0);
    assert!(project.path().join("ran.marker").exists());
    let doctor = project.qg(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("pyproject.toml: 1 gates defined, 1 active"),
        "{}",
        doctor.stdout
    );
}

#[test]
fn every_invalid_tool_qg_table_is_one_located_line_and_exit_2() {
    let t = PYPROJECT;
    let cases = vec![
        case(
            "unknown key",
            t.replace("fail_on", "fial_on"),
            11,
            "tool.qg.gates.fake.success.fial_on",
            "did you mean `fail_on`?",
        ),
        case(
            "unknown strategy",
            t.replace("text_violations", "text_violation"),
            14,
            "tool.qg.gates.fake.parsing.strategy",
            "did you mean `text_violations`?",
        ),
        case(
            "invalid regex",
            t.replace(r"(?P<line>\d+)", r"(?P<line>\d+"),
            15,
            "tool.qg.gates.fake.parsing.pattern",
            "invalid regex",
        ),
        case(
            "undefined active gate",
            t.replace("[\"fake\"]", "[\"fkae\"]"),
            6,
            "tool.qg.active_gates[0]",
            "did you mean `fake`?",
        ),
        case(
            "duplicate key",
            t.replace("version = \"1\"\n", "version = \"1\"\nversion = \"1\"\n"),
            6,
            "",
            "defined twice",
        ),
        case(
            "wrong type",
            t.replace("[\"fake\"]", "\"fake\""),
            6,
            "tool.qg.active_gates",
            "expected a sequence",
        ),
        case(
            "missing active_gates",
            t.replace("active_gates = [\"fake\"]\n", ""),
            4,
            "tool.qg",
            "missing field `active_gates`",
        ),
        case(
            "unsupported version",
            t.replace("\"1\"", "\"2\""),
            5,
            "tool.qg.version",
            "unsupported version",
        ),
        case(
            "not TOML",
            t.replace("version = \"1\"", "version = \"1"),
            5,
            "",
            "",
        ),
    ];
    let mut failures = Vec::new();
    for case in cases {
        let project = pyproject_project(std::str::from_utf8(&case.text).unwrap());
        let run = project.qg(&["run", "--scope", "project"]);
        let stderr = run.stderr.trim_end();
        let prefix = format!(
            "qg: error: invalid config: pyproject.toml:{}:",
            case.line.unwrap()
        );
        let ok = run.code == 2
            && stderr.lines().count() == 1
            && stderr.starts_with(&prefix)
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
fn the_yaml_wins_over_tool_qg_and_says_so() {
    let project = pyproject_project(&PYPROJECT.replace("bin/marker", "bin/other"));
    project.write(".st3/quality.yaml", BASE);
    let run = project.qg(&[
        "run",
        "--scope",
        "project",
        "--format",
        "json",
        "--no-state",
    ]);
    run.assert_code(0);
    assert!(project.path().join("ran.marker").exists());
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("[tool.qg] table, but .st3/quality.yaml takes precedence"),
        "{warnings}"
    );
    let doctor = project.qg(&["doctor"]);
    assert!(
        doctor.stdout.contains("takes precedence"),
        "{}",
        doctor.stdout
    );
}

#[test]
fn a_table_without_gates_takes_the_built_in_ones() {
    let project =
        pyproject_project("[tool.qg]\nversion = \"1\"\nactive_gates = [\"ruff_check\"]\n");
    let doctor = project.qg(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("pyproject.toml: 6 gates defined, 1 active"),
        "{}",
        doctor.stdout
    );
    let explain = project.qg(&["explain", "ruff_check"]);
    assert!(explain.stdout.contains("ruff check"), "{}", explain.stdout);
}

#[test]
fn config_naming_a_pyproject_without_the_table_is_an_error() {
    let project = pyproject_project("[tool.ruff]\nline-length = 100\n");
    let run = project.qg(&["run", "--config", "pyproject.toml", "--scope", "project"]);
    run.assert_fails_with(2, "pyproject.toml: tool.qg: has no [tool.qg] table");
    // Discovered, another tool's table is not qg's: the built-in default runs.
    let doctor = project.qg(&["doctor"]);
    assert!(
        doctor.stdout.contains("<embedded default>"),
        "{}",
        doctor.stdout
    );
}
