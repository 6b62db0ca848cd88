"""Interface-aware importers: a body-only edit and a signature change to a
module others import, with `interface_aware_importers` on and off, against
the slowest type checker alone on the module; on the generated package,
cold and warm (`--only interface-aware`), and on rich's most imported
module (`--only interface-aware-real`)."""

import json
from pathlib import Path

from .common import (
    HUB_IMPORTERS,
    QG,
    RICH,
    cmd,
    default_commands,
    generate_package,
    git_commit_all,
    medians,
    sdist,
    sec,
    sh,
)


def interface_aware(runs, tmp: Path):
    """Issue 47: an edit to the module 20 others import — a body-only one
    and a signature change — with and without `interface_aware_importers`,
    cold and warm, against the slowest type checker alone on that module
    (the floor)."""
    root = tmp / "interface-aware"
    generate_package(root, 300)
    hub = root / "pkg" / "hub.py"
    original = hub.read_text()
    serial = iter(range(100_000))

    def body_edit():
        hub.write_text(original.replace("    return x\n", f"    return x + 0 * {next(serial)}\n"))

    def signature_edit():
        hub.write_text(original.replace("def hub(x: int)", f"def hub(x: int, y{next(serial)}: int = 0)"))

    def series(edit, expected):
        def step():
            edit()
            out = json.loads(sh([QG, "run", "--format", "json"], root, capture=True, check=False))
            assert out["overall_pass"] and out["scope"]["files_checked"] == expected, out["summary_line"]

        return step

    def configured(aware):
        flag = "true" if aware else "false"
        gates = ", ".join(f'"{g}"' for g in ("ruff_format", "ruff_check", "mypy", "pyright"))
        (root / "pyproject.toml").write_text(
            f"[tool.qg]\nactive_gates = [{gates}]\ninterface_aware_importers = {flag}\n"
        )
        hub.write_text(original)
        git_commit_all(root, f"interface_aware_importers = {flag}")
        sh([QG, "run"], root, check=False)  # a new config: the whole project, green

    checkers = [c for c in default_commands() if c[0] in ("mypy", "pyright")]
    floor = medians({c[0]: cmd(c + ["pkg/hub.py"], root) for c in checkers}, runs, warmup=1)
    slowest = max(floor, key=floor.get)
    importers = HUB_IMPORTERS + 1
    measured = {}
    for aware in (False, True):
        configured(aware)
        for label, edit, expected in [
            ("body", body_edit, 1 if aware else importers),
            ("signature", signature_edit, importers),
        ]:
            hub.write_text(original)
            sh([QG, "run"], root, check=False)
            measured[(aware, label, "cold")] = medians({"qg": series(edit, expected)}, runs, warmup=1)["qg"]
    sh([QG, "daemon", "start"], root, check=False)
    try:
        hub.write_text(original)
        sh([QG, "run"], root, check=False)
        measured[(True, "body", "warm")] = medians({"qg": series(body_edit, 1)}, runs, warmup=1)["qg"]
    finally:
        sh([QG, "daemon", "stop"], root, check=False)
    hub.write_text(original)
    rows = []
    for label, what in [("body", "a body-only edit"), ("signature", "a signature change")]:
        on, off = measured[(True, label, "cold")], measured[(False, label, "cold")]
        r = on / floor[slowest]
        goal = "<= 1.2x" if label == "body" else "(report)"
        rows.append(
            (
                f"Interface-aware importers: `qg run` (auto, cold) after {what} to a module {HUB_IMPORTERS} others import, vs the slowest type checker alone on it",
                f"on {sec(on)} ({1 if label == 'body' else importers} files), off {sec(off)} ({importers} files); {slowest} alone {sec(floor[slowest])}",
                f"{r:.2f}x",
                goal,
                r <= 1.2 if label == "body" else True,
            )
        )
    warm = measured[(True, "body", "warm")]
    rows.append(
        (
            f"Interface-aware importers, warm: `qg run` after a body-only edit to a module {HUB_IMPORTERS} others import (daemons started)",
            f"qg {sec(warm)}",
            sec(warm),
            "<= 0.5 s",
            warm <= 0.5,
        )
    )
    return rows


def configure_interface_aware(root: Path, aware: bool):
    """rich with the default gates and `interface_aware_importers` on or
    off, its findings baselined, committed, and a green auto run."""
    gates = ", ".join(f'"{g}"' for g in ("ruff_format", "ruff_check", "mypy", "pyright"))
    pyproject = (root / "pyproject.toml").read_text().split("\n[tool.qg]")[0]
    (root / "pyproject.toml").write_text(
        f"{pyproject}\n[tool.qg]\nactive_gates = [{gates}]\ninterface_aware_importers = {str(aware).lower()}\n"
    )
    sh([QG, "baseline", "write"], root, check=False)
    git_commit_all(root, f"interface_aware_importers = {aware}")
    sh([QG, "run"], root, check=False)  # a new config: the whole project, green


