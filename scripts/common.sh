# Sourced by .ci/run, scripts/test.sh and scripts/windows-tests.sh.

# How long a step took, in wall seconds and in the CPU-seconds the whole
# machine spent meanwhile. The second says whether a step waits (CPU well
# under cores x wall) or computes (CPU near it): on CI's two cores, a step
# can only get faster by doing less work once its CPU-seconds are twice its
# wall time. It counts every process, the daemons tests leave running
# included (`/usr/bin/time` counts only the children it waits for).

# machine_cpu: CPU-seconds spent on this machine since boot (Linux's
# /proc/stat: user, nice, system, irq, softirq, steal); 0 where there is none.
machine_cpu() {
  local hz
  hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
  awk -v hz="$hz" '/^cpu /{print int(($2 + $3 + $4 + $7 + $8 + $9) / hz); found = 1}
    END {if (!found) print 0}' /proc/stat 2>/dev/null || echo 0
}

# timing_begin: the start of a step, for timing_took.
timing_begin() {
  echo "$(date +%s) $(machine_cpu)"
}

# timing_took BEGIN: "N s (C CPU-s)" since BEGIN (from timing_begin).
timing_took() {
  local wall cpu
  read -r wall cpu <<<"$1"
  echo "$(($(date +%s) - wall)) s ($(($(machine_cpu) - cpu)) CPU-s)"
}

# Clippy lints qg's own crates while they are built for the tests, instead
# of in a `cargo clippy` of its own: that check-mode build compiled every
# dependency once more per target. clippy-driver is rustc with clippy's
# lints, what `cargo clippy` runs; as cargo's workspace wrapper it builds
# only qg's crates, so the dependencies are built as without it, and
# CLIPPY_ARGS is how `cargo clippy -- -D warnings` hands it the lint levels.
# Every later cargo command of the same script (nextest's build) sees the
# same wrapper, so none rebuilds what another built. Without clippy (a
# rustup component), the build goes on unlinted and says so. Sets QG_LINTED.
lint_while_building() {
  local driver
  [ -n "${QG_LINTED:-}" ] && return
  if cargo clippy --version >/dev/null 2>&1 &&
    driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver); then
    export RUSTC_WORKSPACE_WRAPPER=$driver
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
    export QG_LINTED=1
  else
    echo "$(basename "$0"): clippy is not installed; building without its lints"
  fi
}
