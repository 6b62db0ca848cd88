"""Framework overhead: qg's own cost over four gates of `true`, next to
`true` run four times, prek and pre-commit (`--only overhead`); and
`qg mcp`: start-up to the first `tools/list` answer, and `run_gates` on a
running server against the same run from the CLI (`--only mcp`)."""

import json
import subprocess
from pathlib import Path

from .common import (
    BIN,
    ENV,
    QG,
    TRUE_CONFIG,
    cmd,
    default_config,
    generate_package,
    git_commit_all,
    hooks_config,
    medians,
    ms,
    sequence,
)


def overhead(runs, tmp: Path):
    root = tmp / "overhead"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / ".st3").mkdir()
    (root / ".st3" / "quality.yaml").write_text(TRUE_CONFIG)
    (root / ".pre-commit-config.yaml").write_text(hooks_config([(f"t{i}", "true", False, False) for i in range(1, 5)]))
    git_commit_all(root)
    m = medians(
        {
            "qg": cmd([QG, "run", "--scope", "project"], root),
            "true x4": sequence([["true"]] * 4, root),
            "prek": cmd([BIN / "prek", "run", "--all-files"], root),
            "pre-commit": cmd([BIN / "pre-commit", "run", "--all-files"], root),
        },
        runs * 4,
        warmup=2,
    )
    added = (m["qg"] - m["true x4"]) * 1000
    return [
        (
            "framework overhead: 4 gates of `true`",
            f"qg {ms(m['qg'])}, `true` x4 {ms(m['true x4'])}",
            f"{added:+.1f} ms added (prek {(m['prek'] - m['true x4']) * 1000:+.1f} ms, pre-commit {(m['pre-commit'] - m['true x4']) * 1000:+.1f} ms)",
            "< 5 ms added",
            added < 5,
        ),
    ]


class McpServer:
    """`qg mcp` on pipes, spoken to in raw JSON-RPC (no SDK in the timing)."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            [QG, "mcp"], cwd=root, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def send(self, method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        return None if notify else self.next_id

    def answer(self, wanted):
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == wanted:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise RuntimeError(f"qg mcp answered with an error: {message}")
                return message["result"]
        raise RuntimeError("qg mcp closed stdout")

    def initialize(self):
        self.answer(
            self.send(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
            )
        )
        self.send("notifications/initialized", notify=True)

    def call(self, tool, arguments):
        return self.answer(self.send("tools/call", {"name": tool, "arguments": arguments}))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def mcp_server(runs, tmp: Path):
    """`qg mcp`: start to the first tools/list answer; a run_gates call on a
    running server against the same run from the CLI (four no-op gates over
    a 300-module package, and the four real gates on the same package)."""
    root = tmp / "mcp"
    generate_package(root, 300)
    git_commit_all(root)

    def first_list():
        server = McpServer(root)
        server.initialize()
        server.answer(server.send("tools/list"))
        server.close()

    startup = medians({"start to tools/list": first_list}, runs * 4, warmup=2)["start to tools/list"]
    rows = [
        (
            "`qg mcp`: process start to the first `tools/list` answer (initialize, initialized, tools/list)",
            ms(startup),
            ms(startup),
            "<= 50 ms",
            startup <= 0.050,
        )
    ]
    server = McpServer(root)
    server.initialize()
    arguments = {"scope": "project", "no_state": True, "max_violations": 100000, "new_only": False}
    cli = [QG, "run", "--scope", "project", "--format", "json", "--no-state"]
    for label, config in (("4 no-op gates", TRUE_CONFIG), ("the 4 default gates", default_config())):
        (root / ".st3").mkdir(exist_ok=True)
        (root / ".st3" / "quality.yaml").write_text(config)
        m = medians(
            {"cli": cmd(cli, root), "mcp": lambda: server.call("run_gates", arguments)},
            runs * (4 if "no-op" in label else 1),
            warmup=1,
        )
        added = (m["mcp"] - m["cli"]) * 1000
        # qg's own cost is measurable only next to no-op tools: with the real
        # ones, the tools' run-to-run spread (tens of ms) hides it.
        no_op = "no-op" in label
        rows.append(
            (
                f"`run_gates` on a running `qg mcp` vs `qg run --format json`, project scope, {label} (302 files)",
                f"mcp {ms(m['mcp'])}, cli {ms(m['cli'])}",
                f"{added:+.1f} ms",
                "<= +10 ms" if no_op else "(report: the tools' spread)",
                added <= 10 if no_op else True,
            )
        )
    server.close()
    return rows
