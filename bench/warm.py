"""Warm daemons against cold runs after return-type changes, findings
compared, with `qg daemon start`'s time and memory and `qg watch`'s latency:
on rich (`--only warm-rich`), on the generated package
(`--only warm-package`), and on a src layout installed editable,
marshmallow (`--only warm-src`)."""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .common import (
    BIN,
    ENV,
    HUB_IMPORTERS,
    MARSHMALLOW,
    QG,
    RICH,
    RICH_DECIMAL,
    VENV,
    Daemons,
    edit_loop,
    generate_package,
    git_commit_all,
    medians,
    report_json,
    sdist,
    sec,
    sh,
)


def findings_by_gate(report):
    def key(v):
        return (v.get("file"), v.get("line"), v.get("column"), v.get("code"), v.get("message"), v.get("severity"))

    return {g["id"]: sorted(key(v) for v in g.get("violations", [])) for g in report["gates"]}


def compare_findings(warm, cold):
    """Per gate: identical, or what only one side reported."""
    w, c = findings_by_gate(warm), findings_by_gate(cold)
    same = [g for g in w if w[g] == c.get(g)]
    differ = {
        g: (len(set(w[g]) - set(c.get(g, []))), len(set(c.get(g, [])) - set(w[g]))) for g in w if w[g] != c.get(g)
    }
    return same, differ


def warm_figures(root: Path, label: str, edits, runs: int, env=None):
    """Warm against cold `qg run` after each kind of edit in `edits`
    (name, module, old, new), in the same run; findings compared."""
    env = env or ENV
    rows = []
    daemons = Daemons(root, env)
    try:
        mem = daemons.memory_mib()
        first = daemons.first_pass_ms()
        checked = daemons.self_check_ms()
        rows.append(
            (
                f"{label}: `qg daemon start` to ready (every warm gate's first full pass and its self-check "
                "against a cold run), and the daemons' memory",
                f"{sec(daemons.start_s)}; first pass "
                + ", ".join(f"{g} {first[g] / 1000:.1f} s" for g in sorted(first))
                + "; self-check "
                + ", ".join(
                    f"{g} {checked[g] / 1000:.1f} s" if checked[g] is not None else f"{g} none" for g in sorted(checked)
                )
                + "; resident "
                + ", ".join(f"{g} {mem[g]:.0f} MiB" for g in sorted(mem)),
                f"{sec(daemons.start_s)}",
                "(report)",
                True,
            )
        )
        for name, module, old, new, goal_s, goal_ratio in edits:
            edit, restore = edit_loop(root / module, old, new)

            def warm(edit=edit):
                edit()
                report = report_json(root, env=env)
                assert all(g["warm"] for g in report["gates"] if g["id"] in ("mypy", "pyright")), report["summary_line"]

            def cold(edit=edit):
                edit()
                report_json(root, "--no-daemon", env=env)

            m = medians({"warm": warm, "cold": cold}, runs, warmup=1)
            edit()
            warm_report = report_json(root, env=env)
            cold_report = report_json(root, "--no-daemon", env=env)
            verified = subprocess.run(
                [QG, "run", "--no-state", "--verify", "--format", "json"],
                cwd=root,
                env=env,
                capture_output=True,
                check=False,
            )
            drift = [
                g["id"]
                for g in json.loads(verified.stdout)["gates"]
                if (g.get("error") or {}).get("kind") == "warm_drift"
            ]
            same, differ = compare_findings(warm_report, cold_report)
            restore()
            ratio = m["warm"] / m["cold"]
            counts = ", ".join(f"{g} {len(v)}" for g, v in findings_by_gate(warm_report).items())
            found = f"findings identical for {', '.join(same)}" + (
                "; " + "; ".join(f"{g}: {a} only warm, {b} only cold" for g, (a, b) in differ.items()) if differ else ""
            )
            met = (goal_s is None or m["warm"] <= goal_s) and ratio <= goal_ratio and not drift
            goal = (f"<= {goal_s:.1f} s and " if goal_s else "") + f"<= {goal_ratio:g}x cold; identical findings"
            rows.append(
                (
                    f"{label}, warm daemons: `qg run` (auto) after {name}",
                    (
                        f"warm {sec(m['warm'])}, cold {sec(m['cold'])}; findings ({counts}); "
                        f"{found}; `--verify`: {'drift in ' + ', '.join(drift) if drift else 'no drift'}"
                    ),
                    f"{ratio:.2f}x",
                    goal,
                    met,
                )
            )
    finally:
        daemons.stop()
    return rows


