"""The checker of histories: what the recorder logged and how the contenders ended, against what
the scenario promised.

A history is the recorder's events (recorder.py) and the contenders, each a dict with
    id          the holder id its critical section reports
    kind        "redlockrun" or "classic"
    status      its exit status (128+N for signal N), None if it had to be killed at the end
    expect      the set of exit statuses the scenario allows it
    may_overlap True if the scenario allows its section to run on beside a newer holder's (a
                paused holder, a holder whose lock Redis forgot); the fence must then order the two
    overlap_for the longest, in seconds, it may run on beside the newer section (from that one's
                beginning), or None
    overlap_until the recorder time (monotonic ns) by which it must have ended if it overlaps, or
                None; an allowed section needs one bound or both, or the allowance of a break
    renew_every how often (seconds, ttl/3) it renews, if the scenario allows it to overlap only
                once a --break has ended its claim (None otherwise); see BREAK_STOP_MARGIN
    broken_between  when the --break that named it ran (recorder time, monotonic ns): from
                before it started to after it returned, the break having run on the server in
                between; None if no break named it
    loss_reported  when its stderr said it lost the lock (recorder time), None if it never did
    limit       its --limit: 1 (or absent) for an exclusive lock and for the classic client, N > 1
                for one of a semaphore's N holders
    shared      True for a shared lock's holder (redlockrun -s), False or absent otherwise; it
                must say what the section's BEGIN said

It reports, and fails on:
- an overlap of two sections that no fault explains. It is explained only if both are redlockrun
  sections (no fence can order a classic one), the later one's fence is larger, and the earlier,
  stale one (the smaller fence) carries the allowance — the later one's says nothing about it —,
  exited 76 (told of the loss), ended within its bounds, and the resource went over to the newer
  fence: if the stale holder had an access accepted after the newer section began, the newer
  holder had one accepted too, and the stale holder none after that. For a holder whose claim a
  --break ended, the bound is the break's: the newer section began after the break, the stale
  holder said it lost the lock by the break + its renewal period + BREAK_STOP_MARGIN, and its
  section ended within BREAK_STOP_MARGIN of that. Such a holder may have been granted the lock,
  and broken, before its command began, which may then begin after the newer holder's (but no
  later than the moment it had to say it lost the lock): the smaller fence, not the earlier
  beginning, makes it the stale one;
- fences of redlockrun sections that do not grow in the order the sections began, except the
  section of a holder broken before it began (above);
- a counter that lost an increment: every accepted write must be the previous accepted value + 1;
- a section that never ended, a section of nobody the scenario started, a contender that exited 0
  without a complete section, a contender with more than one section (a run has one command);
- a section whose BEGIN says another mode or limit than its contender was started with;
- an exit status outside the contender's expected set;
- a --check that told a hold it was intact (0) while a newer holder held the lock. The recorder
  logs a check (recorder.py) with two timestamps: when the section was about to run --check, and
  when the answer came back; Redis was asked in between. The answer 0 is wrong if the whole of
  that interval lies inside the section of another holder that the checking section may not run
  beside (any but another reader's, or another semaphore section's) and that is newer: a larger
  fence, or no fence at all (a classic client's: nothing tells which of the two is stale). That
  holder was granted the lock before its section began, so before Redis was asked, and a grant
  of an exclusive lock ends every earlier one: a --check that asks Redis can only answer 76 (or
  69) then. A section with a smaller fence beside the checking one is the stale one: a 0 is right.

Semaphores (--limit N). Their sections may overlap each other, up to N at once; none may overlap an
exclusive or a classic section (the pairs are judged as above). Fences cannot order a semaphore's
sections by their beginning (a holder granted first may start its command last), so:
- every fence must be unique, and a section's fence must be larger than every fence of an
  exclusive section that began before it (and an exclusive section's larger than every semaphore
  section's before it);
- a semaphore section holds its lock from its grant, which came before the grant of every section
  with a larger fence: so it counts as open from its beginning or from the earliest beginning of a
  semaphore section with a larger fence, whichever comes first. This is how "a section that began
  after another ended has the larger fence" is checked without assuming that grants and
  beginnings come in the same order: if the fences say otherwise, the earlier grant counts as
  open over the later section, and that may make N + 1;
- a section that begins while N or more sections of the semaphore are open (K of them) is an
  overlap beyond the limit: at least K - N + 1 of them hold a grant that is no longer valid. It is
  explained only if the K - N + 1 with the smallest fences carry the allowance, exited 76 and
  ended within their bounds (counted from the newcomer's opening), and the fences bounded it at
  the resource: no section of them had a read or write accepted
  after it was outnumbered, that is, after N sections with larger fences had each had one
  accepted while none of those N had ended. For N = 1 this is the rule of exclusive overlaps.
  Fences cannot tell a resource which of N + 1 holders is stale, only which grant is the oldest:
  the recorder refuses the oldest (recorder.py), which is the stale one when the scenario pauses,
  kills or forgets the holders granted first;
- sections with different limits at once are an unexplained overlap (redlockrun refuses a run
  with another limit);
- each semaphore section increments a counter of its own: every accepted write must be its
  previous accepted value + 1 there too.

Shared locks (redlockrun -s). A shared section overlaps only shared sections: any number of them may
run at once, whatever their fences, and a pair of them is no overlap. A shared section beside an
exclusive or a classic one (a classic section counts as exclusive) is an overlap judged as above:
explained only if the stale one of the two, the smaller fence, carries the allowance, exited 76,
ended within its bounds, and the resource went over to the newer fence. A shared section beside a
semaphore's is never explained (redlockrun refuses --shared with --limit, and holders of one key
mixing them). As for a semaphore, a reader granted first may start its command last, so shared
sections are not held to begin in the order of their fences among themselves; against the
sections of the other modes, fences must grow in the order the sections began. The counter
(critical.py): a reader writes back the value it read, so
- an accepted write of a shared section must leave the counter as it was: a write-back of another
  value undoes a write that came between the reader's read and its write-back, a lost increment;
- the accepted reads of a shared section must all see one value: a changed one is a write that
  ran while the reader held the lock.
"""
from collections import Counter
from dataclasses import dataclass, field

