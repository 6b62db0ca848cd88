#!/usr/bin/env bash
# Mutation testing of the code that decides pass or fail (RELIABILITY.md,
# "Mutation testing"). Each part of the verdict path is mutated with the
# tests that exercise it; a mutant those tests miss is a survivor.
#
#   scripts/mutants.sh                 every part, one after another
#   scripts/mutants.sh baseline scope  some parts
#   scripts/mutants.sh src/merge.rs    one file, with its part's tests
#   scripts/mutants.sh --in-diff       only code changed since origin/main
#                                      (or $MUTANTS_BASE), every part's tests
#
# Output: mutants.out/<part>/mutants.out/{caught,missed,timeout,unviable}.txt.
# $MUTANTS_ARGS goes to cargo mutants (e.g. "--baseline=skip", "--iterate");
# $MUTANTS_TIMEOUT (seconds, 300) is how long a mutant's tests may run.
# Needs cargo-mutants and cargo-nextest; the end-to-end tests need the pinned
# tools in .venv (scripts/test.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
export QG_TOOLS_VENV="$PWD/.venv"
# One build directory for every mutant (cargo-mutants copies the source, not
# target/): dependencies are built once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/mutants}"
# The property tests run 2,000 cases each in the suite; a mutant they catch
# is caught within the first hundred.
export PROPTEST_CASES="${PROPTEST_CASES:-100}"
timeout="${MUTANTS_TIMEOUT:-300}"
# Every part, in the order a full run takes them.
all_parts=(baseline outcome transition scope graph parse shard warm lsp)

files_of() {
  case "$1" in
    baseline) echo "src/baseline/*.rs" ;;
    outcome) echo "src/outcome/*.rs" ;;
    transition) echo "src/state/transition.rs" ;;
    scope) echo "src/scope/*.rs" ;;
    graph) echo "src/graph/*.rs" ;;
    parse) echo "src/parse/*.rs" ;;
    shard) echo "src/shard.rs src/merge.rs" ;;
    # The daemons' decisions: trust and the self-check, sampling and drift
    # remembered beyond a daemon, restart after a file is added or removed.
    warm) echo "src/warm/daemon/trust.rs src/warm/daemon/checking.rs src/warm/daemon/lifecycle.rs src/warm/standing.rs src/warm/checker.rs" ;;
    # The editor's: what is published for a file and when it is cleared.
    lsp) echo "src/lsp/diagnostics.rs src/lsp/runs.rs src/lsp/store.rs" ;;
    *) echo "mutants.sh: unknown part '$1' (${all_parts[*]})" >&2; exit 2 ;;
  esac
}

# The part a source file belongs to: the one whose files (globs) hold it.
part_of() {
  local part pattern
  for part in "${all_parts[@]}"; do
    for pattern in $(files_of "$part"); do
      # shellcheck disable=SC2053 # a glob, matched as one
      [[ $1 == $pattern ]] && { echo "$part"; return; }
    done
  done
  echo "mutants.sh: $1 is not on the verdict path" >&2
  exit 2
}

tests_of() {
  case "$1" in
    baseline) echo "baseline verdicts scope_auto history shard fix json_contracts formats" ;;
    outcome) echo "verdicts faults batching baseline e2e_real_tools parsers_recorded formats shard warm" ;;
    transition) echo "scope_auto history verdicts" ;;
    scope) echo "scope_auto scope_project importers batching" ;;
    graph) echo "importers scope_auto properties" ;;
    parse) echo "parsers_recorded faults properties formats e2e_real_tools parity" ;;
    shard) echo "shard" ;;
    # tests/warm.rs bounds every qg it runs (90 s): a daemon a mutant keeps
    # from becoming ready fails its test instead of hanging it.
    warm) echo "warm" ;;
    lsp) echo "lsp" ;;
  esac
}

# Mutates a part, or one file of it, with that part's tests.
run_part() {
  local part=$1 files out=$1 args=()
  if [[ $part == src/* ]]; then
    files=$part
    part=$(part_of "$files")
    out=$(basename "$files" .rs)
  else
    files=$(files_of "$part")
  fi
  for f in $files; do args+=(-f "$f"); done
  local targets=(--lib)
  for t in $(tests_of "$part"); do targets+=(--test "$t"); done
  mkdir -p "mutants.out/$out"
  cargo mutants --output "mutants.out/$out" --timeout "$timeout" "${args[@]}" ${MUTANTS_ARGS:-} -- "${targets[@]}"
}

if [ "${1:-}" = "--in-diff" ]; then
  diff=$(mktemp)
  trap 'rm -f "$diff"' EXIT
  git diff "${MUTANTS_BASE:-origin/main}" -- src > "$diff"
  all=()
  for part in "${all_parts[@]}"; do
    for t in $(tests_of "$part"); do all+=(--test "$t"); done
  done
  mapfile -t unique < <(printf '%s\n' "${all[@]}" | awk '!seen[$0]++ && $0 != "--test"')
  targets=(--lib)
  for t in "${unique[@]}"; do targets+=(--test "$t"); done
  mkdir -p mutants.out/diff
  exec cargo mutants --output mutants.out/diff --timeout "$timeout" --in-diff "$diff" ${MUTANTS_ARGS:-} -- "${targets[@]}"
fi

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=("${all_parts[@]}")
status=0
for part in "${parts[@]}"; do
  if [[ $part == src/* ]]; then part_of "$part" >/dev/null; else files_of "$part" >/dev/null; fi
  run_part "$part" || status=$?
done
exit $status
