#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs the pinned ruff, mypy,
# pyright, ty, pyrefly, the MCP Python SDK, pytest-lsp and Neovim into the
# project-local virtualenv .venv, runs the Windows tests under wine
# (scripts/windows-tests.sh, which sets itself up), then every Linux test.
# Extra arguments go to `cargo test` (e.g. scripts/test.sh e2e).
#
# scripts/test.sh --quick: the inner loop — unit tests, the integration
# tests that take seconds, and clippy; no wine, no wheel, no warm daemons,
# no editor. The full suite stays the test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# The integration tests --quick leaves out: each takes a minute or more
# (daemons, editors, wheels, wine, the book's examples).
slow="distribution warm_shapes warm lsp import_shapes cross_platform windows sarif_multitool docs_examples mcp parity"
if [ "${1:-}" = "--quick" ]; then
  shift
  [ -x .venv/bin/ruff ] || { echo "test.sh --quick: run scripts/test.sh once first (it installs the tools into .venv)" >&2; exit 2; }
  export QG_TOOLS_VENV="$PWD/.venv"
  # Fewer property cases than the full suite's thousands: seconds, not a minute.
  export PROPTEST_CASES=${PROPTEST_CASES:-200}
  args=(--lib)
  for file in tests/*.rs; do
    name=$(basename "$file" .rs)
    case " $slow " in *" $name "*) ;; *) args+=(--test "$name") ;; esac
  done
  cargo test --locked "${args[@]}" "$@"
  cargo clippy --locked --all-targets -- -D warnings
  exit 0
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "test.sh: creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
echo "test.sh: installing pinned tools from requirements-tools.txt"
# With the pinned uv, which installs the list in 6 s where pip took 32.
if [ ! -x .venv/bin/uv ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$(grep -E '^uv==' requirements-tools.txt)"
fi
.venv/bin/uv pip install --quiet --python .venv/bin/python -r requirements-tools.txt
.venv/bin/ruff --version
.venv/bin/mypy --version
.venv/bin/pyright --version
.venv/bin/ty --version
.venv/bin/pyrefly --version
.venv/bin/python -c 'import importlib.metadata as m; print("mcp (Python SDK)", m.version("mcp"))'
.venv/bin/python -c 'import importlib.metadata as m; print("pytest-lsp", m.version("pytest-lsp"))'
.venv/bin/nvim --version | head -1

# Microsoft's SARIF Multitool checks qg's SARIF against GitHub's and GitHub
# Advanced Security's rules (tests/sarif_multitool.rs); a self-contained Linux
# build from the npm registry.
multitool=.venv/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
if [ ! -x "$multitool" ]; then
  echo "test.sh: installing the SARIF Multitool"
  npm install --silent --no-audit --no-fund --prefix .venv/npm @microsoft/sarif-multitool-linux@5.7.0
fi

# qg's unit tests and tests/windows.rs as Windows programs, under wine; it
# also builds the qg.exe tests/cross_platform.rs runs beside the Linux qg.
scripts/windows-tests.sh

# The end-to-end tests find the tools here (and fail, not skip, without them).
export QG_TOOLS_VENV="$PWD/.venv"
cargo test --locked "$@"
