//! `project` and `files` scopes in real temp git repos, and the `auto`
//! fallback that stands until the baseline state machine exists.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use common::Project;
use serde_json::Value;

fn files_json(project: &Project, args: &[&str]) -> Value {
    let mut full = vec!["files", "--format", "json"];
    full.extend_from_slice(args);
    let run = project.qg(&full);
    run.assert_code(0);
    run.json()
}

use common::scope_paths as paths;

fn repo_with_every_kind_of_file() -> Project {
    let project = Project::empty();
    project.write("pkg/tracked.py", "x = 1\n");
    project.write("pkg/gone.py", "x = 1\n");
    project.write(".gitignore", "ignored.py\ngenerated/\n");
    project.write("README.md", "# readme\n");
    project.git_init();
    std::fs::remove_file(project.path().join("pkg/gone.py")).unwrap();
    project.write("pkg/untracked.py", "x = 1\n");
    project.write("ignored.py", "x = 1\n");
    project.write("generated/g.py", "x = 1\n");
    project.write(".venv/lib/site.py", "x = 1\n");
    project.write("build/out.py", "x = 1\n");
    project.write("src/deep/er/mod.pyi", "x: int\n");
    project
}

#[test]
fn project_scope_is_tracked_plus_untracked_minus_ignored_deleted_and_excluded() {
    let project = repo_with_every_kind_of_file();
    let json = files_json(&project, &["--scope", "project"]);
    assert_eq!(json["mode"], "project");
    // README.md too: ruff formats the Python code blocks of Markdown.
    assert_eq!(
        paths(&json),
        [
            "README.md",
            "pkg/tracked.py",
            "pkg/untracked.py",
            "src/deep/er/mod.pyi"
        ]
    );
    assert_eq!(
        json["files"][0]["reasons"],
        serde_json::json!(["project_glob"])
    );
}

#[test]
fn project_scope_include_and_exclude_globs_both_apply() {
    let project = repo_with_every_kind_of_file();
    let config = qg::config::EMBEDDED_DEFAULT
        .replace(
            "include_globs: [\"**/*.py\", \"**/*.pyi\", \"**/*.ipynb\", \"**/*.md\",\n                  \"**/pyproject.toml\", \"**/ruff.toml\", \"**/.ruff.toml\"]",
            "include_globs: [\"pkg/**/*.py\"]",
        )
        .replace(
            "    - \".venv/**\"\n",
            "    - \".venv/**\"\n    - \"pkg/untracked.py\"\n",
        );
    project.write(".st3/quality.yaml", &config);
    let json = files_json(&project, &["--scope", "project"]);
    assert_eq!(paths(&json), ["pkg/tracked.py"]);
}

#[test]
fn explicit_paths_expand_directories_and_respect_excludes() {
    let project = repo_with_every_kind_of_file();
    let json = files_json(&project, &["pkg", "build/out.py", "README.md"]);
    assert_eq!(json["mode"], "files");
    // build/** is excluded by project_scope even when named; README.md is
    // named explicitly so it is in scope (gates then filter by file type).
    assert_eq!(
        paths(&json),
        ["README.md", "pkg/tracked.py", "pkg/untracked.py"]
    );
    assert_eq!(json["files"][0]["reasons"], serde_json::json!(["explicit"]));
}

#[test]
fn explicit_paths_are_relative_to_the_current_directory() {
    let project = repo_with_every_kind_of_file();
    let run = common::qg_in(
        &project.path().join("pkg"),
        &["files", "tracked.py", "--format", "json"],
    );
    run.assert_code(0);
    assert_eq!(paths(&run.json()), ["pkg/tracked.py"]);
}

#[test]
fn missing_and_outside_paths_are_errors() {
    let project = repo_with_every_kind_of_file();
    let run = project.qg(&["files", "nope.py"]);
    run.assert_code(2);
    assert_eq!(run.stderr.trim(), "qg: error: path does not exist: nope.py");
    let run = project.qg(&["files", "/etc/hostname"]);
    run.assert_fails_with(2, "outside the project root");
    let run = project.qg(&["files", "../"]);
    run.assert_fails_with(2, "outside the project root");
}

#[test]
fn auto_falls_back_to_project_and_says_why() {
    let project = repo_with_every_kind_of_file();
    let json = files_json(&project, &[]);
    assert_eq!(json["requested"], "auto");
    assert_eq!(json["mode"], "project");
    assert!(
        json["fallback_reason"]
            .as_str()
            .unwrap()
            .contains("no green run yet"),
        "{json}"
    );
    assert_eq!(paths(&json).len(), 4);
}

