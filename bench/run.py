#!/usr/bin/env python3
"""qg's benchmark: `bench/run.py [--runs N] [--only NAME ...]`.

The benchmark is the `bench` package (bench/__init__.py says what it
measures and how); this script runs it as `python -m bench` does from the
repository root, wherever it is started from.
"""

import sys
from pathlib import Path

# The repository root: `bench` is imported as a package from there, and so
# is the ecosystem check's package (its sdist cache is bench's too).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.__main__ import main

if __name__ == "__main__":
    main()