LOST = 76

# A holder broken by --break learns of it at its next renewal, which it sends at most a renewal
# period (ttl/3) after the break, since it sent the previous one before; the renewal's round trip
# (loopback, milliseconds) and its line reaching the harness take this much more, at most, on a
# loaded machine. From that line, the SIGTERM to its command (a hold's keeper: to its owner's
# group), the command dying of it and the recorder seeing its connection close take this much at
# most too, as the harness's STOP_MARGIN covers a stop after other faults. No --kill-after: the
# sections die of SIGTERM, and one that needed SIGKILL ran on too long.
BREAK_STOP_MARGIN = 1.0


def must_report_by(contender):
    """When (recorder time) a holder that a --break named must have said it lost the lock: its
    next renewal after the break, and the margin. None if no break named it."""
    broken, renew_every = contender.get("broken_between"), contender.get("renew_every")
    if broken is None or renew_every is None:
        return None
    return broken[1] + int((renew_every + BREAK_STOP_MARGIN) * 1e9)


@dataclass
class Section:
    holder: str
    kind: str
    fence: int | None
    begin: int
    end: int | None = None
    abrupt: bool = False
    accesses: list = field(default_factory=list)  # reads and writes: (time, accepted)
    limit: int = 1
    open_from: int | None = None  # a semaphore section: from when it counts as holding
    shared: bool = False  # the section of a shared lock (redlockrun -s)
    conn: int | None = None  # the recorder's connection number
    reads: list = field(default_factory=list)  # the values of its accepted reads
    checks: list = field(default_factory=list)  # its --checks: (started, answered, status)
    slot: int | None = None  # a semaphore section's $REDLOCKRUN_SLOT

    @property
    def semaphore(self):
        return self.kind == "redlockrun" and self.limit > 1

    @property
    def reader(self):
        return self.kind == "redlockrun" and self.shared and not self.semaphore

    @property
    def mode(self):
        """Which sections it may run beside: those of its own mode, unless it is exclusive."""
        return "semaphore" if self.semaphore else "shared" if self.reader else "exclusive"

    def first_accepted(self):
        return next((t for t, accepted in self.accesses if accepted), None)


