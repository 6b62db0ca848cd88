"""The import graph's own cost: on django, `qg files` (auto) after a
one-line edit with gates that check importers against gates that do not,
warm and cold (`--only graph`); and resolving imports from every importer
gate's search roots, on the generated package and a generated monorepo
(`--only roots`)."""

import json
import re
from pathlib import Path

from .common import DJANGO, QG, cmd, default_config, generate_package, git_commit_all, medians, ms, sdist, sh


def graph_cost(runs, tmp: Path):
    """Issue 11: the import graph's own cost on django (7k files), in the TDD
    loop: `qg files` (auto) after a one-line edit, with two gates that check
    importers against the same without (each in its own copy of the repo, so
    each has its own baseline); warm (graph cached) and cold (no cache).
    Named paths cost more: they need a diff of their own, reported apart."""
    default = default_config()
    analyzer = default[default.index("import_graph:") : default.index("\ngates:")]

    def config(importers):
        text = 'version: "1"\nactive_gates: [t1, t2]\n' + analyzer + "\ngates:\n"
        for i in (1, 2):
            text += f'  t{i}:\n    execution: {{command: ["true"], pass_files: false}}\n'
            text += "    parsing: {strategy: exit_code}\n"
            text += "    scope: {importers: true}\n" if importers else ""
        return text

    roots = {}
    for name, importers in [("with", True), ("without", False)]:
        root = sdist(DJANGO, tmp / f"django-graph-{name}")
        # django ships one test file that is a syntax error on purpose; what
        # it imports is unknown, so partial runs would (rightly) check the
        # whole project. Here the graph's own cost is measured.
        (root / "tests/test_runner_apps/tagged/tests_syntax_error.py").unlink()
        (root / ".st3").mkdir(exist_ok=True)
        (root / ".st3" / "quality.yaml").write_text(config(importers))
        git_commit_all(root, "config")
        sh([QG, "run"], root)  # project fallback: baseline, and the graph built meanwhile
        roots[name] = root
    module = "django/utils/text.py"
    original = (roots["with"] / module).read_text()
    edits = iter(range(10_000))

    def edited(name):
        def step():
            (roots[name] / module).write_text(original + f"\n\nEDIT_{next(edits)} = 1\n")
            sh([QG, "files"], roots[name])

        return step

    caches = [roots["with"] / ".st3" / name for name in ("import-graph.json", "import-names.json")]

    def cold():
        for cache in caches:
            cache.unlink(missing_ok=True)
        edited("with")()

    (roots["with"] / module).write_text(original + "\n\nEDITED = 1\n")
    listed = json.loads(sh([QG, "files", "--format", "json"], roots["with"], capture=True))
    assert "importers_unknown" not in listed, listed["importers_unknown"]
    importers = sum(1 for f in listed["files"] if "imports_changed" in f["reasons"])
    m = medians({"with": edited("with"), "without": edited("without")}, runs * 4, warmup=2)
    c = medians({"cold": cold, "without": edited("without")}, runs, warmup=1)
    named = medians(
        {
            "with": cmd([QG, "files", module], roots["with"]),
            "without": cmd([QG, "files", module], roots["without"]),
        },
        runs * 2,
        warmup=1,
    )
    warm = (m["with"] - m["without"]) * 1000
    tracked = len(sh(["git", "ls-files"], roots["with"], capture=True).splitlines())
    return [
        (
            f"import graph on django ({tracked} files): `qg files` (auto) after a one-line edit to {module} ({importers} importers), warm",
            f"{ms(m['with'])} with gates that check importers, {ms(m['without'])} without",
            f"{warm:+.1f} ms",
            "<= 50 ms",
            warm <= 50,
        ),
        (
            "import graph on django: the same, cold (no cache: every file analyzed and its imports parsed)",
            f"{ms(c['cold'])}, {ms(c['without'])} without",
            f"{(c['cold'] - c['without']) * 1000:+.0f} ms",
            "(report)",
            True,
        ),
        (
            f"import graph on django: `qg files {module}` (a named path: a diff of its own)",
            f"{ms(named['with'])} with, {ms(named['without'])} without",
            f"{(named['with'] - named['without']) * 1000:+.1f} ms",
            "(report)",
            True,
        ),
    ]


