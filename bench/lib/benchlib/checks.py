"""What a run must show, whatever the machine's speed: every figure that ran has numbers for every
tool (or, in figure 9, every set-up) that ran, and figures 1 to 3 for the sections of a script that
such a tool locks (--hold and --release, flock -u); redlockrun never let two holders overlap (nor,
with --limit N, more than N; with -s, a writer's section overlap any other, or more readers than
the cap hold at once) nor failed a run, a hold's included; figure 3's mixed rows (a section
released to a waiting plain run) neither, and each had in every repeat at least one handoff of the
kind its gaps are taken over; figure 4's idle waiters were waiting (running, and blocked in BLPOP if
they block) at both ends of their window; and figure 7 read redlockrun's peak RSS after it had
renewed. redlockrun against the other servers (other_servers.py) is held to the same in the
figures it runs in, 1 and 3 at its counted N: numbers, no overlap, no failed run. No timing
threshold here: those are the targets
(targets.py), judged in a full run only, while these checks hold on any machine and in a smoke run
too."""
import math

from .builds import DEB
from .floor import LIBRARY_NAME as LIBRARY_FLOOR
from .floor import METRICS_NAME as METRICS_FLOOR
from .floor import NAME as FLOOR
from .figures.uncontended import METRICS_ROW
from .peers import HOLD, MIXED, SECTION_OF

REDLOCKRUN = "redlockrun"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _sections(names: list) -> list:
    """The sections of a script (peers.section_tools()) whose tool ran."""
    return [section for section, tool in SECTION_OF.items() if tool in names]


def _mixed(names: list) -> list:
    """Figure 3's mixed rows (peers.mixes()) whose plain tool ran (its section runs where it
    does)."""
    return [mixed for mixed, (_, tool) in MIXED.items() if tool in names]


def _server_rows(results: dict) -> list:
    """The rows of redlockrun against other servers that bench/run started (other_servers.py)."""
    return list(results.get("server_rows") or {})


def _numbers(results: dict, tools: list) -> list:
    """(figure, value, what) for every number the report needs from the figures that ran."""
    names = [tool.name for tool in tools]
    sections = _sections(names)
    server_rows = _server_rows(results)
    wanted = []
    if "uncontended" in results:
        rows = results["uncontended"]["rows"]
        extra = [name for name in rows if name in (FLOOR, LIBRARY_FLOOR, METRICS_FLOOR) or
                 name.startswith(REDLOCKRUN + " (") and name not in server_rows]
        if REDLOCKRUN in names:
            extra.append(METRICS_ROW)
        wanted += [("figure 1", rows.get(n, {}).get("median_ms"), n)
                   for n in names + sections + server_rows + extra + ["plain true"]]
    if "round_trips" in results:
        rows = results["round_trips"]["rows"]
        if HOLD in sections:
            row = rows.get(HOLD, {})
            wanted.append(("figure 2", row.get("waited_round_trips"),
                           f"{HOLD}'s waited round trips"))
            wanted.append(("figure 2", row.get("requests_per_run"), f"{HOLD}'s requests"))
        for tool in tools:
            if tool.server != "local":
                row = rows.get(tool.name, {})
                wanted.append(("figure 2", row.get("waited_round_trips"),
                               f"{tool.name}'s waited round trips"))
            if tool.server == "redis":
                wanted.append(("figure 2", row.get("requests_per_run"), f"{tool.name}'s requests"))
    if "handoff" in results:
        counted_at = str(results["handoff"].get("counted_at"))
        for contenders, block in results["handoff"]["by_contenders"].items():
            counted = sections + _mixed(names) + server_rows if contenders == counted_at else []
            for name in names + counted:
                row = block["rows"].get(name, {})
                wanted.append(("figure 3", row.get("total_s"), f"{name} at N = {contenders}"))
                wanted.append(("figure 3", row.get("gap_median_ms"),
                               f"{name}'s gap at N = {contenders}"))
    if "load" in results:
        for tool in tools:
            if tool.server == "redis":
                wanted.append(("figure 4", results["load"]["contended"]["rows"].get(tool.name, {})
                               .get("requests_per_acquisition"), f"{tool.name} under contention"))
                wanted.append(("figure 4", results["load"]["idle"].get(tool.name, {})
                               .get("requests_per_second"), f"{tool.name}'s idle waiters"))
    if "fairness" in results:
        wanted += [("figure 5", results["fairness"]["rows"].get(n, {}).get("min_over_max"), n)
                   for n in names]
    if "scale" in results:
        for name, cells in results["scale"]["rows"].items():
            for waiters, cell in cells.items():
                wanted.append(("figure 6", cell.get("gap_median_ms"),
                               f"{name}'s gap with {waiters} waiters"))
        largest = str(max(results["scale"]["waiters"]))
        wanted.append(("figure 6", results["scale"]["rows"].get(REDLOCKRUN, {}).get(largest, {})
                       .get("requests_per_acquisition"), "redlockrun's requests at the largest W"))
        if REDLOCKRUN in results["scale"]["rows"]:
            superseding = results["scale"].get("superseding") or {}
            wanted += [("figure 6", superseding.get(str(w), {}).get("requests_per_run"),
                        f"redlockrun --supersede's requests with {w} runs")
                       for w in results["scale"]["waiters"]]
    if "memory" in results:
        wanted += [("figure 7", results["memory"]["rows"].get(n, {}).get("peak_rss_mib"), n)
                   for n in names]
    if "semaphore" in results:
        figure = results["semaphore"]
        for name, row in figure["rows"].items():
            for key, what in (("total_s", "total time"), ("gap_median_ms", "gap"),
                              ("requests_per_acquisition", "requests per acquisition")):
                wanted.append(("figure 8", row.get(key), f"{name}'s {what}"))
        for waiters, cell in figure["bursts"].items():
            wanted.append(("figure 8", cell.get("gap_median_ms"),
                           f"the gap with {waiters} waiters"))
            wanted.append(("figure 8", cell.get("requests_per_acquisition"),
                           f"requests per acquisition with {waiters} waiters"))
    if "shared" in results:
        figure = results["shared"]
        loop = figure["loop"]
        for key, what in (("total_s", "total time"), ("gap_median_ms", "gap"),
                          ("requests_per_acquisition", "requests per acquisition")):
            wanted.append(("figure 10", loop.get(key), f"readers and writers' {what}"))
        wanted.append(("figure 10", figure["batch"].get("spread_median_ms"),
                       f"the spread of {figure['batch']['waiters']} shared waiters' starts"))
        for waiters, cell in figure["bursts"].items():
            wanted.append(("figure 10", cell.get("requests_per_acquisition"),
                           f"requests per acquisition with {waiters} shared waiters"))
    if "high_availability" in results:
        for name, row in results["high_availability"]["rows"].items():
            wanted.append(("figure 9", row.get("waited_round_trips"),
                           f"{name}: waited round trips"))
            wanted.append(("figure 9", row.get("requests_per_run"), f"{name}: requests"))
    return wanted