@dataclass
class Verdict:
    sections: int = 0
    explained: int = 0
    unexplained: int = 0
    lost: int = 0
    checks: int = 0  # --check answers the sections recorded
    wrong_checks: int = 0  # of those, answers of 0 while a newer holder held the lock
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
            by_connection[conn] = Section(event["holder"], event["kind"], event["fence"], event["t"],
                                          limit=event.get("limit", 1),
                                          shared=event.get("shared", False), conn=conn,
                                          slot=event.get("slot"))
            continue
        section = by_connection.get(conn)
        if section is None:
            continue
        if event["ev"] in ("read", "write"):
            section.accesses.append((event["t"], event["accepted"]))
            if event["ev"] == "read" and event["accepted"]:
                section.reads.append(event["value"])
        elif event["ev"] == "end":
            section.end = event["t"]
            section.abrupt = event["abrupt"]
        elif event["ev"] == "check":
            section.checks.append((event["started"], event["t"], event["status"]))
    return sorted(by_connection.values(), key=lambda s: s.begin)


def mode_name(shared):
    return "shared" if shared else "exclusive"


def describe(section):
    return f"fence {section.fence}, " + (f"limit {section.limit}" if section.semaphore
                                          else mode_name(section.reader))


def allowed(section, contenders):
    return contenders.get(section.holder, {}).get("may_overlap", False)


def overlap_reasons(stale, start, contenders, forever):
    """Why STALE, a section the scenario allows to overlap a newer one from START (recorder
    time), may not run on as it did: it was never told of the loss, or it outlived the bound that
    the scenario's fault gives it. Empty if it did neither."""
    contender = contenders.get(stale.holder, {})
    reasons = []
    if contender.get("status") != LOST:
        reasons.append(f"{stale.holder}, the stale holder, exited {contender.get('status')}, "
                       f"never told it lost the lock ({LOST})")
    end = stale.end or forever
    bound, until = contender.get("overlap_for"), contender.get("overlap_until")
    renew_every = contender.get("renew_every")
    if renew_every is not None:
        reasons += broken_reasons(stale, start, end, contender)
    elif bound is None and until is None:
        reasons.append(f"the scenario gave {stale.holder}'s overlap no bound")
    if bound is not None and end - start > bound * 1e9:
        reasons.append(f"it lasted {(end - start) / 1e9:.1f} s, longer than the {bound:.1f} s the "
                       f"fault allows {stale.holder}")
    if until is not None and end > until:
        reasons.append(f"{stale.holder} ran on {(end - until) / 1e9:.1f} s past the end its fault "
                       "allows")
    return reasons


def broken_reasons(stale, start, end, contender):
    """Why STALE, allowed to overlap only once a --break ended its claim, may not have run on
    beside a section that began at START until END: no break named it, the newer section began
    before the break, or STALE outlived its next renewal after the break and the stop margin."""
    broken, renew_every = contender.get("broken_between"), contender["renew_every"]
    if broken is None:
        return [f"{stale.holder} may overlap only after a --break, and no break named it"]
    reasons = []
    started = broken[0]  # the break ran on the server, and freed the lock, after this
    if start < started:
        reasons.append(f"the newer section began {(started - start) / 1e9:.1f} s before the "
                       f"break that ended {stale.holder}'s claim")
    deadline, reported = must_report_by(contender), contender.get("loss_reported")
    if reported is None:
        reasons.append(f"{stale.holder} never said it lost the lock")
        return reasons
    if reported > deadline:
        reasons.append(f"{stale.holder} said it lost the lock {(reported - deadline) / 1e9:.1f} s "
                       f"after its next renewal could have told it (at most {renew_every:.1f} s "
                       f"after the break, and {BREAK_STOP_MARGIN:.1f} s)")
    until = reported + int(BREAK_STOP_MARGIN * 1e9)
    if end > until:
        reasons.append(f"{stale.holder} ran on {(end - until) / 1e9:.1f} s past the moment it "
                       f"said it lost the lock and {BREAK_STOP_MARGIN:.1f} s to stop its command")
    return reasons


