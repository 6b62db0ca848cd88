#!/usr/bin/env bash
# The first command a newcomer runs: installs qg, then shows it working.
#
#   scripts/try.sh                  # on a copy of the bundled example project
#   scripts/try.sh PATH/TO/PROJECT  # on your own project
#
# qg is installed with `cargo install` (into ~/.cargo/bin) when Rust is
# there, else with pip from the package index into a virtualenv of its own
# (~/.local/share/qg/venv). The project gets a .venv (if it has none)
# with ruff, mypy and pyright where it lacks them (a tool it has is kept),
# and its own dependencies (`pip install -e .`,
# or `-r requirements.txt`) — a uv, Poetry, PDM or Hatch project gets them in
# its manager's environment instead — so the type checkers resolve its imports; then
# `qg run --scope project` checks it as the tools' own runs would.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}

say() { printf '\033[1mtry.sh:\033[0m %s\n' "$*" >&2; }

install_qg() {
  # QG_TRY_QG: a qg built already (the tests pass theirs).
  if [ -n "${QG_TRY_QG:-}" ]; then
    qg=$QG_TRY_QG
  elif command -v cargo >/dev/null 2>&1; then
    say "installing qg with cargo (cargo install --locked --path $repo)"
    # QG_TRY_CARGO_PROFILE: CI's (.ci/run), to install the build its tests made.
    cargo install --quiet --locked ${QG_TRY_CARGO_PROFILE:+--profile "$QG_TRY_CARGO_PROFILE"} --path "$repo"
    qg=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/qg
  else
    local venv=${XDG_DATA_HOME:-$HOME/.local/share}/qg/venv
    say "no Rust here: installing the qg wheel from the package index into $venv"
    "$python" -m venv "$venv"
    if ! "$venv/bin/pip" install --quiet qg; then
      say "no qg wheel for this platform on the package index: install Rust (rustup) and run this again"
      exit 2
    fi
    qg=$venv/bin/qg
  fi
  "$qg" --version >&2
}

# A copy of examples/demo in a fresh git repository (qg's scopes use git).
demo_project() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/qg-demo-XXXXXX")
  cp -R "$repo/examples/demo/." "$dir"
  git -C "$dir" init -q -b main
  git -C "$dir" add -A
  git -C "$dir" -c user.name=qg -c user.email=qg@example.invalid -c commit.gpgsign=false \
    commit -q -m "demo project"
  echo "$dir"
}

# The pinned ruff, mypy and pyright.
pinned_tools() {
  grep -E '^(ruff==|mypy==|pyright)' "$repo/requirements-tools.txt"
}

# The version of distribution $2 installed for the Python $1, if any.
installed_version() {
  "$1" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$2" 2>/dev/null
}

