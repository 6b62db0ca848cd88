"""Interface-aware importers (the `interface_aware_importers` setting) must
never change a verdict: each generated edit is checked by qg's auto scope
with the setting off and on, and the two must find the same new findings.

The edits lean on what the setting decides: bodies of annotated functions
(which it skips importers for), and the edits it must not skip — a `self.`
attribute's value, a default, an unannotated function's return, and the
seeded type-changing edits of the TDD loop."""

from __future__ import annotations

import random
import re
from collections import Counter

from . import corpus, edits, findings, qgrun, shell
from .corpus import Project

ON = ".st3/interface-aware.yaml"
STATE = ".st3/state.json"


def run(project: Project, count: int, log) -> dict:
    """`count` edits on one project; returns the tally and every difference."""
    corpus.setup(project, log)
    qgrun.init(project)
    # Both said outright: the project's own config checks every importer.
    config = project.root / ".st3" / "quality.yaml"
    text = config.read_text()
    config.write_text(text + "\ninterface_aware_importers: false\n")
    (project.root / ON).write_text(text + "\ninterface_aware_importers: true\n")
    shell.commit_all(project.root, "qg init, and the same with interface-aware importers")
    written = qgrun.qg(project, "baseline", "write")
    if written.code not in (0, 1):
        raise RuntimeError(f"qg baseline write exited {written.code}: {written.stderr.strip()[-300:]}")
    shell.commit_all(project.root, "qg baseline")
    # Green (the baseline holds every finding): the state's baseline moves
    # to HEAD, so each edit's auto scope is that edit alone. The state
    # records its config: each config gets its own, swapped in before its
    # runs, as if each ran in a checkout of its own.
    states = {}
    for label, args in (("off", []), ("on", ["--config", ON])):
        green, ran = qgrun.report(project, "--no-daemon", *args)
        if not green.get("overall_pass"):
            raise RuntimeError(
                f"{label}: not green with the baseline written: {green.get('summary_line') or ran.stderr[-300:]}"
            )
        states[label] = (project.root / STATE).read_bytes()
    rng = random.Random(f"qg-differential/{project.name}")
    tally = {
        "name": project.name,
        "edits": 0,
        "equal": 0,
        "skipped_importers": 0,
        "kinds": Counter(),
        "differences": [],
    }
    files = {"off": 0, "on": 0}
    for _ in range(count):
        edit = generate(edits.Source(project.root, project.package), rng)
        if edit is None:
            continue
        (project.root / STATE).write_bytes(states["off"])
        off, _ = qgrun.report(project, "--scope", "auto", "--no-state", "--no-daemon")
        (project.root / STATE).write_bytes(states["on"])
        on, _ = qgrun.report(project, "--scope", "auto", "--no-state", "--no-daemon", "--config", ON)
        for label, report in (("off", off), ("on", on)):
            if report.get("scope", {}).get("mode") != "auto":
                raise RuntimeError(f"{label}: auto fell back: {report.get('scope', {}).get('fallback_reason')}")
        shell.git(project.root, "reset", "-q", "--hard", "HEAD")
        shell.git(project.root, "clean", "-q", "-fd")
        tally["edits"] += 1
        tally["kinds"][edit.kind] += 1
        found = {
            label: Counter(f.moved() for f in findings.qg(r, new_only=True)) for label, r in (("off", off), ("on", on))
        }
        statuses = {
            label: sorted((g["id"], g["status"]) for g in r.get("gates", [])) for label, r in (("off", off), ("on", on))
        }
        for label, report in (("off", off), ("on", on)):
            files[label] += report.get("scope", {}).get("files_checked") or 0
        if off and on and found["off"] == found["on"] and statuses["off"] == statuses["on"]:
            tally["equal"] += 1
            tally["skipped_importers"] += (on.get("scope", {}).get("files_checked") or 0) < (
                off.get("scope", {}).get("files_checked") or 0
            )
        else:
            difference = {
                "edit": f"{edit.kind}: {edit.what}",
                "only_off": [str(k) for k in (found["off"] - found["on"]).elements()][:5],
                "only_on": [str(k) for k in (found["on"] - found["off"]).elements()][:5],
                "statuses": statuses,
            }
            tally["differences"].append(difference)
            log(f"  DIFFERENT: {difference}")
    tally["files_checked"] = files
    tally["kinds"] = dict(tally["kinds"])
    log(
        f"{project.name}: {tally['edits']} edits, {tally['equal']} equal verdicts, "
        f"{tally['skipped_importers']} with fewer files; files checked off {files['off']}, on {files['on']}"
    )
    return tally