def outnumbered(section, held, forever):
    """When SECTION, of a semaphore of N, was outnumbered at the resource: the first moment at
    which N sections with larger fences had each had an access accepted and had not ended; None if
    that never happened. A fencing resource refuses the section from then on."""
    newer = [s for s in held if s.fence > section.fence and s.first_accepted() is not None]
    for moment in sorted(s.first_accepted() for s in newer):
        using = sum(s.first_accepted() <= moment < (s.end or forever) for s in newer)
        if using >= section.limit:
            return moment
    return None


def began_after_its_break(section, contenders):
    """SECTION is of a holder that a --break named, and began after that break, yet before its
    next renewal had to tell it of the loss: it was granted the lock before the break, so any
    section granted since has a larger fence, whether it began before SECTION or after. A section
    that began later than that began after its holder had to know the lock was gone."""
    contender = contenders.get(section.holder, {})
    broken, deadline = contender.get("broken_between"), must_report_by(contender)
    return broken is not None and deadline is not None and broken[0] <= section.begin <= deadline


def check_overlap(earlier, later, contenders, verdict, forever):
    """Counts one overlap of two sections, earlier beginning first, as explained or not. It is
    explained only by a fault that made the earlier holder stale: the later one has the larger
    fence, the earlier one carries the scenario's allowance, was told of the loss, stopped within
    the bound its fault gives, and the resource went over to the newer fence. A holder broken
    before its section began may be the later one: then its smaller fence makes it the stale
    one, and the rest is judged the same way."""
    names = " and ".join(f"{s.holder} (fence {s.fence}{', shared' if s.reader else ''})"
                         for s in (earlier, later))
    stale, newer = earlier, later
    if "classic" not in (earlier.kind, later.kind) and None not in (earlier.fence, later.fence) \
            and later.fence < earlier.fence and began_after_its_break(later, contenders):
        stale, newer = later, earlier
    reasons = []
    if "classic" in (earlier.kind, later.kind):
        reasons.append("a classic section has no fence to order it")
    elif stale.fence is None or newer.fence is None or newer.fence <= stale.fence:
        reasons.append("the later holder's fence is not larger")
    if not allowed(stale, contenders):
        reasons.append(f"no fault in this scenario allows {stale.holder}, the stale holder, "
                       "to overlap")
    if not reasons:
        reasons += overlap_reasons(stale, newer.begin, contenders, forever)
        stale_served = [t for t, ok in stale.accesses if ok and t > newer.begin]
        first = newer.first_accepted()
        if stale_served and first is None:
            reasons.append("the newer holder had no access accepted while the stale one's were: "
                           "nothing at the resource ordered the two")
        elif first is not None and any(t > first for t in stale_served):
            reasons.append("the stale holder's access was accepted after the newer holder's")
    if reasons:
        verdict.unexplained += 1
        verdict.problems.append(f"unexplained overlap of {names}: {'; '.join(reasons)}")
    else:
        verdict.explained += 1


