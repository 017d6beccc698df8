"""The critical section every tool runs under contention (bench/helpers/critical_section.cpp), and
what its log tells: who held the lock when, the handoff gaps, and whether two holders overlapped."""
import bisect
import collections
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


def kind_label(kind: str, contender) -> str:
    """A holder's label that also says which kind of contender it is ("hold.3"), for a log whose
    contenders are not all alike (a mixed row of figure 3)."""
    return f"{kind}.{contender}"


def kind_of(label: str) -> str:
    return label.partition(".")[0]


def handoffs_between(records: list, previous_kind: str, next_kind: str) -> dict:
    """handoffs() of a log with kind_label()s, whose gaps are only those from a holder of
    `previous_kind` to one of `next_kind`: the others are in the log (and overlaps are counted over
    every handoff), but their gaps measure other hand-overs. "handoffs" is how many gaps counted."""
    every = handoffs(records)
    gaps = [gap for previous, current, gap in zip(records, records[1:], every["gaps_ms"])
            if kind_of(previous[0]) == previous_kind and kind_of(current[0]) == next_kind]
    return {**every, "gaps_ms": gaps, "handoffs": len(gaps)}


def _waiting(launches: dict, records: list):
    """A test of "some contender was waiting at time T": one of its runs had been started (launches:
    label -> start times of its runs, CLOCK_MONOTONIC ns) and that run's command had not yet."""
    starts = {}
    for label, start, _ in records:
        starts.setdefault(label, []).append(start)
    for times in starts.values():
        times.sort()
    runs = {str(label): sorted(times) for label, times in launches.items()}

    def waiting(at: int) -> bool:
        for label, times in runs.items():
            latest = bisect.bisect_right(times, at)
            if not latest:
                continue
            started = starts.get(label, [])
            first = bisect.bisect_left(started, times[latest - 1])
            if first == len(started) or started[first] > at:
                return True
        return False
    return waiting


def slot_handoffs(records: list, limit: int, launches: dict) -> dict:
    """Handoffs of a lock that `limit` holders may hold at once (1: exclusive). Each holder's end
    frees a slot; freed slots are taken in the order they were freed, each by the next holder to
    start. A slot's gap, in ms, runs from the end that freed it to the start that took it, and
    counts only if some contender was already waiting at that end: otherwise the slot stood idle,
    and its wait measures no handoff. Also the most holders seen at once and how often a holder
    started with `limit` others already in, which only a broken lock allows."""
    events = sorted([(end, 0) for _, _, end in records] +  # an end before a start at the same ns
                    [(start, 1) for _, start, _ in records])
    waiting = _waiting(launches, records)
    freed = collections.deque()
    gaps, holders, peak, over_limit = [], 0, 0, 0
    for at, starts in events:
        if not starts:
            holders -= 1
            freed.append((at, waiting(at)))
            continue
        holders += 1
        peak = max(peak, holders)
        if holders > limit:
            over_limit += 1
        if freed:
            slot_freed, wanted = freed.popleft()
            if wanted:
                gaps.append((at - slot_freed) / 1e6)
    return {"gaps_ms": gaps, "peak_holders": peak, "over_limit": over_limit,
            "acquisitions": len(records)}


# The kinds of holder of a shared lock, in kind_label()s: a reader's label is "shared.3", a
# writer's "exclusive.0" (contention.readers_and_writers and a burst of shared waiters label them
# so). A change of hands is written with their initials: "x→s" is from a writer to readers.
SHARED, EXCLUSIVE = "shared", "exclusive"
INITIAL = {SHARED: "s", EXCLUSIVE: "x"}


def is_shared(label: str) -> bool:
    return kind_of(str(label)) == SHARED


def _overlapping_exclusive(records: list) -> int:
    """Exclusive sections that overlapped any other section: a reader's or a writer's. Readers may
    overlap each other; nothing may overlap a writer."""
    found = 0
    for index, (label, start, end) in enumerate(records):
        if is_shared(label):
            continue
        if any(other_start < end and start < other_end
               for other, (_, other_start, other_end) in enumerate(records) if other != index):
            found += 1
    return found


def _peak_shared(records: list) -> int:
    """The most shared sections running at once (an end before a start at the same ns)."""
    events = sorted([(end, -1) for label, _, end in records if is_shared(label)] +
                    [(start, 1) for label, start, _ in records if is_shared(label)])
    running, peak = 0, 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def turns(records: list) -> list:
    """The lock's turns, in order: each exclusive section is a turn of its own, and the shared
    sections between two exclusive ones (by start) make one shared turn, from its first start to its
    last end, however they overlap each other. (SHARED or EXCLUSIVE, start_ns, end_ns): the turn
    began when its first command started and the lock became free when its last one ended."""
    found, readers = [], []
    for label, start, end in sorted(records, key=lambda record: record[1]):
        if is_shared(label):
            readers.append((start, end))
            continue
        if readers:
            found.append((SHARED, min(s for s, _ in readers), max(e for _, e in readers)))
            readers = []
        found.append((EXCLUSIVE, start, end))
    if readers:
        found.append((SHARED, min(s for s, _ in readers), max(e for _, e in readers)))
    return found


def mode_handoffs(records: list, launches: dict) -> dict:
    """Handoffs of a lock held by readers (shared) and writers (exclusive). The lock changes hands
    where one turn (above) ends and the next begins: from a writer to the next writer, from a writer
    to the readers after it, or from readers to the next writer; readers that follow readers share
    one turn, so between them the lock never changes hands. The gap, in ms, runs from the moment the
    lock became free (the writer's end, or the last reader's) to the next turn's first start, and
    counts only if some contender was already waiting at that moment (its run started, its command
    not yet): otherwise the lock stood idle, which measures the driver, not the handoff.

    Also: exclusive sections that overlapped another section (only a broken lock allows any), the
    most readers at once, and each gap's change of hands ("x→x", "x→s", "s→x")."""
    waiting = _waiting(launches, records)
    gaps, changes = [], []
    lock_turns = turns(records)
    for (previous_mode, _, freed), (mode, started, _) in zip(lock_turns, lock_turns[1:]):
        if waiting(freed):
            gaps.append((started - freed) / 1e6)
            changes.append(f"{INITIAL[previous_mode]}→{INITIAL[mode]}")
    return {"gaps_ms": gaps, "changes": changes, "acquisitions": len(records),
            "readers": sum(1 for label, _, _ in records if is_shared(label)),
            "mode_overlaps": _overlapping_exclusive(records),
            "peak_shared": _peak_shared(records)}


def admission_spread(records: list) -> tuple:
    """For one exclusive holder's release to a batch of shared waiters: (the spread of the readers'
    starts, first to last, and the gap from the holder's end to the first reader's start), in ms;
    (None, None) if no reader ran."""
    starts = [start for label, start, _ in records if is_shared(label)]
    ends = [end for label, _, end in records if not is_shared(label)]
    if not starts:
        return None, None
    first_gap = (min(starts) - max(ends)) / 1e6 if ends else None
    return (max(starts) - min(starts)) / 1e6, first_gap
