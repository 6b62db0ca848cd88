"""The tools' own runs: each maintainers' command exactly as corpus.toml
records it, from the project root in the project's virtualenv, with only
the tool's machine-readable output format added (it changes how findings are
printed, never which)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from . import findings, shell
from .corpus import Project

# corpus.toml's command keys, and the qg gate each is compared with.
GATES = {"mypy": "mypy", "pyright": "pyright", "ruff": "ruff_check", "ruff_format": "ruff_format"}
# (`--no-fix`: a project's `fix = true`, as blinker's, would make `ruff check`
# rewrite the tree and report only what it could not fix.)
OUTPUT = {
    "mypy": ["--output=json"],
    "pyright": ["--outputjson"],
    "ruff": ["--output-format=json", "--no-fix"],
    "ruff_format": ["--output-format=json"],
}


@dataclass
class Verdict:
    """Every gate's findings in one state of the tree, by the tools' own runs."""

    findings: list = field(default_factory=list)
    # gate → why its run cannot be compared (a crash, a blocking error).
    errors: dict = field(default_factory=dict)
    seconds: float = 0.0


# A mypy older than 1.11 has no --output=json: its text, one line a finding
# (`--pretty`, which some projects add on the command line or as `pretty =
# True` in their config, spreads one over several lines).
OLD_MYPY_OUTPUT = ["--show-column-numbers", "--show-error-codes", "--no-error-summary", "--no-pretty"]


def argv(key: str, command: str, old_mypy: bool = False) -> list[str]:
    """The maintainers' command with the output format added after the tool's
    own words (`ruff check --output-format=json src`)."""
    words = shlex.split(command)
    at = 2 if words[0] == "ruff" else 1
    output = OUTPUT[key]
    if key == "mypy" and old_mypy:
        output = OLD_MYPY_OUTPUT
        words = [word for word in words if word != "--pretty"]
    # Not a flag the command has already: ruff refuses one given twice.
    return words[:at] + [flag for flag in output if flag not in words] + words[at:]


def old_mypy(project: Project) -> bool:
    """Whether the mypy the project pins predates --output=json (1.11)."""
    for pin in project.tools:
        name, _, version = pin.partition("==")
        if name == "mypy":
            return tuple(int(part) for part in version.split(".")[:2]) < (1, 11)
    return False


def run(project: Project) -> Verdict:
    verdict = Verdict()
    for key, command in project.commands.items():
        gate = GATES[key]
        for directory in project.member_dirs():
            ran = shell.run(argv(key, command, old_mypy(project)), directory, project.env())
            verdict.seconds += ran.seconds
            parsed = _parse(key, gate, ran.stdout, project.root, directory, old_mypy(project))
            # Exit 1 with findings, or with notes alone (mypy 2.4 exits 1 on
            # an annotation-unchecked note): a verdict. Exit 1 with nothing
            # printed, or any other code: the run stopped.
            if ran.code not in (0, 1) or (ran.code == 1 and not _says_findings(key, ran.stdout)):
                verdict.errors[gate] = f"`{command}` in {directory.name} exited {ran.code}: {_tail(ran)}"
            verdict.findings += parsed
    return verdict


def _says_findings(key: str, stdout: str) -> bool:
    """Whether a run that exited 1 printed findings (notes count: mypy 2.4
    exits 1 on a note alone) rather than why it stopped: a mypy whose
    plugin cannot start (django-stubs importing an app that no longer
    imports) prints one line, "Error constructing plugin instance of ...",
    and exits 1 too."""
    if key != "mypy":
        return bool(stdout.strip())
    return any(line.startswith("{") for line in stdout.splitlines()) or bool(findings.MYPY_TEXT.search(stdout))


def _parse(key: str, gate: str, stdout: str, root: Path, cwd: Path, old_mypy: bool):
    if key == "mypy" and old_mypy:
        return findings.mypy_text(stdout, root, gate, cwd)
    if key == "mypy":
        return findings.mypy(stdout, root, gate, cwd)
    if key == "pyright":
        return findings.pyright(stdout, root, gate)
    return findings.ruff(stdout, root, gate)


def _tail(ran: shell.Ran) -> str:
    text = (ran.stderr.strip() or ran.stdout.strip()).splitlines()
    return " | ".join(text[-3:])[:400]
