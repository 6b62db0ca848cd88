#!/usr/bin/env bash
# Acceptance check on a real project that is not in fixtures/: downloads an
# sdist from PyPI (or takes a local .tar.gz), commits it to a temp git repo,
# runs `qg run --scope project --format json`, then runs each tool the way
# the project's own developers would, from the root with no file list:
#
#   ruff check --no-fix .        ruff format --check .
#   mypy   (bare when its config names `files`, else `mypy .`)
#   pyright
#
# and prints qg's error+warning count per gate next to the tool's own count,
# plus both wall times. The same run split into $QG_SHARDS shards (`qg run
# --shard I/N`, default 3) and put back with `qg merge` must give the same
# counts too. Exit 1 when a count differs.
#
#   scripts/acceptance.sh [package==version | path/to/sdist.tar.gz]   (default: rich==15.0.0)
#
# Needs the tools in .venv (scripts/test.sh installs them). The project's own
# dependencies are not installed: qg and the tools see the same environment.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:-rich==15.0.0}
venv=$here/.venv
bin=$venv/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet --manifest-path "$here/Cargo.toml"
qg=$here/target/release/qg

mkdir -p "$work/dl"
if [ -f "$spec" ]; then
  cp "$spec" "$work/dl/"
else
  "$bin/pip" download --quiet --no-deps --no-binary :all: --ignore-requires-python -d "$work/dl" "$spec"
fi
tar xzf "$work"/dl/*.tar.gz --no-same-owner -C "$work"
project=$(find "$work" -mindepth 1 -maxdepth 1 -type d ! -name dl | head -n 1)
cd "$project"
git init --quiet . && git add -A
git -c user.email=qg@example.invalid -c user.name=qg commit --quiet -m import

# The tools run as qg runs them: their virtualenv activated.
export VIRTUAL_ENV=$venv PATH=$bin:$PATH

now() { date +%s.%N; }
rm -rf .mypy_cache .ruff_cache
t0=$(now)
"$qg" run --scope project --format json --no-state > "$work/qg.json" || true
t1=$(now)
shards=${QG_SHARDS:-3}
for i in $(seq 1 "$shards"); do
  "$qg" run --scope project --format json --shard "$i/$shards" > "$work/shard-$i.json" || true
done
"$qg" merge --format json "$work"/shard-*.json > "$work/merged.json" || true
rm -rf .mypy_cache .ruff_cache
t2=$(now)
ruff check --no-fix --output-format=json . > "$work/check.json" 2>/dev/null || true
ruff format --check --output-format=json . > "$work/format.json" 2>/dev/null || true
# Bare `mypy` when its config names the files, else `mypy .`.
mypy > "$work/mypy.txt" 2>&1 || true
mypy_how="bare mypy (its config names files)"
if grep -q "Missing target module" "$work/mypy.txt"; then
  rm -rf .mypy_cache
  mypy . > "$work/mypy.txt" 2>&1 || true
  mypy_how="mypy ."
fi
pyright --outputjson > "$work/pyright.json" 2>/dev/null || true
t3=$(now)

python3 - "$work" "$t0" "$t1" "$t2" "$t3" "$spec" "$mypy_how" "$shards" <<'PY'
import json, re, sys
work, t0, t1, t2, t3, spec, mypy_how, shards = sys.argv[1], *map(float, sys.argv[2:6]), *sys.argv[6:9]
qg = json.load(open(f"{work}/qg.json"))
merged = json.load(open(f"{work}/merged.json"))
def qg_count(gate_id, report=qg):
    gate = next(g for g in report["gates"] if g["id"] == gate_id)
    if gate["status"] == "error":
        return f"error: {gate['error']['message']}"
    return sum(v["severity"] in ("error", "warning") for v in gate.get("violations", []))
mypy_text = open(f"{work}/mypy.txt").read()
found = re.search(r"Found (\d+) errors?", mypy_text)
raw = {
    "ruff_format": len(json.load(open(f"{work}/format.json"))),
    "ruff_check": len(json.load(open(f"{work}/check.json"))),
    "mypy": int(found[1]) if found else (0 if "Success" in mypy_text else f"? {mypy_text.strip().splitlines()[-1:]}"),
}
summary = json.load(open(f"{work}/pyright.json"))["summary"]
raw["pyright"] = summary["errorCount"] + summary["warningCount"]
how = {"ruff_format": "`ruff format --check .`: files it would reformat",
       "ruff_check": "`ruff check --no-fix .`: findings",
       "mypy": f"{mypy_how}: `Found N errors`",
       "pyright": "`pyright`: errors + warnings"}
print(f"{spec}")
print(qg["summary_line"])
print(f"| gate | qg error+warning | {shards} shards, merged | the tool's own run | which is |")
print("|---|---|---|---|---|")
ok = True
for gate_id, count in raw.items():
    mine, sharded = qg_count(gate_id), qg_count(gate_id, merged)
    ok &= mine == count == sharded
    print(f"| {gate_id} | {mine} | {sharded} | {count} | {how[gate_id]} |")
print(f"wall: qg {t1 - t0:.2f}s, the four commands one after another {t3 - t2:.2f}s, ratio {(t1 - t0) / (t3 - t2):.2f}")
sys.exit(0 if ok else 1)
PY
