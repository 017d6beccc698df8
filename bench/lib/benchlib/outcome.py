"""The end of a run: its report, docs/performance.md, and bench/run's exit status.

A full run is judged twice: by the checks (checks.py: numbers for every tool, no overlap, no failed
run, waiters that waited), which hold on any machine, and by the targets (targets.py), which say
whether redlockrun is as fast as it should be. Either failing fails the run; the targets can be
left unenforced for exploring. docs/performance.md only ever receives a report that passed both.
"""
import shutil
from pathlib import Path

from . import checks, report, targets

PROBLEMS = 1  # a check failed: the run's numbers cannot be trusted
MISSED_TARGETS = 3  # the run was sound, but redlockrun missed a target


def conclude(results: dict, tools: list, output: Path, docs: Path, log,
             enforce_targets: bool = True) -> int:
    """Writes the report to `output`, and copies it to `docs` (None: no copy) if the run is clean;
    returns bench/run's exit status. A smoke run judges no target, so it misses none."""
    found = checks.problems(results, tools)
    missed = targets.failed(results)
    output.write_text(report.render(results) + "\n")
    for target in missed:
        log(f"MISSED TARGET: {target}")
    for problem in found:
        log(f"PROBLEM: {problem}")
    if docs:
        if found or missed:
            log(f"{docs} left as it was: this run has {len(found)} problems and missed "
                f"{len(missed)} targets")
        else:
            docs.parent.mkdir(exist_ok=True)
            shutil.copyfile(output, docs)
            log(f"updated {docs}")
    if found:
        return PROBLEMS
    if missed and enforce_targets:
        return MISSED_TARGETS
    return 0
