"""One finding record for every tool's output, and the multiset arithmetic
the comparisons need.

A finding is keyed by gate, root-relative file, line, code and message.
Differences between two runs of one tree state compare whole keys; a
difference between an edit and the state before it drops the line (an edit
that adds a line above a finding moves it without changing it)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

# Severities that decide a verdict (qg's gates fail on warnings); notes and
# pyright's "information" are reported by both sides but never fail.
FAILING = {"error", "warning"}


@dataclass(frozen=True, order=True)
class Finding:
    gate: str
    file: str
    line: int
    code: str
    message: str

    def moved(self) -> tuple:
        """The finding without its line: what survives an edit above it."""
        return (self.gate, self.file, self.code, self.message)

    def show(self) -> str:
        return f"{self.gate}: {self.file}:{self.line}: {self.message} [{self.code}]"


def relative(path: str, root: Path) -> str:
    """`path` relative to the project root, `/`-separated."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.resolve().relative_to(root.resolve())
        except ValueError:
            return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")


def mypy(stdout: str, root: Path, gate="mypy", cwd: Path | None = None) -> list[Finding]:
    """mypy --output=json: one JSON object per line."""
    found = []
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        item = json.loads(line)
        if item.get("severity") not in FAILING:
            continue
        file = relative(str((cwd or root) / item["file"]), root)
        found.append(Finding(gate, file, item.get("line") or 0, item.get("code") or "", item["message"]))
    return found


# mypy's text, as a mypy older than --output=json (1.11) prints it with
# --show-column-numbers --show-error-codes --no-pretty: `a.py:3:5: error:
# Message  [code]` (a note has no code; some findings have no column).
MYPY_TEXT = re.compile(
    r"^(?P<file>[^\n:]+):(?P<line>\d+):(?:\d+:)? (?P<severity>error|warning|note): "
    r"(?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
    re.MULTILINE,
)


def mypy_text(stdout: str, root: Path, gate="mypy", cwd: Path | None = None) -> list[Finding]:
    """A mypy older than --output=json: its text, a finding per line."""
    found = []
    for match in MYPY_TEXT.finditer(stdout):
        if match["severity"] not in FAILING:
            continue
        file = relative(str((cwd or root) / match["file"]), root)
        found.append(Finding(gate, file, int(match["line"]), match["code"] or "", match["message"]))
    return found


def pyright(stdout: str, root: Path, gate="pyright") -> list[Finding]:
    """pyright --outputjson: generalDiagnostics, 0-based lines."""
    start = stdout.find("{")
    report = json.loads(stdout[start:]) if start >= 0 else {}
    found = []
    for item in report.get("generalDiagnostics", []):
        if item.get("severity") not in FAILING:
            continue
        line = item.get("range", {}).get("start", {}).get("line", -1) + 1
        found.append(Finding(gate, relative(item["file"], root), line, item.get("rule") or "", item["message"]))
    return found


def ruff(stdout: str, root: Path, gate: str) -> list[Finding]:
    """ruff check/format --output-format=json: a list of findings."""
    start = stdout.find("[")
    items = json.loads(stdout[start:]) if start >= 0 else []
    found = []
    for item in items:
        line = (item.get("location") or {}).get("row") or 0
        found.append(Finding(gate, relative(item["filename"], root), line, item.get("code") or "", item["message"]))
    return found


def qg(report: dict, new_only: bool) -> list[Finding]:
    """A `qg run --format json` report's failing findings (a member's run
    counts as its gate's); `new_only` keeps those the baseline does not hold."""
    found = []
    for gate in report.get("gates", []):
        name = (gate.get("member") or {}).get("of", gate["id"])
        for item in gate.get("violations", []):
            if item.get("severity") not in FAILING:
                continue
            if new_only and item.get("baseline_state") == "unchanged":
                continue
            found.append(
                Finding(name, item.get("file", ""), item.get("line") or 0, item.get("code", ""), item["message"])
            )
    return found


def moved_files(found: list[Finding], renamed: dict) -> list[Finding]:
    """The findings with each renamed file's new name."""
    return [replace(f, file=renamed.get(f.file, f.file)) for f in found]


def difference(after: list[Finding], before: list[Finding]) -> Counter:
    """What `after` has that `before` has not, lines ignored, as a multiset."""
    return Counter(f.moved() for f in after) - Counter(f.moved() for f in before)


def same(left: list[Finding], right: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """The findings only `left` has and those only `right` has (whole keys)."""
    only_left = Counter(left) - Counter(right)
    only_right = Counter(right) - Counter(left)
    return sorted(only_left.elements()), sorted(only_right.elements())
