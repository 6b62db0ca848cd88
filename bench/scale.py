#!/usr/bin/env python3
"""qg's own cost on large repositories (10,000 to 100,000 files), next to git's.

    bench/scale.py [--sizes 10000 30000 100000] [--runs N] [--keep DIR]

For each size, generates a git repository of that many tracked Python files
(packages of 100 modules), plus 1% untracked files, 1% ignored ones (a
`build/` directory and `*.pyc` files the .gitignore names) and a few edited
tracked files, with a config of four no-op gates (`true`), and takes a green
baseline. Then times, interleaved, after warm-up:

  listing       qg files --scope project      vs  git ls-files --cached --others --exclude-standard
  no-op auto    qg run (auto, nothing new)    vs  git status --porcelain
  one-file auto qg run --no-state after editing one more file  vs  git status --porcelain
  planning      qg run --scope project --no-state (4 no-op gates over every file)

and each qg command's peak RSS (GNU time's %M, when /usr/bin/time is
there: a parent's own size never counts). `bench/run.py --only scale` puts
these rows in bench/RESULTS.md; run alone, this script prints them.
`--keep DIR` leaves the repositories in DIR (for profiling).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
# QG_BIN: another qg binary to measure (an older build, for before/after).
QG = Path(os.environ.get("QG_BIN", HERE / "target" / "release" / "qg"))
MODULES_PER_PACKAGE = 100
ENV = dict(os.environ, CI="true")
ENV.pop("VIRTUAL_ENV", None)


def gate_yaml(gate: str, whole_program: bool) -> str:
    """A no-op gate (`true`): a per-file one is batchable; a whole-program one
    is not, and on project scope runs as the tool's own run, as the type
    checkers do."""
    return (
        f"  {gate}:\n"
        f'    execution: {{command: ["true"], batchable: {str(not whole_program).lower()}}}\n'
        "    parsing: {strategy: exit_code}\n"
        '    capabilities: {file_types: [".py"]}\n'
        + ('    selection: {project_args: ["."]}\n' if whole_program else "")
    )


NOOP_CONFIG = (
    'version: "1"\n'
    "active_gates: [format, lint, types, pyright]\n"
    "artifact_logging: {enabled: false}\n"
    "gates:\n"
    + gate_yaml("format", False)
    + gate_yaml("lint", False)
    + gate_yaml("types", True)
    + gate_yaml("pyright", True)
)

# The same gates with the type checker run per member, as the default
# config's mypy and pyright are: every run first finds the members' configs
# (tracked or not), which walks the working tree.
MEMBERS_CONFIG = NOOP_CONFIG.replace(
    '    execution: {command: ["true"], batchable: false}\n'
    "    parsing: {strategy: exit_code}\n"
    '    capabilities: {file_types: [".py"]}\n'
    '    selection: {project_args: ["."]}\n',
    '    execution: {command: ["true"], batchable: false, runs_per_member: true}\n'
    "    parsing: {strategy: exit_code}\n"
    '    capabilities: {file_types: [".py"]}\n'
    '    selection: {project_args: ["."], config: [{file: mypy.ini, section: mypy}]}\n',
    1,
)
assert MEMBERS_CONFIG != NOOP_CONFIG

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "gc.auto=0"]


def sh(args, cwd, capture=False, check=True):
    out = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=ENV,
        check=check,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return out.stdout.decode() if capture else out.returncode


def module_text(i: int) -> str:
    return f'"""Module {i}."""\n\nVALUE_{i} = {i}\n\n\ndef f_{i}(x: int) -> int:\n    return x + {i}\n'


def build_repo(root: Path, files: int) -> None:
    """`files` tracked modules, 1% untracked, 1% ignored, a few edited."""
    root.mkdir(parents=True)
    for i in range(files):
        package = root / f"pkg{i // MODULES_PER_PACKAGE:04d}"
        if i % MODULES_PER_PACKAGE == 0:
            package.mkdir()
            (package / "__init__.py").write_text("")
        (package / f"mod{i % MODULES_PER_PACKAGE:03d}.py").write_text(module_text(i))
    (root / ".gitignore").write_text("build/\n*.pyc\n.st3/\n")
    sh(["git", "init", "-q", "-b", "main"], root)
    sh(GIT + ["add", "-A"], root)
    sh(GIT + ["commit", "-q", "-m", "corpus"], root)
    extra = max(files // 100, 1)
    for i in range(extra):
        (root / f"pkg{i:04d}" / f"new{i}.py").write_text(module_text(files + i))
    (root / "build").mkdir()
    for i in range(extra):
        (root / "build" / f"gen{i}.py").write_text(module_text(i))
        (root / f"pkg{i:04d}" / f"mod000.cpython-311.pyc").write_bytes(b"\0" * 64)
    for i in range(3):
        path = root / f"pkg{i:04d}" / "mod001.py"
        path.write_text(path.read_text() + f"EDITED_{i} = True\n")


def run_timed(args, cwd) -> float:
    """Runs a command; returns its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run([str(a) for a in args], cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def peak_rss_mb(args, cwd) -> float:
    """A command's peak RSS in MB. Through GNU time when it is installed:
    a child's ru_maxrss also holds the resident size of the process it was
    forked from (the kernel keeps the old image's high-water mark at exec),
    so measured from Python it never drops below Python's ~14 MB."""
    gnu_time = Path("/usr/bin/time")
    if gnu_time.exists():
        out = subprocess.run(
            [str(gnu_time), "-f", "%M", *map(str, args)],
            cwd=cwd,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return int(out.stderr.decode().strip().splitlines()[-1]) / 1024
    proc = subprocess.Popen(
        [str(a) for a in args], cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024


def measure(pairs: dict, runs: int, warmup: int = 2) -> dict:
    """Interleaved runs; per name, the median seconds and the peak RSS of
    one more run."""
    for _ in range(warmup):
        for step in pairs.values():
            run_timed(*step)
    times = {name: [] for name in pairs}
    for _ in range(runs):
        for name, step in pairs.items():
            times[name].append(run_timed(*step))
    return {name: (statistics.median(times[name]), peak_rss_mb(*pairs[name])) for name in pairs}


def size_figures(root: Path, runs: int) -> dict:
    """Times and peak RSS of each command on one repository."""
    shutil.rmtree(root / ".st3", ignore_errors=True)
    (root / ".st3").mkdir()
    (root / ".st3" / "quality.yaml").write_text(NOOP_CONFIG)
    # The green baseline: the first auto run checks the project (no baseline
    # yet), the second one the edited and untracked files it now knows.
    sh([QG, "run"], root)
    sh([QG, "run"], root)
    assert "nothing to check" in sh([QG, "run"], root, capture=True), "the no-op run has work"
    git = lambda *args: (["git", *args], root)  # noqa: E731
    qg = lambda *args: ([QG, *args], root)  # noqa: E731
    figures = {}
    figures["listing"] = measure(
        {"qg": qg("files", "--scope", "project"), "git": git("ls-files", "--cached", "--others", "--exclude-standard")},
        runs,
    )
    figures["noop"] = measure({"qg": qg("run"), "git": git("status", "--porcelain")}, runs)
    (root / ".st3" / "quality.yaml").write_text(MEMBERS_CONFIG)
    sh([QG, "run"], root)
    assert "nothing to check" in sh([QG, "run"], root, capture=True), "the no-op run has work"
    figures["noop_members"] = measure({"qg": qg("run"), "git": git("status", "--porcelain")}, runs)
    (root / ".st3" / "quality.yaml").write_text(NOOP_CONFIG)
    sh([QG, "run"], root)
    edited = root / "pkg0005" / "mod050.py"
    edited.write_text(edited.read_text() + "ONE_MORE = 1\n")
    figures["one"] = measure({"qg": qg("run", "--no-state"), "git": git("status", "--porcelain")}, runs)
    figures["planning"] = measure(
        {
            "qg": qg("run", "--scope", "project", "--no-state"),
            "git": git("ls-files", "--cached", "--others", "--exclude-standard"),
        },
        max(runs // 2, 3),
    )
    return figures


GOALS = {"listing": 1.5, "noop": 1.2, "noop_members": 1.2, "one": 1.3}
LABELS = {
    "listing": "`qg files --scope project` vs `git ls-files --cached --others --exclude-standard`",
    "noop": "no-op `qg run` (auto, 4 no-op gates) vs `git status --porcelain`",
    "noop_members": "no-op `qg run` (auto, 4 no-op gates, one run per member: the members' configs found, untracked ones too) vs `git status --porcelain`",
    "one": "one-file `qg run --no-state` (auto, 4 no-op gates) vs `git status --porcelain`",
    "planning": "`qg run --scope project --no-state` (4 no-op gates over every file) vs `git ls-files …`",
}


def rows(results: dict) -> list:
    """Table rows (figure, medians, result, goal, met) for bench/RESULTS.md."""
    out = []
    sizes = sorted(results)
    for size in sizes:
        for key, label in LABELS.items():
            (qg_s, qg_rss), (git_s, _) = results[size][key]["qg"], results[size][key]["git"]
            ratio = qg_s / git_s
            goal = GOALS.get(key)
            judged = goal is not None and size >= 30000
            rss_goal = size >= 100000
            met = (not judged or ratio <= goal) and (not rss_goal or qg_rss <= 100)
            goal_text = f"<= {goal}x" if judged else "(report)"
            if rss_goal:
                goal_text += "; RSS <= 100 MB"
            out.append(
                (
                    f"{size:,} files: {label}",
                    f"qg {qg_s * 1000:.1f} ms, git {git_s * 1000:.1f} ms; qg peak RSS {qg_rss:.1f} MB",
                    f"{ratio:.2f}x",
                    goal_text,
                    met,
                )
            )
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        per = (large - small) / 10000
        for key, label in LABELS.items():
            slope = lambda who: (results[large][key][who][0] - results[small][key][who][0]) / per * 1000  # noqa: E731
            out.append(
                (
                    f"growth {small:,} → {large:,} files: {label.split(' vs ')[0]}",
                    f"qg {slope('qg'):.1f} ms, git {slope('git'):.1f} ms per 10,000 files",
                    f"{slope('qg') / slope('git'):.2f}x git's slope" if slope("git") > 0 else "-",
                    "linear (report)",
                    True,
                )
            )
    return out


def scale(runs: int, tmp: Path, sizes=(10000, 30000, 100000), keep=None) -> list:
    results = {}
    for size in sizes:
        root = (Path(keep) if keep else tmp) / f"scale-{size}"
        if not root.exists():
            build_repo(root, size)
        results[size] = size_figures(root, runs)
        print(f"scale: {size} files done", file=sys.stderr, flush=True)
    return rows(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000, 100000])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keep", help="build (or reuse) the repositories here")
    args = parser.parse_args()
    if "QG_BIN" not in os.environ:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=HERE, check=True)
    with tempfile.TemporaryDirectory(prefix="qg-scale-") as tmp:
        for row in scale(args.runs, Path(tmp), args.sizes, args.keep):
            print(" | ".join(str(c) for c in row))


if __name__ == "__main__":
    main()
