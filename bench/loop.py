"""The TDD loop's four steps warm against cold, in one run: break an
importer, still red after another edit, fix, a green edit — each a plain
`qg run` (auto, recording its state as a user's does), with warm daemons
and with `--no-daemon`, on rich (`--only loop-rich`) and on the generated
300-module package (`--only loop-package`); and on rich with the result
cache on, as users run it (`--only loop-rich-cached`: both sides share a
store filled by a cold run of the committed tree).

A warm answer is shown at once and confirmed in the background; between
steps the loop waits, as a user editing does, until the daemons have no
comparison under way, and reports how long the confirmations took after
the answers (they move the state; the answer was shown before), and what
the slowest daemon took to answer, as its gate timed the request: the part
of a warm step that is the tool's own, under which qg cannot go.
"""

import json
import statistics
import subprocess
import time
from pathlib import Path

from .common import (
    ENV,
    HUB_IMPORTERS,
    QG,
    RICH,
    Daemons,
    generate_package,
    git_commit_all,
    sdist,
    sec,
    sh,
)


def background_idle(root: Path, patience: float = 120.0) -> float:
    """Waits until no daemon of the project compares anything with a cold
    run (their records say so); returns how long it waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < patience:
        busy = False
        for record in (root / ".st3" / "daemons").glob("*/daemon.json"):
            try:
                busy |= json.loads(record.read_text()).get("background") is not None
            except (OSError, ValueError):
                busy = True
        if not busy:
            break
        time.sleep(0.05)
    return time.perf_counter() - started


# Daemons against the tools themselves: the result cache (which answers a
# tree seen before, warm or cold) is off on both sides, as `bench/cache.py`
# measures it on its own.
LOOP_ENV = dict(ENV, QG_NO_CACHE="1")


def run_step(root: Path, warm: bool, env: dict):
    """One `qg run` as the user types it (auto, recording); its time and report."""
    args = [QG, "run", "--format", "json", "--no-progress"] + ([] if warm else ["--no-daemon"])
    started = time.perf_counter()
    out = subprocess.run(args, cwd=root, env=env, capture_output=True, check=False)
    took = time.perf_counter() - started
    return took, json.loads(out.stdout)


class Loop:
    """The four steps on one project: `broken` (module, old, new) breaks an
    importer, `elsewhere` (module, old, new) is the edit made while still
    red and, again, the green edit. Each edit is new to the checkers (a
    counter in a comment)."""

    def __init__(self, root: Path, broken, elsewhere):
        self.root = root
        self.broken = broken
        self.elsewhere = elsewhere
        self.originals = {m: (root / m).read_text() for m in {broken[0], elsewhere[0]}}
        self.serial = 0

    def edit(self, spec, changed: bool):
        module, old, new = spec
        self.serial += 1
        text = self.originals[module]
        assert old in text, (module, old)
        if changed:
            text = text.replace(old, f"{new}  # edit {self.serial}", 1)
        else:
            text = text.replace(old, f"{old}  # edit {self.serial}", 1)
        (self.root / module).write_text(text)

    def restore(self):
        for module, text in self.originals.items():
            (self.root / module).write_text(text)

    def steps(self):
        """(name, expected to pass, the edit) of each step, in order."""
        return [
            ("break an importer", False, lambda: self.edit(self.broken, True)),
            ("still red after another edit", False, lambda: self.edit(self.elsewhere, False)),
            ("fix", True, lambda: self.edit(self.broken, False)),
            ("a green edit", True, lambda: self.edit(self.elsewhere, False)),
        ]


def settle(root: Path, loop: Loop, env: dict):
    """Back to the committed files and a green state: a cold run records it
    (and the daemons' comparisons end)."""
    loop.restore()
    background_idle(root)
    subprocess.run([QG, "run", "--no-daemon", "--no-progress"], cwd=root, env=env, capture_output=True, check=False)
    background_idle(root)


def loop_figures(root: Path, label: str, loop: Loop, runs: int, goal_s: float, goal_ratio, env=LOOP_ENV):
    """Each step's warm and cold `qg run`, interleaved over `runs` loops
    after one warm-up; the verdicts compared step by step."""
    names = [name for name, _, _ in loop.steps()]
    times = {(mode, name): [] for mode in ("warm", "cold") for name in names}
    confirmed = {name: [] for name in names}
    # What the daemons themselves took to answer (each warm gate's own time,
    # the slowest of them): the floor under a warm run's time.
    floor = {name: [] for name in names}
    verdicts = {}
    daemons = Daemons(root, env=env)
    try:
        for round_ in range(runs + 1):
            for mode in ("warm", "cold"):
                settle(root, loop, env)
                for name, passes, edit in loop.steps():
                    edit()
                    took, report = run_step(root, mode == "warm", env)
                    gates = {g["id"]: g for g in report["gates"]}
                    # The warm loop must be the loop: answered warm, red then
                    # green. A cold run's verdict is reported as it is (mypy's
                    # cache can add a finding a run from scratch does not).
                    # (With the result cache, a gate it answers whole is
                    # cold: a fix back to the committed tree.)
                    warm = [g for g in ("mypy", "pyright") if gates.get(g, {}).get("warm")]
                    if mode == "warm" and env is LOOP_ENV:
                        assert warm == ["mypy", "pyright"], report["summary_line"]
                    if mode == "warm":
                        assert report["overall_pass"] == passes, (name, report["summary_line"])
                    # The user edits meanwhile: the confirmation lands.
                    waited = background_idle(root)
                    if round_ == 0:
                        continue
                    times[(mode, name)].append(took)
                    if mode == "warm":
                        confirmed[name].append(waited)
                        floor[name].append(max([gates[g]["duration_ms"] for g in warm], default=0) / 1000)
                    verdicts.setdefault(name, {})[mode] = report["summary_line"].split(" (")[0]
        loop.restore()
    finally:
        daemons.stop()
    rows = []
    for name in names:
        warm = statistics.median(times[("warm", name)])
        cold = statistics.median(times[("cold", name)])
        ratio = warm / cold
        said = verdicts[name]
        verdict = (
            f"the same verdict ({said['warm']})"
            if said["warm"] == said["cold"]
            else f"verdicts warm {said['warm']}, cold {said['cold']}"
        )
        ratio_goal = f" and <= {goal_ratio:g}x cold" if goal_ratio else ""
        met = warm <= goal_s and (goal_ratio is None or ratio <= goal_ratio)
        goal = f"<= {goal_s:g} s{ratio_goal}" if goal_s else "(report)"
        met = met if goal_s else True
        slowest = statistics.median(floor[name])
        rows.append(
            (
                f"{label}, the TDD loop warm and cold: `qg run` to {name}",
                (
                    f"warm {sec(warm)}, cold {sec(cold)}; the slowest daemon's answer (its gate's time) "
                    f"{sec(slowest)} ({slowest / cold:.2f}x cold); its confirmation landed "
                    f"{sec(statistics.median(confirmed[name]))} after the answer; {verdict}"
                ),
                f"{sec(warm)} ({ratio:.2f}x)",
                goal,
                met,
            )
        )
    return rows


# filesize.decimal's return type: progress.py, which imports it, breaks
# (Text() of an int), and so does decimal itself.
RICH_IMPORTER_BREAK = (
    "rich/filesize.py",
    ') -> str:\n    """Convert a filesize in to a string (powers of 1000, SI prefixes).',
    ') -> int:\n    """Convert a filesize in to a string (powers of 1000, SI prefixes).',
)


def loop_rich(runs, tmp: Path):
    """Issue 62: rich, its known findings in a committed baseline; the
    importer broken by filesize.decimal's return type, then edited while
    still red, and again as the green edit (as one goes to the caller)."""
    root = sdist(RICH, tmp / "rich-loop")
    sh([QG, "baseline", "write", "--no-progress"], root, check=False)
    git_commit_all(root, "baseline")
    sh([QG, "run", "--no-daemon"], root, check=False)
    total = '        return Text(data_size, style="progress.filesize.total")'
    elsewhere = ("rich/progress.py", total, total)
    loop = Loop(root, RICH_IMPORTER_BREAK, elsewhere)
    return loop_figures(root, "rich", loop, runs, 1.0, 0.15)


def loop_package(runs, tmp: Path):
    """Issue 62: the generated 300-module package; the hub's return type
    breaks its importers."""
    root = tmp / "loop-package"
    generate_package(root, 300)
    git_commit_all(root)
    sh([QG, "run", "--no-daemon"], root)
    hub = ("pkg/hub.py", "def hub(x: int) -> int:", "def hub(x: int) -> str:")
    elsewhere = ("pkg/mod150.py", "    return x + BASE + 150", "    return x + BASE + 150")
    loop = Loop(root, hub, elsewhere)
    return loop_figures(root, f"300-module package (hub imported by {HUB_IMPORTERS})", loop, runs, 0.3, None)


def loop_rich_cached(runs, tmp: Path):
    """The rich loop with the result cache on, as users run qg: a store
    filled by a cold run of the committed tree, shared by both sides. The
    fix back to a tree seen before is the cache's; a warm gate it answers
    in part asks its daemon for the misses; what the lookups cost each run
    is in the warm times."""
    root = sdist(RICH, tmp / "rich-loop-cached")
    store = tmp / "rich-loop-store"
    env = dict(ENV, QG_CACHE_DIR=str(store), QG_NO_CACHE="0", QG_CACHE_SAMPLE="0")
    sh([QG, "baseline", "write", "--no-progress"], root, check=False)
    git_commit_all(root, "baseline")
    subprocess.run([QG, "run", "--scope", "project", "--no-daemon"], cwd=root, env=env, capture_output=True, check=False)
    total = '        return Text(data_size, style="progress.filesize.total")'
    elsewhere = ("rich/progress.py", total, total)
    loop = Loop(root, RICH_IMPORTER_BREAK, elsewhere)
    return loop_figures(root, "rich, the result cache on", loop, runs, 0, None, env=env)
