"""One project's check, from set-up to the last edit: the tools' own verdict
and qg's, cold and warm, on the whole project, then the TDD loop."""

from __future__ import annotations

import random
import time
import traceback
from collections import Counter

from . import corpus, edits, findings, own, qgrun, shell
from .corpus import Project


class FirstMiss(Exception):
    """A self-test's qg (importers off) missed a finding: the harness saw
    it, and the steps left could only show it again."""


class Check:
    """Everything one project's check found, ready for the results file."""

    def __init__(self, project: Project, log, sabotage: bool = False, interface_aware: bool = True):
        self.project = project
        self.sabotage = sabotage
        self.interface_aware = interface_aware
        self.log = log
        self.result = {
            "name": project.name,
            "sdist": project.sdist,
            "manager": project.manager,
            "tags": project.tags,
            "source": project.source,
            "commands": project.commands,
            "interface_aware": interface_aware,
            "parity": {},
            "steps": [],
            "leftovers": [],
            "times": {},
        }
        self.verdicts: dict[str, own.Verdict] = {}

    # ------------------------------------------------------------ helpers

    def own_verdict(self) -> own.Verdict:
        """The tools' own verdict on the tree as it is now (one run per
        distinct tree: a revert costs nothing)."""
        tree = shell.tree_of_worktree(self.project.root)
        if tree not in self.verdicts:
            self.verdicts[tree] = own.run(self.project)
        return self.verdicts[tree]

    def parity(self, label: str, reference: own.Verdict, report: dict, seconds: float):
        """qg's whole-project findings against the tools' own, gate by gate."""
        ours = findings.qg(report, new_only=False)
        per_gate = {}
        for gate in self.project.commands:
            gate = own.GATES[gate]
            theirs = [f for f in reference.findings if f.gate == gate]
            mine = [f for f in ours if f.gate == gate]
            status = _status(report, gate)
            # Both stopped: there is no verdict to compare, only the stop.
            if status == "error" and gate in reference.errors:
                theirs = mine = []
            only_own, only_qg = findings.same(theirs, mine)
            per_gate[gate] = {
                "own": len(theirs),
                "qg": len(mine),
                "status": status,
                "own_error": reference.errors.get(gate, ""),
                "only_own": [f.show() for f in only_own[:20]],
                "only_qg": [f.show() for f in only_qg[:20]],
                "equal": not only_own and not only_qg and (status == "error") == (gate in reference.errors),
            }
        self.result["parity"][label] = {"gates": per_gate, "seconds": round(seconds, 2)}

    def step(self, kind: str, what: str, after: own.Verdict | None, renamed: dict | None = None):
        """qg's auto scope cold, then warm, against the tools' own verdict
        `after` the edit (None: the tree is as committed, nothing new). A gate
        whose own run stopped (a plugin crashing on the edited code) must
        error in qg too; its findings are not compared."""
        errored = set(after.errors) if after else set()
        expected = Counter()
        if after:
            before = findings.moved_files(self.base.findings, renamed or {})
            expected = findings.difference([f for f in after.findings if f.gate not in errored], before)
        cold, cold_ran = qgrun.report(self.project, "--scope", "auto", "--no-daemon", "--no-state")
        warm, warm_ran = qgrun.report(self.project, "--scope", "auto")
        row = {
            "kind": kind,
            "what": what,
            "expected": sum(expected.values()),
            "own_errors": sorted(errored),
            "own_seconds": after.seconds if after else None,
        }
        for label, report, ran in (("cold", cold, cold_ran), ("warm", warm, warm_ran)):
            got = Counter(f.moved() for f in findings.qg(report, new_only=True) if f.gate not in errored)
            missing, extra = expected - got, got - expected
            errors = {_gate_of(g) for g in report.get("gates", []) if g["status"] == "error"}
            row[label] = {
                "ok": bool(report) and not missing and not extra and errors == errored,
                "seconds": round(ran.seconds, 2),
                "files": report.get("scope", {}).get("files_checked"),
                # `project` where auto fell back (a weaker check, and a
                # sign that the state was not what the loop expects).
                "mode": report.get("scope", {}).get("mode"),
                "missing": [_show(k) for k in sorted(missing.elements())][:10],
                "extra": [_show(k) for k in sorted(extra.elements())][:10],
                "errors": [f"{gate} errored in qg's {label} run, its own run did not" for gate in sorted(errors - errored)]
                + [f"{gate}'s own run stopped, qg's {label} run did not" for gate in sorted(errored - errors)]
                + ([] if report else [f"no report: exit {ran.code}: {ran.stderr.strip()[-300:]}"]),
            }
            if label == "warm":
                row["warm"]["answered_warm"] = [g["id"] for g in report.get("gates", []) if g.get("warm")]
        self.result["steps"].append(row)
        verdict = "ok" if row["cold"]["ok"] and row["warm"]["ok"] else "DIFFERENT"
        self.log(f"  {kind}: {what}: expected {row['expected']} new, {verdict}")
        for label in ("cold", "warm"):
            outcome = row[label]
            for what_kind in ("missing", "extra", "errors"):
                for item in outcome[what_kind][:5]:
                    self.log(f"    {label} {what_kind}: {item}")
        if self.sabotage and (row["cold"]["missing"] or row["warm"]["missing"]):
            raise FirstMiss

    def edit_and_check(self, kind: str, apply):
        """Applies an edit, checks it, reverts it, and checks the revert."""
        src = edits.Source(self.project.root, self.project.package)
        edit = apply(src)
        if edit is None:
            self.result["steps"].append({"kind": kind, "what": "no place for this edit", "skipped": True})
            return None
        self.step(edit.kind, edit.what, self.own_verdict(), edit.renamed)
        return edit

    def revert(self, label: str):
        shell.git(self.project.root, "reset", "-q", "--hard", "HEAD")
        shell.git(self.project.root, "clean", "-q", "-fd")
        self.step("revert", label, None)

    # ------------------------------------------------------------ phases

    def run(self, random_edits: int):
        try:
            self._run(random_edits)
        except FirstMiss:
            self.log(f"{self.project.name}: the self-test's first miss was seen; the loop stops there")
        except Exception as failed:  # noqa: BLE001 - recorded, and the next project goes on
            self.result["failure"] = f"{type(failed).__name__}: {failed}"
            self.log(f"{self.project.name}: FAILED: {failed}")
            self.log(traceback.format_exc())
        finally:
            qgrun.qg(self.project, "daemon", "stop")
            time.sleep(1)
            self.result["leftovers"] = qgrun.leftovers(self.project)
        return self.result

    def _run(self, random_edits: int):
        project, times = self.project, self.result["times"]
        started = time.perf_counter()
        corpus.setup(project, self.log)
        times["setup"] = round(time.perf_counter() - started, 1)
        qgrun.init(project, self.sabotage, self.interface_aware)
        shell.commit_all(project.root, "qg init, told the maintainers' commands")
        self.base = self.own_verdict()
        times["own"] = round(self.base.seconds, 2)
        self.log(f"{project.name}: the tools' own run: {len(self.base.findings)} findings, {self.base.seconds:.1f} s")
        cold, ran = qgrun.report(project, "--scope", "project", "--no-state", "--no-baseline", "--no-daemon")
        times["qg_cold"] = round(ran.seconds, 2)
        self.parity("cold", self.base, cold, ran.seconds)
        if project.loop == "none":
            # The whole-project comparison only: no baseline (a project whose
            # tool stops at once has none to write), no loop.
            self._warm_parity()
            return
        baseline = qgrun.qg(project, "baseline", "write")
        if baseline.code not in (0, 1):
            raise RuntimeError(f"qg baseline write exited {baseline.code}: {baseline.stderr.strip()[-300:]}")
        shell.commit_all(project.root, "qg baseline")
        # An auto run, green now that the baseline holds every finding: the
        # state's baseline commit moves only after auto runs, and the loop's
        # auto runs compare with it.
        green, ran = qgrun.report(project, "--no-daemon")
        self.result["green_after_baseline"] = green.get("overall_pass", False)
        if not self.result["green_after_baseline"]:
            raise RuntimeError(
                f"qg is not green with the baseline written: {green.get('summary_line', ran.stderr[-300:])}"
            )
        self._warm_parity()
        self._loop(random_edits if project.loop == "full" else 0)

    def _warm_parity(self):
        project, times = self.project, self.result["times"]
        started = qgrun.qg(project, "daemon", "start", timeout=900)
        times["daemon_start"] = round(started.seconds, 2)
        if started.code != 0:
            self.result["daemon_error"] = started.stderr.strip()[-400:]
        warm, ran = qgrun.report(project, "--scope", "project", "--no-state", "--no-baseline")
        times["qg_warm"] = round(ran.seconds, 2)
        self.parity("warm", self.base, warm, ran.seconds)
        self.result["parity"]["warm"]["answered_warm"] = [g["id"] for g in warm.get("gates", []) if g.get("warm")]
        # qg's own check of its warm answers: each warm gate also cold, a
        # difference a gate error.
        verified, ran = qgrun.report(project, "--scope", "project", "--no-state", "--no-baseline", "--verify")
        times["qg_verify"] = round(ran.seconds, 2)
        self.parity("verify", self.base, verified, ran.seconds)

    def _loop(self, random_edits: int):
        project = self.project
        self.log(f"{project.name}: the TDD loop")
        first = None
        for scripted in edits.SCRIPTED:
            edit = self.edit_and_check(scripted.__name__, scripted)
            if edit:
                first = first or edit
                self.revert(edit.kind)
        shaped = edits.SHAPED + ([edits.member_folder_added] if "workspace" in project.tags else [])
        for shape in shaped:
            if self.edit_and_check(shape.__name__, shape):
                self.revert(shape.__name__)
        self._stash()
        self._branch()
        rng = random.Random(f"qg-ecosystem/{project.name}")
        for _ in range(random_edits):
            if self.edit_and_check("random", lambda src: edits.random_edit(src, rng)):
                self.revert("random")

    def _stash(self):
        """An edit stashed (the tree is clean again) and popped (the edit is back)."""
        root = self.project.root
        if not self.edit_and_check("stash", edits.return_type):
            return
        expected = self.result["steps"][-1]["expected"]
        shell.git(root, "stash", "-q")
        self.step("stash", "the edit stashed", None)
        shell.git(root, "stash", "pop", "-q")
        self.step("stash", f"the edit popped ({expected} new)", self.own_verdict())
        self.revert("stash")

    def _branch(self):
        """An edit committed on a new branch, then back to main."""
        root = self.project.root
        shell.git(root, "checkout", "-q", "-b", "eco-side")
        edit = edits.param_removed(edits.Source(root, self.project.package))
        if edit is None:
            shell.git(root, "checkout", "-q", "main")
            shell.git(root, "branch", "-q", "-D", "eco-side")
            return
        shell.commit_all(root, "a side branch's edit")
        self.step("branch", f"on a new branch: {edit.what}", self.own_verdict())
        shell.git(root, "checkout", "-q", "main")
        self.step("branch", "back on main", None)
        shell.git(root, "branch", "-q", "-D", "eco-side")


def _gate_of(gate: dict) -> str:
    """The gate a result is a run of (a workspace member's run: its gate)."""
    return (gate.get("member") or {}).get("of", gate["id"])


def _status(report: dict, gate: str) -> str:
    statuses = [g["status"] for g in report.get("gates", []) if (g.get("member") or {}).get("of", g["id"]) == gate]
    for worst in ("error", "failed", "skipped", "passed"):
        if worst in statuses:
            return worst
    return "missing"


def _show(key: tuple) -> str:
    gate, file, code, message = key
    return f"{gate}: {file}: {message} [{code}]"
