#!/usr/bin/env bash
# Builds the book (docs/ → docs/book/) and checks its internal links.
# mdBook is installed from crates.io at the pinned version when the one on
# PATH is missing or another version: once per machine, into the user's
# cache ($XDG_CACHE_HOME/qg-dev, not ~/.cargo), so a fresh clone (CI's)
# does not compile it again (a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.5.4
mdbook=mdbook
if ! mdbook --version 2>/dev/null | grep -q "v$version"; then
  root=${XDG_CACHE_HOME:-$HOME/.cache}/qg-dev/mdbook-$version
  mdbook=$root/bin/mdbook
  if ! "$mdbook" --version 2>/dev/null | grep -q "v$version"; then
    echo "book: installing mdbook $version from crates.io (a few minutes, once)" >&2
    # Only `build` is needed here: without `serve` and `watch` (a web
    # server, a file watcher) it compiles in about half the time.
    cargo install --quiet --locked --root "$root" mdbook --version "$version" \
      --no-default-features --features search
  fi
fi
"$mdbook" build docs
python3 scripts/check-book-links.py
