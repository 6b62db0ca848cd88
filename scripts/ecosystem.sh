#!/usr/bin/env bash
# The ecosystem check: qg's verdict against the tools' own on the real
# projects of ecosystem/corpus.toml (pinned PyPI sdists), cold, warm and
# through a scripted TDD loop. ecosystem/__init__.py says what it does.
#
#   scripts/ecosystem.sh                 # every project; writes ecosystem/results.json
#                                        # and the book's page, docs/src/ecosystem.md
#   scripts/ecosystem.sh tomli attrs     # the named projects only (nothing written)
#   scripts/ecosystem.sh --sample        # CI's sample: the projects tagged `sample`
#   scripts/ecosystem.sh --edits 20      # seeded random edits per project (default 5)
#
# Projects are set up under $QG_ECOSYSTEM_DIR (default /tmp/qg-ecosystem) and
# reused while their manifest entry and the tool pins are unchanged. qg is
# $QG_BIN, else a release build made here. Exit 1: a difference that
# corpus.toml does not explain.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/uv ] || [ ! -x .venv/bin/mypy ]; then
  echo "ecosystem.sh: run scripts/test.sh once first (it installs the pinned tools into .venv)" >&2
  exit 2
fi
if [ -z "${QG_BIN:-}" ]; then
  cargo build --locked --release --quiet
  export QG_BIN=$PWD/target/release/qg
fi
exec .venv/bin/python -m ecosystem "$@"
