//! `qg lsp` driven by real LSP clients: pytest-lsp (the pygls project's
//! client, pinned in requirements-tools.txt) runs `tests/lsp/test_lsp.py`
//! against the built binary, with the real tools on a fresh repository per
//! test.

mod common;

use std::process::Command;

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
