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
# The tools a project is checked with: qg's own pins, so a difference is
# qg's, never a version's — unless its entry names `tools`, the older
# versions its lock file pins (ruff 0.6.9, mypy 1.13.0, pyright 1.1.380):
# qg must give their verdict too, run the older way each gate knows.
TOOLS = ["ruff", "mypy", "pyright[nodejs]"]
# The interpreter every environment is made from: the one qg's .venv was made
# from, never that .venv itself (a manager told to use a virtualenv's python
# installs into that virtualenv: PDM put two projects into qg's own .venv).
PYTHON = getattr(sys, "_base_executable", sys.executable)
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
    # How the environment is made: "venv" (a `.venv` by uv, with `install`)
    # or the project's manager, as its maintainers make it: "uv" (`uv
    # sync`),
    # "pdm" (`pdm install`), "hatch" (`hatch env create`, outside the tree);
    # "poetry" (`poetry env use`: Poetry's environment, outside the tree,
    # filled by uv with `install`).
    setup: str = "venv"
    # A workspace assembled from related sdists: `sdist` and each of these
    # ({sdist, sha256}) unpacked under packages/, under a uv workspace root;
    # the commands run in every member, as `cd member && mypy` does.
    members: list = field(default_factory=list)
    # What the assembled workspace's root pyproject.toml adds (a root
    # `[tool.mypy] files` naming member directories).
    root_config: str = ""
    # Files the project's config names but its sdist leaves out (mypy's
    # `files = [..., "examples"]`): created empty, so the maintainers'
    # command runs as in their repository instead of stopping at "Cannot
    # read file".
    missing: list = field(default_factory=list)
    # Variables the maintainers' runs set (tox's set_env), for every run.
    environment: dict = field(default_factory=dict)
    # The TDD loop: "full", "scripted" (no random edits) or "none".
    loop: str = "full"
    # The tool versions the project's own lock pins, when they are older
    # than qg's ("mypy==1.13.0", ...): installed instead of qg's pins.
    tools: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return WORK / self.name / "project"

    def member_dirs(self) -> list[Path]:
        """Where the commands run: each member of a workspace, else the root."""
        if not self.members:
            return [self.root]
        # A folder a reverted edit left behind (git clean keeps a member's
        # ignored .mypy_cache) is no member: a member has its pyproject.toml.
        return sorted(p for p in (self.root / "packages").iterdir() if (p / "pyproject.toml").is_file())

    @property
    def home(self) -> Path:
        """Everything of this project's: the tree, and its manager's files."""
        return WORK / self.name

    @property
    def venv(self) -> Path:
        """The environment the maintainers' tools run in (found by asking
        the manager, for one that keeps it outside the tree)."""
        marker = self.home / "setup.json"
        if marker.exists():
            return Path(json.loads(marker.read_text()).get("venv", self.root / ".venv"))
        return self.root / ".venv"

    def env(self) -> dict:
        """A shell with the maintainers' environment activated: how their
        own commands run."""
        return shell.env_with_venv(self.venv) | manager_env(self) | self.environment

    def qg_env(self) -> dict:
        """A shell as a user's is when they type `qg`: no environment
        activated, so qg finds it as it finds a user's (`.venv`, else the
        manager's), with the managers on PATH."""
        env = shell.env_with_venv(self.venv) | manager_env(self) | self.environment
        env.pop("VIRTUAL_ENV")
        env["PATH"] = f"{managers_bin()}:{env['PATH'].split(':', 1)[1]}"
        return env


def manager_env(project: Project) -> dict:
    """Where the managers keep what they make for this project: inside its
    home, so a set-up is removed with it and no two projects share one."""
    home = project.home
    return {
        "POETRY_VIRTUALENVS_PATH": str(home / "poetry-envs"),
        "POETRY_VIRTUALENVS_IN_PROJECT": "false",
        "HATCH_DATA_DIR": str(home / "hatch-data"),
        "HATCH_CACHE_DIR": str(home / "hatch-cache"),
        "PDM_IGNORE_ACTIVE_VENV": "1",
    }


def managers_bin() -> Path:
    """A directory holding only the package managers (from qg's .venv), for
    PATH: the managers without qg's own pinned tools beside them."""
    directory = WORK / "managers-bin"
    directory.mkdir(parents=True, exist_ok=True)
    for manager in ("uv", "poetry", "pdm", "hatch"):
        link = directory / manager
        if not link.exists():
            link.symlink_to(shell.BIN / manager)
    return directory


KNOWN = {f for f in Project.__dataclass_fields__ if f != "extra"}
SETUPS = ("venv", "uv", "poetry", "pdm", "hatch")


