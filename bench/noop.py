"""No-op runs next to git's own commands: `qg run` (auto) with nothing
changed on django (`--only django`) and on django as a Poetry project whose
environment lives outside it (`--only managed-noop`), and qg's own cost on
generated repositories of 10,000 to 100,000 files (`--only scale`, measured
by scale.py)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

from .common import BIN, DJANGO, ENV, QG, TRUE_CONFIG, cmd, git_commit_all, medians, ms, sdist, sequence, sh


def django_noop(runs, tmp: Path):
    root = sdist(DJANGO, tmp / "django")
    (root / ".st3").mkdir(exist_ok=True)
    (root / ".st3" / "quality.yaml").write_text(TRUE_CONFIG)
    head = git_commit_all(root, "qg config")
    sh([QG, "run"], root)  # first auto run: project fallback, green, baseline = HEAD
    scope = json.loads(sh([QG, "files", "--format", "json"], root, capture=True))
    assert scope["mode"] == "auto" and not scope["files"], scope
    tracked = len(sh(["git", "ls-files"], root, capture=True).splitlines())
    m = medians(
        {
            "qg run": cmd([QG, "run"], root),
            "git": sequence([["git", "status", "--porcelain"], ["git", "diff", "--name-only", head]], root),
        },
        runs * 4,
        warmup=2,
    )
    r = m["qg run"] / m["git"]
    return [
        (
            f"django ({tracked} tracked files): no-op `qg run --scope auto` vs `git status --porcelain` + `git diff --name-only`",
            f"qg {ms(m['qg run'])}, git {ms(m['git'])}",
            f"{r:.2f}x",
            "<= 1.5x",
            r <= 1.5,
        ),
    ]


def managed_noop(runs, tmp: Path):
    """Issue 27: a no-op `qg run` in a Poetry project whose environment lives
    outside it (found through `poetry env info --path`, then remembered in
    .st3/environment.json), next to `git status` and to the same tree
    without the lock file, in one run."""
    root = sdist(DJANGO, tmp / "django-poetry")
    (root / ".st3").mkdir(exist_ok=True)
    (root / ".st3" / "quality.yaml").write_text(TRUE_CONFIG)
    (root / "poetry.lock").write_text("# bench: marks a Poetry project\n")
    # Poetry only manages the environment here (django's version is
    # dynamic), on the bench's own Python.
    pyproject = (root / "pyproject.toml").read_text()
    pyproject = re.sub(r'requires-python\s*=\s*"[^"]*"', 'requires-python = ">=3.11"', pyproject)
    (root / "pyproject.toml").write_text(pyproject + "\n[tool.poetry]\npackage-mode = false\n")
    env = dict(ENV, POETRY_VIRTUALENVS_PATH=str(tmp / "poetry-venvs"), POETRY_VIRTUALENVS_IN_PROJECT="false")
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([BIN / "poetry", "env", "use", "python3"], cwd=root, env=env, check=True, capture_output=True)
    git_commit_all(root, "qg config, poetry.lock")
    subprocess.run([QG, "run"], cwd=root, env=env, check=True, capture_output=True)
    doctor = subprocess.run([QG, "doctor", "--format", "json"], cwd=root, env=env, capture_output=True, check=False)
    environment = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "environment")
    assert "poetry env info" in environment["detail"], environment
    # A copy Poetry keeps no environment for (the answer "none" is
    # remembered), and a plain copy (no manager at all).
    no_env = tmp / "django-poetry-no-env"
    shutil.copytree(root, no_env, symlinks=True)
    shutil.rmtree(no_env / ".st3" / "logs", ignore_errors=True)
    plain = tmp / "django-plain"
    shutil.copytree(root, plain, symlinks=True)
    (plain / "poetry.lock").unlink()
    (plain / "pyproject.toml").write_text(pyproject)
    git_commit_all(plain, "no manager")
    for copy in (no_env, plain):
        # A copied index's stat data is stale: refreshed, as in a checkout.
        sh(["git", "update-index", "-q", "--refresh"], copy, check=False)
        subprocess.run([QG, "run"], cwd=copy, env=env, check=True, capture_output=True)

    def run_in(where):
        return lambda: subprocess.run([QG, "run"], cwd=where, env=env, check=True, capture_output=True)

    m = medians(
        {
            "lock": run_in(root),
            "no env": run_in(no_env),
            "plain": run_in(plain),
            "git": cmd(["git", "status", "--porcelain"], root),
        },
        runs * 4,
        warmup=2,
    )
    ratio = m["lock"] / m["git"]
    return [
        (
            "django as a Poetry project (poetry.lock; its environment outside the tree, via `poetry env info "
            "--path`, remembered): no-op `qg run` vs `git status --porcelain`; the same tree without an "
            'environment ("none" remembered) and without a manager',
            f"qg {ms(m['lock'])} (no environment {ms(m['no env'])}, no manager {ms(m['plain'])}), "
            f"git {ms(m['git'])}; "
            f"environment: {environment['detail']}",
            f"{ratio:.2f}x",
            "<= 1.2x",
            ratio <= 1.2,
        )
    ]


def scale_figures(runs, tmp: Path):
    """qg's own cost on generated repositories of 10,000 to 100,000 files,
    next to git's commands on the same trees (bench/scale.py)."""
    from . import scale

    return scale.scale(max(runs * 2, 7), tmp)