def _mixed_problems(results: dict, tools: list) -> list:
    """Figure 3's mixed rows, where the tool it uses ran: no two holders at once and no failed run
    (of either kind: flock(1)'s two forms must lock the same file, or its yardstick measures
    nothing), and in every repeat at least one handoff of the kind its gaps are taken over (else
    its median is of nothing, or of a few repeats only)."""
    handoff = results.get("handoff")
    if not handoff:
        return []
    counted_at = str(handoff.get("counted_at"))
    rows = handoff["by_contenders"].get(counted_at, {}).get("rows", {})
    found = []
    for name in _mixed([tool.name for tool in tools]):
        row = rows.get(name)
        if row is None:
            continue  # _numbers() names it
        what = f"figure 3: {name} at N = {counted_at}"
        if row.get("overlaps"):
            found.append(f"{what}: two holders overlapped ({row['overlaps']} times)")
        if row.get("failures"):
            found.append(f"{what}: {row['failures']} runs failed; see the error log")
        per_repeat = row.get("repeat_handoffs") or []
        repeats = handoff.get("repeats", len(per_repeat))
        if len(per_repeat) < repeats or not all(per_repeat):
            found.append(f"{what}: handoffs of the kind measured per repeat: "
                         f"{per_repeat or 'none'}; every one of the {repeats} repeats needs one")
    return found


def _redlockrun_runs(results: dict) -> list:
    """(name, run) for each contended run of redlockrun: a plain one's, a hold's, or one against
    another server."""
    runs = []
    if "handoff" in results:
        runs += [(name, block["rows"].get(name, {}))
                 for block in results["handoff"]["by_contenders"].values()
                 for name in (REDLOCKRUN, HOLD, *_server_rows(results))]
    if "fairness" in results:
        runs.append((REDLOCKRUN, results["fairness"]["rows"].get(REDLOCKRUN, {})))
    if "scale" in results:
        runs += [(REDLOCKRUN, run)
                 for run in results["scale"]["rows"].get(REDLOCKRUN, {}).values()]
    return runs


def _semaphore_problems(figure) -> list:
    """Figure 8's runs: never more holders at once than the limit, and no failed run."""
    if not figure:
        return []
    runs = [(f"{name}, {figure['contenders']} contenders", row)
            for name, row in figure["rows"].items()]
    runs += [(f"{figure['semaphore']}, {waiters} waiters", cell)
             for waiters, cell in figure["bursts"].items()]
    found = []
    for what, run in runs:
        limit = run.get("limit", figure["limit"])
        peak = max(run.get("peak_holders", 0), run.get("counted_peak_holders", 0))
        over = run.get("over_limit", 0) + run.get("counted_over_limit", 0)
        failures = run.get("failures", 0) + run.get("counted_failures", 0)
        if peak > limit or over:
            found.append(f"figure 8: {what}: {peak} holders at once, more than {limit} "
                         f"({over} times)")
        if failures:
            found.append(f"figure 8: {what}: {failures} runs failed; see the error log")
    return found