#[test]
fn outside_git_project_walks_the_directory_and_auto_is_an_error() {
    let project = Project::empty();
    project.write("a.py", "x = 1\n");
    project.write("sub/b.py", "x = 1\n");
    project.write(".venv/c.py", "x = 1\n");
    let json = files_json(&project, &["--scope", "project"]);
    assert_eq!(paths(&json), ["a.py", "sub/b.py"]);
    let run = project.qg(&["files"]);
    run.assert_fails_with(2, "needs a git repository");
}

#[test]
fn scope_and_paths_together_are_a_usage_error() {
    let project = repo_with_every_kind_of_file();
    let run = project.qg(&["files", "--scope", "project", "pkg"]);
    run.assert_fails_with(2, "paths imply --scope files");
}

#[test]
fn a_non_utf8_file_name_is_in_scope_and_listed_quoted() {
    use std::os::unix::ffi::OsStrExt;
    let project = Project::empty();
    project.write("ok.py", "x = 1\n");
    project.git_init();
    // On a topic branch, so that branch scope has a parent (master).
    let checkout = std::process::Command::new("git")
        .args(["checkout", "-q", "-b", "topic"])
        .current_dir(project.path())
        .status()
        .unwrap();
    assert!(checkout.success());
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    std::fs::write(project.path().join(name), "x = 1\n").unwrap();
    // Project scope lists every file; branch scope the untracked one.
    for (scope, listed) in [("project", "\nok.py\n"), ("branch", "\n")] {
        let text = project.qg(&["files", "--scope", scope]);
        text.assert_code(0);
        assert_eq!(
            text.stdout,
            format!("\"caf\\xE9.py\"{listed}"),
            "--scope {scope}"
        );
        let json = files_json(&project, &["--scope", scope]);
        assert_eq!(paths(&json)[0], r#""caf\xE9.py""#, "--scope {scope}");
    }
    // Excluding it by glob still works on the decoded name.
    project.write(
        ".st3/quality.yaml",
        &common::default_config_excluding("caf*"),
    );
    let json = files_json(&project, &["--scope", "project"]);
    assert_eq!(paths(&json), ["ok.py"]);
}

/// A named path that yields no file is never a silent "nothing to check":
/// qg names the filter that removed it.
#[test]
fn a_named_path_that_yields_nothing_says_which_filter_removed_it() {
    let project = repo_with_every_kind_of_file();
    project.write("docs/conf.txt", "not python\n");
    // Ignored files deeper down are found; an empty directory, or one that
    // holds only a link to files elsewhere, is empty: git ignores nothing there.
    project.write("generated/deeper/sub/h.py", "x = 1\n");
    std::fs::create_dir_all(project.path().join("empty/nested")).unwrap();
    std::os::unix::fs::symlink("../pkg", project.path().join("empty/link")).unwrap();
    let json = files_json(
        &project,
        &["docs", "build/out.py", "generated/deeper", ".venv", "empty"],
    );
    assert!(paths(&json).is_empty(), "{json}");
    assert_eq!(
        json["unmatched"],
        serde_json::json!([
            {"path": "docs", "reason": "the one file under it does not match project_scope.include_globs (**/*.py, **/*.pyi, **/*.ipynb, **/*.md, **/pyproject.toml, **/ruff.toml, **/.ruff.toml)"},
            {"path": "build/out.py", "reason": "excluded by project_scope.exclude_globs `build/**`"},
            {"path": "generated/deeper", "reason": "git ignores every file under it"},
            {"path": ".venv", "reason": "every matching file under it is excluded by project_scope.exclude_globs (`.venv/**`)"},
            {"path": "empty", "reason": "it holds no file"},
        ])
    );
    let run = project.qg(&["run", "docs", "build/out.py"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout.lines().next().unwrap(),
        "⏭️ nothing to check — docs: the one file under it does not match project_scope.include_globs (**/*.py, **/*.pyi, **/*.ipynb, **/*.md, **/pyproject.toml, **/ruff.toml, **/.ruff.toml); build/out.py: excluded by project_scope.exclude_globs `build/**` (files)"
    );
    // Next to paths that do yield files, the others are warnings.
    let run = project.qg(&[
        "run",
        "pkg/tracked.py",
        "docs",
        "--format",
        "json",
        "--gate",
        "ruff_check",
    ]);
    let json = run.json();
    assert_eq!(
        json["warnings"],
        serde_json::json!(["docs: the one file under it does not match project_scope.include_globs (**/*.py, **/*.pyi, **/*.ipynb, **/*.md, **/pyproject.toml, **/ruff.toml, **/.ruff.toml)"]),
        "{json}"
    );
}
