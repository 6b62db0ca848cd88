"""What every family of figures shares: the paths and the environment the
commands run in, running, committing and timing them, the sdists (through
the ecosystem check's cache), qg's default config, the generated package,
the warm daemons, and the report's units, versions and machine. Measures
nothing itself."""

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The ecosystem check's package: its sdist cache and unpacking are bench's too.
from ecosystem import shell as ecosystem_shell

HERE = Path(__file__).resolve().parent.parent
VENV = HERE / ".venv"
BIN = VENV / "bin"
CACHE = HERE / "bench" / ".cache"
# The build's binary, and qg as `cargo install` (or pip, from the wheel) puts
# it: a copy written in one go, which every figure runs. The same bytes run
# slower straight from the linker's output: on the overhead figure's run of
# four `true`s, 12.6 ms from `target/release/qg` against 10.2 ms from a copy
# (interleaved, 300 runs each), 11.1 ms once that file's pages were dropped
# from the page cache and read again; no user's installed qg pays that.
BUILT_QG = HERE / "target" / "release" / "qg"
QG = HERE / "target" / "bench" / "qg"
RICH = "rich==15.0.0"
DJANGO = "django==6.1.3"
# A src layout (src/marshmallow, py.typed), installed editable.
MARSHMALLOW = "marshmallow==4.4.0"

ENV = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", VIRTUAL_ENV=str(VENV), CI="true")
ENV.pop("NO_COLOR", None)


# ---------------------------------------------------------------- helpers


def install_qg():
    """Copies the release build to `QG`, as an install does (atomically:
    a figure never starts a half-written qg)."""
    QG.parent.mkdir(parents=True, exist_ok=True)
    fresh = QG.with_name("qg.new")
    shutil.copyfile(BUILT_QG, fresh)
    fresh.chmod(0o755)
    os.replace(fresh, QG)


def sh(args, cwd, check=True, capture=False):
    out = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=ENV,
        check=check,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return out.stdout.decode() if capture else out.returncode


def git_commit_all(root: Path, message="corpus"):
    # No background `gc --auto`: it would pack objects while commands are timed.
    git = [
        "git",
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "gc.auto=0",
    ]
    if not (root / ".git").exists():
        sh(["git", "init", "-q", "-b", "main"], root)
    sh(["git", "add", "-A"], root)
    sh(git + ["commit", "-q", "-m", message], root)
    return sh(["git", "rev-parse", "HEAD"], root, capture=True).strip()


def timed(step) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def medians(steps: dict, runs: int, warmup: int = 1) -> dict:
    """Interleaved runs of several steps; median seconds of each."""
    for _ in range(warmup):
        for step in steps.values():
            step()
    samples = {name: [] for name in steps}
    for _ in range(runs):
        for name, step in steps.items():
            samples[name].append(timed(step))
    return {name: statistics.median(s) for name, s in samples.items()}


def cmd(args, cwd):
    return lambda: sh(args, cwd, check=False)


def sequence(commands, cwd):
    def run():
        for args in commands:
            sh(args, cwd, check=False)

    return run


def sdist(spec: str, into: Path) -> Path:
    """The sdist of `spec` (downloaded once into bench/.cache, shared with
    the ecosystem check) unpacked into `into` and committed."""
    root = ecosystem_shell.unpack(ecosystem_shell.sdist(spec), into)
    git_commit_all(root)
    # Packed, as a clone is: reading thousands of loose objects is not what
    # users' repositories look like (and an auto gc must not start mid-run).
    sh(["git", "gc", "--quiet"], root)
    return root


def default_config():
    """qg's embedded default config, as qg assembles it."""
    default = HERE / "src" / "config" / "default"
    return (default / "project.yaml").read_text() + "\n" + (default / "tools.yaml").read_text()


def default_commands():
    """The four default gates' argv (`execution.command`), in `active_gates` order."""
    import yaml  # PyYAML comes with pre-commit (bench/requirements.txt)

    config = yaml.safe_load(default_config())
    return [config["gates"][g]["execution"]["command"] for g in config["active_gates"]]


def project_files(root: Path):
    return sh([QG, "files", "--scope", "project"], root, capture=True).split()