def generate(src: edits.Source, rng: random.Random) -> edits.Edit | None:
    """One edit, of a kind drawn by weight; another kind where it finds no place."""
    kinds = [_body_return] * 3 + [_body_line] * 2 + [_self_attribute, _default, _unannotated_return]
    kinds += [lambda s, r: edits.random_edit(s, r)] * 2
    return edits.first_edit(kinds, src, rng)


def _functions(src: edits.Source, annotated: bool | None):
    """(file, def line, body lines) of every single-line `def` in the package."""
    for file in src.package:
        lines = src.lines(file)
        for index, match in src.defs(file):
            if annotated is not None and bool(match.group("returns")) != annotated:
                continue
            body = len(match.group("indent")) + 4
            end = index + 1
            while end < len(lines) and (not lines[end].strip() or lines[end].startswith(" " * body)):
                end += 1
            yield file, index, list(range(index + 1, end)), body


# A statement that goes on to the next line: rewriting its first line alone
# would break the syntax.
CONTINUED = ("(", ",", "[", "{", "\\")


def _rewrite_statement(src, rng, kind, annotated, pattern, rewrite):
    """One body line of a function (annotated or not, or either: None)
    matching `pattern`, drawn at random, replaced by what `rewrite(old, rng)`
    returns — `(new statement, what it became)`, or None to give up."""
    candidates = [
        (file, at, body)
        for file, _, lines, body in _functions(src, annotated)
        for at in lines
        if re.match(pattern, src.lines(file)[at][body:]) and src.lines(file)[at].startswith(" " * body)
    ]
    if not candidates:
        return None
    file, at, body = rng.choice(candidates)
    lines = src.lines(file)
    old = lines[at].strip()
    rewritten = rewrite(old, rng)
    if rewritten is None:
        return None
    statement, became = rewritten
    lines[at] = " " * body + statement
    src.write(file, lines)
    return edits.Edit(kind, f"{file}:{at + 1}: `{old[:60]}` became {became}")


def _body_return(src, rng):
    """An annotated function returns something else: its body only."""

    def rewrite(old, rng):
        new = rng.choice(["return None", "return 0", 'return ""', "return []"])
        return new, f"`{new}`"

    return _rewrite_statement(src, rng, "body-return", True, r"return \S", rewrite)


def _body_line(src, rng):
    """A statement of an annotated function's body deleted (a `pass` kept in its place)."""

    def rewrite(old, rng):
        return None if old.endswith(CONTINUED) else ("pass", "`pass`")

    return _rewrite_statement(src, rng, "body-line", True, r"[a-z_][\w.]*\s*(=|\()", rewrite)


def _self_attribute(src, rng):
    """A `self.x = ...` given another type: an interface change in a body."""

    def rewrite(old, rng):
        name = old.split("=", 1)[0].strip()
        return None if old.endswith(CONTINUED) else (f'{name} = "qg-differential"', "a str")

    return _rewrite_statement(src, rng, "self-attribute", None, r"self\.\w+\s*=\s*\S", rewrite)


def _unannotated_return(src, rng):
    """An unannotated function returns something else: its inferred type changes."""

    def rewrite(old, rng):
        return "return b'qg-differential'", "a bytes return"

    return _rewrite_statement(src, rng, "unannotated-return", False, r"return \S", rewrite)


def _default(src, rng):
    """A parameter's default given another type."""
    candidates = []
    for file in src.package:
        for index, match in src.defs(file):
            if re.search(r"=\s*(None|True|False|\d+|'[^']*'|\"[^\"]*\")\s*[,)]", src.lines(file)[index]):
                candidates.append((file, index))
    if not candidates:
        return None
    file, index = rng.choice(candidates)
    lines = src.lines(file)
    old = lines[index]
    lines[index] = re.sub(r"=\s*(None|True|False|\d+|'[^']*'|\"[^\"]*\")(\s*[,)])", r"= b'x'\2", old, count=1)
    src.write(file, lines)
    return edits.Edit("default", f"{file}:{index + 1}: a default became b'x'")