def _shared_problems(figure) -> list:
    """Figure 10's runs: no writer's section overlapped any other (readers overlap only readers),
    never more readers at once than the cap, and no failed run."""
    if not figure:
        return []
    runs = [(f"{figure['readers']} readers and {figure['writers']} writers", figure["loop"]),
            (f"batches of {figure['batch']['waiters']} shared waiters", figure["batch"])]
    runs += [(f"{waiters} shared waiters", cell) for waiters, cell in figure["bursts"].items()]
    found = []
    for what, run in runs:
        overlaps = run.get("mode_overlaps", 0) + run.get("counted_mode_overlaps", 0)
        peak = max(run.get("peak_shared", 0), run.get("counted_peak_shared", 0))
        failures = run.get("failures", 0) + run.get("counted_failures", 0)
        if overlaps:
            found.append(f"figure 10: {what}: {overlaps} exclusive sections overlapped another "
                         "section")
        if peak > figure["cap"]:
            found.append(f"figure 10: {what}: {peak} shared holders at once, more than the cap "
                         f"of {figure['cap']}")
        if failures:
            found.append(f"figure 10: {what}: {failures} runs failed; see the error log")
    return found


def _idle_problems(figure) -> list:
    """Figure 4's idle rows measure waiters only if they were waiting: still running at the
    window's start and end, and blocked in BLPOP there if the tool waits by blocking."""
    found = []
    for name, row in (figure or {}).get("idle", {}).items():
        waiters = row["waiters"]
        for edge in ("start", "end"):
            seen = row.get(f"waiting_at_{edge}") or {}
            if seen.get("alive") != waiters:
                found.append(f"figure 4: {name}: {seen.get('alive')} of {waiters} idle waiters "
                             f"still running at the window's {edge}; see the error log")
            if seen.get("blocked") is not None and seen["blocked"] != waiters:
                found.append(f"figure 4: {name}: {seen['blocked']} clients blocked in BLPOP at "
                             f"the window's {edge}, for {waiters} idle waiters")
    return found


def superseding_problems(waiters: int, cell: dict) -> list:
    """What went wrong in a --supersede burst of `waiters` runs: each but the last superseded, the
    holder's and the last one's sections run, one after the other, and nothing else."""
    problems = []
    if cell.get("superseded") != waiters - 1:
        problems.append(f"{cell.get('superseded')} of {waiters - 1} runs superseded")
    if cell.get("ran") != 2:
        problems.append(f"{cell.get('ran')} sections run, not 2 (the holder's and the newest's)")
    for name in ("failures", "overlaps"):
        if cell.get(name):
            problems.append(f"{cell[name]} {name}")
    if cell.get("timed_out"):
        problems.append("timed out")
    return problems

def _memory_problems(figure) -> list:
    """Figure 7 reads the peak RSS after renewals: a redlockrun run that renewed nothing read it
    too early to say what renewing costs."""
    row = (figure or {}).get("rows", {}).get(REDLOCKRUN)
    if row and row.get("renewals_fewest") is not None and row["renewals_fewest"] < 1:
        return [f"figure 7: a redlockrun run renewed its lock {row['renewals_fewest']} times "
                "before its command read the peak RSS"]
    return []


def problems(results: dict, tools: list) -> list:
    found = [f"{figure}: no number for {what}"
             for figure, value, what in _numbers(results, tools) if not _is_number(value)]
    # Correctness, not speed: redlockrun must exclude, and must not fail.
    for name, run in _redlockrun_runs(results):
        overlaps = run.get("overlaps", 0) + run.get("counted_overlaps", 0)
        failures = run.get("failures", 0) + run.get("counted_failures", 0)
        if overlaps:
            found.append(f"{name} let two holders overlap ({overlaps} times)")
        if failures:
            found.append(f"{name} runs failed ({failures}); see the error log")
    found += _mixed_problems(results, tools)
    found += _semaphore_problems(results.get("semaphore"))
    found += _shared_problems(results.get("shared"))
    found += _idle_problems(results.get("load"))
    found += _memory_problems(results.get("memory"))
    found += [f"figure 6: redlockrun --supersede with {w} runs: {problem}"
              for w, cell in results.get("scale", {}).get("superseding", {}).items()
              for problem in superseding_problems(int(w), cell)]
    for name, row in results.get("high_availability", {}).get("rows", {}).items():
        if row.get("failures"):
            found.append(f"figure 9: {name}: {row['failures']} of {row['runs']} runs failed; "
                         "see the error log")
    # A failed run is quick: figure 1's medians would flatter whichever of these failed (and the
    # .deb's cost beyond the floors, which is judged, with it).
    for name in (REDLOCKRUN, HOLD, DEB, FLOOR, *_server_rows(results)):
        failures = results.get("uncontended", {}).get("rows", {}).get(name, {}).get("failures", 0)
        if failures:
            found.append(f"figure 1: {name} failed {failures} runs; see the error log")
    return found
