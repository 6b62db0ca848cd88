"""The harness's own decisions, on small inputs: a harness that compares
wrongly would hide the silent greens it exists to find."""

from __future__ import annotations

import random
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from ecosystem import edits, findings, own, qgrun

CONFIG = """active_gates: [ruff_format, ruff_check, mypy]

gates:
  ruff_check:
    name: "Ruff lint"
    execution:
      command: ["ruff", "check", "--output-format=json"]
    capabilities: {file_types: [".py"], supports_autofix: true}
    selection: {project_args: []}

  mypy:
    name: "Mypy"
    execution:
      command: ["mypy", "--output=json"]
    scope: {importers: true}
    selection:
      project_args: ["."]
"""


def test_a_command_s_options_join_the_gate_and_its_paths_become_its_files():
    text = qgrun._tell_gate(CONFIG, "mypy", ["mypy", "--platform", "linux", "--strict", "src", "tests"])
    assert 'command: ["mypy", "--output=json", "--platform", "linux", "--strict"]' in text
    assert 'project_args: ["src", "tests"]' in text
    assert 'scope: {importers: true, include_globs: ["src/**", "tests/**"]}' in text
    # The other gate is left as it was.
    assert 'command: ["ruff", "check", "--output-format=json"]' in text


def test_a_gate_without_a_scope_gets_one_for_the_command_s_paths():
    text = qgrun._tell_gate(CONFIG, "ruff_check", ["ruff", "check", "pkg", "x.py"])
    assert 'selection: {project_args: ["pkg", "x.py"]}' in text
    assert '    scope: {include_globs: ["pkg/**", "x.py"]}' in text


def test_a_scope_goes_outside_a_capabilities_mapping_of_several_lines():
    wrapped = CONFIG.replace(
        '    capabilities: {file_types: [".py"], supports_autofix: true}',
        '    capabilities: {file_types: [".py"],\n                   supports_autofix: true}',
    )
    text = qgrun._tell_gate(wrapped, "ruff_check", ["ruff", "check", "pkg"])
    assert '    scope: {include_globs: ["pkg/**"]}\n    capabilities: {file_types' in text
    assert "supports_autofix: true}\n" in text


def test_an_option_the_gate_has_already_is_not_repeated():
    config = CONFIG.replace('"--output-format=json"]', '"--output-format=json", "--no-fix"]')
    text = qgrun._tell_gate(config, "ruff_check", ["ruff", "check", "--no-fix", "--preview", "."])
    assert 'command: ["ruff", "check", "--output-format=json", "--no-fix", "--preview"]' in text


def test_a_package_named_by_its_module_is_checked_as_its_directory():
    assert qgrun.split_command(["-p", "rich.abc", "--no-incremental"]) == (["--no-incremental"], ["rich/abc"])
    assert qgrun.split_command(["--extend-exclude", "tests/*.ipynb", "."]) == (
        ["--extend-exclude", "tests/*.ipynb"],
        ["."],
    )


def test_the_output_format_goes_after_the_tool_s_own_words():
    assert own.argv("ruff", "ruff check src") == ["ruff", "check", "--output-format=json", "--no-fix", "src"]
    assert own.argv("mypy", "mypy --strict src") == ["mypy", "--output=json", "--strict", "src"]
    assert own.argv("ruff", "ruff check --no-fix .") == ["ruff", "check", "--output-format=json", "--no-fix", "."]


def test_a_mypy_older_than_its_json_is_run_for_its_text_and_read_from_it(tmp_path: Path):
    assert own.argv("mypy", "mypy --strict --pretty src", old_mypy=True) == [
        "mypy",
        *own.OLD_MYPY_OUTPUT,
        "--strict",
        "src",
    ]
    text = (
        "src/a.py:3:5: error: Incompatible types in assignment  [assignment]\n"
        "src/a.py:3:5: note: See https://mypy.rtfd.io\n"
        "src/b.py:7: error: Unused \"type: ignore\" comment  [unused-ignore]\n"
        "src/c.py:1:1: error: Cannot find implementation or library stub\n"
    )
    found = [(f.file, f.line, f.code) for f in findings.mypy_text(text, tmp_path, cwd=tmp_path)]
    assert found == [("src/a.py", 3, "assignment"), ("src/b.py", 7, "unused-ignore"), ("src/c.py", 1, "")]


def test_new_findings_are_counted_without_lines_and_as_a_multiset():
    before = [findings.Finding("mypy", "a.py", 3, "x", "m"), findings.Finding("mypy", "a.py", 9, "x", "m")]
    moved = [findings.Finding("mypy", "a.py", 4, "x", "m"), findings.Finding("mypy", "a.py", 10, "x", "m")]
    assert findings.difference(moved, before) == Counter()
    third = [*moved, findings.Finding("mypy", "a.py", 11, "x", "m")]
    assert findings.difference(third, before) == Counter({("mypy", "a.py", "x", "m"): 1})


