"""`qg lsp` driven by a real LSP client: pytest-lsp (the pygls project's).

Each test gets a fresh git repository with a small package (a module and
an importer of it) and the default gates, which run for real (ruff, mypy,
pyright from the project's .venv). Run by tests/lsp.rs with QG_BIN set.
"""

import asyncio
import json
import os
import pathlib
import shutil
import subprocess
import textwrap
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

QG = os.environ["QG_BIN"]
VENV = os.environ["QG_TOOLS_VENV"]
WAIT = int(os.environ.get("QG_LSP_WAIT", "120"))

SHAPES = '''\
"""Shapes."""


def area(side: float) -> float:
    """The area of a square."""
    return side * side
'''

GEOMETRY = '''\
"""Sums."""

from app.shapes import area


def total(sides: list[float]) -> float:
    """The total area."""
    return sum(area(side) for side in sides)
'''


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def trust(project):
    """`qg trust`: the test's own config may run (QG_TRUST_FILE keeps the
    record out of the user's data directory)."""
    subprocess.run([QG, "trust"], cwd=project, check=True, capture_output=True, env=server_env())


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text('"""App."""\n')
    (root / "app" / "shapes.py").write_text(SHAPES)
    (root / "app" / "geometry.py").write_text(GEOMETRY)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [project]
            name = "app"
            version = "0"

            [tool.ruff.lint]
            select = ["E", "F", "I"]
            """
        )
    )
    # The tools come from the project's virtualenv, as in a real project.
    os.symlink(VENV, root / ".venv")
    (root / ".gitignore").write_text(".venv\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return root.resolve()


def server_env():
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[QG, "lsp"], server_env=server_env()))
async def client(lsp_client: LanguageClient, project):
    registrations = []
    lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: registrations.append(params))
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=project.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="proj")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def uri(project, relative):
    return (project / relative).as_uri()


async def wait_until(condition, what):
    for _ in range(WAIT * 10):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def codes(client, project, relative):
    return sorted((d.source, str(d.code), d.severity) for d in client.diagnostics.get(uri(project, relative), []))


def open_file(client, project, relative):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(project, relative),
                language_id="python",
                version=1,
                text=(project / relative).read_text(),
            )
        )
    )


def save(client, project, relative, text, version=2):
    (project / relative).write_text(text)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(project, relative), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(project, relative)))
    )


def progress_of(client, kind):
    return [report for reports in client.progress_reports.values() for report in reports if isinstance(report, kind)]


def progress_begun(client):
    return progress_of(client, types.WorkDoneProgressBegin)


def progress_ended(client):
    return progress_of(client, types.WorkDoneProgressEnd)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_save_that_breaks_an_importer_shows_there_and_a_revert_clears_it(client, project):
    open_file(client, project, "app/shapes.py")
    # The first check (what changed since the last run: everything) ends.
    await wait_until(lambda: progress_ended(client), "the first run")
    assert codes(client, project, "app/geometry.py") == []
    # A return type change: geometry.py, never opened, is now wrong.
    save(client, project, "app/shapes.py", SHAPES.replace('-> float:\n    """The area', '-> str:\n    """The area'))
    # One notification per file: the client may have taken in the
    # importer's and not yet the edited file's, so wait for both.
    await wait_until(
        lambda: codes(client, project, "app/geometry.py") and codes(client, project, "app/shapes.py"),
        "diagnostics in the importer and the edited file",
    )
    found = codes(client, project, "app/geometry.py")
    assert ("mypy", "arg-type", types.DiagnosticSeverity.Error) in found or any(
        source == "mypy" for source, _, _ in found
    ), found
    assert any(source == "pyright" for source, _, _ in found), found
    shapes = client.diagnostics[uri(project, "app/shapes.py")]
    assert any(d.source == "mypy" for d in shapes), shapes
    for d in shapes:
        assert d.range.start.line >= 0 and d.message
    # Revert: both files are cleared.
    save(client, project, "app/shapes.py", SHAPES, version=3)
    await wait_until(
        lambda: not codes(client, project, "app/geometry.py") and not codes(client, project, "app/shapes.py"),
        "cleared diagnostics",
    )
    await wait_until(lambda: len(progress_ended(client)) >= 3, "the last run's end")
    assert_progress_well_formed(client)


def assert_progress_well_formed(client):
    """Each run: begin, a report as each gate starts and ends, end."""
    assert client.progress_reports, "no $/progress"
    for token, reports in client.progress_reports.items():
        begin, *middle, end = reports
        assert isinstance(begin, types.WorkDoneProgressBegin) and begin.title.startswith("qg: "), reports
        assert isinstance(end, types.WorkDoneProgressEnd) and end.message, reports
        assert all(isinstance(r, types.WorkDoneProgressReport) for r in middle), reports
        finished = [r.message.split()[0] for r in middle if r.message.endswith("done)")]
        assert finished and set(finished) <= {"ruff_format", "ruff_check", "mypy", "pyright"}, reports
        # Counted as they finish: `(1 done)`, `(2 done)`, ...
        done = [int(r.message.rsplit("(", 1)[1].split()[0]) for r in middle if r.message.endswith("done)")]
        assert done == list(range(1, len(done) + 1)), reports
        # Each gate that ran was told as it started (`mypy on 2 files`); a
        # run with nothing in scope starts none, and tells each skipped.
        started = [r.message.split()[0] for r in middle if " on " in r.message and r.message.endswith(("file", "files"))]
        ran = [r.message.split()[0] for r in middle if r.message.endswith("done)") and r.message.split()[1] != "skipped"]
        assert sorted(started) == sorted(ran), reports


def commit_legacy_with_a_known_finding(project):
    (project / "app" / "legacy.py").write_text('"""Old."""\n\nimport os\n')
    subprocess.run([QG, "baseline", "write"], cwd=project, check=True, capture_output=True, env=server_env())
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "legacy")
    # Green: the next auto run has nothing to check.
    subprocess.run([QG, "run"], cwd=project, check=True, capture_output=True, env=server_env())


@pytest.mark.asyncio(loop_scope="function")
async def test_run_project_shows_every_file_and_baseline_write_makes_new_findings_known(client, project):
    await wait_until(lambda: progress_ended(client), "the first run")
    commit_legacy_with_a_known_finding(project)
    assert codes(client, project, "app/legacy.py") == []
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="qg.runProject"))
    await wait_until(lambda: codes(client, project, "app/legacy.py"), "the project's findings")
    assert codes(client, project, "app/legacy.py") == [("ruff_check", "F401", types.DiagnosticSeverity.Hint)]
    # A new finding, never opened in the editor: a file changed on disk.
    (project / "app" / "legacy.py").write_text('"""Old."""\n\nimport os\nimport sys\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(project, "app/legacy.py"), type=types.FileChangeType.Changed)]
        )
    )
    await wait_until(lambda: len(codes(client, project, "app/legacy.py")) == 2, "the new finding")
    assert ("ruff_check", "F401", types.DiagnosticSeverity.Error) in codes(client, project, "app/legacy.py")
    ended = len(progress_ended(client))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="qg.baselineWrite"))
    await wait_until(lambda: len(progress_ended(client)) >= ended + 2, "the baseline and the project run")
    assert codes(client, project, "app/legacy.py") == [
        ("ruff_check", "F401", types.DiagnosticSeverity.Hint),
        ("ruff_check", "F401", types.DiagnosticSeverity.Hint),
    ]
    assert any(m.type == types.MessageType.Info and "baseline written" in m.message for m in client.messages)
    assert "sys" in (project / ".st3" / "baseline.jsonl").read_text()


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_on_save_fixes_the_unsaved_buffer(client, project):
    on_disk = '"""Fixable."""\n'
    (project / "app" / "fixable.py").write_text(on_disk)
    open_file(client, project, "app/fixable.py")
    # Typed, not saved: what fix-on-save is asked to fix.
    typed = '"""Fixable."""\n\nimport os\nimport sys\nx=[1,2]\n\nprint(sys.argv,x)\n'
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(project, "app/fixable.py"), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed)],
        )
    )
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(project, "app/fixable.py")),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert [a.kind for a in actions] == ["source.fixAll.qg"], actions
    action = actions[0] if actions[0].edit else await client.code_action_resolve_async(actions[0])
    fixed = apply_edits(typed, action.edit.changes[uri(project, "app/fixable.py")])
    assert fixed == '"""Fixable."""\n\nimport sys\n\nx = [1, 2]\n\nprint(sys.argv, x)\n', fixed
    assert (project / "app" / "fixable.py").read_text() == on_disk
    mark = len(runs(client))
    save(client, project, "app/fixable.py", fixed, version=3)
    await wait_until(lambda: checked_after(client, mark), "the run after the save")
    assert codes(client, project, "app/fixable.py") == []


def idle(client):
    return len(progress_begun(client)) == len(progress_ended(client))


def runs(client):
    """Each progress the server began, in order: (title, end message or None)."""
    out = []
    for reports in client.progress_reports.values():
        title = next((r.title for r in reports if isinstance(r, types.WorkDoneProgressBegin)), None)
        end = next((r.message or "" for r in reports if isinstance(r, types.WorkDoneProgressEnd)), None)
        out.append((title, end))
    return out


def checked_after(client, mark):
    """Whether a check of what changed begun after the first `mark` runs
    ended (not cancelled by a newer save) and nothing runs now. Counting
    ends is not enough: one batch of work is several progresses (the
    daemons' start, the check, a look at opened files), and a check a save
    cancels ends too, so "more ended and idle" can hold between two of them
    before the run after the save has begun."""
    done = any(
        title == "qg: checking what changed" and end is not None and not end.startswith("cancelled")
        for title, end in runs(client)[mark:]
    )
    return done and idle(client)


@pytest.mark.asyncio(loop_scope="function")
async def test_known_findings_are_hints_new_ones_errors(client, project):
    (project / "app" / "legacy.py").write_text('"""Old."""\n\nimport os\n')
    subprocess.run([QG, "baseline", "write"], cwd=project, check=True, capture_output=True, env=server_env())
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "legacy")
    open_file(client, project, "app/legacy.py")
    await wait_until(lambda: codes(client, project, "app/legacy.py"), "the known finding")
    assert codes(client, project, "app/legacy.py") == [("ruff_check", "F401", types.DiagnosticSeverity.Hint)]
    known = client.diagnostics[uri(project, "app/legacy.py")][0]
    assert known.data["baseline"] == "known" and known.message.endswith("[known]")
    save(client, project, "app/legacy.py", '"""Old."""\n\nimport os\nimport sys\n')
    await wait_until(lambda: len(codes(client, project, "app/legacy.py")) == 2, "the new finding")
    assert codes(client, project, "app/legacy.py") == [
        ("ruff_check", "F401", types.DiagnosticSeverity.Error),
        ("ruff_check", "F401", types.DiagnosticSeverity.Hint),
    ]


@pytest.mark.asyncio(loop_scope="function")
async def test_a_fix_action_edit_applied_and_saved_leaves_no_finding(client, project):
    text = '"""Fixable."""\n\nimport os\nimport sys\n\nprint(sys.argv)\n'
    (project / "app" / "fixable.py").write_text(text)
    open_file(client, project, "app/fixable.py")
    await wait_until(lambda: codes(client, project, "app/fixable.py"), "the finding")
    diagnostic = next(d for d in client.diagnostics[uri(project, "app/fixable.py")] if d.code == "F401")
    assert diagnostic.code_description and "ruff" in diagnostic.code_description.href
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(project, "app/fixable.py")),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    titles = [a.title for a in actions]
    assert "Fix F401 (ruff_check)" in titles, titles
    assert "Fix all ruff_check findings in this file" in titles, titles
    action = next(a for a in actions if a.title == "Fix F401 (ruff_check)")
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    edits = action.edit.changes[uri(project, "app/fixable.py")]
    fixed = apply_edits(text, edits)
    assert fixed == '"""Fixable."""\n\nimport sys\n\nprint(sys.argv)\n', fixed
    save(client, project, "app/fixable.py", fixed)
    await wait_until(lambda: not codes(client, project, "app/fixable.py"), "no finding left")


def apply_edits(text, edits):
    lines = text.splitlines(keepends=True)

    def offset(position):
        return sum(len(line) for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


@pytest.mark.asyncio(loop_scope="function")
async def test_a_malformed_config_is_shown_and_unknown_requests_are_errors(client, project):
    (project / ".st3").mkdir(exist_ok=True)
    (project / ".st3" / "quality.yaml").write_text("version: [\n")
    open_file(client, project, "app/shapes.py")
    save(client, project, "app/shapes.py", SHAPES + "\n")
    await wait_until(
        lambda: any(m.type == types.MessageType.Error and "quality.yaml" in m.message for m in client.messages),
        "an error message",
    )
    with pytest.raises(Exception, match="does not serve"):
        await client.protocol.send_request_async("qg/unknown", {})
    with pytest.raises(Exception, match="no command"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command="qg.nothing"))


@pytest.mark.asyncio(loop_scope="function")
async def test_the_last_save_wins(client, project):
    open_file(client, project, "app/shapes.py")
    await wait_until(lambda: progress_ended(client), "the first run")
    broken = SHAPES.replace("return side * side", "return side * undefined_name")
    save(client, project, "app/shapes.py", broken)
    await asyncio.sleep(0.3)
    save(client, project, "app/shapes.py", SHAPES, version=3)
    await wait_until(lambda: len(progress_ended(client)) >= 3, "the last run")
    await asyncio.sleep(1)
    assert codes(client, project, "app/shapes.py") == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_look_that_found_findings_is_redone_when_a_revert_leaves_nothing_to_check(client, project):
    # The first run (the whole project: no baseline yet) passes and records HEAD.
    open_file(client, project, "app/geometry.py")
    await wait_until(lambda: progress_ended(client), "the first run")
    # shapes.py broken on disk, then opened: a look at the opened file finds F821.
    (project / "app" / "shapes.py").write_text(SHAPES.replace("side * side", "side * undefined_name"))
    open_file(client, project, "app/shapes.py")
    await wait_until(
        lambda: any(code == "F821" for _, code, _ in codes(client, project, "app/shapes.py")), "the look"
    )
    # Back to HEAD's content and saved: the run after the save has nothing to
    # check (that content passed), so the F821 shown must be looked at again.
    save(client, project, "app/shapes.py", SHAPES)
    for _ in range(400):
        if codes(client, project, "app/shapes.py") == []:
            break
        await asyncio.sleep(0.1)
    assert codes(client, project, "app/shapes.py") == []


# A gate that sleeps a minute on a file holding SLOW and reports each line
# holding BAD: a run it sleeps in can only end early by being cancelled.
SLOW_GATE = """\
import json, pathlib, sys, time
files = [f for f in sys.argv[1:] if f.endswith(".py")]
if any("SLOW" in open(f).read() for f in files):
    # Beside the script: the test waits for it, not for a progress that
    # may belong to another check.
    (pathlib.Path(__file__).parent / "slow_gate.sleeping").touch()
    time.sleep(60)
print(json.dumps([
    {"file": f, "line": n, "code": "BAD", "message": "bad line"}
    for f in files
    for n, line in enumerate(open(f).read().splitlines(), 1)
    if "BAD" in line
]))
"""


def use_slow_gate(project):
    # Outside the project: the gate must not check itself.
    script = project.parent / "slow_gate.py"
    script.write_text(SLOW_GATE)
    (project / ".st3").mkdir(exist_ok=True)
    (project / ".st3" / "quality.yaml").write_text(
        textwrap.dedent(
            f"""\
            version: "1"
            active_gates: [slow]
            gates:
              slow:
                execution:
                  command: ["{VENV}/bin/python", "{script}"]
                parsing:
                  strategy: json_violations
                  violations_path: "/"
                  field_map: {{file: file, line: line, code: code, message: message}}
            """
        )
    )
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "slow gate")
    trust(project)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_save_during_a_run_cancels_it(client, project):
    # The server may read the new config between its write and `qg trust`
    # (a fresh-clone CI run saw it ask): answered as a user would.
    Answers(client, "Trust")
    use_slow_gate(project)
    open_file(client, project, "app/shapes.py")
    # Every check the opening made has ended, the look at the opened file
    # too: a look still queued would read the slow edit below from disk and
    # run 60 s, and a save cancels no look (a fresh-clone CI run, loaded,
    # saw it start after the first check's end).
    def idle():
        return len(progress_ended(client)) == len(progress_begun(client)) > 0

    await wait_until(idle, "the opening's checks")
    # The look follows the first check's end in the same breath: a second
    # later it has begun, if there is one, and is waited for.
    await asyncio.sleep(1)
    await wait_until(idle, "the opening's look at the file")
    save(client, project, "app/shapes.py", SHAPES + "SLOW = 1\n")
    # The gate is asleep on the slow edit: a run is under way that only a
    # cancellation can end early (a fresh-clone CI run, loaded, once saw a
    # check queued by the opening begin first, which the test took for it).
    sleeping = project.parent / "slow_gate.sleeping"
    await wait_until(sleeping.exists, "the slow run")
    started = time.monotonic()
    save(client, project, "app/shapes.py", SHAPES + "BAD = 1\n", version=3)
    await wait_until(lambda: codes(client, project, "app/shapes.py"), "the last save's finding")
    # Well before the slow run could have ended by itself.
    assert time.monotonic() - started < 30
    assert codes(client, project, "app/shapes.py") == [("slow", "BAD", types.DiagnosticSeverity.Error)]
    assert client.diagnostics[uri(project, "app/shapes.py")][0].range.start.line == SHAPES.count("\n")
    messages = [e.message for e in progress_ended(client)]
    assert "cancelled: a newer change" in messages, messages


@pytest.mark.asyncio(loop_scope="function")
async def test_opening_a_file_checks_that_file_alone(client, project):
    await wait_until(lambda: progress_ended(client), "the first run")
    # Changes the editor was not told of (no save, no watched-file event):
    # an edited module, and a new one that is then opened.
    (project / "app" / "geometry.py").write_text("import os\n" + GEOMETRY)
    (project / "app" / "extra.py").write_text('"""Extra."""\n\nimport sys\n')
    checks = lambda: [b.title for b in progress_begun(client) if "checking" in b.title]
    before = len(checks())
    open_file(client, project, "app/extra.py")
    await wait_until(lambda: codes(client, project, "app/extra.py"), "the opened file's findings")
    # Opening is looking at that file: no run of what changed comes with it
    # (it would check the other edit and record a run the user never asked
    # for).
    assert checks()[before:] == ["qg: checking the opened file"], checks()
    assert codes(client, project, "app/geometry.py") == []


MEMBER_CORE = '''\
"""Core."""


def value(x):
    """Unannotated: an error under the member's strict mypy only."""
    return x + 1
'''


@pytest.mark.asyncio(loop_scope="function")
async def test_a_workspace_members_file_is_answered_by_its_members_own_gates(client, project):
    await wait_until(lambda: progress_ended(client), "the first run")
    # A member with strict mypy of its own, committed: the member's own
    # `cd packages/core && mypy .` flags `value`; the root's settings would not.
    (project / "packages" / "core" / "core").mkdir(parents=True)
    (project / "packages" / "core" / "pyproject.toml").write_text(
        '[project]\nname = "core"\nversion = "0"\n\n[tool.mypy]\nstrict = true\n'
    )
    (project / "packages" / "core" / "core" / "__init__.py").write_text('"""Core."""\n')
    (project / "packages" / "core" / "core" / "values.py").write_text(MEMBER_CORE)
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "member")
    open_file(client, project, "packages/core/core/values.py")
    await wait_until(
        lambda: any(source == "mypy@packages/core" for source, _, _ in codes(client, project, "packages/core/core/values.py")),
        "the member's mypy findings",
    )
    found = codes(client, project, "packages/core/core/values.py")
    assert ("mypy@packages/core", "no-untyped-def", types.DiagnosticSeverity.Error) in found, found
    # The root's mypy leaves the member's files to the member's run.
    assert not any(source == "mypy" for source, _, _ in found), found


@pytest.mark.asyncio(loop_scope="function")
async def test_a_save_while_an_opened_file_is_checked_leaves_its_findings_shown(client, project):
    open_file(client, project, "app/shapes.py")
    await wait_until(lambda: progress_ended(client), "the first run")
    # A file the server has never checked, green for the last run (the run
    # after a save does not cover it).
    commit_legacy_with_a_known_finding(project)
    # Opened, it is checked; a save of another file comes while that check runs.
    open_file(client, project, "app/legacy.py")
    await asyncio.sleep(0.5)
    save(client, project, "app/shapes.py", SHAPES + "\n\n")
    await wait_until(lambda: codes(client, project, "app/legacy.py"), "the opened file's findings")
    assert codes(client, project, "app/legacy.py") == [("ruff_check", "F401", types.DiagnosticSeverity.Hint)]


@pytest.mark.asyncio(loop_scope="function")
async def test_a_gate_whose_tool_is_missing_is_a_warning_with_its_install_hint(client, project):
    await wait_until(lambda: progress_ended(client), "the first run")
    (project / ".st3").mkdir(exist_ok=True)
    (project / ".st3" / "quality.yaml").write_text(
        textwrap.dedent(
            """\
            version: "1"
            active_gates: [ghost]
            gates:
              ghost:
                execution:
                  command: ["qg-no-such-tool"]
                install_hint: "pip install qg-no-such-tool"
                parsing:
                  strategy: exit_code
            """
        )
    )
    trust(project)
    save(client, project, "app/shapes.py", SHAPES + "\n")
    await wait_until(
        lambda: any(m.type == types.MessageType.Warning and "ghost" in m.message for m in client.messages),
        "the gate's warning",
    )
    warning = next(m for m in client.messages if m.type == types.MessageType.Warning and "ghost" in m.message)
    assert "qg-no-such-tool" in warning.message and "pip install qg-no-such-tool" in warning.message, warning
    # Shown once, not on every save.
    ended = len(progress_ended(client))
    save(client, project, "app/shapes.py", SHAPES + "\n\n", version=3)
    await wait_until(lambda: len(progress_ended(client)) > ended, "the second run")
    assert sum(m.type == types.MessageType.Warning for m in client.messages) == 1, client.messages


# A src layout installed editable (what `uv init --lib` then `uv sync`
# makes), typed (py.typed): the shape whose warm pyright once resolved the
# package through site-packages, as a library — a private import in the
# test reported, a return type not inferred. The editor must show the
# tools' own truth with the daemons answering.
CORE = '''\
"""Core."""


def twice(number: int) -> int:
    """Twice the number."""
    return number * 2


def limit():
    """Unannotated: pyright infers its return type from the body."""
    return 3
'''

USE = '''\
"""Use."""

from mypkg.core import limit, twice


def doubled_limit() -> int:
    """Twice the limit."""
    return twice(limit())
'''

TEST_USE = '''\
"""Tests."""

from mypkg.use import twice


def test_twice() -> None:
    """Twice."""
    assert twice(2) == 4
'''


def editable_venv(root):
    """The project's virtualenv: the package's src/ on sys.path through a
    .pth file, as an editable install writes it, and the tools in it."""
    venv = root / ".venv"
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python*/site-packages")
    (tools_site,) = pathlib.Path(VENV).glob("lib/python*/site-packages")
    (site / "_tools.pth").write_text(f"{tools_site}\n")
    (site / "_mypkg.pth").write_text(f"{root / 'src'}\n")
    for name, module in [("mypy", "mypy"), ("dmypy", "mypy.dmypy")]:
        script = venv / "bin" / name
        script.write_text(f'#!/bin/sh\nexec {venv / "bin" / "python"} -m {module} "$@"\n')
        script.chmod(0o755)
    for name in ["ruff", "pyright", "pyright-langserver"]:
        os.symlink(pathlib.Path(VENV) / "bin" / name, venv / "bin" / name)


@pytest.fixture
def src_project(tmp_path):
    root = (tmp_path / "srcproj").resolve()
    package = root / "src" / "mypkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""My package."""\n')
    (package / "py.typed").write_text("")
    (package / "core.py").write_text(CORE)
    (package / "use.py").write_text(USE)
    (root / "tests").mkdir()
    (root / "tests" / "test_use.py").write_text(TEST_USE)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [project]
            name = "mypkg"
            version = "0"

            [tool.ruff.lint]
            select = ["E", "F", "I"]

            [tool.mypy]
            files = ["src", "tests"]
            """
        )
    )
    editable_venv(root)
    (root / ".gitignore").write_text(".venv\n.st3/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[QG, "lsp", "--start-daemons"], server_env=server_env()))
async def daemon_client(lsp_client: LanguageClient, src_project):
    lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=src_project.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=src_project.as_uri(), name="srcproj")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def daemons(project):
    out = subprocess.run(
        [QG, "daemon", "status", "--format", "json"], cwd=project, check=True, capture_output=True, env=server_env()
    )
    return {d["gate"]: d for d in json.loads(out.stdout)["daemons"]}


def warm_checks(project):
    """How many checks each ready daemon has answered (None: not ready)."""
    return {
        gate: d["status"]["checks"] if d["state"] == "ready" and d["current"] else None
        for gate, d in daemons(project).items()
    }


def pyright_own(project):
    """What the project's own `pyright` says: (file, line, rule)."""
    env = server_env()
    env["VIRTUAL_ENV"] = str(project / ".venv")
    env["PATH"] = f"{project / '.venv' / 'bin'}:{env['PATH']}"
    out = subprocess.run(["pyright", "--outputjson"], check=False, cwd=project, capture_output=True, env=env)
    return sorted(
        (str(pathlib.Path(d["file"]).relative_to(project)), d["range"]["start"]["line"], d.get("rule", ""))
        for d in json.loads(out.stdout)["generalDiagnostics"]
    )


def shown(client, project, source):
    """What the editor shows from one gate: (file, line, code)."""
    return sorted(
        (str(pathlib.Path(u.removeprefix("file://")).relative_to(project)), d.range.start.line, str(d.code))
        for u, ds in client.diagnostics.items()
        for d in ds
        if d.source == source
    )


@pytest.mark.asyncio(loop_scope="function")
async def test_a_src_layout_installed_editable_shows_the_tools_own_truth_with_warm_daemons(daemon_client, src_project):
    client, project = daemon_client, src_project
    open_file(client, project, "tests/test_use.py")
    await wait_until(lambda: checked_after(client, 0), "the first run")
    # Each daemon compares its first answers with a cold run's before it
    # serves: an untrusted one means the warm settings differ from the CLI's.
    settled = {"ready", "untrusted", "failed"}
    await wait_until(lambda: all(d["state"] in settled for d in daemons(project).values()), "the daemons' self-check")
    assert all(d["state"] == "ready" for d in daemons(project).values()), daemons(project)
    before = warm_checks(project)
    assert set(before) == {"mypy", "pyright"}, before
    # A harmless helper in the test: the private-import finding a library
    # view of the package would add must not appear.
    mark = len(runs(client))
    save(client, project, "tests/test_use.py", TEST_USE + '\n\ndef helper() -> int:\n    """One."""\n    return 1\n')
    await wait_until(lambda: checked_after(client, mark), "the run after the save")
    assert codes(client, project, "tests/test_use.py") == []
    after = warm_checks(project)
    assert after["pyright"] > before["pyright"] and after["mypy"] > before["mypy"], (before, after)
    # A signature change breaks the unopened importer: shown there, as the
    # project's own pyright says it.
    mark = len(runs(client))
    # A size of its own: mypy (its cache, and dmypy's file watcher) takes a
    # file edited within the same second at the same size for unchanged, as
    # the user's own mypy does (README, "Warm type checkers").
    save(client, project, "src/mypkg/core.py", CORE.replace('-> int:\n    """Twice', '-> bytes:\n    """Twice'))
    await wait_until(lambda: checked_after(client, mark), "the run after the signature change")
    own = pyright_own(project)
    assert own, "the project's pyright found nothing to compare"
    assert shown(client, project, "pyright") == own
    assert ("src/mypkg/use.py", 7, "return-value") in shown(client, project, "mypy"), shown(client, project, "mypy")
    final = warm_checks(project)
    assert final["pyright"] > after["pyright"], (after, final)
    # Reverted: cleared everywhere, as the project's pyright says.
    mark = len(runs(client))
    save(client, project, "src/mypkg/core.py", CORE, version=3)
    await wait_until(lambda: checked_after(client, mark), "the run after the revert")
    assert pyright_own(project) == []
    assert shown(client, project, "pyright") == [] and shown(client, project, "mypy") == []


# Workspace trust: a cloned repository whose gate would create a file.

HOSTILE = """\
version: "1"
active_gates: [lint]
gates:
  lint:
    execution:
      command: ["{python}", "-c", "import pathlib; pathlib.Path('{marker}').touch(); print('[]')"]
    parsing:
      strategy: json_violations
      violations_path: "/"
      field_map: {{file: file, line: line, code: code, message: message}}
"""


def hostile(project, marker):
    (project / ".st3").mkdir(exist_ok=True)
    (project / ".st3" / "quality.yaml").write_text(HOSTILE.format(python=f"{VENV}/bin/python", marker=marker))


@pytest.fixture
def clone(tmp_path):
    """A cloned repository with a hostile gate, committed, never trusted —
    or trusted once and changed by a pull since: an earlier editor session
    left a finding of `app/shapes.py`'s current content in its store."""
    root = tmp_path / "clone"
    root.mkdir()
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text('"""App."""\n')
    (root / "app" / "shapes.py").write_text(SHAPES)
    hostile(root, tmp_path / "ran")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "cloned")
    blob = subprocess.run(
        ["git", "hash-object", "app/shapes.py"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()
    stored = {"file": "app/shapes.py", "line": 4, "column": 1, "code": "X1", "message": "stored", "severity": "error"}
    store = {"files": {"app/shapes.py": {"blob": blob, "gates": {"lint": {"columns": "utf-16", "violations": [stored]}}}}}
    (root / ".st3" / "lsp-findings.json").write_text(json.dumps(store))
    return root.resolve()


class Published(dict):
    """`client.diagnostics` (the last publication per URI) that also keeps
    every non-empty one: a finding shown and cleared a moment later was
    still shown."""

    def __init__(self):
        super().__init__()
        self.ever = []

    def __setitem__(self, uri, diagnostics):
        if diagnostics:
            self.ever.append((uri, diagnostics))
        super().__setitem__(uri, diagnostics)


class Answers:
    """Answers every window/showMessageRequest with the action `title`
    (None: dismissed), recording each request in `asked`."""

    def __init__(self, lsp_client, title):
        self.asked = []
        self.title = title

        def answer(params):
            self.asked.append(params)
            return types.MessageActionItem(title=self.title) if self.title else None

        lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(answer)


async def start(lsp_client, root):
    lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="clone")],
    )
    await lsp_client.initialize_session(params)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[QG, "lsp"], server_env=server_env()))
async def dismissing_client(lsp_client: LanguageClient, clone):
    lsp_client.answers = Answers(lsp_client, None)
    lsp_client.diagnostics = Published()
    await start(lsp_client, clone)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[QG, "lsp"], server_env=server_env()))
async def trusting_client(lsp_client: LanguageClient, clone):
    lsp_client.answers = Answers(lsp_client, "Trust")
    await start(lsp_client, clone)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_an_untrusted_clone_runs_nothing_and_asks_once(dismissing_client, clone):
    client = dismissing_client
    asked = client.answers.asked
    marker = clone.parent / "ran"
    open_file(client, clone, "app/shapes.py")
    await wait_until(lambda: asked, "the question")
    assert "qg runs nothing here until you trust it" in asked[0].message, asked
    assert [a.title for a in asked[0].actions] == ["Trust", "Not now"]
    # Dismissed: saves run nothing, and nobody is asked again.
    save(client, clone, "app/shapes.py", SHAPES + "\n")
    save(client, clone, "app/shapes.py", SHAPES, version=3)
    await asyncio.sleep(2)
    assert not marker.exists(), "an untrusted gate ran"
    assert not progress_begun(client), "a run started"
    assert len(asked) == 1, asked
    # Not even what an earlier session stored (the Editors page's promise).
    assert not client.diagnostics.ever, client.diagnostics.ever
    # Trusted from the command line: the next save runs the gate.
    trust(clone)
    save(client, clone, "app/shapes.py", SHAPES + "\n", version=4)
    await wait_until(lambda: marker.exists(), "the trusted gate's run")


@pytest.mark.asyncio(loop_scope="function")
async def test_the_trust_action_runs_the_gates_and_a_changed_command_asks_again(trusting_client, clone):
    client = trusting_client
    asked = client.answers.asked
    marker = clone.parent / "ran"
    open_file(client, clone, "app/shapes.py")
    await wait_until(lambda: marker.exists(), "the gate's run after the Trust action")
    assert len(asked) == 1, asked
    assert any("qg: trusted" in m.message for m in client.messages), client.messages
    # A pull changes the gate's command: nothing runs until trusted again.
    other = clone.parent / "ran-again"
    hostile(clone, other)
    asked.clear()
    client.answers.title = None
    save(client, clone, "app/shapes.py", SHAPES + "\n")
    await wait_until(lambda: asked, "the second question")
    assert "changed since it was trusted" in asked[0].message, asked
    await asyncio.sleep(1)
    assert not other.exists(), "a changed gate ran without trust"