def check_semaphore(sections, contenders, verdict, forever):
    """Counts the sections of a semaphore that began while its N others or more were open."""
    held = sorted((s for s in sections if s.semaphore and s.fence is not None),
                  key=lambda s: -s.fence)
    earliest = None
    for section in held:  # largest fence first: open from the earliest later grant's beginning
        earliest = section.begin if earliest is None else min(earliest, section.begin)
        section.open_from = min(section.begin, earliest)
    held.sort(key=lambda s: (s.open_from, s.fence))
    for i, newcomer in enumerate(held):
        others = [s for s in held[:i] if (s.end or forever) > newcomer.open_from]
        limits = {s.limit for s in others} - {newcomer.limit}
        if limits:
            verdict.unexplained += 1
            verdict.problems.append(
                f"unexplained overlap of {newcomer.holder} (limit {newcomer.limit}) and sections "
                f"with limit {', '.join(map(str, sorted(limits)))}: every holder of a semaphore "
                "must use the same limit")
            continue
        if len(others) < newcomer.limit:
            continue
        names = ", ".join(f"{s.holder} (fence {s.fence})" for s in others + [newcomer])
        beyond = (f"unexplained overlap beyond the limit {newcomer.limit}: {len(others) + 1} "
                  f"semaphore sections at once, {names}: ")
        # At least this many are stale, and a fencing resource takes the smallest fences for them.
        by_fence = sorted(others + [newcomer], key=lambda s: s.fence)
        stale = by_fence[:len(others) - newcomer.limit + 1]
        refused = ", ".join(s.holder for s in stale if not allowed(s, contenders))
        if refused:
            verdict.unexplained += 1
            verdict.problems.append(beyond + "no fault in this scenario allows the stale "
                                    f"sections (the smallest fences) to overlap: {refused}")
            continue
        reasons = [r for s in stale for r in overlap_reasons(s, newcomer.open_from, contenders,
                                                             forever)]
        if reasons:
            verdict.unexplained += 1
            verdict.problems.append(beyond + "; ".join(reasons))
            continue
        late = []
        for section in others + [newcomer]:
            moment = outnumbered(section, held, forever)
            if moment is not None and any(t > moment and ok for t, ok in section.accesses):
                late.append(section.holder)
        if late:
            verdict.unexplained += 1
            verdict.problems.append(
                beyond + f"the resource accepted an access of {', '.join(late)} after "
                f"{newcomer.limit} sections with larger fences had theirs")
            continue
        verdict.explained += 1


def check_slots(sections, contenders, verdict, forever):
    """A semaphore's sections each name their slot ($REDLOCKRUN_SLOT, 0 to N - 1), and no two that
    are open at once name the same one, unless the one with the smaller fence is stale as a fault
    allows (a paused holder whose lock lapsed freed its slot): it carries the allowance, was told
    of the loss and stopped within its bound."""
    held = [s for s in sections if s.semaphore and s.fence is not None]
    for section in held:
        if section.slot is None or not 0 <= section.slot < section.limit:
            verdict.problems.append(f"the section of {section.holder} ({describe(section)}) had "
                                    f"no REDLOCKRUN_SLOT from 0 to {section.limit - 1}: "
                                    f"{section.slot}")
    for i, first in enumerate(held):
        for second in held[i + 1:]:
            if first.slot is None or first.slot != second.slot:
                continue
            if max(first.begin, second.begin) >= min(first.end or forever, second.end or forever):
                continue
            stale, newer = sorted((first, second), key=lambda s: s.fence)
            reasons = []
            if not allowed(stale, contenders):
                reasons.append(f"no fault in this scenario allows {stale.holder} to be stale")
            else:
                reasons += overlap_reasons(stale, newer.begin, contenders, forever)
            if reasons:
                verdict.problems.append(
                    f"{stale.holder} (fence {stale.fence}) and {newer.holder} (fence "
                    f"{newer.fence}) held slot {stale.slot} at once: {'; '.join(reasons)}")


def check_answers(sections, verdict):
    """Counts the --check answers of the sections, and fails each 0 (the hold intact) whose whole
    interval, from before the call to after its answer, lies inside the section of a newer holder
    that the checking one may not run beside: a larger fence, or a classic section (no fence)."""
    for section in sections:
        for started, answered, status in section.checks:
            verdict.checks += 1
            if status != 0:
                continue
            for other in sections:
                ended = other.end if other.end is not None else float("inf")
                if other.holder == section.holder or other.begin >= started or ended <= answered:
                    continue
                if (section.semaphore and other.semaphore) or (section.reader and other.reader):
                    continue  # they hold the lock together
                if other.kind == "classic" or other.fence is None:
                    why = "a classic section, which no fence tells apart from a stale one"
                elif section.fence is not None and other.fence > section.fence:
                    why = "a newer holder: its grant ended this one's before Redis was asked"
                else:
                    continue  # the other is the stale one: the hold is intact
                verdict.wrong_checks += 1
                verdict.problems.append(
                    f"unexplained --check answer: {section.holder} (fence {section.fence}) was "
                    f"told its hold was intact (0) by a --check asked "
                    f"{(started - other.begin) / 1e9:.2f} s after the section of {other.holder} "
                    f"(fence {other.fence}) began, and answered before it ended; {other.holder} "
                    f"is {why}")
                break


