#!/usr/bin/env bash
# Compiles qg for the platforms CI cannot run it on, so a change that breaks
# one fails here instead of at release: macOS through cargo-zigbuild (zig
# compiles the -sys crates' C). One macOS target: no code of qg's depends on
# the architecture (no `target_arch`), so x86_64-apple-darwin would compile
# the same code a second time — 40 s of CI for nothing. `check` stops before the
# link, which needs Apple's SDK (not on these machines): a compile error
# fails, the missing SDK cannot. Windows is built and tested in full by
# scripts/windows-tests.sh; here its code is linted (clippy, -D warnings).
# Needs .venv with requirements-tools.txt and, for Windows, mingw-w64
# (scripts/test.sh installs both: the latter through scripts/windows-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
targets=(aarch64-apple-darwin)
rustup target add "${targets[@]}" x86_64-pc-windows-gnu >/dev/null
for target in "${targets[@]}"; do
  echo "cross-check: $target"
  CARGO_TARGET_DIR=target/cross cargo-zigbuild check --locked --quiet --target "$target"
done
echo "cross-check: clippy x86_64-pc-windows-gnu"
cargo clippy --locked --quiet --all-targets --target x86_64-pc-windows-gnu -- -D warnings
echo "cross-check: ok (${targets[*]} x86_64-pc-windows-gnu)"
