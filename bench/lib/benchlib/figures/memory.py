"""Figure 7: memory. The peak RSS (VmHWM) of the lock tool's own process, read by the command from
/proc/$PPID/status at its end: for every tool here the command is a direct child of the process
that holds the lock.

The command holds the lock for a while before it reads, so that the peak includes what keeping the
lock costs, not only taking it: redlockrun runs with a TTL short enough to renew several times in
that while (with -v, whose "renewed" lines are counted; a run that renewed nothing fails the
check), and every tool holds for the same time.
"""
import dataclasses

from ..stats import median

REPORT_PARENT = 'sleep "$1"; grep VmHWM "/proc/$PPID/status" > "$2"'
REDLOCKRUN = "redlockrun"


def _argv(bench, tool, command: list) -> list:
    if tool.name == REDLOCKRUN:
        tool = dataclasses.replace(tool, command=[*tool.command, "-v", "--ttl",
                                                  bench.settings.memory_ttl])
    return tool.argv(bench.key("memory"), command)


def run(bench) -> dict:
    rows = {}
    hold_s = bench.settings.memory_hold_s
    for tool in bench.available():
        peaks, renewals = [], []
        for attempt in range(bench.settings.memory_runs):
            out = bench.workdir / f"rss-{attempt}"
            errors = bench.workdir / f"rss-{attempt}.err"
            out.unlink(missing_ok=True)
            command = ["sh", "-c", REPORT_PARENT, "sh", str(hold_s), str(out)]
            with open(errors, "wb") as stderr:
                finished = bench.launcher.run(_argv(bench, tool, command), stderr=stderr)
            if finished.returncode != 0:  # what it said goes where every tool's errors go
                with open(bench.launcher.error_log, "ab") as log:
                    log.write(errors.read_bytes())
            if out.exists() and out.read_text().split():
                peaks.append(int(out.read_text().split()[1]) / 1024)  # kB -> MiB
            if tool.name == REDLOCKRUN:
                renewals.append(errors.read_text(errors="replace").count("redlockrun: renewed "))
        rows[tool.name] = {"peak_rss_mib": median(peaks), "runs": len(peaks)}
        if renewals:
            rows[tool.name]["renewals_fewest"] = min(renewals)
    return {"rows": rows, "hold_s": hold_s, "ttl": bench.settings.memory_ttl}
