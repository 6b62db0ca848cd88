"""A language server that answers from a control directory: the other end
of qg's generic LSP client in tests/warm.rs. Everything it receives is
logged to CONTROL/log.jsonl; CONTROL/answers.json says what it answers:

  {"mode": "normal" | "crash" | "garbage" | "hang",
   "diagnostics": {"<root-relative file>": [<LSP Diagnostic>, ...]}}

A file's first pull is answered `unchanged` (as a server that has not
found the file yet does); qg must ask again.
"""

import json
import os
import sys
import time
import urllib.parse

CONTROL = sys.argv[1]
log = open(os.path.join(CONTROL, "log.jsonl"), "a", buffering=1)


def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.decode().strip()
        if not line:
            break
        name, value = line.split(":", 1)
        headers[name.lower()] = value.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def answers():
    with open(os.path.join(CONTROL, "answers.json")) as f:
        return json.load(f)


root = None
seen = set()
while True:
    message = read()
    log.write(json.dumps(message) + "\n")
    method = message.get("method")
    if method == "initialize":
        root = urllib.parse.unquote(message["params"]["rootUri"][len("file://") :])
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"diagnosticProvider": {"interFileDependencies": True, "workspaceDiagnostics": False}}}})
    elif method == "initialized":
        send({"jsonrpc": "2.0", "id": "config-1", "method": "workspace/configuration", "params": {"items": [{"section": "fake.analysis"}, {"section": "missing"}]}})
    elif method == "textDocument/diagnostic":
        control = answers()
        mode = control.get("mode", "normal")
        if mode == "crash":
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            send({"jsonrpc": "2.0", "id": message["id"], "result": "not a report"})
            continue
        path = urllib.parse.unquote(message["params"]["textDocument"]["uri"][len("file://") :])
        file = os.path.relpath(path, root)
        if file not in seen:
            seen.add(file)
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"kind": "unchanged", "resultId": "0"}})
            continue
        items = control.get("diagnostics", {}).get(file, [])
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"kind": "full", "items": items}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif "id" in message and method is not None:
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
