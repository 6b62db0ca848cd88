"""The TDD loop's edits: the scripted ones every project gets, and seeded
random type-changing ones (a mutation fuzzer for the verdict).

Each edit changes the work tree and says what it did; the loop reverts it
with git. Edits work on single-line definitions found by regular
expressions: crude, but each edit is checked against the tools' own runs,
so a crude edit can make a step useless, never a comparison wrong."""

from __future__ import annotations

import configparser
import random
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import shell

# Directories whose modules are not the package's own (the loop edits the
# package; importers anywhere are checked all the same).
NOT_PACKAGE = re.compile(r"(^|/)(tests?|testing|docs?|examples?|benchmarks?|scripts?|tools|\.[^/]*)/")
DEF = re.compile(
    r"^(?P<indent>[ \t]*)(?:async\s+)?def (?P<name>\w+)\((?P<params>.*)\)\s*(?:->\s*(?P<returns>.+?))?\s*:\s*(?:#.*)?$"
)
TOP_DEF = re.compile(r"^(?:async\s+)?def (\w+)\(|^class (\w+)\b")
IMPORT = re.compile(r"^(?:import [\w.]+(?: as \w+)?|from [\w.]+ import [\w, ]+)\s*(?:#.*)?$")


@dataclass
class Edit:
    """One applied edit: its kind and what it changed."""

    kind: str
    what: str
    # Files the edit moved (old → new): their findings move with them, as
    # qg's baseline follows a renamed file.
    renamed: dict = field(default_factory=dict)


class Source:
    """The project's Python files, read once per edit."""

    def __init__(self, root: Path, package: str = ""):
        self.root = root
        tracked = shell.git(root, "ls-files", "*.py").split("\n")
        self.all = [f for f in tracked if f]
        chosen = [f for f in self.all if f.startswith(package)] if package else self.all
        self.package = [
            f
            for f in chosen
            if not NOT_PACKAGE.search("/" + f)
            and Path(f).name not in ("setup.py", "conftest.py", "noxfile.py", "__main__.py")
            and not Path(f).name.startswith("test_")
        ]

    def lines(self, file: str) -> list[str]:
        return (self.root / file).read_text(errors="replace").split("\n")

    def write(self, file: str, lines: list[str]):
        (self.root / file).write_text("\n".join(lines))

    def most_imported(self) -> list[str]:
        """The package's modules, the most imported first (counted by the
        files whose import lines name the module, absolutely or relatively)."""
        counts = Counter()
        imports = {f: [l for l in self.lines(f) if re.match(r"\s*(from|import)\s", l)] for f in self.all}
        for module in self.package:
            last = Path(module).stem if Path(module).stem != "__init__" else Path(module).parent.name
            dotted = re.compile(rf"(?:^|[\s.]){re.escape(last)}(?:\s|,|$|\.)")
            counts[module] = sum(1 for f, ls in imports.items() if f != module and any(dotted.search(l) for l in ls))
        return [m for m, _ in counts.most_common()]

    def defs(self, file: str, top_only=False):
        """(line index, match) of every single-line `def` in `file`."""
        for index, line in enumerate(self.lines(file)):
            match = DEF.match(line)
            if match and (not top_only or not match.group("indent")):
                yield index, match


