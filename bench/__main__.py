"""bench/run.py [--runs N] [--only NAME ...] (python -m bench): runs the
figures and writes bench/RESULTS.md."""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import __doc__ as ABOUT
from .cache import cache_package, cache_rich
from .common import BIN, HERE, install_qg, machine, versions
from .graph import graph_cost, roots_cost
from .interface import interface_aware, interface_aware_real
from .loop import loop_package, loop_rich, loop_rich_cached
from .lsp import lsp_rich
from .noop import django_noop, managed_noop, scale_figures
from .overhead import mcp_server, overhead
from .parsing import baseline_matching, parsing
from .project import rich_project, whole_project_mypy
from .tdd import tdd_importers, tdd_loop
from .warm import warm_package, warm_rich, warm_src_layout
from .workspace import real_workspace_cost, workspace_cost

FIGURES = {
    "overhead": overhead,
    "rich": rich_project,
    "django": django_noop,
    "tdd": tdd_loop,
    "tdd-importers": tdd_importers,
    "interface-aware": interface_aware,
    "interface-aware-real": interface_aware_real,
    "graph": graph_cost,
    "roots": roots_cost,
    "workspace": workspace_cost,
    "real-workspace": real_workspace_cost,
    "parsing": parsing,
    "mypy-wide": whole_project_mypy,
    "baseline": baseline_matching,
    "mcp": mcp_server,
    "scale": scale_figures,
    "warm-rich": warm_rich,
    "warm-package": warm_package,
    "warm-src": warm_src_layout,
    "lsp-rich": lsp_rich,
    "loop-rich": loop_rich,
    "loop-package": loop_package,
    "loop-rich-cached": loop_rich_cached,
    "managed-noop": managed_noop,
    "cache-rich": cache_rich,
    "cache-package": cache_package,
}


# RESULTS.md from its first second-level heading on (building, profiles)
# is written by hand and kept by a new run.
KEPT_FROM = "\n## "


def main():
    parser = argparse.ArgumentParser(description=ABOUT, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="measured runs per command (some figures use more)")
    parser.add_argument("--only", nargs="*", choices=sorted(FIGURES), help="run only these figures")
    parser.add_argument("--output", default=str(HERE / "bench" / "RESULTS.md"))
    args = parser.parse_args()

    subprocess.run(
        [
            BIN / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
            HERE / "requirements-tools.txt",
            "-r",
            HERE / "bench" / "requirements.txt",
        ],
        check=True,
    )
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=HERE, check=True)
    install_qg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="qg-bench-") as tmp:
        for name in args.only or FIGURES:
            print(f"bench: {name} ...", file=sys.stderr, flush=True)
            try:
                rows += FIGURES[name](args.runs, Path(tmp))
            except Exception as e:
                rows.append((f"{name}: could not be measured", f"{type(e).__name__}: {e}", "-", "-", False))
    output = Path(args.output)
    previous = output.read_text() if output.exists() else ""
    table = [
        f"| {figure} | {detail} | {result} | {goal} | {'yes' if met else '**no**'} |"
        for figure, detail, result, goal, met in rows
    ]
    measured = f"by `bench/run.py --runs {args.runs}" + (f" --only {' '.join(args.only)}`" if args.only else "`")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.only and previous:
        # A partial run updates its own rows and keeps the others.
        rerun = f"Rows of {', '.join(args.only)} measured"
        header, table = merge_rows(previous, table)
        header = [line for line in header if not line.startswith(rerun)]
        header.append(f"{rerun} {when} {measured} on the same machine.")
    else:
        header = [f"Measured {when} {measured}.", f"Machine: {machine()}."]
    lines = [
        "# qg benchmark results",
        "",
        *(line for paragraph in header for line in (paragraph, "")),
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".",
        "",
        "Medians of interleaved runs after warm-up; each ratio compares two commands measured in the same run.",
        "",
        "| figure | medians | result | goal | met |",
        "|---|---|---|---|---|",
        *table,
    ]
    # Hand-written sections (the profiles) follow the table and are kept.
    kept = previous[previous.index(KEPT_FROM) :] if KEPT_FROM in previous else ""
    output.write_text("\n".join(lines) + "\n" + ("\n" + kept.lstrip("\n") if kept else ""))
    print("\n".join(lines))


def merge_rows(previous: str, table: list):
    """The previous results' header paragraphs (up to the versions) and its table
    with the rows of the same figures replaced by `table`'s, new ones last."""
    old_lines = previous.split(KEPT_FROM)[0].splitlines()
    header = []
    for line in old_lines[2:]:
        if line.startswith("Versions:"):
            break
        if line:
            header.append(line)

    def figure(row):
        return row.split(" | ")[0]

    fresh = {figure(row): row for row in table}
    old_rows = [line for line in old_lines if line.startswith("| ") and not line.startswith("| figure |")]
    merged = [fresh.pop(figure(row), row) for row in old_rows]
    return header, merged + list(fresh.values())


if __name__ == "__main__":
    main()
