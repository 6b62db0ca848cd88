"""qg's runs on a project: its set-up (`qg init`, told the maintainers'
commands), cold and warm runs, and what a run or a daemon leaves running."""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from pathlib import Path

from . import shell
from .corpus import Project
from .own import GATES

QG = Path(os.environ.get("QG_BIN", shell.HERE / "target" / "release" / "qg"))


def qg(project: Project, *args, timeout=1800) -> shell.Ran:
    return shell.run([QG, *args], project.root, project.qg_env(), timeout)


def report(project: Project, *args) -> tuple[dict, shell.Ran]:
    """`qg run --format json ARGS`: the report (empty when qg printed none)."""
    ran = qg(project, "run", "--format", "json", "--no-progress", *args)
    start = ran.stdout.find("{")
    try:
        return (json.loads(ran.stdout[start:]) if start >= 0 else {}), ran
    except json.JSONDecodeError:
        return {}, ran


def init(project: Project, sabotage: bool = False, interface_aware: bool = True):
    """`qg init`, then the maintainers' choices qg cannot read from a config:
    the gates they run, and the paths and options of each command.
    `sabotage` turns every gate's importers off: a qg that misses what an
    edit breaks elsewhere, which the harness's self-test must catch.
    `interface_aware=False` checks every importer of every change (qg's
    default leaves out those of a body-only edit)."""
    ran = qg(project, "init")
    if ran.code != 0:
        raise RuntimeError(f"qg init: {ran.stderr.strip()}")
    path = project.root / ".st3" / "quality.yaml"
    text = path.read_text()
    gates = [GATES[key] for key in project.commands]
    text = re.sub(r"(?m)^active_gates: .*$", f"active_gates: {json.dumps(gates)}", text, count=1)
    for key, command in project.commands.items():
        words = shlex.split(command)
        if project.members:
            # A workspace's commands run in each member: their paths are the
            # member's, which qg's own per-member runs already take.
            tool = words[:2] if words[0] == "ruff" else words[:1]
            words = tool + split_command(words[len(tool) :])[0]
        text = _tell_gate(text, GATES[key], words)
    if sabotage:
        text = text.replace("importers: true", "importers: false")
    if not interface_aware:
        text += "\ninterface_aware_importers: false\n"
    path.write_text(text)


# Options whose value is the next word (`--platform linux`), and those that
# name what to check instead of paths (`-p rich`: the package's directory).
VALUED = {"--platform", "--python-version", "--config-file", "--cache-dir", "--exclude", "--extend-exclude", "--select"}
TARGETS = {"-p", "--package", "-m", "--module"}


def split_command(words: list[str]) -> tuple[list[str], list[str]]:
    """A maintainers' command (without the tool's own words) as its options
    and the paths it checks."""
    options, paths = [], []
    words = iter(words)
    for word in words:
        if word in TARGETS:
            paths.append(next(words).replace(".", "/"))
        elif word in VALUED:
            options += [word, next(words)]
        elif word.startswith("-"):
            options.append(word)
        else:
            paths.append(word)
    return options, paths


def _tell_gate(text: str, gate: str, words: list[str]) -> str:
    """Rewrites one gate's section of a `qg init` config: the command's
    options join the gate's command; its paths become the gate's whole-project
    arguments and the files it is given on partial scopes."""
    options, paths = split_command(words[2:] if words[0] == "ruff" else words[1:])
    start = re.search(rf"(?m)^  {re.escape(gate)}:\n", text)
    if start is None:
        raise RuntimeError(f"qg init wrote no gate {gate}")
    end = re.search(r"(?m)^  \S", text[start.end() :])
    stop = start.end() + end.start() if end else len(text)
    section = text[start.start() : stop]
    command = re.search(r"(?m)^      command: (\[.*\])$", section)
    # An option the gate's command has already (`--no-fix`) is not repeated:
    # ruff refuses a flag given twice.
    options = [o for o in options if not command or json.dumps(o) not in command.group(1)]
    if options:
        section = re.sub(
            r"(?m)^(      command: \[.*?)\]$",
            lambda m: m.group(1) + "".join(f", {json.dumps(o)}" for o in options) + "]",
            section,
            count=1,
        )
    if paths and paths != ["."]:
        section = re.sub(r"project_args: \[[^\]]*\]", f"project_args: {json.dumps(paths)}", section, count=1)
        globs = json.dumps([p if p.endswith((".py", ".pyi")) else f"{p.rstrip('/')}/**" for p in paths])
        if re.search(r"(?m)^    scope: \{", section):
            section = re.sub(
                r"(?m)^    scope: \{(.*)\}$", rf"    scope: {{\1, include_globs: {globs}}}", section, count=1
            )
        else:
            # Before `capabilities:`, whose flow mapping may run over several
            # lines (ruff_check's does): after its first line, the new key
            # landed inside it.
            section = re.sub(
                r"(?m)^(    capabilities: )", rf"    scope: {{include_globs: {globs}}}\n\1", section, count=1
            )
    return text[: start.start()] + section + text[stop:]


def leftovers(project: Project) -> list[str]:
    """Processes still running in the project (their working directory, or a
    command line naming it): a run or a stopped daemon must leave none. A
    background check of the result cache's hits (`qg cache check-sample`,
    started by a run at the lowest priority) is given two minutes to end:
    bounded work, not a leftover, unless it outlives them."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and any("cache check-sample" in p for p in _running_in(project)):
        time.sleep(0.5)
    return _running_in(project)


def _running_in(project: Project) -> list[str]:
    """Processes whose working directory is in the project or whose command
    line names it."""
    root = str(project.root)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + "/") or root in cmdline:
            found.append(f"{entry.name}: {cmdline.strip()[:160]}")
    return found
