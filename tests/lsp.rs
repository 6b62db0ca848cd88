//! `qg lsp` driven by real LSP clients: pytest-lsp (the pygls project's
//! client, pinned in requirements-tools.txt) runs `tests/lsp/test_lsp.py`
//! against the built binary, with the real tools on a fresh repository per
//! test.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use common::{repo_dir, tools_venv};

#[test]
fn pytest_lsp_flows() {
    let venv = tools_venv();
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
               "params": {"rootUri": root, "capabilities": {}}}),
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_qg"))
        .arg("lsp")
        .current_dir(project.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
    assert!(
        shown.iter().any(|m| m["params"]["type"] == 2
            && m["params"]["message"]
                .as_str()
                .unwrap()
                .contains("/etc/hostname is outside the project")),
        "{messages:#?}"
    );
}

fn url_of(path: &std::path::Path) -> String {
    format!("file://{}", path.canonicalize().unwrap().display())
}