def body_only_place(root: Path):
    """In the most imported modules (the ecosystem check's count; `root` is
    configured with interface-aware importers, green), the first
    annotated function whose body qg reads as hidden from importers (a
    function declaring a `global` or assigning `self.` attributes is not):
    (module, the line index its body edit goes before, its `def` line)."""
    from ecosystem import edits as ecosystem_edits

    source = ecosystem_edits.Source(root, "rich")
    for module in source.most_imported()[:10]:
        lines = source.lines(module)
        for index, match in source.defs(module):
            if not match.group("returns"):
                continue
            indent = " " * (len(match.group("indent")) + 4)
            ret = None
            for i in range(index + 1, min(index + 80, len(lines))):
                if lines[i].strip() and not lines[i].startswith(indent):
                    break  # the function ended without a return at its top level
                if lines[i].startswith(indent + "return"):
                    ret = i
                    break
            if ret is None:
                continue
            edited = list(lines)
            edited.insert(ret, f"{indent}_ = 0")
            (root / module).write_text("\n".join(edited))
            files = json.loads(sh([QG, "files", "--format", "json"], root, capture=True))
            sh(["git", "checkout", "--", module], root)
            if module in files.get("body_only", []):
                return module, ret, index
    raise AssertionError("no body-only place in rich's most imported modules")


def interface_aware_real(runs, tmp: Path):
    """Issue 47 on a real project: in rich's most imported modules, a
    body-only edit (`_ = N` before a return; `body_only_place`) and a
    signature change of the same function (a defaulted parameter added),
    with `interface_aware_importers` on and off, cold, beside the slowest
    type checker alone on the module. rich's findings are baselined first."""
    root = sdist(RICH, tmp / "rich-interface")
    configure_interface_aware(root, True)
    module, at, define = body_only_place(root)
    path = root / module
    original = path.read_text().split("\n")
    body_indent = original[at][: len(original[at]) - len(original[at].lstrip())]
    serial = iter(range(100_000))

    def body_edit():
        lines = list(original)
        # A statement no linter minds and no importer sees (`pass` is PIE790).
        lines.insert(at, f"{body_indent}_ = {next(serial)}")
        path.write_text("\n".join(lines))

    def signature_edit():
        lines = list(original)
        head, _, tail = lines[define].rpartition(")")
        comma = "" if head.endswith("(") else ", "
        lines[define] = f"{head}{comma}_qg{next(serial)}: int = 0){tail}"
        path.write_text("\n".join(lines))

    def configured(aware):
        path.write_text("\n".join(original))
        configure_interface_aware(root, aware)

    files_checked = {}

    def series(edit, key):
        def step():
            edit()
            out = json.loads(sh([QG, "run", "--format", "json"], root, capture=True, check=False))
            # Not asserted green: mypy's verdict on part of rich differs from
            # its whole-project one (`has-type` in box.py), which the baseline
            # was written from; the figure is the time and the files checked.
            files_checked[key] = out["scope"]["files_checked"]

        return step

    checkers = [c for c in default_commands() if c[0] in ("mypy", "pyright")]
    floor = medians({c[0]: cmd(c + [module], root) for c in checkers}, runs, warmup=1)
    slowest = max(floor, key=floor.get)
    measured = {}
    for aware in (False, True):
        configured(aware)
        for label, edit in (("body", body_edit), ("signature", signature_edit)):
            path.write_text("\n".join(original))
            sh([QG, "run"], root, check=False)
            measured[(aware, label)] = medians({"qg": series(edit, (aware, label))}, runs, warmup=1)["qg"]
    path.write_text("\n".join(original))
    rows = []
    for label, what in (("body", "a body-only edit"), ("signature", "a signature change")):
        on, off = measured[(True, label)], measured[(False, label)]
        ratio = on / floor[slowest]
        rows.append(
            (
                f"Interface-aware importers on a real project: `qg run` (auto, cold) after {what} to rich's most imported module ({module}), vs the slowest type checker alone on it",
                f"on {sec(on)} ({files_checked[(True, label)]} files), off {sec(off)} ({files_checked[(False, label)]} files); {slowest} alone {sec(floor[slowest])}",
                f"{ratio:.2f}x",
                # The 1.2x goal is the benchmark project's (interface-aware):
                # here the files mypy failed on in the run before join in.
                "(report)",
                True,
            )
        )
    return rows
