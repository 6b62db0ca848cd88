"""Workspaces: what finding the members and giving each its own mypy and
pyright gates costs, a no-op `qg run` and a one-file `qg files` with the
members found against `members: []`, on a generated uv workspace of 50
members (`--only workspace`) and on four real jaraco sdists
(`--only real-workspace`)."""

import json
from pathlib import Path

from ecosystem import shell as ecosystem_shell

from .common import QG, default_config, git_commit_all, medians, ms, sh


def generate_workspace(root: Path, members: int, modules: int):
    """A uv workspace of `members` projects (packages/mNN, src layout), each
    with its own `[tool.mypy]`; every module imports its member's first
    (no member imports another: nothing is installed, so each member's own
    run resolves only its own modules, and both configs stay green)."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "root"\nversion = "0"\n\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
    )
    for k in range(members):
        name = f"m{k:02d}"
        member = root / "packages" / name
        pkg = member / "src" / name
        pkg.mkdir(parents=True)
        (member / "pyproject.toml").write_text(
            f'[project]\nname = "{name}"\nversion = "0"\n\n[tool.mypy]\nwarn_return_any = true\n'
        )
        (pkg / "__init__.py").write_text("")
        for i in range(modules):
            imports = f"from {name}.mod000 import value_000\n\n\n" if i else ""
            body = "value_000(x)" if imports else "x"
            (pkg / f"mod{i:03d}.py").write_text(
                f"{imports}def value_{i:03d}(x: int) -> int:\n    return {body} + {i}\n"
            )


def workspace_cost(runs, tmp: Path):
    """Issue 45: what finding 50 workspace members and giving each its own
    mypy and pyright gates costs: a no-op `qg run` (auto) and a one-file
    `qg files` (auto), with the members found vs `members: []` (the split
    off), on the same generated workspace."""
    roots = {}
    for name, extra in [("found", ""), ("none", "\nmembers: []\n")]:
        root = tmp / f"workspace-{name}"
        generate_workspace(root, 50, 6)
        (root / ".st3").mkdir(exist_ok=True)
        (root / ".st3" / "quality.yaml").write_text(default_config() + extra)
        git_commit_all(root)
        roots[name] = root
    return members_rows(roots, "packages/m25/src/m25/mod003.py", "workspace of 50 members (300 modules)", runs)


# The four real sdists of the ecosystem check's `jaraco-workspace`, which
# depend on each other (jaraco.text imports jaraco.functools and
# jaraco.context; jaraco.collections, jaraco.text), each with its own
# mypy.ini and ruff.toml as published.
JARACO_MEMBERS = ["jaraco.functools==4.6.0", "jaraco.context==6.1.2", "jaraco.text==4.3.0", "jaraco.collections==5.2.1"]


def noop_default_config():
    """The default config with every gate's tool replaced by `true`: what
    finds the members and routes the files (selection, `runs_per_member`)
    is the real one; the real tools' findings (this workspace's members are
    not all green) would keep a no-op run from being one."""
    import yaml  # PyYAML comes with pre-commit (bench/requirements.txt)

    config = yaml.safe_load(default_config())
    for gate in config["gates"].values():
        gate["execution"]["command"] = ["true"]
        gate["parsing"] = {"strategy": "exit_code"}
        gate.pop("daemon", None)
        gate.pop("success", None)
    return yaml.safe_dump(config, sort_keys=False)


def real_workspace_cost(runs, tmp: Path):
    """Issue 45 on a real workspace: the four jaraco sdists as members of a
    uv workspace; the same figures as the generated one's, with no-op tools
    (see `noop_default_config`)."""
    roots = {}
    for name, extra in [("found", ""), ("none", "\nmembers: []\n")]:
        root = tmp / f"jaraco-{name}"
        (root / "packages").mkdir(parents=True)
        (root / "pyproject.toml").write_text(
            '[project]\nname = "root"\nversion = "0"\n\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
        )
        for spec in JARACO_MEMBERS:
            unpacked = ecosystem_shell.unpack(ecosystem_shell.sdist(spec), tmp / f"unpack-{name}-{spec}")
            unpacked.rename(root / "packages" / spec.split("==")[0])
        (root / ".st3").mkdir()
        (root / ".st3" / "quality.yaml").write_text(noop_default_config() + extra)
        git_commit_all(root)
        roots[name] = root
    return members_rows(
        roots, "packages/jaraco.functools/jaraco/functools/__init__.py", "the jaraco workspace (4 real sdists)", runs
    )


def members_rows(roots: dict, module: str, label: str, runs: int):
    """A no-op `qg run` and a one-file `qg files` (auto, `module` edited)
    on `roots["found"]` (members found) against `roots["none"]` (`members:
    []`), both green first."""
    for root in roots.values():
        report = json.loads(sh([QG, "run", "--no-daemon", "--format", "json"], root, capture=True, check=False))
        assert report["overall_pass"], report["summary_line"]
    gates = {
        n: len(json.loads(sh([QG, "run", "--no-daemon", "--format", "json"], r, capture=True, check=False))["gates"])
        for n, r in roots.items()
    }
    original = (roots["none"] / module).read_text()
    edits = iter(range(10_000))

    def noop(name):
        return lambda: sh([QG, "run", "--no-daemon"], roots[name], check=False)

    def files(name):
        def step():
            (roots[name] / module).write_text(original + f"\n\nEDIT_{next(edits)} = 1\n")
            sh([QG, "files"], roots[name], capture=True)

        return step

    idle = medians({n: noop(n) for n in roots}, runs * 2, warmup=1)
    listed = medians({n: files(n) for n in roots}, runs * 2, warmup=1)
    for root in roots.values():
        (root / module).write_text(original)
    rows = []
    for figure, m in [("a no-op `qg run` (auto)", idle), ("a one-file `qg files` (auto)", listed)]:
        added = (m["found"] - m["none"]) * 1000
        rows.append(
            (
                f"{label}: {figure}, members found vs `members: []`",
                f"found ({gates['found']} gates) {ms(m['found'])}, none ({gates['none']} gates) {ms(m['none'])}",
                f"{added:+.1f} ms",
                "<= +20 ms",
                added <= 20,
            )
        )
    return rows
