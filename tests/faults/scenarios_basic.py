"""Contention without faults: the baseline every fault scenario is measured against."""
from harness import scenario


@scenario("contention", runs=(2, 6), sections=(40, 300), timeout=300, promise="""
    No fault: redlockrun runs with and without renewal and clients of the classic algorithm contend
    for one key, in milliseconds (even runs) or seconds (odd runs): every client of a key must use
    the same unit. Promise: no overlap at all, no lost increment, every run exits 0.""")
def contention(s):
    r = s.redis()
    unit = "ms" if s.run_index % 2 == 0 else "s"
    sections = 60 if s.long else 8
    loads = [
        s.load(lambda: s.redlockrun(r, options=["--timestamp-unit", unit]), workers=3,
               sections=sections),
        s.load(lambda: s.redlockrun(r, options=["--no-renew", "--timestamp-unit", unit]),
               workers=1, sections=sections),
        s.load(lambda: s.classic(r, unit=unit), workers=2, sections=sections // 2),
    ]
    for load in loads:
        load.join(timeout=280)
    s.confirm("contention: redlockrun runs waited for the lock (BLPOP)",
              lambda: s.commandstats(r).get("cmdstat_blpop", {}).get("calls", 0) > 0)
