"""Running commands, git and the sdist cache: what every other module (and
bench/run.py) needs to drive real projects."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
VENV = HERE / ".venv"
BIN = VENV / "bin"
CACHE = HERE / "bench" / ".cache"

# Commits in the projects' temp repositories: no signing, no identity, and no
# background `gc --auto` packing objects while commands are timed.
GIT = [
    "git",
    "-c",
    "user.name=qg-ecosystem",
    "-c",
    "user.email=ecosystem@example.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "gc.auto=0",
]


@dataclass
class Ran:
    """One finished command: its exit code, output and wall time."""

    code: int
    stdout: str
    stderr: str
    seconds: float


def run(args, cwd, env=None, timeout=1800) -> Ran:
    """Runs `args` in `cwd` and keeps everything it said."""
    start = time.perf_counter()
    try:
        out = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as timed_out:
        seconds = time.perf_counter() - start
        return Ran(-9, _text(timed_out.stdout), _text(timed_out.stderr) + "\n(timed out)", seconds)
    seconds = time.perf_counter() - start
    return Ran(out.returncode, _text(out.stdout), _text(out.stderr), seconds)


def _text(data) -> str:
    return data.decode(errors="replace") if data else ""


def must(args, cwd, env=None, timeout=1800) -> str:
    """Runs `args` and returns its stdout; a failure raises with its stderr."""
    ran = run(args, cwd, env, timeout)
    if ran.code != 0:
        command = " ".join(str(a) for a in args)
        raise RuntimeError(f"`{command}` in {cwd} exited {ran.code}: {ran.stderr.strip()[-2000:]}")
    return ran.stdout


def env_with_venv(venv: Path) -> dict:
    """The environment of a shell with `venv` activated (and CI=true, so qg
    draws no progress bars)."""
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv), CI="true")
    env.pop("NO_COLOR", None)
    env.pop("PYTHONPATH", None)
    env.pop("MYPYPATH", None)
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    return env


def git(root: Path, *args) -> str:
    return must(GIT + list(args), root)


def commit_all(root: Path, message: str) -> str:
    """Commits the whole tree (a new repository on `main` if there is none);
    returns the commit."""
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def tree_of_worktree(root: Path) -> str:
    """The tree hash of the work tree as it is now, untracked files included,
    without touching the real index: equal trees give equal tool verdicts."""
    index = root / ".git" / "ecosystem-index"
    env = dict(os.environ, GIT_INDEX_FILE=str(index))
    must(GIT + ["read-tree", "HEAD"], root, env)
    must(GIT + ["add", "-A"], root, env)
    return must(GIT + ["write-tree"], root, env).strip()


def sdist(spec: str, sha256: str | None = None) -> Path:
    """The sdist archive of `name==version`, from the cache or PyPI; checked
    against `sha256` when one is given."""
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = _cached(spec)
    if archive is None:
        # Only the source is needed, whatever Python the package targets.
        must(
            [BIN / "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
            + ["--ignore-requires-python", "-d", CACHE, spec],
            HERE,
        )
        archive = _cached(spec)
    if archive is None:
        raise RuntimeError(f"pip downloaded no sdist for {spec}")
    if sha256:
        import hashlib

        found = hashlib.sha256(archive.read_bytes()).hexdigest()
        if found != sha256:
            raise RuntimeError(f"{archive.name}: sha256 {found}, the manifest says {sha256}")
    return archive


def _cached(spec: str) -> Path | None:
    name, version = spec.split("==")
    wanted = _normal(f"{name}-{version}")
    for archive in sorted(CACHE.iterdir()):
        for suffix in (".tar.gz", ".zip"):
            if archive.name.endswith(suffix) and _normal(archive.name[: -len(suffix)]) == wanted:
                return archive
    return None


def _normal(name: str) -> str:
    # PyPI spells sdist names with `_`, `.` or `-`, in either case.
    return re.sub(r"[-_.]+", "_", name).lower()


def unpack(archive: Path, into: Path) -> Path:
    """Unpacks an sdist into `into` and returns its top directory."""
    into.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".zip"):
        import zipfile

        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(into)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    return next(p for p in into.iterdir() if p.is_dir())
