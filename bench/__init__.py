"""qg's benchmark: every figure of the performance issue, measured in one run.

    bench/run.py [--runs N] [--only NAME ...]   (python -m bench, from the repository root)

Prepares real corpora (the sdists of rich and django from PyPI, each unpacked
and committed to a temp git repo) plus generated ones, times whole commands
over repeated, interleaved runs (A, B, A, B, ...) after warm-up, and writes
bench/RESULTS.md: machine, tool versions, medians and ratios. Ratios are
taken pair by pair within this one run; absolute times are for context only.

Needs the tools of requirements-tools.txt and bench/requirements.txt in the
project's .venv (scripts/test.sh installs the first; the benchmark the second).

One module per family of figures (the `--only` names in brackets):

- common:     paths, the environment, running and timing commands, the sdist
              cache (the ecosystem check's), the default config, the
              generated package, the warm daemons, the report's units
- overhead:   framework overhead; `qg mcp` [overhead, mcp]
- project:    rich at project scope; mypy project_wide [rich, mypy-wide]
- noop:       no-op runs next to git's: django, django as a Poetry project,
              generated repositories of 10,000-100,000 files
              [django, managed-noop, scale]
- tdd:        the TDD loop on the generated package [tdd, tdd-importers]
- interface:  interface-aware importers [interface-aware, interface-aware-real]
- graph:      the import graph's cost; search roots [graph, roots]
- parsing:    parsing the tools' output; baseline matching [parsing, baseline]
- workspace:  workspace members, generated and real [workspace, real-workspace]
- warm:       warm daemons against cold runs; `qg watch`
              [warm-rich, warm-package, warm-src]
- lsp:        `qg lsp` [lsp-rich]
- loop:       the TDD loop's four steps warm against cold, on rich and the
              generated package [loop-rich, loop-package]
- scale:      the large generated repositories (also a script: bench/scale.py)
- scope_auto: a no-op `auto` scope against git (a script: bench/scope_auto.py)

__main__ runs the figures and writes bench/RESULTS.md; bench/run.py is the
same as `python -m bench`.
"""
