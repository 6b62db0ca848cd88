//! Every console example of the README and the book, run against the built
//! qg with the real tools: a page whose example no longer prints what it
//! shows fails here.
//!
//! A ```` ```console ```` block is a list of `$ command` lines, each followed
//! by its expected output (stdout and stderr together) and, when it does not
//! exit 0, a `? CODE` line, as trycmd writes them; a command with a
//! here-document (`<<'EOF'`) goes on to its end marker. The commands of one page
//! run in order in one project, named by a `<!-- example-project: NAME -->`
//! comment on the page: `demo` is a git repository holding a copy of
//! `examples/demo`, `empty` an empty one; its `.venv` is the test tools'
//! virtualenv. Outputs are compared after the same normalization of both
//! sides (durations, log names, commit ids, pids, versions; the project's
//! directory is shown as `/home/ada/demo`), with snapbox's `[..]`
//! (anything on a line) and `...` (any lines); `$ cd DIR` changes the
//! directory for the rest of the page.
// Unix: the examples are shell commands.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{copy_dir, repo_dir, tools_venv};
use regex::Regex;

/// One `$ command` and what it should print.
#[derive(Debug)]
struct Example {
    /// The Markdown file and line, for the failure message.
    at: String,
    command: String,
    expected: String,
    code: i32,
}

/// The pages whose examples run, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let root = repo_dir();
    let mut pages = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// The `example-project` a page names.
fn project_of(text: &str) -> Option<String> {
    let start = text.find("<!-- example-project: ")? + "<!-- example-project: ".len();
    let end = start + text[start..].find(" -->")?;
    Some(text[start..end].trim().to_string())
}

/// The examples of a page, in order.
fn examples(page: &Path, text: &str) -> Vec<Example> {
    let name = page.strip_prefix(repo_dir()).unwrap().display().to_string();
    let mut examples = Vec::new();
    let mut in_console = false;
    let mut current: Option<Example> = None;
    // The end marker of a here-document the current command is still reading.
    let mut heredoc: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        if let (Some(end), Some(example)) = (heredoc.as_ref(), current.as_mut()) {
            example.command.push('\n');
            example.command.push_str(line);
            if line == end {
                heredoc = None;
            }
            continue;
        }
        if !in_console {
            in_console = fence && line.trim() == "```console";
            continue;
        }
        if fence {
            examples.extend(current.take());
            in_console = false;
        } else if let Some(command) = line.strip_prefix("$ ") {
            examples.extend(current.take());
            heredoc = command
                .split_once("<<")
                .map(|(_, end)| end.trim().trim_matches(['\'', '"']).to_string());
            current = Some(Example {
                at: format!("{name}:{}", index + 1),
                command: command.to_string(),
                expected: String::new(),
                code: 0,
            });
        } else if let Some(example) = current.as_mut() {
            match line.strip_prefix("? ").map(str::parse::<i32>) {
                Some(Ok(code)) => example.code = code,
                _ => {
                    example.expected.push_str(line);
                    example.expected.push('\n');
                }
            }
        } else {
            panic!("{name}:{}: a console block starts with `$ `", index + 1);
        }
    }
    examples
}

/// A fresh project for a page.
fn sandbox(kind: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("qg-docs-")
        .tempdir()
        .unwrap();
    match kind {
        "demo" => copy_dir(&repo_dir().join("examples/demo"), dir.path()),
        "empty" => {}
        other => panic!("unknown example-project `{other}`"),
    }
    std::os::unix::fs::symlink(tools_venv(), dir.path().join(".venv")).unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join(".git/info/exclude"), ".venv\n").unwrap();
    git(dir.path(), &["add", "-A"]);
    git(
        dir.path(),
        &["commit", "-q", "--allow-empty", "-m", "Start"],
    );
    dir
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(git_identity())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn git_identity() -> [(&'static str, &'static str); 4] {
    [
        ("GIT_AUTHOR_NAME", "Ada"),
        ("GIT_AUTHOR_EMAIL", "ada@example.com"),
        ("GIT_COMMITTER_NAME", "Ada"),
        ("GIT_COMMITTER_EMAIL", "ada@example.com"),
    ]
}

