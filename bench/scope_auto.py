#!/usr/bin/env python3
"""No-op `auto` scope on a large repository: qg vs. the git commands it replaces.

Builds a temp git repo of N tracked Python files (default 7,000) in nested
directories, takes a green baseline with a trivial gate, then times, with
nothing changed:

  A: qg files --scope auto
  B: git status --porcelain  +  git diff --name-only <baseline>

Runs are interleaved (A, B, A, B, ...) after warm-up, so both see the same
machine state; the figure is the ratio of medians, measured in one run.
Goal (issue 3): A/B <= 1.5.

    bench/scope_auto.py [--files 7000] [--runs 30]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def sh(*args, cwd, capture=False):
    result = subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.PIPE if capture else subprocess.DEVNULL)
    return result.stdout.decode() if capture else None


def build_repo(root: Path, count: int) -> str:
    per_dir = 100
    for i in range(count):
        d = root / f"pkg{i // per_dir // 10}" / f"sub{i // per_dir}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(f"VALUE_{i} = {i}\n")
    (root / ".st3").mkdir()
    (root / ".st3/quality.yaml").write_text(
        'version: "1"\nactive_gates: [noop]\nartifact_logging: {enabled: false}\n'
        'gates:\n  noop:\n    execution: {command: ["true"], pass_files: false}\n'
        "    parsing: {strategy: exit_code}\n"
    )
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    sh("git", "init", "-q", "-b", "main", cwd=root)
    sh("git", "add", "-A", cwd=root)
    sh(*git, "commit", "-q", "-m", "corpus", cwd=root)
    return sh("git", "rev-parse", "HEAD", cwd=root, capture=True).strip()


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=7000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=HERE, check=True)
    qg = HERE / "target/release/qg"
    with tempfile.TemporaryDirectory(prefix="qg-bench-") as tmp:
        root = Path(tmp)
        head = build_repo(root, args.files)
        env = dict(os.environ, CI="true")
        # Green baseline: the first auto run falls back to project and records HEAD.
        subprocess.run([str(qg), "run"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
        scope = json.loads(sh(str(qg), "files", "--scope", "auto", "--format", "json", cwd=root, capture=True))
        assert scope["mode"] == "auto" and scope["baseline_sha"] == head and not scope["files"], scope
        tracked = len(sh("git", "ls-files", cwd=root, capture=True).splitlines())

        def qg_files():
            sh(str(qg), "files", "--scope", "auto", cwd=root)

        def git_pair():
            sh("git", "status", "--porcelain", cwd=root)
            sh("git", "diff", "--name-only", head, cwd=root)

        for _ in range(3):
            qg_files()
            git_pair()
        a, b = [], []
        for _ in range(args.runs):
            a.append(timed(qg_files))
            b.append(timed(git_pair))
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"repository: {tracked} tracked files, nothing changed since the baseline")
        print(f"runs: {args.runs} interleaved pairs after 3 warm-up pairs")
        print(f"A qg files --scope auto:                          median {ma * 1000:.1f} ms")
        print(f"B git status --porcelain + git diff --name-only:  median {mb * 1000:.1f} ms")
        print(f"ratio A/B: {ma / mb:.2f} (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