def check(events, contenders):
    verdict = Verdict()
    by_id = {c["id"]: c for c in contenders}
    sections = sections_of(events)
    for section in sections:
        contender = by_id.get(section.holder, {})
        limit = contender.get("limit") or 1
        if limit != section.limit:
            verdict.problems.append(
                f"the section of {section.holder} began with limit {section.limit}, and its "
                f"contender was started with limit {limit}")
        section.limit = limit
        shared = contender.get("shared", section.shared)
        if shared != section.shared:
            verdict.problems.append(
                f"the section of {section.holder} began as {mode_name(section.shared)}, and its "
                f"contender is {mode_name(shared)}")
        section.shared = shared
    verdict.sections = len(sections)
    for holder, count in Counter(s.holder for s in sections).items():
        if count > 1:
            verdict.problems.append(f"{holder} had {count} critical sections in one run: its "
                                    "lock ran its command more than once")

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
            if earlier.semaphore and later.semaphore:
                continue  # judged below, by the limit
            if earlier.reader and later.reader:
                continue  # readers share the lock
            if {earlier.mode, later.mode} == {"shared", "semaphore"}:
                verdict.unexplained += 1
                verdict.problems.append(
                    f"unexplained overlap of {earlier.holder} ({describe(earlier)}) and "
                    f"{later.holder} ({describe(later)}): redlockrun refuses to mix --shared and "
                    "--limit on one key")
                continue
            check_overlap(earlier, later, by_id, verdict, forever)
    check_semaphore(sections, by_id, verdict, forever)
    check_slots(sections, by_id, verdict, forever)
    check_answers(sections, verdict)

    fenced = [s for s in sections if s.kind == "redlockrun" and s.fence is not None]
    largest = {}  # mode -> the section with the largest fence among those that began so far
    for after in fenced:
        # A section of a semaphore or a shared lock may begin before one of its own mode granted
        # before it; every other section that began before it must have a smaller fence.
        ahead = [s for mode, s in largest.items() if mode != after.mode or mode == "exclusive"]
        behind = max(ahead, key=lambda s: s.fence, default=None)
        if behind is not None and after.fence > behind.fence:
            behind = None
        if behind is not None:
            if began_after_its_break(after, by_id):
                # Granted before the break, and so before every grant since: out of the order
                # (check_overlap judges it beside the sections it overlaps), and not the fence
                # the next section must pass.
                continue
            verdict.problems.append(
                f"fence went backwards: {behind.holder} had {behind.fence}, then {after.holder} "
                f"began with {after.fence}")
        if after.mode not in largest or after.fence > largest[after.mode].fence:
            largest[after.mode] = after
    for fence, count in Counter(s.fence for s in fenced).items():
        if count > 1:
            holders = ", ".join(s.holder for s in fenced if s.fence == fence)
            verdict.problems.append(f"repeated fence {fence}: {holders}")

    previous = 0
    own = {}  # a semaphore section's own counter, by connection
    readers = {s.conn: s for s in sections if s.reader}
    for event in events:
        if event["ev"] == "write" and event["accepted"]:
            before = own.get(event["conn"], 0) if event.get("own") else previous
            reader = readers.get(event["conn"])
            if reader is not None and event["value"] != before:
                verdict.problems.append(
                    f"lost increment: the counter went from {before} to {event['value']}, written "
                    f"back by {reader.holder}, a shared section, whose write-back must leave it "
                    "as it was")
            elif reader is None and event["value"] != before + 1:
                whose = " of its own" if event.get("own") else ""
                verdict.problems.append(
                    f"lost increment: the counter{whose} went from {before} to {event['value']}")
            if event.get("own"):
                own[event["conn"]] = event["value"]
            else:
                previous = event["value"]

    for reader in readers.values():
        if len(set(reader.reads)) > 1:
            verdict.problems.append(
                f"the counter changed under {reader.holder}, a shared section: it read "
                f"{', '.join(map(str, reader.reads))}; a write ran while it held the lock")

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
