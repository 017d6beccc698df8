"""Figure 7: memory. The peak RSS (VmHWM) of the lock tool's own process while the command runs,
read by the command itself from /proc/$PPID/status: for every tool here the command is a direct
child of the process that holds the lock."""
from ..stats import median

REPORT_PARENT = 'grep VmHWM "/proc/$PPID/status" > "$1"'


def run(bench) -> dict:
    rows = {}
    for tool in bench.available():
        peaks = []
        for attempt in range(bench.settings.memory_runs):
            out = bench.workdir / f"rss-{attempt}"
            out.unlink(missing_ok=True)
            bench.launcher.run(tool.argv(bench.key("memory"),
                                         ["sh", "-c", REPORT_PARENT, "sh", str(out)]))
            if out.exists() and out.read_text().split():
                peaks.append(int(out.read_text().split()[1]) / 1024)  # kB -> MiB
        rows[tool.name] = {"peak_rss_mib": median(peaks), "runs": len(peaks)}
    return {"rows": rows}
