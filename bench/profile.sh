#!/usr/bin/env bash
# Where qg's own time goes on a large repository: perf samples (with DWARF
# call graphs) of a project listing and a no-op `auto` run, summed per
# function including callees, the biggest first.
#
#   bench/profile.sh REPO [QG_BINARY]
#
# REPO: one of the repositories bench/scale.py builds (`--keep DIR`), e.g.
# DIR/scale-100000. QG_BINARY: a qg built with symbols (default: one built
# here, `CARGO_PROFILE_RELEASE_DEBUG=true` into target/profiling).
# Needs perf (Debian's linux-perf).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$1
qg=${2:-}
if [ -z "$qg" ]; then
  CARGO_PROFILE_RELEASE_DEBUG=true CARGO_TARGET_DIR="$here/target/profiling" \
    cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  qg=$here/target/profiling/release/qg
fi
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
cd "$repo"
"$qg" run >/dev/null 2>&1 || true   # a green baseline for the no-op run
for what in "files --scope project" "run"; do
  name=${what%% *}
  # shellcheck disable=SC2086 # the words are the command's arguments
  perf record -q -F 2999 -g --call-graph dwarf -o "$data/$name.data" "$qg" $what >/dev/null 2>&1 || true
  echo "## qg $what: share of samples, callees included"
  perf report -i "$data/$name.data" --children --sort symbol --percent-limit 4 --stdio -g none 2>/dev/null \
    | grep -E '^ +[0-9]' | grep -E 'qg::|gix_index::|ignore::|git_|libgit2|git2::|lstat|statx|fstatat|getdents|sha1' \
    | sed -E 's/ +\[[.k]\] / /; s/ +$//' | cut -c1-120 | head -25
  echo
done
