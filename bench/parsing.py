"""Parsing and baseline matching: 100,000 recorded ruff and mypy violations
replayed and parsed into a JSON report, throughput and peak memory
(`--only parsing`); and 100,000 violations matched against a 100,000-entry
baseline (`--only baseline`)."""

import json
from pathlib import Path

from .common import HERE, QG, cmd, git_commit_all, medians, peak_rss_kb, sec, sh


def replay_config(parsing: str) -> str:
    return (
        'version: "1"\nactive_gates: [replay]\nartifact_logging: {enabled: false}\ngates:\n'
        '  replay:\n    execution: {command: ["./replay"], pass_files: false}\n'
        "    success: {exit_codes_ok: [0], exit_codes_violations: [1]}\n"
        f"    parsing:\n{parsing}"
    )


def parsing(runs, tmp: Path):
    results = []
    recorded = json.loads((HERE / "fixtures" / "recorded" / "ruff_check.json").read_text())
    ruff_items = []
    for i in range(100_000):
        item = dict(recorded[i % len(recorded)])
        item["filename"] = f"/FIXTURE_ROOT/pkg/mod{i // 1000:03d}.py"
        item["location"] = {"row": i % 1000 + 1, "column": 1}
        ruff_items.append(item)
    ruff_text = json.dumps(ruff_items, indent=2)
    mypy_line = (HERE / "fixtures" / "recorded" / "mypy.jsonl").read_text().splitlines()[1]
    mypy_text = "".join(mypy_line.replace('"line": 5', f'"line": {i + 1}') + "\n" for i in range(100_000))
    ruff_parsing = (
        '      strategy: json_violations\n      violations_path: "/"\n'
        "      field_map: {file: filename, line: location/row, column: location/column, code: code, message: message, url: url}\n"
        "      fixable_when: \"fix/applicability == 'safe'\"\n"
    )
    mypy_parsing = (
        "      strategy: json_violations\n      json_lines: true\n"
        "      field_map: {file: file, line: line, column: column, end_line: end_line, end_column: end_column,"
        " code: code, message: message, severity: severity, hint: hint}\n      column_offset: 1\n"
    )
    for name, text, config in [("ruff JSON", ruff_text, ruff_parsing), ("mypy JSON lines", mypy_text, mypy_parsing)]:
        root = tmp / ("parse-" + name.split()[0])
        root.mkdir()
        (root / "out.txt").write_text(text)
        (root / "a.py").write_text("x = 1\n")
        replay = root / "replay"
        replay.write_text("#!/bin/sh\ncat out.txt\nexit 1\n")
        replay.chmod(0o755)
        (root / "c.yaml").write_text(replay_config(config))
        args = [QG, "run", "--config", "c.yaml", "--scope", "project", "--format", "json"]
        out = json.loads(sh(args, root, capture=True, check=False))
        assert out["summary"]["total_violations"] == 100_000, out["summary"]
        m = medians({"qg": cmd(args, root), "cat": cmd(["cat", "out.txt"], root)}, runs, warmup=1)
        size = len(text.encode())
        throughput = size / (m["qg"] - m["cat"]) / 1e6
        rss = peak_rss_kb(args, root) * 1024
        ratio = rss / size
        results.append(
            (
                f"parsing 100,000 {name} violations ({size / 1e6:.1f} MB) + JSON report",
                f"qg {sec(m['qg'])} (the replaying `cat` alone {sec(m['cat'])}); peak RSS {rss / 1e6:.1f} MB",
                f"{throughput:.0f} MB/s; RSS {ratio:.2f}x output",
                ">= 50 MB/s; RSS <= 3x",
                throughput >= 50 and ratio <= 3,
            )
        )
    return results


def baseline_matching(runs, tmp: Path):
    """Issue 14: 100,000 violations matched against a 100,000-entry baseline."""
    recorded = json.loads((HERE / "fixtures" / "recorded" / "ruff_check.json").read_text())
    root = tmp / "baseline"
    (root / "pkg").mkdir(parents=True)
    items = []
    for i in range(100_000):
        item = dict(recorded[i % len(recorded)])
        item["filename"] = str(root / "pkg" / f"mod{i // 1000:03d}.py")
        item["location"] = {"row": i % 1000 + 1, "column": 1}
        items.append(item)
    for m in range(100):
        (root / "pkg" / f"mod{m:03d}.py").write_text("".join(f"value_{n} = {n}\n" for n in range(1000)))
    (root / "out.txt").write_text(json.dumps(items))
    replay = root / "replay"
    replay.write_text("#!/bin/sh\ncat out.txt\nexit 1\n")
    replay.chmod(0o755)
    parsing = (
        '      strategy: json_violations\n      violations_path: "/"\n'
        "      field_map: {file: filename, line: location/row, column: location/column, code: code, message: message}\n"
    )
    (root / "c.yaml").write_text(replay_config(parsing))
    git_commit_all(root)
    sh([QG, "baseline", "write", "--config", "c.yaml", "--no-progress"], root)
    git_commit_all(root, "baseline")
    size = (root / ".st3" / "baseline.jsonl").stat().st_size
    run = [QG, "run", "--config", "c.yaml", "--scope", "project", "--format", "json", "--no-state"]
    out = json.loads(sh([*run, "--locked"], root, capture=True, check=False))
    assert out["baseline"]["known"] == 100_000, out["baseline"]
    m = medians({"with": cmd([*run, "--locked"], root), "without": cmd([*run, "--no-baseline"], root)}, runs)
    extra_ms = (m["with"] - m["without"]) * 1000
    rss_with = peak_rss_kb([*run, "--locked"], root) * 1024
    rss_without = peak_rss_kb([*run, "--no-baseline"], root) * 1024
    extra_rss = max(rss_with - rss_without, 0)
    ratio = extra_rss / (2 * size)
    return [
        (
            f"matching 100,000 violations against a 100,000-entry baseline ({size / 1e6:.1f} MB)",
            (
                f"`qg run --locked` {sec(m['with'])} vs `--no-baseline` {sec(m['without'])}; "
                f"peak RSS {rss_with / 1e6:.0f} MB vs {rss_without / 1e6:.0f} MB"
            ),
            f"+{extra_ms:.0f} ms; +{extra_rss / 1e6:.0f} MB = {ratio:.2f}x the two lists",
            "<= 200 ms; <= 2x",
            extra_ms <= 200 and ratio <= 2,
        )
    ]
