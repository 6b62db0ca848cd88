//! The result cache's shared store against real servers the tests start
//! themselves — Redis (Debian's `redis-server`), WebDAV (WsgiDAV) and an
//! S3 endpoint (moto's server), the last two from the test virtualenv:
//! one clone writes, another with an empty local store reads every file's
//! findings from the server and gets the tool's verdict. On Redis, the
//! faults: an entry cut short, an entry under a key it does not match, a
//! server that stops answering, and one killed mid-run. Each server serves
//! every case of its test.
#![cfg(unix)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{git, tools_venv, Project, Run};
use serde_json::Value;

/// A server a test started, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `program args…` (`{port}` and `{dir}` filled in) and waits until
/// it accepts connections.
fn serve(program: &Path, args: &[&str]) -> Server {
    assert!(
        program.is_file(),
        "{} is missing: scripts/test.sh (the README's test command) installs it",
        program.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("{port}", &port.to_string())
                .replace("{dir}", dir.path().to_str().unwrap())
        })
        .collect();
    let child = Command::new(program)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < until,
            "{} did not start",
            program.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Server {
        child,
        port,
        _dir: dir,
    }
}

fn on_path(program: &str) -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(program))
}

/// `qg args…` in `dir`: the real tools, its own local store `local`, the
/// shared store `shared` (`QG_CACHE_SHARED`; `FROM_CONFIG`: not set, the
/// config names it), and `vars`.
fn qg(dir: &Path, local: &Path, shared: &str, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_qg"));
    command
        .args(args)
        .current_dir(dir)
        .env("VIRTUAL_ENV", tools_venv())
        .env("QG_CACHE_DIR", local)
        .env("QG_NO_CACHE", "0")
        .env("QG_CACHE_SHARED", shared)
        .envs(vars.iter().copied())
        .env("CI", "true");
    if shared == FROM_CONFIG {
        command.env_remove("QG_CACHE_SHARED");
    }
    Run::from(command.output().unwrap())
}

/// See [`qg`].
const FROM_CONFIG: &str = "(the config's)";

/// Two clones of the warm fixture.
struct Clones {
    writer: Project,
    reader: tempfile::TempDir,
}

impl Clones {
    fn new() -> Clones {
        let writer = Project::fixture("warm");
        writer.write("app/lint.py", "import os\n");
        git(writer.path(), &["add", "-A"]);
        git(writer.path(), &["commit", "-q", "-m", "a finding"]);
        let reader = tempfile::tempdir().unwrap();
        git(
            reader.path(),
            &["clone", "-q", writer.path().to_str().unwrap(), "."],
        );
        Clones { writer, reader }
    }
}

/// A project-scope run of ruff's lint, as JSON, recording nothing.
const RUN: &str = "run --scope project --format json --no-state --gate ruff_check";

/// A run's ruff findings, its cache share, its warnings.
fn ruff_run(dir: &Path, shared: &str, vars: &[(&str, &str)]) -> (Vec<String>, Value, String) {
    let local = tempfile::tempdir().unwrap();
    ruff_run_with(dir, local.path(), shared, vars)
}

