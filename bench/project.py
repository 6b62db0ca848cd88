"""rich at project scope: qg with the four default gates against the same
four commands in sequence, the slowest one alone, and prek and pre-commit
running them as local hooks (`--only rich`); and mypy `project_wide`
against mypy on the scope alone (`--only mypy-wide`)."""

import shutil
from pathlib import Path

from .common import (
    BIN,
    QG,
    RICH,
    cmd,
    default_commands,
    default_config,
    git_commit_all,
    hooks_config,
    medians,
    project_files,
    sdist,
    sec,
    sequence,
    sh,
)


def rich_project(runs, tmp: Path):
    root = sdist(RICH, tmp / "rich")
    files = project_files(root)
    commands = [c + files for c in default_commands()]
    hooks = [
        ("ruff-format", " ".join(default_commands()[0]), True, False),
        ("ruff-check", " ".join(default_commands()[1]), True, False),
        ("mypy", " ".join(default_commands()[2]), True, True),
        ("pyright", " ".join(default_commands()[3]), True, True),
    ]
    (root / ".pre-commit-config.yaml").write_text(hooks_config(hooks))
    git_commit_all(root, "hooks")
    steps = {
        "qg": cmd([QG, "run", "--scope", "project"], root),
        "4 commands in sequence": sequence(commands, root),
        "prek": cmd([BIN / "prek", "run", "--all-files"], root),
        "pre-commit": cmd([BIN / "pre-commit", "run", "--all-files"], root),
    }
    for i, c in enumerate(commands):
        steps[f"gate {i + 1} alone"] = cmd(c, root)
    m = medians(steps, runs, warmup=1)
    slowest_name = max((n for n in m if n.endswith("alone")), key=lambda n: m[n])
    slowest = m[slowest_name]
    r_seq = m["qg"] / m["4 commands in sequence"]
    r_slow = m["qg"] / slowest
    r_prek = m["qg"] / m["prek"]
    n = len(files)
    return [
        (
            f"rich, project scope ({n} files): qg vs the 4 commands in sequence",
            f"qg {sec(m['qg'])}, sequence {sec(m['4 commands in sequence'])}",
            f"{r_seq:.2f}x (floor on this machine, slowest gate alone / sequence: {slowest / m['4 commands in sequence']:.2f}x)",
            "<= 0.85x",
            r_seq <= 0.85,
        ),
        (
            "rich: qg vs the slowest gate alone",
            f"qg {sec(m['qg'])}, slowest ({slowest_name}: {commands[int(slowest_name.split()[1]) - 1][0]}) {sec(slowest)}",
            f"{r_slow:.2f}x",
            "<= 1.15x",
            r_slow <= 1.15,
        ),
        (
            "rich: qg vs prek (same 4 commands as local system hooks)",
            f"qg {sec(m['qg'])}, prek {sec(m['prek'])}, pre-commit {sec(m['pre-commit'])}",
            f"{r_prek:.2f}x (pre-commit: {m['qg'] / m['pre-commit']:.2f}x; floor, slowest gate alone / prek: {slowest / m['prek']:.2f}x)",
            "<= 0.9x prek",
            r_prek <= 0.9,
        ),
    ]


def whole_project_mypy(runs, tmp: Path):
    """Issue 5.4: mypy on the whole project (reporting the scope) vs on the scope alone, on rich."""
    root = sdist(RICH, tmp / "rich-mypy")
    sh([QG, "run", "--scope", "project", "--gate", "mypy"], root, check=False)  # warm the cache
    config = default_config()
    wide = config.replace("      project_wide: false", "      project_wide: true", 1)
    (root / "narrow.yaml").write_text(config)
    (root / "wide.yaml").write_text(wide)
    target = "rich/text.py"
    m = medians(
        {
            "scope only": cmd([QG, "run", "--config", "narrow.yaml", "--gate", "mypy", target], root),
            "project_wide": cmd([QG, "run", "--config", "wide.yaml", "--gate", "mypy", target], root),
            "mypy cold, whole project": lambda: (
                shutil.rmtree(root / ".mypy_cache", ignore_errors=True),
                sh([BIN / "mypy", *project_files(root)], root, check=False),
            ),
        },
        runs,
        warmup=1,
    )
    return [
        (
            f"mypy project_wide on rich, one file in scope ({target}), warm cache",
            f"scope only {sec(m['scope only'])}, project_wide {sec(m['project_wide'])}, cold full mypy {sec(m['mypy cold, whole project'])}",
            f"{m['project_wide'] / m['scope only']:.2f}x scope-only",
            "(report)",
            True,
        )
    ]