def watch_latency(root: Path, label: str, module: str, old: str, new: str, runs: int):
    """From a save to the redrawn verdict of `qg watch --format json`
    (daemons running): the time until the pass reporting the edit."""
    daemons = Daemons(root)
    watch = subprocess.Popen(
        [QG, "watch", "--format", "json", "--verify-every", "0"],
        cwd=root,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        json.loads(watch.stdout.readline())  # the first pass
        edit, restore = edit_loop(root / module, old, new)
        samples = []
        for _ in range(runs + 1):
            time.sleep(0.5)
            started = time.perf_counter()
            edit()
            report = json.loads(watch.stdout.readline())
            samples.append(time.perf_counter() - started)
            assert any(g["warm"] for g in report["gates"]), report["summary_line"]
        restore()
        latency = statistics.median(samples[1:])
        return [
            (
                f"{label}: `qg watch`, from a save ({module}) to the redrawn verdict",
                f"median {sec(latency)} over {runs} saves (debounce 100 ms)",
                sec(latency),
                "<= 1.5 s",
                latency <= 1.5,
            )
        ]
    finally:
        watch.terminate()
        watch.wait()
        daemons.stop()


def warm_rich(runs, tmp: Path):
    """Issue 24: rich with warm daemons after a return-type change with one
    importer (`filesize.decimal`) and one imported everywhere (`cells.cell_len`)."""
    root = sdist(RICH, tmp / "rich-warm")
    sh([QG, "baseline", "write", "--no-progress"], root, check=False)  # rich's own findings, known
    git_commit_all(root, "baseline")
    sh([QG, "run"], root, check=False)  # green against the baseline: auto baseline = HEAD
    decimal = RICH_DECIMAL
    cell_len = (
        "rich/cells.py",
        'def cell_len(text: str, unicode_version: str = "auto") -> int:',
        'def cell_len(text: str, unicode_version: str = "auto") -> str:',
    )
    rows = warm_figures(
        root,
        "rich",
        [
            ("a return-type change with one importer (filesize.decimal)", *decimal, 1.0, 0.1),
            ("a return-type change imported everywhere (cells.cell_len)", *cell_len, None, 1.0),
        ],
        runs,
    )
    rows += watch_latency(root, "rich", decimal[0], decimal[1], decimal[2], runs)
    return rows


def warm_package(runs, tmp: Path):
    """Issue 24: the same figures on the generated 300-module package."""
    root = tmp / "warm-package"
    generate_package(root, 300)
    git_commit_all(root)
    sh([QG, "run"], root)  # green: auto baseline = HEAD
    leaf = ("pkg/mod150.py", "def value_150(x: int) -> int:", "def value_150(x: int) -> str:")
    hub = ("pkg/hub.py", "def hub(x: int) -> int:", "def hub(x: int) -> str:")
    rows = warm_figures(
        root,
        "300-module package",
        [
            ("a return-type change to a leaf module", *leaf, None, 1.0),
            (f"a return-type change to a module {HUB_IMPORTERS} import", *hub, None, 1.0),
        ],
        runs,
    )
    rows += watch_latency(root, "300-module package", *hub, runs)
    return rows


def editable_install(root: Path):
    """The project's own virtualenv with the project installed editable by
    pip (a .pth putting src/ on sys.path) and the pinned tools in it, as
    `pip install -e .` (or `uv sync`) leaves a src-layout project; returns
    the environment a user who activated it runs qg in."""
    venv = root / ".venv"
    sh([sys.executable, "-m", "venv", "--without-pip", str(venv)], root)
    (site,) = (venv / "lib").glob("python*/site-packages")
    (tools_site,) = VENV.glob("lib/python*/site-packages")
    (site / "_tools.pth").write_text(f"{tools_site}\n")
    sh([BIN / "pip", "--python", venv / "bin" / "python", "install", "--quiet", "--no-deps", "-e", root], root)
    for name, module in [("mypy", "mypy"), ("dmypy", "mypy.dmypy")]:
        script = venv / "bin" / name
        script.write_text(f'#!/bin/sh\nexec {venv / "bin" / "python"} -m {module} "$@"\n')
        script.chmod(0o755)
    for name in ["ruff", "pyright", "pyright-langserver"]:
        (venv / "bin" / name).symlink_to(BIN / name)
    (root / ".gitignore").write_text(".venv/\n.st3/\n")
    return dict(ENV, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv))


def warm_src_layout(runs, tmp: Path):
    """Issue 36: warm against cold on a src layout installed editable
    (marshmallow), after a leaf edit and an edit imported everywhere, with
    the cost of each daemon's self-check."""
    root = sdist(MARSHMALLOW, tmp / "marshmallow-warm")
    # mypy's `files` names examples/, which the repository has and the sdist
    # lacks: without it mypy's own run stops ("Cannot read file").
    (root / "examples").mkdir()
    (root / "examples" / "__init__.py").write_text('"""Examples."""\n')
    env = editable_install(root)
    subprocess.run([QG, "baseline", "write", "--no-progress"], cwd=root, env=env, capture_output=True, check=False)
    git_commit_all(root, "baseline")
    subprocess.run([QG, "run"], cwd=root, env=env, capture_output=True, check=False)
    leaf = ("src/marshmallow/orderedset.py", "    def __len__(self):", "    def __len__(self) -> str:")
    hub = (
        "src/marshmallow/utils.py",
        "def is_aware(datetime: dt.datetime) -> bool:",
        "def is_aware(datetime: dt.datetime) -> str:",
    )
    return warm_figures(
        root,
        "marshmallow (src layout, installed editable)",
        [
            ("a return-type change to a leaf module (orderedset)", *leaf, None, 1.0),
            ("a return-type change imported everywhere (utils.is_aware)", *hub, None, 1.0),
        ],
        runs,
        env,
    )
