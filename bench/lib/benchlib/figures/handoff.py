"""Figure 3: handoff. N contenders each loop M times over a short critical section.

Total time is the wall time of the whole loop (median over repeats); the gap is the time between
one holder's command ending and the next one's starting, pooled over the repeats (median and p99).
The tools take turns within each repeat, so that a slow spell of the machine hits all of them, and
each ratio to flock(1) comes with its smallest and largest value over the repeats.
At one N (8; the largest in a smoke run) each Redis tool runs once more with its requests counted
(figure 4); that run's times are not used.

At that N, and in the same repeats, the contenders also lock a section of a script rather than wrap
a command: a hold of redlockrun's, then its release (peers/redlockrun-hold), and flock(1)'s idiom
(peers/flock-section). The gap is the same, from one holder's command ending to the next one's
starting; for a hold it takes in starting `redlockrun --release`, the release, the wake-up, the
waiter's acquire and keeper, and its script's eval.

A hold's handoff is judged, though, as the issue states it: from a `--release` to a waiting *run*,
without the waiting hold's own work after its grant (its keeper, its output, its script's eval). So
at that N, in the same repeats, two mixed rows run too. In peers.HOLD_TO_RUN half the contenders
hold and half run plainly, all on one key, taking turns as the lock decides; its gaps are only
those from a hold's command ending to a run's command starting (each holder's log line says which
it was), and "handoffs" says how many there were. peers.FLOOR_TO_RUN is the same mix with the
hold's release made by the release floor (bench/helpers/release_floor.c, peers/release-floor-hold)
instead of `redlockrun --release`: the yardstick for what the release costs beyond the keeper, Redis
and the waiting run, which a hold cannot do without. peers.SECTION_TO_FLOCK mixes flock(1)'s idiom
and flock(1) the same way, its gaps from a `flock -u` to a waiting flock(1)'s command.

At that N only, and in the same repeats, redlockrun also runs against other servers than the
bench's own Redis, a row each ("redlockrun (Valkey 8.0.1)", benchlib/other_servers.py): the
default build with `-u` naming Redis 6.2.16 or Valkey 8.0.1. Their requests are not counted (MONITOR
watches the bench's Redis), so figure 4 has none of them, and no target judges them.
"""
from ..contention import looping, mixed_looping
from ..peers import mixes
from ..stats import extremes, median, paired_ratios, percentile, ratio


def counted_contenders(settings) -> int:
    return 8 if 8 in settings.handoff else max(settings.handoff)


def _summary(runs: list) -> dict:
    gaps = [gap for run in runs for gap in run["gaps_ms"]]
    return {
        "total_s": median([run["seconds"] for run in runs]),
        "gap_median_ms": median(gaps),
        "gap_p99_ms": percentile(gaps, 0.99),
        "acquisitions": sum(run["acquisitions"] for run in runs),
        "overlaps": sum(run["overlaps"] for run in runs),
        "failures": sum(run["failures"] for run in runs),
        "timed_out": any(run["timed_out"] for run in runs),
        # Each repeat's own figures, in the order run: the tools took turns within a repeat.
        "repeat_total_s": [run["seconds"] for run in runs],
        "repeat_gap_median_ms": [median(run["gaps_ms"]) for run in runs],
    }


def _mixed_summary(runs: list) -> dict:
    """A mixed row: _summary() over its counted handoffs only, and how many each repeat had."""
    summary = _summary(runs)
    summary["handoffs"] = sum(run["handoffs"] for run in runs)
    summary["repeat_handoffs"] = [run["handoffs"] for run in runs]
    return summary


def _counted(bench, tool, contenders: int, iterations: int) -> dict:
    run = looping(bench, tool, contenders, iterations=iterations, count=True)
    return {"requests_per_acquisition": run.get("requests_per_acquisition"),
            "script_commands_per_acquisition": run.get("script_commands_per_acquisition"),
            "counted_overlaps": run["overlaps"], "counted_failures": run["failures"]}


def run(bench) -> dict:
    results = {}
    for contenders, iterations in bench.settings.handoff.items():
        tools, mixed = bench.available(), []
        if contenders == counted_contenders(bench.settings):
            mixed = mixes(tools, bench.available_sections(in_mixes=True))
            # Their server is not the bench's Redis: timed, but never counted (below).
            tools += bench.available_sections() + bench.server_rows
        runs = {row.name: [] for row in [*tools, *mixed]}
        for repeat in range(bench.settings.handoff_repeats):
            for tool in tools:
                bench.log(f"  {tool.name}: {contenders} contenders x {iterations} "
                          f"(run {repeat + 1})")
                runs[tool.name].append(looping(bench, tool, contenders, iterations=iterations))
            for mix in mixed:
                bench.log(f"  {mix.name}: {contenders} contenders x {iterations}, half "
                          f"{mix.releasing.name}, half {mix.waiting.name} (run {repeat + 1})")
                runs[mix.name].append(mixed_looping(bench, mix, contenders, iterations))
        mixed_names = {mix.name for mix in mixed}
        rows = {name: (_mixed_summary if name in mixed_names else _summary)(row_runs)
                for name, row_runs in runs.items()}
        if contenders == counted_contenders(bench.settings):
            for tool in tools:
                if tool.server == "redis":
                    bench.log(f"  {tool.name}: {contenders} contenders, counting requests")
                    rows[tool.name].update(_counted(bench, tool, contenders, iterations))
        reference = rows.get(bench.reference.name, {})
        for row in rows.values():
            row["total_vs_flock"] = ratio(row["total_s"], reference.get("total_s"))
            row["gap_vs_flock"] = ratio(row["gap_median_ms"], reference.get("gap_median_ms"))
            # The same ratios repeat by repeat, smallest and largest: three repeats are too few
            # for percentiles, but they show whether the ratio of medians is a steady one.
            for key, per_repeat in (("total_vs_flock_range", "repeat_total_s"),
                                    ("gap_vs_flock_range", "repeat_gap_median_ms")):
                row[key] = extremes(paired_ratios(row[per_repeat],
                                                  reference.get(per_repeat, [])))
        results[str(contenders)] = {"iterations": iterations, "rows": rows}
    return {"by_contenders": results, "hold_us": bench.settings.hold_us,
            "repeats": bench.settings.handoff_repeats,
            "counted_at": counted_contenders(bench.settings),
            "server_rows": {row.name: row.summary for row in bench.server_rows}}