def _params(text: str) -> list[str]:
    """Splits a parameter list at its top-level commas."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _replace_line(src: Source, file: str, index: int, new: str):
    lines = src.lines(file)
    lines[index] = new
    src.write(file, lines)


def return_type(src: Source) -> Edit | None:
    """The return type of the most imported module's first annotated
    function made incompatible (`-> bytes`, or `-> int` where it was bytes)."""
    for file in src.most_imported()[:5]:
        for top_only in (True, False):
            for index, match in src.defs(file, top_only):
                returns = match.group("returns")
                if returns and returns.strip("'\"") not in ("None", "NoReturn", "Never"):
                    new = "int" if returns == "bytes" else "bytes"
                    line = src.lines(file)[index]
                    _replace_line(src, file, index, line.replace(f"-> {returns}", f"-> {new}", 1))
                    return Edit(
                        "return-type", f"{file}:{index + 1}: {match.group('name')} -> {returns} became -> {new}"
                    )
    return None


def param_removed(src: Source) -> Edit | None:
    """The last parameter of a function of the most imported modules removed."""
    for file in src.most_imported()[:5]:
        for index, match in src.defs(file, top_only=True):
            params = _params(match.group("params"))
            plain = [p for p in params if p not in ("self", "cls", "/", "*") and not p.startswith("*")]
            if not plain:
                continue
            kept = [p for p in params if p != plain[-1]]
            while kept and kept[-1] in ("*", "/"):
                kept.pop()
            line = src.lines(file)[index]
            new = line.replace(f"({match.group('params')})", f"({', '.join(kept)})", 1)
            _replace_line(src, file, index, new)
            return Edit("param-removed", f"{file}:{index + 1}: {match.group('name')} lost `{plain[-1]}`")
    return None


def module_added(src: Source) -> Edit | None:
    """A new module with a type error, beside the most imported one."""
    modules = src.most_imported()
    if not modules:
        return None
    added = Path(modules[0]).parent / "qg_eco_added.py"
    (src.root / added).write_text('def added() -> int:\n    return "not an int"\n')
    return Edit("module-added", f"{added.as_posix()} added, returning a str as int")


def body_only(src: Source) -> Edit | None:
    """A `pass` before the first `return` of an annotated function of the
    most imported module: its body changes, its interface does not."""
    for file in src.most_imported()[:5]:
        lines = src.lines(file)
        for index, match in src.defs(file):
            if not match.group("returns"):
                continue
            body = len(match.group("indent")) + 4
            for at in range(index + 1, min(index + 80, len(lines))):
                line = lines[at]
                if line.strip() and len(line) - len(line.lstrip()) < body:
                    break
                if line.startswith(" " * body + "return"):
                    lines.insert(at, " " * body + "pass")
                    src.write(file, lines)
                    return Edit("body-only", f"{file}:{at + 1}: `pass` in the body of {match.group('name')}")
    return None


def test_renamed(src: Source) -> Edit | None:
    """A test module renamed (git mv): one file gone, one new."""
    tests = [f for f in src.all if re.search(r"(^|/)tests?/(.*/)?test_\w+\.py$", f)]
    if not tests:
        return None
    old = tests[len(tests) // 2]
    new = old[: -len(".py")] + "_renamed.py"
    shell.git(src.root, "mv", old, new)
    return Edit("test-renamed", f"{old} renamed {Path(new).name}", {old: new})


def ruff_excluded_edit(src: Source) -> Edit | None:
    """A file under a directory ruff's settings exclude (`exclude`,
    `extend-exclude`) given an unused import and bad spacing: the
    project's own ruff never looks at it, so neither may qg's gates."""
    for entry in _ruff_setting(src.root, "exclude") + _ruff_setting(src.root, "extend-exclude"):
        entry = entry.strip().strip("/").removeprefix("./")
        if not entry or any(c in entry for c in "*?["):
            continue
        under = [f for f in src.all if f.startswith(entry + "/")]
        if under:
            file = under[0]
            # At the end: before a `from __future__` import it would not parse.
            src.write(file, [*src.lines(file), "import os", "qg_eco_x  =  1", ""])
            return Edit("ruff-excluded", f"{file} (ruff excludes {entry}): an unused import, bad spacing")
    return None


def settings_module_edit(src: Source) -> Edit | None:
    """The settings module a mypy plugin imports (django-stubs'
    `django_settings_module`) given a new setting: mypy's whole project is
    checked again, its cache not trusted for it."""
    name = _settings_module(src.root)
    if not name:
        return None
    for file in (name.replace(".", "/") + ".py", name.replace(".", "/") + "/__init__.py"):
        if file in src.all:
            src.write(file, [*src.lines(file), "QG_ECO_SETTING = 1", ""])
            return Edit("settings-module", f"{file} ({name}, the plugin's settings): a setting added")
    return None


def member_folder_added(src: Source) -> Edit | None:
    """A workspace member made a minute ago: a folder where the root's
    `[tool.uv.workspace] members` glob takes it, with a pyproject.toml of
    its own (strict mypy) and two errors, one only strict reports — not
    git-added. Its own run (`mypy .` in it) is the reference."""
    pyproject = src.root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    workspace = tomllib.loads(pyproject.read_text()).get("tool", {}).get("uv", {}).get("workspace", {})
    parents = [glob.removesuffix("/*") for glob in workspace.get("members", []) if glob.endswith("/*")]
    if not parents:
        return None
    folder = src.root / parents[0] / "qg-eco-member"
    (folder / "qg_eco_member").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "qg-eco-member"\nversion = "0"\n\n[tool.mypy]\nstrict = true\n'
    )
    (folder / "qg_eco_member" / "__init__.py").write_text(
        'def added() -> int:\n    return "not an int"\n\n\ndef untyped(x):\n    return x\n'
    )
    where = folder.relative_to(src.root).as_posix()
    return Edit("member-added", f"{where}/ (its own pyproject.toml, strict mypy) added, not git-added")


def _ruff_setting(root: Path, key: str) -> list[str]:
    """`key` of the root's ruff settings (`.ruff.toml`, `ruff.toml`, then
    `[tool.ruff]`, as ruff looks), or none."""
    for name, table in ((".ruff.toml", ()), ("ruff.toml", ()), ("pyproject.toml", ("tool", "ruff"))):
        path = root / name
        if not path.is_file():
            continue
        data = tomllib.loads(path.read_text())
        for part in table:
            data = data.get(part, {})
        if table and not data:
            continue
        value = data.get(key, [])
        return value if isinstance(value, list) else [value]
    return []


def _settings_module(root: Path) -> str:
    """django-stubs' `django_settings_module`, from pyproject.toml or an
    INI file (`[mypy.plugins.django-stubs]`)."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        stubs = tomllib.loads(pyproject.read_text()).get("tool", {}).get("django-stubs", {})
        if stubs.get("django_settings_module"):
            return stubs["django_settings_module"]
    for name in ("mypy.ini", ".mypy.ini", "setup.cfg"):
        path = root / name
        if path.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(path.read_text(errors="replace"))
            for section in ("mypy.plugins.django-stubs", "mypy_django_plugin"):
                if parser.has_option(section, "django_settings_module"):
                    return parser.get(section, "django_settings_module").strip().strip("\"'")
    return ""