def peak_rss_kb(args, cwd) -> int:
    """Peak RSS of the largest process among args and its children (KiB)."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *map(str, args)], cwd=cwd, env=ENV, capture_output=True, check=True
    )
    return int(out.stdout)


TRUE_CONFIG = """version: "1"
active_gates: [t1, t2, t3, t4]
gates:
""" + "".join(
    f'  t{i}:\n    execution: {{command: ["true"], pass_files: false}}\n    parsing: {{strategy: exit_code}}\n'
    for i in range(1, 5)
)


def hooks_config(hooks):
    lines = ["repos:", "  - repo: local", "    hooks:"]
    for hook_id, entry, pass_files, serial in hooks:
        lines += [
            f"      - id: {hook_id}",
            f"        name: {hook_id}",
            f"        entry: {entry}",
            "        language: system",
            f"        pass_filenames: {'true' if pass_files else 'false'}",
            f"        require_serial: {'true' if serial else 'false'}",
            "        types_or: [python, pyi]" if pass_files else "        always_run: true",
        ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- figures
# What several families' figures build on: the generated package, and
# the warm daemons with the edits made under them (warm.py's and lsp.py's).


HUB_IMPORTERS = 20


def generate_package(root: Path, modules: int):
    """`modules` typed modules importing pkg.base; the first HUB_IMPORTERS
    also import pkg.hub, so editing hub.py puts 20 importers in scope."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Generated package."""\n')
    (pkg / "base.py").write_text('"""Shared base."""\n\nBASE: int = 7\n')
    (pkg / "hub.py").write_text(
        '"""Imported by many."""\n\n\ndef hub(x: int) -> int:\n    """Return x."""\n    return x\n'
    )
    for i in range(modules):
        uses_hub = i < HUB_IMPORTERS
        imports = "from pkg.base import BASE\n" + ("from pkg.hub import hub\n" if uses_hub else "")
        body = "hub(x)" if uses_hub else "x"
        (pkg / f"mod{i:03d}.py").write_text(
            f'"""Module {i}."""\n\n{imports}\n\n'
            f'def value_{i:03d}(x: int) -> int:\n    """Return x shifted."""\n    return {body} + BASE + {i}\n\n\n'
            f'def label_{i:03d}(name: str) -> str:\n    """Return a label."""\n    return f"{{name}}-{i}"\n'
        )


class Daemons:
    """`qg daemon start` in a project; stopped by `stop()` (always called)."""

    def __init__(self, root: Path, env=None):
        self.root = root
        self.env = env or ENV
        started = time.perf_counter()
        out = subprocess.run(
            [QG, "daemon", "start", "--format", "json"], cwd=root, env=self.env, capture_output=True, check=True
        )
        self.start_s = time.perf_counter() - started
        self.started = json.loads(out.stdout)
        assert self.started["ok"], self.started

    def status(self):
        out = subprocess.run(
            [QG, "daemon", "status", "--format", "json"], cwd=self.root, env=self.env, capture_output=True, check=True
        ).stdout
        return {d["gate"]: d for d in json.loads(out)["daemons"]}

    def memory_mib(self):
        return {gate: d["status"]["rss_kib"] / 1024 for gate, d in self.status().items() if d.get("status")}

    def first_pass_ms(self):
        return {d["gate"]: d["first_pass_ms"] for d in self.started["daemons"]}

    def self_check_ms(self):
        """How long each daemon's comparison with a cold run took before it
        served (None: it was not compared)."""
        return {d["gate"]: d.get("checked_ms") for d in self.started["daemons"]}

    def stop(self):
        subprocess.run([QG, "daemon", "stop"], cwd=self.root, env=self.env, capture_output=True, check=False)


def report_json(root: Path, *extra, env=None):
    out = subprocess.run(
        [QG, "run", "--format", "json", "--no-state", *extra],
        cwd=root,
        env=env or ENV,
        capture_output=True,
        check=False,
    )
    return json.loads(out.stdout)


def edit_loop(module: Path, old: str, new: str):
    """A fresh edit each call: `old` replaced by `new` plus a counter, so
    every measured run follows a change the checkers have not seen."""
    original = module.read_text()
    assert old in original, (module, old)
    edits = iter(range(10_000))

    def edit():
        module.write_text(original.replace(old, f"{new}  # edit {next(edits)}", 1))

    def restore():
        module.write_text(original)

    return edit, restore


# A return-type change to rich's filesize.decimal, which one module imports:
# the module, what it says before and after.
RICH_DECIMAL = (
    "rich/filesize.py",
    '    separator: Optional[str] = " ",\n) -> str:',
    '    separator: Optional[str] = " ",\n) -> int:',
)


# ---------------------------------------------------------------- report


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


def sec(seconds):
    return f"{seconds:.2f} s"


def versions():
    def first_line(args):
        try:
            return (
                subprocess.run(args, env=ENV, capture_output=True, text=True, check=False)
                .stdout.strip()
                .splitlines()[0]
            )
        except Exception as e:
            return f"unavailable ({e})"

    return {
        "qg": first_line([QG, "--version"]),
        "ruff": first_line([BIN / "ruff", "--version"]),
        "mypy": first_line([BIN / "mypy", "--version"]),
        "pyright": first_line([BIN / "pyright", "--version"]),
        "prek": first_line([BIN / "prek", "--version"]),
        "pre-commit": first_line([BIN / "pre-commit", "--version"]),
        "git": first_line(["git", "--version"]),
        "python": platform.python_version(),
    }


def machine():
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, {int(mem) / 1024 / 1024:.0f} GiB RAM"
    )
