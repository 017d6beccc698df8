"""Figure 6: scale. W waiters queue behind one holder, which then lets go; they take the lock one
after the other. Requests per acquisition (all the requests of the holder and the W waiters,
divided by W + 1, counted in a second run of the same burst) and the handoff gap, as W grows.

Run for redlockrun, flock(1) (the reference gap) and redis-py's Lock (a polling client at scale).
etcdctl and the SETNX script are left out: hundreds of Go processes, or of shells forking redis-cli
ten times a second each, would measure the machine's 2 cores rather than the lock.

And for redlockrun --supersede, at each W: W runs come one after the other behind one holder, each
superseding the one before it; the last one runs. Requests per run, over the W + 1 runs.
"""
import dataclasses

from ..contention import burst, superseding_burst
from ..stats import median, percentile

SCALED_TOOLS = ("redlockrun", "flock(1)", "redis-py Lock")


def run(bench) -> dict:
    rows = {}
    for waiters in bench.settings.scale_waiters:
        for tool in bench.available():
            if tool.name not in SCALED_TOOLS:
                continue
            bench.log(f"  {tool.name}: {waiters} waiters")
            result = burst(bench, tool, waiters)
            if tool.server == "redis":
                # Counted in a run of its own: MONITOR would slow the timed one.
                bench.log(f"  {tool.name}: {waiters} waiters, counting requests")
                counted = burst(bench, tool, waiters, count=True)
                result["requests_per_acquisition"] = counted["requests_per_acquisition"]
                result["script_commands_per_acquisition"] = \
                    counted["script_commands_per_acquisition"]
                result["overlaps"] += counted["overlaps"]
                result["failures"] += counted["failures"]
            rows.setdefault(tool.name, {})[str(waiters)] = {
                "gap_median_ms": median(result["gaps_ms"]),
                "gap_p99_ms": percentile(result["gaps_ms"], 0.99),
                "drain_s": result["drain_seconds"],
                "requests_per_acquisition": result.get("requests_per_acquisition"),
                "script_commands_per_acquisition": result.get("script_commands_per_acquisition"),
                "acquisitions": result["acquisitions"], "overlaps": result["overlaps"],
                "failures": result["failures"], "timed_out": result["timed_out"]}
    superseding = {}
    for tool in bench.available():
        if tool.name != "redlockrun":
            continue
        newest = dataclasses.replace(tool, name=f"{tool.name} --supersede",
                                     command=[*tool.command, "--supersede"])
        for waiters in bench.settings.scale_waiters:
            bench.log(f"  {newest.name}: {waiters} runs, counting requests")
            result = superseding_burst(bench, newest, waiters)
            superseding[str(waiters)] = {
                key: result[key] for key in ("runs", "superseded", "ran", "failures", "overlaps",
                                             "timed_out", "requests_per_run",
                                             "script_commands_per_run")}
    return {"rows": rows, "waiters": list(bench.settings.scale_waiters),
            "superseding": superseding}
