"""The TDD loop on the generated 300-module package: `qg run` (auto) after
editing one module against the slowest tool alone on it, and auto against
project scope (`--only tdd`); and after a one-line edit to a leaf module
and to one 20 others import, against the slowest type checker alone on it
and its importers (`--only tdd-importers`)."""

import json
from pathlib import Path

from .common import HUB_IMPORTERS, QG, cmd, default_commands, generate_package, git_commit_all, medians, sec, sh


def tdd_loop(runs, tmp: Path):
    root = tmp / "tdd"
    generate_package(root, 300)
    git_commit_all(root)
    report = json.loads(sh([QG, "run", "--scope", "project", "--format", "json"], root, capture=True, check=False))
    assert report["overall_pass"], report["summary_line"]
    sh([QG, "run"], root)  # green auto run: baseline = HEAD
    module = root / "pkg" / "mod150.py"
    original = module.read_text()
    edits = iter(range(10_000))

    def edit():
        k = next(edits)
        module.write_text(
            original + f'\n\ndef extra_{k}(x: int) -> int:\n    """Return x doubled."""\n    return 2 * x + {k}\n'
        )

    def qg_auto():
        edit()
        out = json.loads(sh([QG, "run", "--format", "json"], root, capture=True, check=False))
        assert out["scope"]["files_checked"] == 1 and out["overall_pass"], out["summary_line"]

    steps = {"qg auto after a one-module edit": qg_auto}
    for i, c in enumerate(default_commands()):
        steps[f"{c[0]} ({i + 1}) alone on the module"] = cmd(c + ["pkg/mod150.py"], root)
    m = medians(steps, runs * 2, warmup=1)
    tool_steps = [n for n in m if n.endswith("alone on the module")]
    slowest_name = max(tool_steps, key=lambda n: m[n])
    r = m["qg auto after a one-module edit"] / m[slowest_name]
    p = medians(
        {
            "auto": qg_auto,
            "project": cmd([QG, "run", "--scope", "project"], root),
        },
        max(2, runs // 2),
        warmup=0,
    )
    return [
        (
            "TDD loop (300 typed modules): `qg run` (auto) after editing one module vs the slowest tool alone on it",
            f"qg {sec(m['qg auto after a one-module edit'])}, slowest ({slowest_name}) {sec(m[slowest_name])}",
            f"{r:.2f}x",
            "<= 1.15x",
            r <= 1.15,
        ),
        (
            "TDD loop: auto vs project scope",
            f"auto {sec(p['auto'])}, project {sec(p['project'])}",
            f"{p['auto'] / p['project']:.2f}x",
            "(report)",
            True,
        ),
    ]


def tdd_importers(runs, tmp: Path):
    """Issue 11: a one-line edit to a leaf module and to a module imported by
    20 others; qg auto (which type-checks the importers too) against the
    slowest type checker alone on that file and its importers."""
    root = tmp / "tdd-importers"
    generate_package(root, 300)
    git_commit_all(root)
    report = json.loads(sh([QG, "run", "--format", "json"], root, capture=True, check=False))
    assert report["overall_pass"], report["summary_line"]  # project fallback; builds the graph
    importers = [f"pkg/mod{i:03d}.py" for i in range(HUB_IMPORTERS)]
    rows = []
    for label, target, expected in [
        ("a leaf module", "pkg/mod150.py", []),
        (f"a module imported by {HUB_IMPORTERS}", "pkg/hub.py", importers),
    ]:
        module = root / target
        original = module.read_text()
        edits = iter(range(10_000))

        def qg_auto(module=module, original=original, edits=edits, expected=expected):
            module.write_text(original + f"\n\nEDIT_{next(edits)} = 1\n")
            out = json.loads(sh([QG, "run", "--format", "json"], root, capture=True, check=False))
            assert out["overall_pass"] and out["scope"]["files_checked"] == 1 + len(expected), out["summary_line"]

        checkers = [c for c in default_commands() if c[0] in ("mypy", "pyright")]
        steps = {"qg": qg_auto}
        for c in checkers:
            steps[c[0]] = cmd(c + [target, *expected], root)
        m = medians(steps, runs * 2, warmup=1)
        slowest = max((n for n in m if n != "qg"), key=lambda n: m[n])
        r = m["qg"] / m[slowest]
        rows.append(
            (
                f"TDD loop with importers: `qg run` (auto) after a one-line edit to {label} vs the slowest type checker alone on it and its {len(expected)} importers",
                f"qg {sec(m['qg'])}, {slowest} alone {sec(m[slowest])}",
                f"{r:.2f}x",
                "<= 1.15x",
                r <= 1.15,
            )
        )
        module.write_text(original)
        sh([QG, "run"], root)
    return rows