def load(names: list[str] | None = None) -> list[Project]:
    """The manifest's projects, or the named ones (an unknown name is an error)."""
    data = tomllib.loads(MANIFEST.read_text())
    projects = []
    for entry in data["project"]:
        known = {k: v for k, v in entry.items() if k in KNOWN}
        extra = {k: v for k, v in entry.items() if k not in KNOWN}
        project = Project(**known, extra=extra)
        if project.loop not in ("full", "scripted", "none"):
            raise SystemExit(f"ecosystem: {project.name}: loop {project.loop!r} is none of full, scripted, none")
        if project.setup not in SETUPS:
            raise SystemExit(f"ecosystem: {project.name}: setup {project.setup!r} is none of {', '.join(SETUPS)}")
        projects.append(project)
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
    marker = project.home / "setup.json"
    wanted = _fingerprint(project)
    if marker.exists() and json.loads(marker.read_text()).get("fingerprint") == wanted and project.root.exists():
        commit = json.loads(marker.read_text())["commit"]
        _reset(project.root, commit)
        return commit
    shutil.rmtree(project.home, ignore_errors=True)
    if project.members:
        _assemble_workspace(project)
    else:
        _unpack(project.sdist, project.sha256, project.root)
    if not (project.root / ".git").exists():
        shell.git(project.root, "init", "-q", "-b", "main")
    (project.root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (project.root / ".git" / "info" / "exclude").write_text("\n".join(IGNORED) + "\n")
    commit = shell.commit_all(project.root, f"{project.sdist} as published")
    if project.missing:
        for path in project.missing:
            (project.root / path).parent.mkdir(parents=True, exist_ok=True)
            (project.root / path).touch()
        commit = shell.commit_all(project.root, "what the config names and the sdist leaves out, empty")
    log(f"{project.name}: installing the tools and {' '.join(project.install) or 'nothing else'}")
    venv = _install(project)
    marker.write_text(json.dumps({"fingerprint": wanted, "commit": commit, "venv": str(venv)}))
    return commit


def _unpack(spec: str, sha256: str, into: Path):
    """The sdist's top directory, moved to `into`."""
    staging = into.parent / f"unpacked-{into.name}"
    shell.unpack(shell.sdist(spec, sha256), staging).rename(into)
    shutil.rmtree(staging)


def _assemble_workspace(project: Project):
    """A uv workspace (a virtual root: no project of its own) whose members
    are the sdists, each under packages/ as published."""
    packages = project.root / "packages"
    packages.mkdir(parents=True)
    for member in [{"sdist": project.sdist, "sha256": project.sha256}, *project.members]:
        _unpack(member["sdist"], member["sha256"], packages / member["sdist"].split("==")[0])
    # uv needs every member that another depends on named as a source.
    names = [m["sdist"].split("==")[0] for m in [{"sdist": project.sdist}, *project.members]]
    sources = "".join(f'"{name}" = {{ workspace = true }}\n' for name in names)
    text = f'[tool.uv.workspace]\nmembers = ["packages/*"]\n\n[tool.uv.sources]\n{sources}'
    if project.root_config:
        text += "\n" + project.root_config.strip() + "\n"
    (project.root / "pyproject.toml").write_text(text)


def _fingerprint(project: Project) -> str:
    tools = (shell.HERE / "requirements-tools.txt").read_text()
    text = json.dumps(
        [
            project.sdist,
            project.sha256,
            project.install,
            project.setup,
            project.members,
            project.root_config,
            project.missing,
            project.tools,
            tools,
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _reset(root: Path, commit: str):
    """Back to the pristine tree, keeping the environment but no tool cache:
    the reference run starts from nothing, as the maintainers' CI does (a
    cache the last check left can hold mypy's incremental mistakes: aiohttp's
    gave 15 errors where a fresh run gives 13)."""
    shell.git(root, "checkout", "-q", "-f", "main")
    shell.git(root, "reset", "-q", "--hard", commit)
    kept = [p for p in IGNORED if p not in (".mypy_cache/", ".ruff_cache/", ".dmypy.json")]
    shell.git(root, "clean", "-q", "-fdx", *[f"-e{p}" for p in kept], "-e.st3/")
    for branch in shell.git(root, "branch", "--format=%(refname:short)").split():
        if branch != "main":
            shell.git(root, "branch", "-q", "-D", branch)
    shell.run(shell.GIT + ["stash", "clear"], root)
    shutil.rmtree(root / ".st3", ignore_errors=True)


def _install(project: Project) -> Path:
    """Makes the project's environment as its maintainers would, adds what
    `install` lists, then the tools at qg's pins (over any version their
    requirements pin); returns the environment."""
    uv = shell.BIN / "uv"
    root, env = project.root, project.qg_env()
    if project.setup == "venv":
        shell.must([uv, "venv", "--quiet", "--python", PYTHON, root / ".venv"], root)
    elif project.setup == "uv":
        # Every dependency group: the typing one is seldom the default.
        shell.must([uv, "sync", "--quiet", "--all-groups", "--python", PYTHON], root, env, timeout=1200)
    elif project.setup == "poetry":
        # Poetry makes the environment (outside the tree, where qg must find
        # it); uv fills it: Poetry's resolver reads PyPI's JSON API, which
        # these machines cannot reach ("Package crashtest (0.4.1) not found").
        shell.must(["poetry", "env", "use", PYTHON], root, env)
    elif project.setup == "pdm":
        # PDM's in-project .venv, made first so `pdm use` cannot pick another.
        shell.must([uv, "venv", "--quiet", "--python", PYTHON, root / ".venv"], root)
        shell.must(["pdm", "use", "-f", root / ".venv" / "bin" / "python"], root, env)
        shell.must(["pdm", "install", "--quiet"], root, env, timeout=1200)
    elif project.setup == "hatch":
        shell.must(["hatch", "env", "create"], root, env, timeout=1200)
    venv = _environment(project, env)
    python = ["--python", venv / "bin" / "python"]
    if project.install:
        shell.must([uv, "pip", "install", "--quiet", *python, *project.install], root, env, timeout=1200)
    if project.tools:
        shell.must([uv, "pip", "install", "--quiet", *python, *project.tools], root, env, timeout=1200)
        return venv
    pins = shell.HERE / "requirements-tools.txt"
    shell.must([uv, "pip", "install", "--quiet", *python, "-c", pins, *TOOLS], root, env, timeout=1200)
    return venv


def _environment(project: Project, env: dict) -> Path:
    """Where the environment is: `.venv`, or where the manager says."""
    if project.setup == "poetry":
        return Path(shell.must(["poetry", "env", "info", "--path"], project.root, env).strip())
    if project.setup == "hatch":
        return Path(shell.must(["hatch", "env", "find", "default"], project.root, env).strip())
    return project.root / ".venv"
