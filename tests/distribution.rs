//! qg as Python developers install it: a binary wheel built by maturin that
//! puts `qg` on PATH in a fresh virtualenv with no Rust, and the
//! pre-commit/prek hooks of `.pre-commit-hooks.yaml`, run by prek on a
//! fixture repository with staged files.
//!
//! Both build qg with the tests' own (dev) profile and reuse what the tests'
//! build compiled (all but the dependencies whose features the
//! dev-dependencies change, and qg's own crates): cargo's build directory
//! (its intermediate files) is the tests' target directory, while the
//! wheel's binary lands in `target/dist`. The test binaries' `target/debug/qg` is never replaced
//! under the tests running beside this one, and the dependencies are not
//! built a second time (a release build of them took more of CI's two cores
//! than any test). That the release profile builds is the release
//! workflow's business; packaging is the same for both.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{repo_dir, tools_venv};

fn venv_bin(tool: &str) -> PathBuf {
    tools_venv().join("bin").join(tool)
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{command:?} failed:\n{text}");
    text
}

/// A fixture committed to a git repository, `pkg/lint.py` edited and staged.
fn staged_fixture(dir: &Path) {
    common::copy_dir(&repo_dir().join("fixtures/dirty"), dir);
    common::git(dir, &["init", "-q", "-b", "main"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "fixture"]);
    let lint = dir.join("pkg/lint.py");
    let text = std::fs::read_to_string(&lint).unwrap();
    std::fs::write(&lint, format!("{text}x = 1\n")).unwrap();
    common::git(dir, &["add", "pkg/lint.py"]);
}

/// Builds as the tests' build did: the dev profile, its intermediate files
/// in the tests' target directory, the final ones in `target/dist`.
fn shares_the_tests_build(command: &mut Command) -> &mut Command {
    // <target>/debug/qg: the directory the tests' build wrote.
    let tests_target = Path::new(env!("CARGO_BIN_EXE_qg"))
        .ancestors()
        .nth(2)
        .expect("the test binary's qg is in <target>/<profile>/");
    command
        .env("CARGO_TARGET_DIR", repo_dir().join("target/dist"))
        .env("CARGO_BUILD_BUILD_DIR", tests_target)
        // pip's build of the wheel from source, inside prek.
        .env("MATURIN_PEP517_ARGS", "--profile dev")
        // Unlinted (scripts/test.sh lints the tests' build): qg's crates are
        // compiled anew here (without the dev-dependencies' features, and
        // prek's from its clone), and clippy's passes would only slow that.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
}

#[test]
fn the_wheel_installs_qg_without_rust_and_the_hooks_run_on_staged_files() {
    let work = tempfile::tempdir().unwrap();
    let wheels = work.path().join("wheels");
    run(shares_the_tests_build(
        Command::new(venv_bin("maturin"))
            .args(["build", "--profile", "dev", "--out"])
            .arg(&wheels)
            .current_dir(repo_dir()),
    ));
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("maturin built a wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("qg-0.1.0-py3-none-"), "{name}");

    // A fresh virtualenv with only the wheel: no Rust on its PATH.
    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index"])
        .arg(&wheel));
    let qg = venv.join("bin/qg");
    let clean_path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let version = run(Command::new(&qg).arg("--version").env("PATH", &clean_path));
    assert_eq!(version.trim(), "qg 0.1.0");
    let project = common::Project::fixture("dirty");
    let out = Command::new(&qg)
        .args(["run", "--scope", "project", "--format", "json"])
        .current_dir(project.path())
        .env("PATH", &clean_path)
        .env("VIRTUAL_ENV", tools_venv())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_eq!(report["summary"]["failed"], 4, "{report}");

    // The hooks, through prek, on a repository with one staged file.
    for hook in ["qg-system", "qg"] {
        let repo = tempfile::tempdir().unwrap();
        staged_fixture(repo.path());
        let out = shares_the_tests_build(&mut Command::new(venv_bin("prek")))
            .args(["try-repo"])
            .arg(repo_dir())
            .arg(hook)
            .current_dir(repo.path())
            .env(
                "PATH",
                format!(
                    "{}:{}:{}",
                    venv.join("bin").display(),
                    tools_venv().join("bin").display(),
                    std::env::var("PATH").unwrap()
                ),
            )
            .env("VIRTUAL_ENV", tools_venv())
            // A cache of its own, as on a fresh machine: nothing prek set up
            // before (hook environments, a downloaded installer) is reused.
            .env("PREK_HOME", work.path().join("prek-home"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // The staged file alone, and its lint findings: the hook fails.
        assert_eq!(
            out.status.code(),
            Some(1),
            "{hook}:\n{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(&format!("- hook id: {hook}\n")), "{text}");
        assert!(text.contains("pkg/lint.py"), "{text}");
        assert!(text.contains("F401"), "{text}");
        assert!(
            !text.contains("pkg/typing_errors.py"),
            "checked more than the staged file:\n{text}"
        );
    }
}