# Installs the pinned tools the environment of the Python $1 lacks, with
# that Python (or uv when it is there: PDM's and Hatch's environments may
# have no pip). A tool the project already has — the version its lock file
# pins, say — is left as it is: qg runs the project's own.
install_tools_with() {
  local python=$1
  local tools=() kept=() line name version
  # Not mapfile: macOS ships bash 3.2.
  while IFS= read -r line; do
    name=${line%%[^A-Za-z0-9_.-]*}
    if version=$(installed_version "$python" "$name"); then
      kept+=("$name $version")
    else
      tools+=("$line")
    fi
  done < <(pinned_tools)
  if [ ${#kept[@]} -gt 0 ]; then
    say "keeping the project's own $(printf '%s, ' "${kept[@]}" | sed 's/, $//')"
  fi
  if [ ${#tools[@]} -eq 0 ]; then
    return
  fi
  say "installing what it lacks: ${tools[*]}"
  pip_into "$python" "${tools[@]}"
}

# pip install ARGS... into the environment of the Python $1: with uv when
# it is there (a virtualenv uv made, or PDM's and Hatch's, may have no pip),
# else with that Python's pip, bootstrapped if it has none.
pip_into() {
  local python=$1
  shift
  if command -v uv >/dev/null; then
    uv pip install --quiet --python "$python" "$@"
  else
    "$python" -m pip --version >/dev/null 2>&1 || "$python" -m ensurepip --upgrade >/dev/null
    "$python" -m pip install --quiet --disable-pip-version-check "$@"
  fi
}

# Whether the project at $1 is managed by $2 (a lock file or a
# pyproject.toml table of its own; hatch.toml for Hatch).
managed_by() {
  local dir=$1 manager=$2
  case $manager in
    hatch) [ -f "$dir/hatch.toml" ] || grep -q '^\[tool\.hatch' "$dir/pyproject.toml" 2>/dev/null ;;
    *) [ -f "$dir/$manager.lock" ] || grep -q "^\[tool\.$manager" "$dir/pyproject.toml" 2>/dev/null ;;
  esac
}

# The tools and the project's own dependencies in the environment of a uv,
# Poetry, PDM or Hatch project, without editing the project's files.
prepare_managed_project() {
  local dir=$1
  # A PDM or Hatch project without its manager would get a second
  # environment qg then prefers, and `pip install -e .` past its manager.
  for manager in pdm hatch; do
    if managed_by "$dir" "$manager" && ! command -v "$manager" >/dev/null; then
      local name=PDM
      [ "$manager" = hatch ] && name=Hatch
      say "a $name project, and no $manager command here: install $name (pipx install $manager), then run this again"
      exit 2
    fi
  done
  if managed_by "$dir" uv && command -v uv >/dev/null; then
    say "a uv project: uv sync, then ruff, mypy and pyright into its .venv where it lacks them"
    (cd "$dir" && uv sync --quiet)
    install_tools_with "$dir/.venv/bin/python"
  elif managed_by "$dir" poetry && command -v poetry >/dev/null; then
    say "a Poetry project: poetry install, then ruff, mypy and pyright into its environment where it lacks them"
    (cd "$dir" && poetry install --quiet)
    install_tools_with "$(cd "$dir" && poetry env info --executable)"
  elif managed_by "$dir" pdm; then
    say "a PDM project: pdm install, then ruff, mypy and pyright into its environment where it lacks them"
    (cd "$dir" && pdm install --quiet)
    install_tools_with "$(cd "$dir" && pdm info --python)"
  elif managed_by "$dir" hatch; then
    say "a Hatch project: its default environment, then ruff, mypy and pyright into it where it lacks them"
    (cd "$dir" && hatch run python --version >/dev/null)
    install_tools_with "$(cd "$dir" && hatch env find default)/bin/python"
  else
    return 1
  fi
}

# The project's .venv with the tools and the project's own dependencies.
prepare_project() {
  local dir=$1
  if prepare_managed_project "$dir"; then
    return
  fi
  if [ ! -x "$dir/.venv/bin/python" ]; then
    say "creating $dir/.venv"
    "$python" -m venv "$dir/.venv"
  fi
  say "ruff, mypy and pyright in $dir/.venv"
  install_tools_with "$dir/.venv/bin/python"
  if [ -f "$dir/pyproject.toml" ] || [ -f "$dir/setup.py" ]; then
    say "installing the project and its dependencies (pip install -e .)"
    pip_into "$dir/.venv/bin/python" -e "$dir"
  elif [ -f "$dir/requirements.txt" ]; then
    say "installing the project's dependencies (pip install -r requirements.txt)"
    pip_into "$dir/.venv/bin/python" -r "$dir/requirements.txt"
  fi
}

install_qg
if [ $# -eq 0 ]; then
  project=$(demo_project)
  say "no project given: trying qg on a copy of the bundled example, $project"
else
  project=$(cd "$1" && pwd)
fi
prepare_project "$project"
cd "$project"
say "running: qg run --scope project"
status=0
"$qg" run --scope project || status=$?
case $status in
  0) say "every gate passed" ;;
  1) say "qg works: the gates above found violations (exit 1); \`qg fix\` fixes what the tools can" ;;
  *) say "a gate could not run (exit $status): the report above says why"; exit "$status" ;;
esac