/// [`ruff_run`] with the local store `local`.
fn ruff_run_with(
    dir: &Path,
    local: &Path,
    shared: &str,
    vars: &[(&str, &str)],
) -> (Vec<String>, Value, String) {
    let run = qg(
        dir,
        local,
        shared,
        vars,
        &RUN.split(' ').collect::<Vec<_>>(),
    );
    assert!(
        run.code == 0 || run.code == 1,
        "{}{}",
        run.stdout,
        run.stderr
    );
    let report = run.json();
    let gate = &report["gates"][0];
    let found = gate["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| format!("{}:{} {}", v["file"], v["line"], v["code"]))
        .collect();
    let warnings = format!("{} {}", report["warnings"], gate["warnings"]);
    (found, gate["cache"].clone(), warnings)
}

/// One clone writes, the other reads every file's findings from the store.
fn shares_through(url: &str, vars: &[(&str, &str)]) -> Clones {
    let clones = Clones::new();
    let truth = ruff_run(clones.writer.path(), "", &[("QG_NO_CACHE", "1")]).0;
    assert!(!truth.is_empty(), "the fixture has a finding");
    let mut writing = vars.to_vec();
    writing.push(("QG_CACHE_SHARED_WRITE", "1"));
    let (found, cache, warnings) = ruff_run(clones.writer.path(), url, &writing);
    assert_eq!(found, truth);
    assert!(cache["stored"].as_u64().unwrap() > 0, "{cache} {warnings}");
    assert!(!warnings.contains("shared result store"), "{warnings}");
    let (found, cache, warnings) = ruff_run(clones.reader.path(), url, vars);
    assert_eq!(found, truth, "{warnings}");
    assert_eq!(cache["misses"], 0, "{cache} {warnings}");
    assert_eq!(cache["shared"], cache["hits"], "{cache}");
    clones
}

#[test]
fn an_s3_endpoint_shares_results_between_clones() {
    let server = serve(
        &tools_venv().join("bin/moto_server"),
        &["-H", "127.0.0.1", "-p", "{port}"],
    );
    let mut bucket = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        bucket,
        "PUT /qg-results HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        server.port
    )
    .unwrap();
    let mut answer = String::new();
    bucket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let url = format!(
        "s3://qg-results/team?endpoint=http://127.0.0.1:{}&region=us-east-1",
        server.port
    );
    let credentials = [
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
    ];
    shares_through(&url, &credentials);
}

#[test]
fn a_webdav_server_shares_results_between_clones() {
    let server = serve(
        &tools_venv().join("bin/wsgidav"),
        &[
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
            "--root",
            "{dir}",
            "--auth",
            "anonymous",
        ],
    );
    let url = format!("webdav:///team?endpoint=http://127.0.0.1:{}", server.port);
    shares_through(&url, &[]);

    // The URL committed in the config, and a writer whose own store
    // already holds every answer: it shares what the team's lacks.
    let clones = Clones::new();
    let config = format!(
        "version: \"1\"\nactive_gates: [ruff_check]\ncache:\n  shared: \"webdav:///configured?endpoint=http://127.0.0.1:{}\"\n",
        server.port
    );
    for dir in [clones.writer.path(), clones.reader.path()] {
        std::fs::create_dir_all(dir.join(".st3")).unwrap();
        std::fs::write(dir.join(".st3/quality.yaml"), &config).unwrap();
    }
    let local = tempfile::tempdir().unwrap();
    let truth = ruff_run_with(clones.writer.path(), local.path(), "", &[]);
    assert_eq!(truth.1["stored"], 7, "{}", truth.1);
    let writing = [("QG_CACHE_SHARED_WRITE", "1")];
    let (found, cache, warnings) =
        ruff_run_with(clones.writer.path(), local.path(), FROM_CONFIG, &writing);
    assert_eq!(found, truth.0);
    assert_eq!(
        (cache["hits"].as_u64(), cache["shared"].as_u64()),
        (Some(7), None),
        "{cache} {warnings}"
    );
    let (found, cache, warnings) = ruff_run(clones.reader.path(), FROM_CONFIG, &[]);
    assert_eq!(found, truth.0);
    assert_eq!(
        cache["shared"], 7,
        "the writer shared its own store's answers: {cache} {warnings}"
    );

    // A credential in the committed URL is a config error.
    std::fs::write(
        clones.reader.path().join(".st3/quality.yaml"),
        "version: \"1\"\nactive_gates: [ruff_check]\ncache:\n  shared: \"redis://:hunter2@cache:6379/0\"\n",
    )
    .unwrap();
    let refused = qg(
        clones.reader.path(),
        local.path(),
        FROM_CONFIG,
        &[],
        &["run"],
    );
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("cache.shared") && refused.stderr.contains("holds a credential"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains("hunter2"), "{}", refused.stderr);
}

fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new(on_path("redis-cli"))
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_redis_store_shares_results_and_its_faults_never_change_a_verdict() {
    let server = serve(
        &on_path("redis-server"),
        &[
            "--port",
            "{port}",
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            // DEBUG SLEEP, the server that stops answering.
            "--enable-debug-command",
            "local",
        ],
    );
    let port = server.port;
    let url = format!("redis://127.0.0.1:{port}/0/team");
    let clones = shares_through(&url, &[]);
    let reader = clones.reader.path();
    let truth = ruff_run(reader, "", &[("QG_NO_CACHE", "1")]).0;
    let mut keys: Vec<String> = redis_cli(port, &["--scan"])
        .lines()
        .filter(|k| k.contains("results-v1/") && k.ends_with(".json"))
        .map(str::to_string)
        .collect();
    keys.sort();
    assert!(keys.len() >= 2, "{keys:?}");

    // An entry cut short: that file is checked, with a warning.
    let whole = redis_cli(port, &["GET", &keys[0]]);
    redis_cli(port, &["SET", &keys[0], &whole[..whole.len() / 2]]);
    let (found, cache, warnings) = ruff_run(reader, &url, &[]);
    assert_eq!(found, truth);
    assert!(warnings.contains("is not a whole entry"), "{warnings}");
    assert_eq!(cache["misses"], 1, "{cache}");

    // Another key's entry under this key: a miss, with a warning.
    let other = redis_cli(port, &["GET", &keys[1]]);
    redis_cli(port, &["SET", &keys[0], other.trim_end()]);
    let (found, cache, warnings) = ruff_run(reader, &url, &[]);
    assert_eq!(found, truth);
    assert!(
        warnings.contains("holds the entry of another key"),
        "{warnings}"
    );
    assert_eq!(cache["misses"], 1, "{cache}");

    // A server that stops answering: the run checks without it.
    let mut sleeper = Command::new(on_path("redis-cli"))
        .args(["-p", &port.to_string(), "DEBUG", "SLEEP", "5"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let (found, cache, warnings) = ruff_run(reader, &url, &[("QG_CACHE_SHARED_TIMEOUT", "1")]);
    let _ = sleeper.wait();
    assert_eq!(found, truth);
    assert!(
        warnings.contains("did not answer within 1s: this run checks without it"),
        "{warnings}"
    );
    assert_eq!(cache["hits"], 0, "{cache}");

    // Killed mid-run (by the tool, between the lookups and the writes):
    // the tool's verdict, and one warning.
    let bin = tempfile::tempdir().unwrap();
    let ruff = tools_venv().join("bin/ruff");
    let wrapper = bin.path().join("ruff");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$1\" in --version) ;; *) redis-cli -p {port} shutdown nosave >/dev/null 2>&1 ;; esac\nexec {} \"$@\"\n",
            ruff.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        bin.path().display(),
        on_path("redis-cli").parent().unwrap().display()
    );
    std::fs::write(reader.join("app/new.py"), "import sys\n").unwrap();
    let local = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_qg"))
        .args(RUN.split(' '))
        .current_dir(reader)
        .env("PATH", path)
        .env_remove("VIRTUAL_ENV")
        .env("QG_CACHE_DIR", local.path())
        .env("QG_NO_CACHE", "0")
        .env("QG_CACHE_SHARED", &url)
        .env("QG_CACHE_SHARED_WRITE", "1")
        .env("QG_CACHE_SHARED_TIMEOUT", "2")
        .env("CI", "true")
        .output()
        .unwrap();
    let run = Run::from(run);
    let report = run.json();
    let gate = &report["gates"][0];
    assert_eq!(gate["status"], "failed", "{}", run.stdout);
    assert!(
        gate["violations"].to_string().contains("app/new.py"),
        "the new file's finding: {}",
        run.stdout
    );
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("this run's new results stay on this machine"),
        "{}",
        run.stdout
    );
    assert_eq!(
        warnings.matches("shared result store").count(),
        1,
        "{warnings}"
    );
    drop(server);
}
