"""The critical section every tool runs under contention (bench/helpers/critical_section.cpp), and
what its log tells: who held the lock when, the handoff gaps, and whether two holders overlapped."""
from pathlib import Path

from .build import compile_helper

HELPER_SOURCE = Path(__file__).resolve().parent.parent.parent / "helpers" / "critical_section.cpp"


def build_helper(workdir: Path) -> Path:
    """Compiles the critical section, static if the toolchain can (less start-up to charge to each
    tool)."""
    return compile_helper(HELPER_SOURCE, workdir / "critical-section", "c++", ["-static"])


class CriticalSectionLog:
    """One log file per scenario; each line is one holder: LABEL START_NS END_NS."""

    def __init__(self, helper: Path, path: Path, hold_us: int):
        self.helper = helper
        self.path = path
        self.hold_us = hold_us
        path.unlink(missing_ok=True)

    def command(self, label) -> list:
        return [str(self.helper), str(self.path), str(self.hold_us), str(label)]

    def records(self) -> list:
        """(label, start_ns, end_ns), in the order the holders started."""
        if not self.path.exists():
            return []
        found = []
        for line in self.path.read_text().splitlines():
            label, start, end = line.split()
            found.append((label, int(start), int(end)))
        return sorted(found, key=lambda record: record[1])


def handoffs(records: list) -> dict:
    """Gaps in ms between one holder's end and the next one's start, and overlaps: holders that
    started before the previous one ended, which only a broken lock allows."""
    gaps, overlaps = [], 0
    for previous, current in zip(records, records[1:]):
        gap_ns = current[1] - previous[2]
        if gap_ns < 0:
            overlaps += 1
        gaps.append(gap_ns / 1e6)
    return {"gaps_ms": gaps, "overlaps": overlaps, "acquisitions": len(records)}