SCRIPTED = [return_type, param_removed, module_added, body_only, test_renamed]

# Edits for a shape a project may have: skipped, with no run, where it has
# none (`member_folder_added` is for workspaces).
SHAPED = [ruff_excluded_edit, settings_module_edit]


def random_edit(src: Source, rng: random.Random) -> Edit | None:
    """One seeded type-changing edit: an annotation changed, an import
    deleted, or a module-level name renamed at its definition."""
    return first_edit([_change_annotation, _delete_import, _rename_symbol], src, rng)


def first_edit(kinds: list, src: Source, rng: random.Random) -> Edit | None:
    """The first of `kinds`, in a seeded shuffle, that finds a place to edit."""
    rng.shuffle(kinds)
    for kind in kinds:
        edit = kind(src, rng)
        if edit:
            return edit
    return None


def _change_annotation(src: Source, rng: random.Random) -> Edit | None:
    candidates = []
    for file in src.package:
        for index, match in src.defs(file):
            line = src.lines(file)[index]
            for found in re.finditer(r"(?::|->)\s*(\w+)(?=\s*(?:[,=)]|:\s*$|:\s*#))", line):
                candidates.append((file, index, found))
    if not candidates:
        return None
    file, index, found = rng.choice(candidates)
    old = found.group(1)
    new = "str" if old != "str" else "int"
    line = src.lines(file)[index]
    _replace_line(src, file, index, line[: found.start(1)] + new + line[found.end(1) :])
    return Edit("annotation", f"{file}:{index + 1}: `{old}` became `{new}`")


def _delete_import(src: Source, rng: random.Random) -> Edit | None:
    candidates = [(f, i) for f in src.package for i, l in enumerate(src.lines(f)) if IMPORT.match(l)]
    if not candidates:
        return None
    file, index = rng.choice(candidates)
    lines = src.lines(file)
    removed = lines.pop(index)
    src.write(file, lines)
    return Edit("import-deleted", f"{file}:{index + 1}: `{removed.strip()}` deleted")


def _rename_symbol(src: Source, rng: random.Random) -> Edit | None:
    candidates = []
    for file in src.package:
        for index, line in enumerate(src.lines(file)):
            match = TOP_DEF.match(line)
            if match:
                candidates.append((file, index, match.group(1) or match.group(2)))
    if not candidates:
        return None
    file, index, name = rng.choice(candidates)
    line = src.lines(file)[index]
    _replace_line(src, file, index, re.sub(rf"\b{name}\b", f"{name}_renamed", line, count=1))
    return Edit("renamed", f"{file}:{index + 1}: `{name}` renamed `{name}_renamed`")
