"""`qg lsp` on rich: from `didSave` to the last `publishDiagnostics` after a
return-type change, with the warm daemons and without, next to `qg run` of
the same edit (`--only lsp-rich`)."""

import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from .common import ENV, QG, RICH, RICH_DECIMAL, Daemons, edit_loop, git_commit_all, report_json, sdist, sec, sh, timed


class LspServer:
    """`qg lsp` on pipes, spoken to in raw LSP frames (no client library in
    the timing), with `$/progress` on so a run's end is seen."""

    def __init__(self, root: Path, *args):
        self.root = root
        self.proc = subprocess.Popen(
            [QG, "lsp", *args],
            cwd=root,
            env=ENV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.begun = set()
        self.diagnostics = {}
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
            },
        )
        self.notify("initialized", {})

    def write(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")

    def read(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("qg lsp closed stdout")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        message = json.loads(self.proc.stdout.read(length))
        if message.get("method") == "textDocument/publishDiagnostics":
            self.diagnostics[message["params"]["uri"]] = message["params"]["diagnostics"]
        if message.get("method") == "window/workDoneProgress/create":
            self.write({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return message

    def run_end(self, title="qg: checking what changed"):
        """Reads until a run of what changed, begun after this call, ends
        (a check of an opened file, which an open may start, is passed
        over); returns when its last diagnostics arrived (its end if it
        published none), how many files it published and its end message."""
        began = None
        last_publish = None
        published = 0
        while True:
            message = self.read()
            now = time.perf_counter()
            if message.get("method") == "textDocument/publishDiagnostics" and began:
                last_publish, published = now, published + 1
            if message.get("method") != "$/progress":
                continue
            value = message["params"]["value"]
            if value["kind"] == "begin" and value["title"] == title and message["params"]["token"] not in self.begun:
                self.begun.add(message["params"]["token"])
                began = message["params"]["token"]
            elif value["kind"] == "end" and message["params"]["token"] == began:
                return (last_publish or now), published, value.get("message", "")

    def open(self, relative):
        path = self.root / relative
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": path.read_text()}},
        )
        self.version = 1

    def save(self, relative):
        """didChange (the saved text) and didSave; returns the seconds from
        didSave to the last publishDiagnostics of the run it started."""
        path = self.root / relative
        self.version += 1
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": path.as_uri(), "version": self.version},
                "contentChanges": [{"text": path.read_text()}],
            },
        )
        started = time.perf_counter()
        self.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
        last, published, summary = self.run_end()
        self.last_run = (published, summary)
        return last - started

    def new_findings(self):
        """The diagnostics shown as new (not known to the baseline)."""
        return sum(d["data"]["baseline"] != "known" for ds in self.diagnostics.values() for d in ds)

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def lsp_rich(runs, tmp: Path):
    """Issue 25: `qg lsp` on rich, from didSave to the last
    publishDiagnostics after the filesize.decimal return-type change, with
    the warm daemons and without, next to the same edit through `qg run`."""
    root = sdist(RICH, tmp / "rich-lsp")
    sh([QG, "baseline", "write", "--no-progress"], root, check=False)
    git_commit_all(root, "baseline")
    sh([QG, "run"], root, check=False)
    module, old, new = RICH_DECIMAL
    edit, restore = edit_loop(root / module, old, new)
    daemons = Daemons(root)
    servers = {"warm": LspServer(root), "cold": LspServer(root, "--no-daemon")}
    try:
        for server in servers.values():
            server.run_end()  # the first check after initialize
            server.open(module)
        samples = {name: [] for name in ("lsp warm", "lsp cold", "run warm", "run cold")}
        for _ in range(runs + 1):
            for name, server in servers.items():
                edit()
                samples[f"lsp {name}"].append(server.save(module))
            for name, extra in (("run warm", ()), ("run cold", ("--no-daemon",))):
                edit()
                samples[name].append(timed(lambda extra=extra: report_json(root, *extra)))
        m = {name: statistics.median(values[1:]) for name, values in samples.items()}
        edit()
        new_in_run = report_json(root)["baseline"]["new"]
        published = {name: (*server.last_run, server.new_findings()) for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.close()
        daemons.stop()
        restore()
    ratio = m["lsp warm"] / m["lsp cold"]
    return [
        (
            (
                "rich, `qg lsp`: from `didSave` to the last `publishDiagnostics` after a return-type change "
                "with one importer (filesize.decimal), warm daemons and cold, next to `qg run` of the same edit"
            ),
            (
                f"lsp warm {sec(m['lsp warm'])}, lsp cold {sec(m['lsp cold'])}; `qg run` warm {sec(m['run warm'])}, "
                f"cold {sec(m['run cold'])}; each save published {published['warm'][0]} files (warm) / "
                f"{published['cold'][0]} (cold); new findings shown: {published['warm'][2]} warm, "
                f"{published['cold'][2]} cold, `qg run`: {new_in_run}; verdict: {published['warm'][1]}"
            ),
            f"{ratio:.2f}x",
            "warm <= 1.0 s; the editor's new findings = `qg run`'s",
            m["lsp warm"] <= 1.0 and published["warm"][2] == published["cold"][2] == new_in_run,
        )
    ]
