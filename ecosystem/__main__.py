"""python -m ecosystem [PROJECT...] [--edits N] [--sample] [--update] [--self-test] [--differential N] [--page-only]"""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import corpus, differential, loop, report


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/ecosystem.sh", description=__doc__)
    parser.add_argument("projects", nargs="*", help="projects of corpus.toml (default: all)")
    parser.add_argument("--edits", type=int, default=5, help="seeded random edits per project (default 5)")
    parser.add_argument("--sample", action="store_true", help="only the projects tagged `sample` (CI's run)")
    parser.add_argument("--results", default=None, help="results file (default: ecosystem/results.json for a full run)")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check the harness: qg with every gate's importers off must show a difference on the (first) project",
    )
    parser.add_argument(
        "--differential",
        type=int,
        metavar="N",
        help="N generated edits per project, each checked with interface-aware importers off and on (same verdict)",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="put the named projects' results into ecosystem/results.json (replacing theirs) and rewrite the page",
    )
    parser.add_argument(
        "--no-interface-aware",
        action="store_true",
        help="run qg with interface_aware_importers: false (every importer of every change checked; the default leaves out those of a body-only edit)",
    )
    parser.add_argument("--page-only", action="store_true", help="only write the book page from the results file")
    args = parser.parse_args()
    if args.page_only:
        report.write_page(report.load(args.results))
        return 0
    projects = corpus.load(args.projects)
    if args.sample:
        projects = [p for p in projects if "sample" in p.tags]
    if args.differential:
        return differential_check(projects, args.differential)
    if args.self_test:
        return self_test(projects[0], args.edits)
    full = not args.projects and not args.sample
    started, commit = time.time(), report.head_commit()
    results = []
    for project in projects:
        log(f"== {project.name} ({project.sdist})")
        results.append(loop.Check(project, log, interface_aware=not args.no_interface_aware).run(args.edits))
    run = report.Run(results, started, args.edits, full, commit)
    problems = report.summarize(run, projects, log)
    if args.update:
        report.update(run)
    else:
        report.save(run, args.results or (report.RESULTS if full else None))
    if full or args.update:
        report.write_page(report.load(None))
    return 1 if problems else 0


def self_test(project, edits: int) -> int:
    """The harness must see a qg that misses an importer's new error."""
    log(f"== self-test on {project.name}: every gate's importers off")
    result = loop.Check(project, log, sabotage=True).run(edits)
    found = report.differences(result)
    for difference in found:
        log(f"  caught: {difference}")
    if any("missed" in d for d in found):
        log("ecosystem: self-test passed: the harness caught the importers that were not checked")
        return 0
    log("ecosystem: SELF-TEST FAILED: qg without importers looked equal to the tools' own runs")
    return 1


def differential_check(projects, count: int) -> int:
    """Interface-aware importers against the full walk; writes
    ecosystem/differential.json."""
    tallies = []
    for project in projects:
        log(f"== {project.name}: {count} edits, interface-aware importers off and on")
        try:
            tallies.append(differential.run(project, count, log))
        except Exception as failed:  # noqa: BLE001 - recorded; the next project goes on
            log(f"{project.name}: FAILED: {failed}")
            tallies.append({"name": project.name, "edits": 0, "failure": str(failed), "differences": [str(failed)]})
    # Merged by project into the last runs' file: one project can be run again alone.
    path = report.RESULTS.parent / "differential.json"
    kept = json.loads(path.read_text()) if path.exists() else []
    names = {t["name"] for t in tallies}
    path.write_text(json.dumps([t for t in kept if t["name"] not in names] + tallies, indent=1) + "\n")
    differences = sum(len(t["differences"]) for t in tallies)
    edits = sum(t["edits"] for t in tallies)
    log(f"ecosystem: {edits} edits on {len(tallies)} projects, {differences} verdicts differed")
    return 1 if differences else 0


def log(line: str):
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
