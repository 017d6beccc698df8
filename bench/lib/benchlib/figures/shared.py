"""Figure 10: shared locks, redlockrun -s (flock(1)'s -s) beside exclusive runs of the same key.

- Readers and writers: R readers (6) loop with `redlockrun -s` and W writers (2) with plain
  `redlockrun`, all on one key, each M times over the critical section, as in figure 3. Total time
  (median over repeats), the handoff gap (median and p99, pooled over the repeats), acquisitions,
  the most readers at once, and the check: no writer's section overlapped any other section, so
  readers overlapped only readers.
- The gap of readers and writers (critical_section.mode_handoffs): a writer's section is a turn of
  its own, and the readers' sections between two writers' make one shared turn, from its first
  start to its last end. The lock changes hands where a turn ends: writer to writer, writer to
  readers, readers to writer. The gap runs from the moment the lock became free (the writer's end,
  or the last reader's) to the next turn's first start, and counts only if some contender was
  already waiting then. Readers following readers never hand the lock over: there is no gap there.
- Requests per acquisition in a separate counting run of the same loop (MONITOR slows Redis).
- Batch admission: B shared waiters (8) queue behind an exclusive holder, which then lets go; its
  one release lets them all in. The spread of their starts, first to last, per release; median
  over repeats.
- Bursts: 200 shared waiters queue behind an exclusive holder, which then lets go (at most 100
  share the lock at once, the cap: the rest wait for those to end); requests per acquisition (every
  request of the holder and the waiters ÷ (W + 1)) in a counted run, as in figure 6.
"""
from ..contention import burst, readers_and_writers
from ..critical_section import admission_spread
from ..peers import with_shared
from ..stats import median, percentile

# The most shared holders a key admits at once (the man page's "up to 100").
SHARED_CAP = 100
CHANGES = ("x→x", "x→s", "s→x")


def _mean_holders(records: list) -> float:
    """Sections running at once on average, from the first start to the last end."""
    if not records:
        return None
    span = max(end for _, _, end in records) - min(start for _, start, _ in records)
    return sum(end - start for _, start, end in records) / span if span > 0 else None


def _loop_summary(runs: list) -> dict:
    gaps = [gap for run in runs for gap in run["gaps_ms"]]
    by_change = {change: [gap for run in runs for gap, seen in zip(run["gaps_ms"], run["changes"])
                          if seen == change] for change in CHANGES}
    return {
        "total_s": median([run["seconds"] for run in runs]),
        "gap_median_ms": median(gaps),
        "gap_p99_ms": percentile(gaps, 0.99),
        "gaps": len(gaps),
        "gaps_by_change": {change: len(found) for change, found in by_change.items()},
        "gap_median_by_change_ms": {change: median(found) for change, found in by_change.items()},
        "acquisitions": sum(run["acquisitions"] for run in runs),
        "reader_acquisitions": sum(run["readers"] for run in runs),
        "peak_shared": max((run["peak_shared"] for run in runs), default=0),
        "mean_holders": median([_mean_holders(run["records"]) for run in runs]),
        "mode_overlaps": sum(run["mode_overlaps"] for run in runs),
        "failures": sum(run["failures"] for run in runs),
        "timed_out": any(run["timed_out"] for run in runs),
    }


def _counted_loop(bench, reader, writer, readers: int, writers: int, iterations: int) -> dict:
    run = readers_and_writers(bench, reader, writer, readers, writers, iterations, count=True)
    return {"requests_per_acquisition": run.get("requests_per_acquisition"),
            "script_commands_per_acquisition": run.get("script_commands_per_acquisition"),
            "counted_peak_shared": run["peak_shared"],
            "counted_mode_overlaps": run["mode_overlaps"], "counted_failures": run["failures"]}


def _batches(bench, reader, writer, waiters: int, repeats: int) -> dict:
    spreads, first_gaps, runs = [], [], []
    for repeat in range(repeats):
        run = burst(bench, reader, waiters, holder=writer)
        spread, first_gap = admission_spread(run["records"])
        spreads.append(spread)
        first_gaps.append(first_gap)
        runs.append(run)
    return {"waiters": waiters, "repeats": repeats,
            "spread_median_ms": median(spreads),
            "spread_max_ms": max((spread for spread in spreads if spread is not None),
                                 default=None),
            "spreads_ms": spreads,
            "first_start_median_ms": median(first_gaps),
            "acquisitions": sum(run["acquisitions"] for run in runs),
            "peak_shared": max((run["peak_shared"] for run in runs), default=0),
            "mode_overlaps": sum(run["mode_overlaps"] for run in runs),
            "failures": sum(run["failures"] for run in runs),
            "timed_out": any(run["timed_out"] for run in runs)}


def _burst(bench, reader, writer, waiters: int) -> dict:
    result = burst(bench, reader, waiters, holder=writer)
    bench.log(f"  {reader.name}: {waiters} waiters, counting requests")
    counted = burst(bench, reader, waiters, count=True, holder=writer)
    return {"drain_s": result["drain_seconds"], "acquisitions": result["acquisitions"],
            "requests_per_acquisition": counted.get("requests_per_acquisition"),
            "script_commands_per_acquisition": counted.get("script_commands_per_acquisition"),
            "peak_shared": max(result["peak_shared"], counted["peak_shared"]),
            "mode_overlaps": result["mode_overlaps"] + counted["mode_overlaps"],
            "failures": result["failures"] + counted["failures"],
            "timed_out": result["timed_out"] or counted["timed_out"]}


def run(bench) -> dict:
    settings = bench.settings
    writer = bench.tools[0]
    reader = with_shared(writer)
    readers, writers = settings.shared_readers, settings.shared_writers
    iterations = settings.shared_iterations
    runs = []
    for repeat in range(settings.handoff_repeats):
        bench.log(f"  {readers} x {reader.name} and {writers} x {writer.name}, x {iterations} "
                  f"(run {repeat + 1})")
        runs.append(readers_and_writers(bench, reader, writer, readers, writers, iterations))
    loop = _loop_summary(runs)
    bench.log(f"  {readers} readers and {writers} writers, counting requests")
    loop.update(_counted_loop(bench, reader, writer, readers, writers, iterations))
    bench.log(f"  {reader.name}: batches of {settings.shared_batch} behind a writer "
              f"(x {settings.shared_batch_repeats})")
    batch = _batches(bench, reader, writer, settings.shared_batch, settings.shared_batch_repeats)
    bursts = {}
    for waiters in settings.shared_waiters:
        bench.log(f"  {reader.name}: {waiters} waiters")
        bursts[str(waiters)] = _burst(bench, reader, writer, waiters)
    return {"reader": reader.name, "writer": writer.name, "readers": readers, "writers": writers,
            "iterations": iterations, "repeats": settings.handoff_repeats,
            "hold_us": settings.hold_us, "cap": SHARED_CAP, "loop": loop, "batch": batch,
            "bursts": bursts}
