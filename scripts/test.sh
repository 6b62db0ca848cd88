#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs the pinned ruff, mypy,
# pyright, ty, pyrefly, the MCP Python SDK, pytest-lsp and Neovim into the
# project-local virtualenv .venv (older ruff and mypy into .venv/old), runs
# the Windows tests under wine (scripts/windows-tests.sh, which sets itself
# up), then every Linux test.
# Extra arguments go to `cargo test` (e.g. scripts/test.sh e2e).
#
# Redis comes from apt when missing (tests/cache_shared.rs).
#
# scripts/test.sh --quick: the inner loop — unit tests, the integration
# tests that take seconds, clippy's lints in their build; no wine, no wheel,
# no warm daemons, no editor. The full suite stays the test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

# run_tests CARGO_TEST_ARGS...: the tests, by cargo-nextest where it is
# installed (every binary's tests side by side, each in its own process; its
# settings, the slowest first, are in .config/nextest.toml), else by
# `cargo test` (one binary at a time: the same tests, slower).
run_tests() {
  if cargo nextest --version >/dev/null 2>&1; then
    # Tests wait on real tools more than they compute: twice as many as cores.
    local threads=$(($(nproc 2>/dev/null || echo 2) * 2))
    cargo nextest run --locked --profile "$profile" --test-threads "$threads" "$@"
  else
    echo "test.sh: cargo-nextest is not installed; running the tests with cargo test (slower)"
    cargo test --locked --no-fail-fast "$@"
  fi
}

# phase NAME COMMAND...: runs it and says how long it took (.ci/run lists
# these lines in its table of steps).
phase() {
  local name=$1 begin
  shift
  begin=$(timing_begin)
  "$@"
  echo "test.sh: phase '$name' took $(timing_took "$begin")"
}

# The integration tests --quick leaves out: each takes a minute or more
# (daemons, editors, wheels, wine, the book's examples).
slow="distribution warm_shapes warm lsp import_shapes cross_platform windows sarif_multitool docs_examples mcp parity"
# nextest's profile (.config/nextest.toml): `quick` also leaves out the
# slowest tests of the binaries it runs.
profile=ci
if [ "${1:-}" = "--quick" ]; then
  shift
  profile=quick
  [ -x .venv/bin/ruff ] || { echo "test.sh --quick: run scripts/test.sh once first (it installs the tools into .venv)" >&2; exit 2; }
  export QG_TOOLS_VENV="$PWD/.venv"
  # Fewer property cases than the full suite's thousands: seconds, not a minute.
  export PROPTEST_CASES=${PROPTEST_CASES:-200}
  args=(--lib)
  for file in tests/*.rs; do
    name=$(basename "$file" .rs)
    case " $slow " in *" $name "*) ;; *) args+=(--test "$name") ;; esac
  done
  lint_while_building
  cargo test --locked --no-run
  run_tests "${args[@]}" "$@"
  exit 0
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "test.sh: creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
install_tools() {
  echo "test.sh: installing pinned tools from requirements-tools.txt"
  # With the pinned uv, which installs the list in 6 s where pip took 32.
  if [ ! -x .venv/bin/uv ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "$(grep -E '^uv==' requirements-tools.txt)"
  fi
  .venv/bin/uv pip install --quiet --python .venv/bin/python -r requirements-tools.txt
  # Older tools projects pin (tests/old_tools.rs), in a virtualenv of their own.
  [ -x .venv/old/bin/python ] || "$python" -m venv .venv/old
  .venv/bin/uv pip install --quiet --python .venv/old/bin/python -r requirements-tools-old.txt
  .venv/old/bin/ruff --version
  .venv/old/bin/mypy --version
  .venv/old/bin/pyright --version
  # A pyright a project pins between 1.1.397 and 1.1.408 (tests/old_tools.rs),
  # run through the same pyright-python: fetched from npm into its cache.
  PYRIGHT_PYTHON_FORCE_VERSION=1.1.401 .venv/old/bin/pyright --version
  .venv/bin/ruff --version
  .venv/bin/mypy --version
  .venv/bin/pyright --version
  .venv/bin/ty --version
  .venv/bin/pyrefly --version
  .venv/bin/python -c 'import importlib.metadata as m; print("mcp (Python SDK)", m.version("mcp"))'
  .venv/bin/python -c 'import importlib.metadata as m; print("pytest-lsp", m.version("pytest-lsp"))'
  .venv/bin/nvim --version | head -1
  .venv/bin/python -c 'import importlib.metadata as m; print("moto", m.version("moto"), "wsgidav", m.version("wsgidav"))'

  # Redis for the result cache's shared store (tests/cache_shared.rs): Debian's
  # redis-server, installed where it is missing and apt can (root).
  if ! command -v redis-server >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "test.sh: installing redis-server (apt)"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    else
      echo "test.sh: redis-server is missing and cannot be installed here (not root, or no apt): tests/cache_shared.rs will fail" >&2
    fi
  fi
  redis-server --version

  # Microsoft's SARIF Multitool checks qg's SARIF against GitHub's and GitHub
  # Advanced Security's rules (tests/sarif_multitool.rs); a self-contained Linux
  # build from the npm registry.
  multitool=.venv/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
  if [ ! -x "$multitool" ]; then
    echo "test.sh: installing the SARIF Multitool"
    npm install --silent --no-audit --no-fund --prefix .venv/npm @microsoft/sarif-multitool-linux@5.7.0
  fi
}
phase "tools (.venv, npm)" install_tools

lint_while_building

# qg's unit tests and tests/windows.rs as Windows programs, under wine; it
# also builds the qg.exe tests/cross_platform.rs runs beside the Linux qg
# (and, linting, clippy's Windows half: the code compiled for Windows).
phase "Windows (build, tests under wine, wheel)" scripts/windows-tests.sh

# The end-to-end tests find the tools here (and fail, not skip, without them).
export QG_TOOLS_VENV="$PWD/.venv"
phase "Linux build (tests${QG_LINTED:+, clippy -D warnings})" cargo test --locked --no-run
phase "Linux tests" run_tests "$@"