def test_a_renamed_file_takes_its_findings_with_it():
    before = [findings.Finding("ruff_check", "tests/test_a.py", 1, "F401", "unused")]
    after = [findings.Finding("ruff_check", "tests/test_b.py", 1, "F401", "unused")]
    assert findings.difference(after, before)
    assert not findings.difference(after, findings.moved_files(before, {"tests/test_a.py": "tests/test_b.py"}))


def test_qg_s_known_findings_are_not_new_and_notes_never_count():
    report = {
        "gates": [
            {
                "id": "mypy@packages/a",
                "member": {"dir": "packages/a", "of": "mypy"},
                "violations": [
                    {
                        "file": "a.py",
                        "line": 1,
                        "code": "c",
                        "message": "m",
                        "severity": "error",
                        "baseline_state": "new",
                    },
                    {
                        "file": "a.py",
                        "line": 2,
                        "code": "c",
                        "message": "k",
                        "severity": "error",
                        "baseline_state": "unchanged",
                    },
                    {"file": "a.py", "line": 3, "code": "", "message": "n", "severity": "info"},
                ],
            }
        ]
    }
    assert findings.qg(report, new_only=True) == [findings.Finding("mypy", "a.py", 1, "c", "m")]
    assert len(findings.qg(report, new_only=False)) == 2


@pytest.fixture
def package(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "core.py").write_text(
        "import os\n\n\ndef value(x: int, y: str = 'a') -> int:\n    z = x + 1\n    return z\n\n\nclass Thing:\n    pass\n"
    )
    (tmp_path / "pkg" / "use.py").write_text("from pkg.core import value\n\nprint(value(1))\n")
    (tmp_path / "tests" / "test_core.py").write_text("from pkg import core\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_scripted_edits_change_what_they_say(package: Path):
    src = edits.Source(package)
    assert src.most_imported()[0] == "pkg/core.py"
    edit = edits.return_type(src)
    assert "-> bytes" in (package / "pkg/core.py").read_text() and edit.kind == "return-type"
    edit = edits.param_removed(src)
    assert "def value(x: int) -> bytes:" in (package / "pkg/core.py").read_text(), edit.what
    edit = edits.body_only(src)
    assert "    pass\n    return z" in (package / "pkg/core.py").read_text()
    edit = edits.test_renamed(src)
    assert edit.renamed == {"tests/test_core.py": "tests/test_core_renamed.py"}
    assert (package / "tests/test_core_renamed.py").exists()


def test_the_shaped_edits_find_their_shape_or_skip(package: Path):
    assert edits.ruff_excluded_edit(edits.Source(package)) is None
    assert edits.settings_module_edit(edits.Source(package)) is None
    (package / "pyproject.toml").write_text(
        '[tool.ruff]\nexclude = ["docs/*", "tests"]\n[tool.django-stubs]\ndjango_settings_module = "pkg.use"\n'
    )
    edit = edits.ruff_excluded_edit(edits.Source(package))
    assert edit.kind == "ruff-excluded" and "import os" in (package / "tests/test_core.py").read_text()
    edit = edits.settings_module_edit(edits.Source(package))
    assert edit.kind == "settings-module" and "QG_ECO_SETTING = 1" in (package / "pkg/use.py").read_text()
    (package / "pyproject.toml").unlink()
    (package / "setup.cfg").write_text("[mypy.plugins.django-stubs]\ndjango_settings_module = 'pkg.core'\n")
    assert edits.settings_module_edit(edits.Source(package)).what.startswith("pkg/core.py")
    assert edits.member_folder_added(edits.Source(package)) is None
    (package / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    edit = edits.member_folder_added(edits.Source(package))
    assert (package / "packages/qg-eco-member/pyproject.toml").is_file() and edit.kind == "member-added"


def test_random_edits_are_seeded(package: Path):
    original = (package / "pkg/core.py").read_text()
    made = []
    for _ in range(2):
        (package / "pkg/core.py").write_text(original)
        (package / "pkg/use.py").write_text("from pkg.core import value\n\nprint(value(1))\n")
        made.append(edits.random_edit(edits.Source(package), random.Random("seed")).what)
    assert made[0] == made[1]


def test_an_explanation_covers_only_the_findings_it_names():
    from ecosystem import corpus, report

    project = corpus.Project(
        name="p",
        sdist="p==1",
        sha256="",
        manager="pip",
        tags=[],
        install=[],
        source="",
        commands={},
        extra={"explained": [{"match": "invented mypy: a.py: known", "cause": "upstream"}]},
    )
    assert report.explained(project, "cold revert (x): invented mypy: a.py: known [c]") == "upstream"
    assert (
        report.explained(project, "cold revert (x): invented mypy: a.py: known [c]; missed mypy: b.py: m [c]") is None
    )


def test_a_mypy_that_stopped_before_checking_is_no_verdict():
    # django-stubs' plugin importing an app the edit broke: exit 1, one line.
    assert not own._says_findings("mypy", "Error constructing plugin instance of NewSemanalDjangoPlugin\n")
    assert own._says_findings("mypy", "a.py:1:5: error: Bad  [misc]\n")
    assert own._says_findings("mypy", '{"file": "a.py", "severity": "note"}\n')
    assert own._says_findings("ruff", "[]")
