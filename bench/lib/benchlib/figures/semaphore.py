"""Figure 8: redlockrun as a counting semaphore, `--limit N` (N = 2).

- Loop: C contenders (8) each loop M times over the critical section, as in figure 3, with
  `--limit N`, and beside them plain redlockrun (exclusive) in the same repeats, the gaps of both
  measured the same way. Total time (median over repeats), the handoff gap (median and p99, pooled
  over the repeats), acquisitions, and the most holders ever seen at once: never more than N.
- The gap of a semaphore: each holder's end frees a slot; freed slots are taken in the order they
  were freed, each by the next holder to start; a slot's gap runs from the end that freed it to the
  start that took it, and counts only if another contender was already waiting at that end (its
  run started, its command not yet). A slot that stood free because nobody wanted it is idle time,
  not a handoff. With N = 1 this is figure 3's gap, less the idle ones.
- Requests per acquisition in a separate counting run of the same loop (MONITOR slows Redis).
- Bursts: W waiters (200) queue behind N holders, which then let go; W + N acquisitions, the gaps,
  and requests per acquisition (every request of holders and waiters ÷ (W + N)) in a counted run.
"""
from ..contention import burst, looping
from ..critical_section import slot_handoffs
from ..peers import with_limit
from ..stats import median, percentile


def _mean_holders(records: list) -> float:
    """Holders at once on average, from the first start to the last end."""
    if not records:
        return None
    span = max(end for _, _, end in records) - min(start for _, start, _ in records)
    return sum(end - start for _, start, end in records) / span if span > 0 else None


def _summary(runs: list, limit: int) -> dict:
    handoffs = [slot_handoffs(run["records"], limit, run["launches"]) for run in runs]
    gaps = [gap for handoff in handoffs for gap in handoff["gaps_ms"]]
    return {
        "limit": limit,
        "total_s": median([run["seconds"] for run in runs]),
        "gap_median_ms": median(gaps),
        "gap_p99_ms": percentile(gaps, 0.99),
        "gaps": len(gaps),
        "acquisitions": sum(handoff["acquisitions"] for handoff in handoffs),
        "peak_holders": max((handoff["peak_holders"] for handoff in handoffs), default=0),
        "mean_holders": median([_mean_holders(run["records"]) for run in runs]),
        "over_limit": sum(handoff["over_limit"] for handoff in handoffs),
        "failures": sum(run["failures"] for run in runs),
        "timed_out": any(run["timed_out"] for run in runs),
    }


def _counted(bench, tool, contenders: int, iterations: int) -> dict:
    run = looping(bench, tool, contenders, iterations=iterations, count=True)
    handoff = slot_handoffs(run["records"], tool.limit, run["launches"])
    return {"requests_per_acquisition": run.get("requests_per_acquisition"),
            "script_commands_per_acquisition": run.get("script_commands_per_acquisition"),
            "counted_peak_holders": handoff["peak_holders"],
            "counted_over_limit": handoff["over_limit"], "counted_failures": run["failures"]}


def _burst(bench, tool, waiters: int) -> dict:
    result = burst(bench, tool, waiters)
    bench.log(f"  {tool.name}: {waiters} waiters, counting requests")
    counted = burst(bench, tool, waiters, count=True)  # in a run of its own, as in figure 6
    return {"gap_median_ms": median(result["gaps_ms"]),
            "gap_p99_ms": percentile(result["gaps_ms"], 0.99),
            "drain_s": result["drain_seconds"],
            "requests_per_acquisition": counted.get("requests_per_acquisition"),
            "script_commands_per_acquisition": counted.get("script_commands_per_acquisition"),
            "acquisitions": result["acquisitions"],
            "peak_holders": max(result["peak_holders"], counted["peak_holders"]),
            "over_limit": result["over_limit"] + counted["over_limit"],
            "failures": result["failures"] + counted["failures"],
            "timed_out": result["timed_out"] or counted["timed_out"]}


def run(bench) -> dict:
    settings = bench.settings
    exclusive = bench.tools[0]
    semaphore = with_limit(exclusive, settings.semaphore_limit)
    contenders, iterations = settings.semaphore_contenders, settings.semaphore_iterations
    tools = [semaphore, exclusive]
    runs = {tool.name: [] for tool in tools}
    for repeat in range(settings.handoff_repeats):
        for tool in tools:
            bench.log(f"  {tool.name}: {contenders} contenders x {iterations} (run {repeat + 1})")
            runs[tool.name].append(looping(bench, tool, contenders, iterations=iterations))
    rows = {}
    for tool in tools:
        rows[tool.name] = _summary(runs[tool.name], tool.limit)
        bench.log(f"  {tool.name}: {contenders} contenders, counting requests")
        rows[tool.name].update(_counted(bench, tool, contenders, iterations))
    bursts = {}
    for waiters in settings.semaphore_waiters:
        bench.log(f"  {semaphore.name}: {waiters} waiters")
        bursts[str(waiters)] = _burst(bench, semaphore, waiters)
    return {"limit": semaphore.limit, "semaphore": semaphore.name, "contenders": contenders,
            "iterations": iterations, "repeats": settings.handoff_repeats,
            "hold_us": settings.hold_us, "rows": rows, "bursts": bursts}
