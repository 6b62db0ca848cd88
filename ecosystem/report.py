"""The results file (ecosystem/results.json, from the last full run) and the
book's "Ecosystem check" page generated from it."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import corpus, shell
from .corpus import Project
from .qgrun import QG

RESULTS = Path(__file__).resolve().parent / "results.json"
PAGE = shell.HERE / "docs" / "src" / "ecosystem.md"


@dataclass
class Run:
    results: list
    started: float
    edits: int
    full: bool
    # The qg commit when the run began: the qg it checked was built from it
    # (commits made while a long run goes on are not what it checked).
    commit: str


def differences(result: dict) -> list[str]:
    """Every way qg's verdict differed from the tools' own in one project."""
    found = []
    if "failure" in result:
        found.append(f"the check could not finish: {result['failure']}")
    for label, parity in result.get("parity", {}).items():
        for gate, row in parity["gates"].items():
            if not row["equal"]:
                detail = (
                    "; ".join(row["only_own"][:3] + row["only_qg"][:3])
                    or f"qg {row['status']}, own: {row['own_error'] or 'ran'}"
                )
                found.append(f"{label} whole project, {gate}: {row['own']} own vs {row['qg']} qg: {detail}")
    for step in result.get("steps", []):
        for label in ("cold", "warm"):
            outcome = step.get(label)
            if outcome and not outcome["ok"]:
                detail = "; ".join(
                    [f"missed {m}" for m in outcome["missing"][:3]]
                    + [f"invented {e}" for e in outcome["extra"][:3]]
                    + [f"error {e}" for e in outcome["errors"][:3]]
                )
                found.append(f"{label} {step['kind']} ({step['what']}): {detail}")
    for process in result.get("leftovers", []):
        found.append(f"left running: {process}")
    return found


def explained(project: Project | None, difference: str) -> str | None:
    """The cause corpus.toml gives a difference, or None: every item of it
    (`missed ...; invented ...`) must match an `explained` entry (by
    substring), so one explained finding cannot cover another beside it."""
    entries = project.extra.get("explained", []) if project else []
    causes = []
    for item in difference.split("): ", 1)[-1].split("; "):
        cause = next((e["cause"] for e in entries if e["match"] in item), None)
        if cause is None:
            return None
        causes.append(cause)
    return " / ".join(dict.fromkeys(causes))


def summarize(run: Run, projects: list[Project], log) -> int:
    """Logs every difference; returns how many have no explanation."""
    by_name = {p.name: p for p in projects}
    unexplained = 0
    for result in run.results:
        project = by_name.get(result["name"])
        result["differences"] = []
        for difference in differences(result):
            cause = explained(project, difference)
            result["differences"].append({"what": difference, "cause": cause})
            unexplained += cause is None
            log(
                f"{result['name']}: {'explained' if cause else 'DIFFERENCE'}: {difference}"
                + (f" ({cause})" if cause else "")
            )
    log(
        f"ecosystem: {len(run.results)} projects, {unexplained} unexplained differences, {time.time() - run.started:.0f} s"
    )
    return unexplained


def head_commit() -> str:
    """qg's commit now, short."""
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=shell.HERE, capture_output=True, text=True, check=False
    ).stdout.strip()


def _stamp(run: Run) -> tuple[str, str]:
    """The qg commit and version a run checked; each result records them."""
    commit = run.commit
    version = subprocess.run([str(QG), "--version"], capture_output=True, text=True, check=False).stdout.strip()
    for result in run.results:
        result["run"] = {"date": time.strftime("%Y-%m-%d", time.gmtime(run.started)), "commit": commit}
    return commit, version


def update(run: Run):
    """The named projects' results replace theirs in the last full run's file."""
    _stamp(run)
    data = load(None)
    names = {r["name"] for r in run.results}
    order = [p.name for p in corpus.load(None)]
    # A project no longer in the manifest leaves the results with it.
    kept = [r for r in data["projects"] if r["name"] not in names and r["name"] in order]
    data["projects"] = sorted(
        kept + run.results, key=lambda r: order.index(r["name"]) if r["name"] in order else len(order)
    )
    RESULTS.write_text(json.dumps(data, indent=1) + "\n")


def save(run: Run, path):
    if path is None:
        return
    commit, version = _stamp(run)
    data = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(run.started)),
        "commit": commit,
        "qg": version,
        "machine": f"{platform.machine()}, {_cores()} cores",
        "seconds": round(time.time() - run.started),
        "random_edits": run.edits,
        "projects": run.results,
    }
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def load(path) -> dict:
    return json.loads(Path(path or RESULTS).read_text())


def _cores() -> int:
    return os.cpu_count() or 0


