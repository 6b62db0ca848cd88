"""qg's ecosystem check: qg's verdict against the tools' own on real projects.

    scripts/ecosystem.sh [PROJECT...]      (python -m ecosystem --help)

Each project of corpus.toml is an sdist from PyPI, pinned by version and
hash, set up in its own virtualenv. For each, the harness runs the
maintainers' own commands (the reference), qg cold and warm on the whole
project, then a scripted TDD loop of edits, and compares at every step: qg's
new findings must equal the difference of the tools' own runs. The results
become the book's "Ecosystem check" page.

One module per concern:

- shell:    running commands, git, the sdist cache (bench/ uses these too)
- corpus:   the manifest, and setting a project up as its maintainers would
- findings: one finding record for every tool's output; multiset differences
- own:      the tools' own runs, as the maintainers run them
- qgrun:    qg's runs, cold and warm, and what they leave running
- edits:    the scripted edits and the seeded random ones
- loop:     one project's check from setup to the last edit
- report:   the results file and the book page made from it
"""

from __future__ import annotations
