"""The result cache (issue 66), on rich (`--only cache-rich`) and on the
generated 300-module package (`--only cache-package`):

- a fresh clone whose store a run elsewhere filled: `qg run --scope
  project` against a fresh clone's cold run (`--no-cache`, no tool cache
  of its own either: a CI job's first run), each recording its state as
  CI's run does;
- a pull request that changes one module nothing imports: `--scope
  project` with the store against `qg run` (auto) of the same change,
  each in a clone whose earlier green run (without the store) recorded
  the state and left the tools' own caches, as a developer's working copy
  has them, and each with a copy of the store as the base left it.

Each sample is a clone of its own; the store is a directory
(`QG_CACHE_DIR`), filled once by a run in the original.
"""

import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from .common import ENV, QG, RICH, generate_package, git_commit_all, sdist, sec, sh


def clone(origin: Path, into: Path) -> Path:
    if into.exists():
        shutil.rmtree(into)
    subprocess.run(["git", "clone", "-q", str(origin), str(into)], check=True)
    return into


def timed_run(root: Path, env: dict, args) -> tuple[float, dict]:
    started = time.perf_counter()
    out = subprocess.run(
        [str(QG), "run", "--format", "json", "--no-progress", *args],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    took = time.perf_counter() - started
    return took, json.loads(out.stdout)


def findings(report: dict) -> set:
    return {
        (g["id"], v.get("file"), v.get("line"), v.get("code")) for g in report["gates"] for v in g.get("violations", [])
    }


def hits(report: dict) -> str:
    return ", ".join(f"{g['id']} {g.get('cache', {}).get('hits', 0)}/{g['files_checked']}" for g in report["gates"])


def cache_figures(origin: Path, label: str, leaf: str, runs: int, tmp: Path):
    store = tmp / f"{label}-store"
    shutil.rmtree(store, ignore_errors=True)
    env = dict(ENV, QG_CACHE_DIR=str(store), QG_NO_CACHE="0")
    # The store, filled by a run in the original (its own tool caches stay there).
    timed_run(origin, env, ["--scope", "project", "--no-state"])

    fresh, cold, said = [], [], {}
    for i in range(runs):
        took, report = timed_run(clone(origin, tmp / f"{label}-fresh"), env, ["--scope", "project"])
        fresh.append(took)
        said["fresh"] = report
        took, report = timed_run(clone(origin, tmp / f"{label}-cold"), env, ["--scope", "project", "--no-cache"])
        cold.append(took)
        said["cold"] = report
    same = findings(said["fresh"]) == findings(said["cold"])
    ratio = statistics.median(fresh) / statistics.median(cold)
    rows = [
        (
            f"{label}: a fresh clone with a filled result store, `qg run --scope project` vs its cold run (`--no-cache`)",
            f"store {sec(statistics.median(fresh))} ({hits(said['fresh'])} from it), cold {sec(statistics.median(cold))}; "
            + ("the same findings" if same else "**different findings**"),
            f"{ratio:.2f}x",
            "<= 0.1x",
            ratio <= 0.1 and same,
        )
    ]

    project, auto, said = [], [], {}
    for i in range(runs):
        for name, args, times in (("auto", [], auto), ("project", ["--scope", "project"], project)):
            work = clone(origin, tmp / f"{label}-pr-{name}")
            # The green run the auto scope starts from, without the store.
            sh([QG, "run", "--no-progress", "--no-cache"], work, check=False)
            path = work / leaf
            path.write_text(path.read_text() + f"\n# a pull request's change {i}\n")
            # The store as the base left it.
            base = tmp / f"{label}-store-{name}"
            shutil.rmtree(base, ignore_errors=True)
            shutil.copytree(store, base)
            took, report = timed_run(work, dict(env, QG_CACHE_DIR=str(base)), ["--no-state", *args])
            times.append(took)
            said[name] = report
    ratio = statistics.median(project) / statistics.median(auto)
    rows.append(
        (
            f"{label}: a pull request changing one module nothing imports ({leaf}), `--scope project` with the store vs `qg run` (auto)",
            (
                f"project {sec(statistics.median(project))} ({hits(said['project'])} from the store), "
                f"auto {sec(statistics.median(auto))}"
            ),
            f"{ratio:.2f}x",
            "<= 1.2x",
            ratio <= 1.2,
        )
    )
    rows.append(tool_cache_figure(origin, label, leaf, store, env, runs, tmp))
    return rows


def tool_cache_figure(origin: Path, label: str, leaf: str, store: Path, env: dict, runs: int, tmp: Path):
    """A CI job's fresh clone of a pull request changing one module: the
    store with mypy's own cache (the archive the base's run kept) against
    the same store without it. Whole run, and the mypy gate alone."""
    with_archive, without, gate_times, said = [], [], {"with": [], "without": []}, {}
    for i in range(runs):
        for name, times in (("with", with_archive), ("without", without)):
            work = clone(origin, tmp / f"{label}-ci-{name}")
            path = work / leaf
            path.write_text(path.read_text() + f"\n# a CI job's change {i} {name}\n")
            base = tmp / f"{label}-store-ci-{name}"
            shutil.rmtree(base, ignore_errors=True)
            shutil.copytree(store, base)
            if name == "without":
                shutil.rmtree(base / "tool-caches-v1", ignore_errors=True)
            took, report = timed_run(work, dict(env, QG_CACHE_DIR=str(base)), ["--scope", "project", "--no-state"])
            times.append(took)
            gate_times[name].append(next(g["duration_ms"] for g in report["gates"] if g["id"] == "mypy") / 1000)
            said[name] = report
    same = findings(said["with"]) == findings(said["without"])
    restored = next(g for g in said["with"]["gates"] if g["id"] == "mypy")["cache"].get("tool_cache", {})
    ratio = statistics.median(with_archive) / statistics.median(without)
    return (
        f"{label}: a CI job's fresh clone of a one-module change ({leaf}), `--scope project`: the store with mypy's own cache vs without it",
        (
            f"with {sec(statistics.median(with_archive))} (mypy {sec(statistics.median(gate_times['with']))}, "
            f"its cache from {restored.get('commits_back', '?')} commits back), "
            f"without {sec(statistics.median(without))} (mypy {sec(statistics.median(gate_times['without']))}); "
            + ("the same findings" if same else "**different findings**")
        ),
        f"{ratio:.2f}x",
        "(report)",
        same,
    )


def cache_rich(runs, tmp: Path):
    """rich: its own leaf, rich/diagnose.py (nothing imports it)."""
    origin = sdist(RICH, tmp / "cache-rich")
    return cache_figures(origin, "rich", "rich/diagnose.py", runs, tmp)


def cache_package(runs, tmp: Path):
    """The generated package: pkg/mod150.py (nothing imports it)."""
    origin = tmp / "cache-package"
    shutil.rmtree(origin, ignore_errors=True)
    generate_package(origin, 300)
    git_commit_all(origin)
    return cache_figures(origin, "300-module package", "pkg/mod150.py", runs, tmp)