def generate_monorepo(root: Path, packages: int, modules: int):
    """One namespace package, `acme`, spread over `packages` source roots
    (packages/pN/src/acme/pN/, no __init__.py anywhere) that only the type
    checkers' configs name, as issue 35 found it; each module imports the
    first module of the next package."""
    roots = [f"packages/p{k:02d}/src" for k in range(packages)]
    for k, src in enumerate(roots):
        pkg = root / src / "acme" / f"p{k:02d}"
        pkg.mkdir(parents=True)
        nxt = f"p{(k + 1) % packages:02d}"
        for i in range(modules):
            (pkg / f"mod{i:03d}.py").write_text(
                f'"""Module {i} of p{k:02d}."""\n\nfrom acme.{nxt}.mod000 import value_000\n\n\n'
                f'def value_{i:03d}(x: int) -> int:\n    """Return x shifted."""\n    return value_000(x) + {i}\n'
            )
    # mod000 imports its own package's mod001 instead: no import cycle of firsts.
    for k, src in enumerate(roots):
        first = root / src / "acme" / f"p{k:02d}" / "mod000.py"
        first.write_text('"""Module 0."""\n\n\ndef value_000(x: int) -> int:\n    """Return x."""\n    return x\n')
    quoted = ", ".join(f'"{r}"' for r in roots)
    (root / "pyproject.toml").write_text(
        "[tool.mypy]\n"
        'files = ["packages"]\n'
        f'mypy_path = "{":".join(roots)}"\n'
        "explicit_package_bases = true\n\n"
        "[tool.pyright]\n"
        'include = ["packages"]\n'
        f"extraPaths = [{quoted}]\n"
    )


def without_search_paths(config: str) -> str:
    """The default config with no gate's search paths given to the import
    analyzer: ruff resolves from its own `src` alone (what qg did before)."""
    return re.sub(r"\n( *)search_paths:\n(\1  .*\n)+", "\n", config)


def roots_cost(runs, tmp: Path):
    """Issue 35: what resolving imports from every importer gate's search
    roots costs, on the 300-module package and on a generated monorepo (a
    namespace package over 20 source roots, 600 modules): the graph built
    from nothing, a one-file `qg files` (auto) with the graph cached, and a
    one-file `qg run` (auto), each next to the same with the analyzer's own
    roots alone, in its own copy of the repo."""
    default = default_config()
    plain = without_search_paths(default)
    assert "search_paths:" not in plain and "{search_paths}" in default, plain
    corpora = [
        ("300-module package", lambda r: generate_package(r, 300), "pkg/mod150.py"),
        (
            "monorepo (20 roots, 600 modules)",
            lambda r: generate_monorepo(r, 20, 30),
            "packages/p05/src/acme/p05/mod000.py",
        ),
    ]
    rows = []
    for label, generate, module in corpora:
        roots = {}
        for name, config in [("roots", default), ("own", plain)]:
            root = tmp / f"roots-{label.split()[0]}-{name}"
            generate(root)
            (root / ".st3").mkdir(exist_ok=True)
            (root / ".st3" / "quality.yaml").write_text(config)
            git_commit_all(root)
            report = json.loads(sh([QG, "run", "--format", "json"], root, capture=True, check=False))
            assert report["overall_pass"], report["summary_line"]
            roots[name] = root
        original = (roots["own"] / module).read_text()
        edits = iter(range(10_000))

        def edit(name):
            (roots[name] / module).write_text(original + f"\n\nEDIT_{next(edits)} = 1\n")

        def listing(name):
            edit(name)
            return json.loads(sh([QG, "files", "--format", "json"], roots[name], capture=True))

        def files(name, cold):
            def step():
                if cold:
                    for cache in ("import-graph.json", "import-names.json"):
                        (roots[name] / ".st3" / cache).unlink(missing_ok=True)
                listing(name)

            return step

        def run(name):
            def step():
                edit(name)
                sh([QG, "run"], roots[name], check=False)

            return step

        importers = {n: sum("imports_changed" in f["reasons"] for f in listing(n)["files"]) for n in roots}
        built = medians({n: files(n, True) for n in roots}, runs, warmup=1)
        warm = medians({n: files(n, False) for n in roots}, runs * 2, warmup=1)
        full = medians({n: run(n) for n in roots}, runs, warmup=1)
        for n in roots:
            (roots[n] / module).write_text(original)
        for figure, m, goal in [
            ("the import graph built from nothing (`qg files`, no cache)", built, "(report)"),
            ("a one-file `qg files` (auto), graph cached", warm, "<= +50 ms"),
            ("a one-file `qg run` (auto), the real tools", full, "(report)"),
        ]:
            added = (m["roots"] - m["own"]) * 1000
            rows.append(
                (
                    f"search roots, {label}: {figure}",
                    f"with the gates' roots {ms(m['roots'])}, the analyzer's own alone {ms(m['own'])}; "
                    f"importers of {module}: {importers['roots']} with, {importers['own']} without",
                    f"{added:+.1f} ms",
                    goal,
                    goal == "(report)" or added <= 50,
                )
            )
    return rows
