#!/usr/bin/env bash
# Acceptance check on a real project that is not in fixtures/: downloads an
# sdist from PyPI, commits it to a temp git repo, runs
# `qg run --scope project --format json`, runs the same four raw commands on
# the same files (tools activated the same way qg activates them), and prints
# qg's error+warning count next to each tool's own count, plus both wall times.
#
#   scripts/acceptance.sh [package==version]     (default: rich==15.0.0)
#
# Needs the tools in .venv (scripts/test.sh installs them).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:-rich==15.0.0}
venv=$here/.venv
bin=$venv/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet --manifest-path "$here/Cargo.toml"
qg=$here/target/release/qg

"$bin/pip" download --quiet --no-deps --no-binary :all: -d "$work/dl" "$spec"
tar xzf "$work"/dl/*.tar.gz --no-same-owner -C "$work"
project=$(find "$work" -mindepth 1 -maxdepth 1 -type d ! -name dl | head -n 1)
cd "$project"
git init --quiet . && git add -A
git -c user.email=qg@example.invalid -c user.name=qg commit --quiet -m import

# The tools run as qg runs them: their virtualenv activated.
export VIRTUAL_ENV=$venv PATH=$bin:$PATH
"$qg" files --scope project > "$work/files.txt"
mapfile -t files < "$work/files.txt"

now() { date +%s.%N; }
rm -rf .mypy_cache .ruff_cache
t0=$(now)
"$qg" run --scope project --format json > "$work/qg.json" || true
t1=$(now)
rm -rf .mypy_cache .ruff_cache .st3
t2=$(now)
ruff format --check --diff --force-exclude "${files[@]}" > "$work/format.diff" 2>/dev/null || true
ruff check --output-format=json --no-fix --force-exclude "${files[@]}" > "$work/check.json" || true
mypy "${files[@]}" > "$work/mypy.txt" || true
pyright --outputjson "${files[@]}" > "$work/pyright.json" || true
t3=$(now)

python3 - "$work" "$t0" "$t1" "$t2" "$t3" "$spec" <<'PY'
import json, re, sys
work, t0, t1, t2, t3, spec = sys.argv[1], *map(float, sys.argv[2:6]), sys.argv[6]
qg = json.load(open(f"{work}/qg.json"))
def qg_count(gate_id):
    gate = next(g for g in qg["gates"] if g["id"] == gate_id)
    assert gate["status"] != "error", gate
    return sum(v["severity"] in ("error", "warning") for v in gate.get("violations", []))
lines = open(f"{work}/format.diff").read().splitlines()
raw = {
    "ruff_format": sum(l.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
                       for i, l in enumerate(lines)),
    "ruff_check": len(json.load(open(f"{work}/check.json"))),
    "mypy": int((re.search(r"Found (\d+) error", open(f"{work}/mypy.txt").read()) or [0, 0])[1]),
}
summary = json.load(open(f"{work}/pyright.json"))["summary"]
raw["pyright"] = summary["errorCount"] + summary["warningCount"]
how = {"ruff_format": "files `ruff format --check --diff` lists",
       "ruff_check": "length of `ruff check --output-format=json`",
       "mypy": "mypy's `Found N errors`",
       "pyright": "pyright errorCount + warningCount"}
print(f"{spec}: {qg['scope']['files_checked']} files")
print(qg["summary_line"])
print(f"| gate | qg error+warning | raw tool | raw count means |")
print(f"|---|---|---|---|")
ok = True
for gate_id, count in raw.items():
    mine = qg_count(gate_id)
    ok &= mine == count
    print(f"| {gate_id} | {mine} | {count} | {how[gate_id]} |")
print(f"wall: qg {t1 - t0:.2f}s, four raw commands one after another {t3 - t2:.2f}s, ratio {(t1 - t0) / (t3 - t2):.2f}")
sys.exit(0 if ok else 1)
PY
