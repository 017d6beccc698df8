"""The checker of histories: what the recorder logged and how the contenders ended, against what
the scenario promised.

A history is the recorder's events (recorder.py) and the contenders, each a dict with
    id          the holder id its critical section reports
    kind        "redlockrun" or "classic"
    status      its exit status (128+N for signal N), None if it had to be killed at the end
    expect      the set of exit statuses the scenario allows it
    may_overlap True if the scenario allows its section to overlap another (a paused holder, a
                holder whose lock Redis forgot); the fence must then order the two

It reports, and fails on:
- an overlap of two sections that no allowance explains: neither may overlap, or one is a classic
  section (no fence can order it), or the later section's fence is not larger, or the earlier
  holder had a write accepted after the later holder's first accepted write;
- fences of redlockrun sections that do not grow in the order the sections began;
- a counter that lost an increment: every accepted write must be the previous accepted value + 1;
- a section that never ended, a section of nobody the scenario started, a contender that exited 0
  without a complete section;
- an exit status outside the contender's expected set.
"""
from collections import Counter
from dataclasses import dataclass, field

LOST = 76


@dataclass
class Section:
    holder: str
    kind: str
    fence: int | None
    begin: int
    end: int | None = None
    abrupt: bool = False
    accesses: list = field(default_factory=list)  # reads and writes: (time, accepted)

    def first_accepted(self):
        return next((t for t, accepted in self.accesses if accepted), None)


@dataclass
class Verdict:
    sections: int = 0
    explained: int = 0
    unexplained: int = 0
    lost: int = 0
    statuses: Counter = field(default_factory=Counter)
    problems: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.problems


def sections_of(events):
    by_connection = {}
    for event in events:
        conn = event["conn"]
        if event["ev"] == "begin":
            by_connection[conn] = Section(event["holder"], event["kind"], event["fence"], event["t"])
            continue
        section = by_connection.get(conn)
        if section is None:
            continue
        if event["ev"] in ("read", "write"):
            section.accesses.append((event["t"], event["accepted"]))
        elif event["ev"] == "end":
            section.end = event["t"]
            section.abrupt = event["abrupt"]
    return sorted(by_connection.values(), key=lambda s: s.begin)


def check_overlap(earlier, later, contenders, verdict):
    """Counts one overlap of two sections, earlier beginning first, as explained or not."""
    def allowed(section):
        return contenders.get(section.holder, {}).get("may_overlap", False)

    names = f"{earlier.holder} (fence {earlier.fence}) and {later.holder} (fence {later.fence})"
    reason = None
    if not (allowed(earlier) or allowed(later)):
        reason = "no fault in this scenario allows it"
    elif "classic" in (earlier.kind, later.kind):
        reason = "a classic section has no fence to order it"
    elif earlier.fence is None or later.fence is None or later.fence <= earlier.fence:
        reason = "the later holder's fence is not larger"
    else:
        first = later.first_accepted()
        if first is not None and any(t > first and ok for t, ok in earlier.accesses):
            reason = "the stale holder's access was accepted after the newer holder's"
    if reason is None:
        verdict.explained += 1
    else:
        verdict.unexplained += 1
        verdict.problems.append(f"unexplained overlap of {names}: {reason}")


def check(events, contenders):
    verdict = Verdict()
    by_id = {c["id"]: c for c in contenders}
    sections = sections_of(events)
    verdict.sections = len(sections)

    for section in sections:
        if section.holder not in by_id:
            verdict.problems.append(f"a section of {section.holder}, whom the scenario did not start")
        if section.end is None:
            verdict.problems.append(f"the section of {section.holder} never ended")
        if section.kind == "redlockrun" and section.fence is None:
            verdict.problems.append(f"the section of {section.holder} had no REDLOCKRUN_FENCE")

    forever = max((s.end or s.begin for s in sections), default=0) + 1
    for i, earlier in enumerate(sections):
        for later in sections[i + 1:]:
            if later.begin >= (earlier.end or forever):
                break  # sorted by their beginning: no later section overlaps earlier either
            check_overlap(earlier, later, by_id, verdict)

    fenced = [s for s in sections if s.kind == "redlockrun" and s.fence is not None]
    for before, after in zip(fenced, fenced[1:]):
        if after.fence <= before.fence:
            verdict.problems.append(
                f"fence went backwards: {before.holder} had {before.fence}, then {after.holder} "
                f"began with {after.fence}")

    previous = 0
    for event in events:
        if event["ev"] == "write" and event["accepted"]:
            if event["value"] != previous + 1:
                verdict.problems.append(
                    f"lost increment: the counter went from {previous} to {event['value']}")
            previous = event["value"]

    complete = {s.holder for s in sections if s.end is not None and not s.abrupt}
    for contender in contenders:
        status = contender["status"]
        verdict.statuses[status] += 1
        if status == LOST and contender["kind"] == "redlockrun":
            verdict.lost += 1
        if status not in contender["expect"]:
            shown = "killed at the end (hung)" if status is None else f"exited {status}"
            verdict.problems.append(
                f"{contender['id']} {shown}, expected {sorted(contender['expect'])}")
        elif status == 0 and contender["id"] not in complete:
            verdict.problems.append(f"{contender['id']} exited 0 without a complete section")
    return verdict
