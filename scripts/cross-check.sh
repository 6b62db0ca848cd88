#!/usr/bin/env bash
# Compiles qg for the platforms CI cannot run it on, so a change that breaks
# one fails here instead of at release: macOS through cargo-zigbuild (zig
# compiles the -sys crates' C). One macOS target: no code of qg's depends on
# the architecture (no `target_arch`), so x86_64-apple-darwin would compile
# the same code a second time — 40 s of CI for nothing. `check` stops before the
# link, which needs Apple's SDK (not on these machines): a compile error
# fails, the missing SDK cannot. Windows is built, linted (clippy, -D
# warnings, every target) and tested in full by scripts/windows-tests.sh
# from scripts/test.sh. Needs .venv with requirements-tools.txt (for
# cargo-zigbuild and zig; scripts/test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
# Linted as it is checked: clippy's lints for the macOS code too.
lint_while_building
export PATH="$PWD/.venv/bin:$PATH"
targets=(aarch64-apple-darwin)
rustup target add "${targets[@]}" >/dev/null
for target in "${targets[@]}"; do
  echo "cross-check: $target"
  CARGO_TARGET_DIR=target/cross cargo-zigbuild check --locked --quiet --target "$target"
done
echo "cross-check: ok (${targets[*]})"