def write_page(data: dict):
    """docs/src/ecosystem.md, from the results file, each difference judged
    by the manifest as it is now (an explanation added since counts)."""
    by_name = {p.name: p for p in corpus.load(None)}
    for result in data["projects"]:
        result["differences"] = [
            {"what": what, "cause": explained(by_name.get(result["name"]), what)} for what in differences(result)
        ]
    lines = [
        "<!-- Generated from ecosystem/results.json by `scripts/ecosystem.sh`; do not edit. -->",
        "",
        "# Ecosystem check",
        "",
        "qg's verdict against the tools' own on real projects from PyPI: every",
        "project below is a pinned sdist, set up in its own virtualenv, checked by",
        "the commands its maintainers run (the reference), then by qg cold and warm",
        "on the whole project, then through a scripted TDD loop — the most imported",
        "function's return type made incompatible, a parameter removed, a module",
        "added with an error, a body-only edit, a test module renamed; where the",
        "project has the shape, a file under a directory ruff's settings exclude",
        "edited, the settings module a mypy plugin reads edited, and (in a",
        "workspace) a new member folder not yet git-added; stash and pop,",
        "a branch switch, and seeded random edits (an annotation changed, an import",
        "deleted, a name renamed), each reverted and checked again. At every step",
        "qg's new findings must equal the difference of the tools' own runs, cold",
        "and warm, and nothing may be left running.",
        "",
        "Most projects are checked with qg's own tool pins. Those tagged",
        "`old-pins` are checked with the older ruff, mypy and pyright their own",
        "lock files pin (`tools` in the manifest), each gate running its tool's",
        "older way.",
        "",
        (
            f"Last full run: {data['date']}, qg commit `{data['commit']}` ({data['qg']}), "
            f"{len(data['projects'])} projects, {data['random_edits']} random edits each, "
            f"{data['seconds'] // 60} min on {data['machine']}. Run it with "
            "`scripts/ecosystem.sh` (one project: `scripts/ecosystem.sh tomli`); the"
        ),
        "manifest, with where each command comes from, is `ecosystem/corpus.toml`.",
        "",
        "Times: the whole project by the maintainers' commands, by qg cold and by qg",
        "warm; then the median edit of the loop (the tools' own whole runs, qg's auto",
        "scope cold and warm). qg's cold run comes right after the maintainers' and",
        "reads the caches it left (mypy's), as a developer's next run would.",
        "",
        "| project | shape | manager | gates: own = qg cold, warm | loop steps | project: own / cold / warm | an edit: own / cold / warm |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in data["projects"]:
        lines.append(_row(result))
    later = [r for r in data["projects"] if r.get("run", {}).get("commit") not in (None, data["commit"])]
    if later:
        lines += [
            "",
            "Checked again after the full run (`--update`), with the commit each names: "
            + ", ".join(f"{r['name']} (`{r['run']['commit']}`)" for r in later)
            + ".",
        ]
    lines += ["", "## Differences", ""]
    any_difference = False
    for result in data["projects"]:
        for difference in result.get("differences", []):
            any_difference = True
            cause = difference["cause"] or "**not explained yet**"
            lines.append(f"- **{result['name']}**: {_escape(difference['what'])} — {cause}")
    if not any_difference:
        lines.append("None: on every project, at every step, qg said what the tools say.")
    lines += ["", "## How each project runs its tools", "", "| project | commands | from |", "|---|---|---|"]
    for result in data["projects"]:
        commands = "<br>".join(f"`{c}`" for c in result["commands"].values())
        lines.append(f"| {result['name']} | {commands} | {_escape(result['source'])} |")
    PAGE.write_text("\n".join(lines) + "\n")


def _row(result: dict) -> str:
    gates = []
    for gate, cold in result.get("parity", {}).get("cold", {}).get("gates", {}).items():
        warm = result["parity"].get("warm", {}).get("gates", {}).get(gate, {})
        mark = "=" if cold["equal"] and warm.get("equal") else "≠"
        gates.append(f"{gate} {cold['own']} {mark} {cold['qg']}, {warm.get('qg', '–')}")
    steps = [s for s in result.get("steps", []) if not s.get("skipped")]
    passed = sum(1 for s in steps if s["cold"]["ok"] and s["warm"]["ok"])
    times = result.get("times", {})
    shape = ", ".join(t for t in result["tags"] if t not in ("uv", "poetry", "pdm", "hatch", "pip", "sample"))
    failure = " (did not finish)" if "failure" in result else ""
    edit = [s for s in steps if s.get("own_seconds") is not None]
    loop = " / ".join(
        _sec(statistics.median(values)) if values else "–"
        for values in (
            [s["own_seconds"] for s in edit],
            [s["cold"]["seconds"] for s in edit],
            [s["warm"]["seconds"] for s in edit],
        )
    )
    whole = " / ".join(_sec(times.get(key)) for key in ("own", "qg_cold", "qg_warm"))
    return (
        f"| {result['name']} `{result['sdist'].split('==')[1]}`{failure} | {shape} | {result['manager']} | "
        f"{'<br>'.join(gates) or '–'} | {passed}/{len(steps)} | {whole} | {loop} |"
    )


def _sec(value) -> str:
    return "–" if value is None else f"{value:.1f} s"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")
