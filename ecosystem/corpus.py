"""The manifest (corpus.toml) and setting a project up as its maintainers
would: the pinned sdist unpacked into a git repository, its own virtualenv
with the pinned tools and what the maintainers' type-checking environment
installs."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

from . import shell

MANIFEST = Path(__file__).resolve().parent / "corpus.toml"
WORK = Path(os.environ.get("QG_ECOSYSTEM_DIR", "/tmp/qg-ecosystem"))
# The tools every project is checked with: qg's own pins, so a difference is
# qg's, never a version's (a project pinning another mypy is noted, not used).
TOOLS = ["ruff", "mypy", "pyright[nodejs]"]
# What a project's run leaves in its tree that no commit should pick up.
IGNORED = [".venv/", "*.egg-info/", "build/", ".mypy_cache/", ".ruff_cache/", "__pycache__/", ".dmypy.json"]


@dataclass
class Project:
    """One entry of corpus.toml."""

    name: str
    sdist: str
    sha256: str
    manager: str
    tags: list[str]
    install: list[str]
    source: str
    commands: dict[str, str]
    config: str = ""
    modules: int = 0
    notes: str = ""
    # The TDD loop's package directory, when the harness cannot find it.
    package: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return WORK / self.name / "project"

    @property
    def venv(self) -> Path:
        return self.root / ".venv"

    def env(self) -> dict:
        return shell.env_with_venv(self.venv)


KNOWN = {f for f in Project.__dataclass_fields__ if f != "extra"}


def load(names: list[str] | None = None) -> list[Project]:
    """The manifest's projects, or the named ones (an unknown name is an error)."""
    data = tomllib.loads(MANIFEST.read_text())
    projects = []
    for entry in data["project"]:
        known = {k: v for k, v in entry.items() if k in KNOWN}
        extra = {k: v for k, v in entry.items() if k not in KNOWN}
        projects.append(Project(**known, extra=extra))
    if not names:
        return projects
    by_name = {p.name: p for p in projects}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise SystemExit(f"ecosystem: no project {', '.join(missing)} in {MANIFEST.name}")
    return [by_name[n] for n in names]


def setup(project: Project, log) -> str:
    """Sets the project up (or reuses a set-up that matches the manifest
    entry) and returns the commit of its pristine tree."""
    marker = WORK / project.name / "setup.json"
    wanted = _fingerprint(project)
    if marker.exists() and json.loads(marker.read_text()).get("fingerprint") == wanted and project.root.exists():
        commit = json.loads(marker.read_text())["commit"]
        _reset(project.root, commit)
        return commit
    shutil.rmtree(WORK / project.name, ignore_errors=True)
    archive = shell.sdist(project.sdist, project.sha256)
    top = shell.unpack(archive, WORK / project.name / "unpacked")
    top.rename(project.root)
    shutil.rmtree(WORK / project.name / "unpacked")
    shell.git(project.root, "init", "-q", "-b", "main") if not (project.root / ".git").exists() else None
    (project.root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (project.root / ".git" / "info" / "exclude").write_text("\n".join(IGNORED) + "\n")
    commit = shell.commit_all(project.root, f"{project.sdist} as published")
    log(f"{project.name}: installing the tools and {' '.join(project.install) or 'nothing else'}")
    _install(project)
    marker.write_text(json.dumps({"fingerprint": wanted, "commit": commit}))
    return commit


def _fingerprint(project: Project) -> str:
    tools = (shell.HERE / "requirements-tools.txt").read_text()
    text = json.dumps([project.sdist, project.sha256, project.install, tools])
    return hashlib.sha256(text.encode()).hexdigest()


def _reset(root: Path, commit: str):
    """Back to the pristine tree, keeping the environment and the caches."""
    shell.git(root, "checkout", "-q", "-f", "main")
    shell.git(root, "reset", "-q", "--hard", commit)
    shell.git(root, "clean", "-q", "-fdx", *[f"-e{p}" for p in IGNORED], "-e.st3/")
    for branch in shell.git(root, "branch", "--format=%(refname:short)").split():
        if branch != "main":
            shell.git(root, "branch", "-q", "-D", branch)
    shell.run(shell.GIT + ["stash", "clear"], root)
    shutil.rmtree(root / ".st3", ignore_errors=True)


def _install(project: Project):
    """The project's own virtualenv: uv makes it (seconds, from its cache);
    what the maintainers' environment installs first, then the tools at qg's
    pins (over any version their requirements pin)."""
    uv = shell.BIN / "uv"
    root = project.root
    shell.must([uv, "venv", "--quiet", "--python", sys.executable, project.venv], root)
    python = ["--python", project.venv / "bin" / "python"]
    if project.install:
        shell.must([uv, "pip", "install", "--quiet", *python, *project.install], root, timeout=1200)
    pins = shell.HERE / "requirements-tools.txt"
    shell.must([uv, "pip", "install", "--quiet", *python, "-c", pins, *TOOLS], root, timeout=1200)
