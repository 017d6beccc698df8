"""Figure 5: fairness. C contenders loop over the critical section for a fixed time; the report
gives each one's acquisitions (those that started within the time) and min/max across them."""
from collections import Counter

from ..contention import looping


def run(bench) -> dict:
    settings = bench.settings
    rows = {}
    for tool in bench.available():
        bench.log(f"  {tool.name}: {settings.fairness_contenders} contenders for "
                  f"{settings.fairness_seconds:g} s")
        result = looping(bench, tool, settings.fairness_contenders,
                         seconds=settings.fairness_seconds)
        in_time = Counter(label for label, start, _ in result["records"]
                          if start <= result["until_ns"])
        counts = [in_time.get(str(c), 0) for c in range(settings.fairness_contenders)]
        rows[tool.name] = {"per_contender": counts, "total": sum(counts),
                           # Nobody acquired at all (a tool too slow to start in a smoke run): 0.
                           "min_over_max": min(counts) / max(counts) if max(counts) else 0.0,
                           "overlaps": result["overlaps"], "failures": result["failures"]}
    return {"rows": rows, "contenders": settings.fairness_contenders,
            "seconds": settings.fairness_seconds}