/// Runs `command` with `sh` in `cwd`, qg first on `PATH`; stdout and stderr
/// together, and the exit code.
fn run(command: &str, cwd: &Path) -> (String, i32) {
    let qg_dir = Path::new(env!("CARGO_BIN_EXE_qg")).parent().unwrap();
    let path = format!(
        "{}:{}",
        qg_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(cwd)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("VIRTUAL_ENV")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        // A reader's machine trusts nothing yet: the examples' own store.
        .env(
            "QG_TRUST_FILE",
            std::env::temp_dir().join(format!("qg-docs-trust-{}.json", std::process::id())),
        )
        .envs(git_identity())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (text, output.status.code().unwrap_or(-1))
}

/// What differs from run to run, made the same on both sides.
fn normalize(text: &str, root: &Path) -> String {
    let root = root.display().to_string();
    let rules = [
        (r"\d{8}T\d{6}\.\d{3}Z-\d+-\d+-", "[LOG]-"),
        (r"\b\d+(\.\d+)? (ms|s)\b", "[TIME]"),
        (r"\b\d+(\.\d+)?s\b", "[TIME]"),
        (r"\bpid \d+\b", "pid [PID]"),
        (r"\b[0-9a-f]{7,40}\b", "[SHA]"),
        (r"\b\d+(\.\d+)? MiB\b", "[MEM]"),
        (r"\b\d+\.\d+\.\d+\b", "[VERSION]"),
    ];
    // The book's examples live in `/home/ada/demo`.
    // pyright indents the lines of a long message with no-break spaces.
    let mut text = text
        .replace(&root, "[ROOT]")
        .replace("/home/ada/demo", "[ROOT]")
        .replace('\u{a0}', " ");
    for (pattern, with) in rules {
        text = Regex::new(pattern)
            .unwrap()
            .replace_all(&text, with)
            .into_owned();
    }
    text
}

#[test]
fn every_console_example_prints_what_it_shows() {
    let mut count = 0;
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let examples = examples(&page, &text);
        if examples.is_empty() {
            continue;
        }
        let kind = project_of(&text).unwrap_or_else(|| {
            panic!(
                "{} has console examples but no `<!-- example-project: NAME -->`",
                page.display()
            )
        });
        let project = sandbox(&kind);
        let mut cwd = project.path().to_path_buf();
        for example in examples {
            count += 1;
            if let Some(dir) = example.command.strip_prefix("cd ") {
                cwd = cwd.join(dir.trim());
                continue;
            }
            let (actual, code) = run(&example.command, &cwd);
            let actual = normalize(&actual, project.path());
            let expected = normalize(&example.expected, project.path());
            let matched = snapbox::Assert::new()
                .palette(snapbox::report::Palette::plain())
                .try_eq(
                    None,
                    snapbox::Data::text(actual.clone()),
                    snapbox::Data::text(expected),
                );
            if code != example.code || matched.is_err() {
                let difference = match matched {
                    Err(e) => e.to_string(),
                    Ok(()) => actual,
                };
                failures.push(format!(
                    "{}: `{}` exited {code} (shown: {}):\n{difference}",
                    example.at, example.command, example.code,
                ));
            }
        }
    }
    eprintln!("{count} console examples run");
    assert!(
        count >= 30,
        "only {count} console examples: did the parser break?"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_parser_reads_commands_outputs_and_exit_codes() {
    let text = "x\n```console\n$ qg run\nA\n...\n? 1\n$ true\n$ cat > a <<'EOF'\nx\nEOF\nout\n```\n```text\n$ not run\n```\n";
    let found = examples(&repo_dir().join("README.md"), text);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[2].command, "cat > a <<'EOF'\nx\nEOF");
    assert_eq!(found[2].expected, "out\n");
    assert_eq!((found[0].command.as_str(), found[0].code), ("qg run", 1));
    assert_eq!(found[0].expected, "A\n...\n");
    assert_eq!(
        (found[1].command.as_str(), found[1].expected.as_str()),
        ("true", "")
    );
    assert_eq!(found[0].at, "README.md:3");
}

/// qg is not on the package index yet: the first install command the
/// README and the Installation page give is one that works from qg's
/// repository, and the CI recipes build qg instead of asking the index.
#[test]
fn the_first_install_line_works_before_the_package_is_published() {
    let read = |page: &str| std::fs::read_to_string(repo_dir().join(page)).unwrap();
    let first_sh_block = |text: &str, after: &str| {
        let rest = &text[text.find(after).unwrap_or_else(|| panic!("no {after:?}"))..];
        let start = rest.find("```sh\n").unwrap() + "```sh\n".len();
        rest[start..start + rest[start..].find("```").unwrap()].to_string()
    };
    for (page, section) in [
        ("README.md", "## Install"),
        ("docs/src/getting-started/installation.md", "## qg itself"),
    ] {
        let block = first_sh_block(&read(page), section);
        assert!(
            block.starts_with("cargo install --locked --path ."),
            "{page}: {block}"
        );
    }
    let index_install = Regex::new(r"(?m)^\s*-?\s*(run:\s*)?uv tool install qg\b").unwrap();
    for recipe in [
        "docs/src/how-to/github-actions.yml",
        "docs/src/how-to/gitlab-ci.md",
    ] {
        let text = read(recipe);
        assert!(!index_install.is_match(&text), "{recipe}");
        assert!(text.contains("cargo install --locked --git"), "{recipe}");
    }
}
