#!/usr/bin/python3
"""Self-tests of the checker: synthetic histories, good and bad. Each bad one must be flagged, so
that a scenario's "no unexplained overlap" means something."""
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from checker import check  # noqa: E402
from recorder import Resource  # noqa: E402


class History:
    """Builds the recorder's events by hand: times are plain numbers."""

    def __init__(self):
        self.events = []
        self.contenders = []
        self.conns = {}
        self.counter = 0
        self.largest = None
        self.largest_exclusive = None
        self.own = {}  # a semaphore holder's own counter
        self.readers = set()  # the holders of a shared lock

    def contender(self, holder, status=0, expect=(0,), may_overlap=False, kind="redlockrun",
                  limit=1, overlap_until=None, renew_every=None, broken_at=None, shared=False,
                  lost_at=None):
        """MAY_OVERLAP is False or the longest, in seconds, the holder's section may run on beside
        a newer one; OVERLAP_UNTIL (seconds) is the time by which it must have ended instead.
        RENEW_EVERY (seconds) allows it to overlap after a --break instead, BROKEN_AT (seconds,
        None: never broken) being the break's time, or (from, to) while it ran. LOST_AT (seconds,
        None: never) is when its stderr said it lost the lock."""
        bound = 30 if may_overlap is True else may_overlap  # True: longer than any history here
        self.contenders.append({
            "id": holder, "kind": kind, "status": status, "expect": set(expect),
            "may_overlap": bool(may_overlap) or overlap_until is not None
            or renew_every is not None,
            "overlap_for": bound if may_overlap else None,
            "overlap_until": None if overlap_until is None else int(overlap_until * 1e9),
            "renew_every": renew_every,
            "broken_between": None if broken_at is None else tuple(
                int(t * 1e9) for t in (broken_at if isinstance(broken_at, tuple)
                                       else (broken_at, broken_at))),
            "loss_reported": None if lost_at is None else int(lost_at * 1e9),
            "limit": limit, "shared": shared})

    def begin(self, t, holder, fence, kind="redlockrun", limit=1, shared=False, slot="auto"):
        """SLOT: a semaphore section's $REDLOCKRUN_SLOT; "auto" gives it the lowest one that no
        section open at T has, as redlockrun would (verdict())."""
        self.conns[holder] = (len(self.conns) + 1, kind, fence)
        if limit > 1:
            self.own[holder] = 0
        if shared:
            self.readers.add(holder)
        self.events.append({"t": t, "ev": "begin", "conn": self.conns[holder][0], "kind": kind,
                            "holder": holder, "host": "h", "fence": fence, "wall_ns": 0,
                            "limit": limit, "shared": shared,
                            "slot": slot if limit > 1 else None})

    def admitted(self, holder, kind, fence, accepted):
        """ACCEPTED, or the recorder's fence rule: a writer needs a fence not smaller than any
        accepted before, a reader one larger than every writer's."""
        if kind != "redlockrun":
            return True if accepted is None else accepted
        reader = holder in self.readers
        if accepted is None:
            if reader:
                accepted = self.largest_exclusive is None or fence > self.largest_exclusive
            else:
                accepted = self.largest is None or fence >= self.largest
        if accepted and reader:
            self.largest = max(self.largest or fence, fence)
        elif accepted:
            self.largest = self.largest_exclusive = fence
        return accepted

    def write(self, t, holder, value=None, accepted=None):
        """A write as the recorder would judge it, unless accepted says otherwise. A semaphore
        holder's writes go to its own counter and are accepted unless told otherwise."""
        conn, kind, fence = self.conns[holder]
        if holder in self.own:
            accepted = True if accepted is None else accepted
            value = self.own[holder] + 1 if value is None else value
            if accepted:
                self.own[holder] = value
            self.events.append({"t": t, "ev": "write", "conn": conn, "value": value,
                                "accepted": accepted, "own": True})
            return
        accepted = self.admitted(holder, kind, fence, accepted)
        if value is None:  # a reader writes back what it read
            value = self.counter + (holder not in self.readers)
        if accepted:
            self.counter = value
        self.events.append({"t": t, "ev": "write", "conn": conn, "value": value,
                            "accepted": accepted})

    def read(self, t, holder, accepted=None):
        conn, kind, fence = self.conns[holder]
        if holder in self.own:
            self.events.append({"t": t, "ev": "read", "conn": conn, "value": self.own[holder],
                                "accepted": True if accepted is None else accepted, "own": True})
            return
        accepted = self.admitted(holder, kind, fence, accepted)
        self.events.append({"t": t, "ev": "read", "conn": conn, "value": self.counter,
                            "accepted": accepted})

    def check(self, started, answered, holder, status):
        """A --check that HOLDER's section ran from STARTED to ANSWERED, which answered STATUS."""
        conn, _, fence = self.conns[holder]
        self.events.append({"t": answered, "ev": "check", "conn": conn, "holder": holder,
                            "fence": fence, "status": status, "started": started})

    def end(self, t, holder, abrupt=False):
        self.events.append({"t": t, "ev": "end", "conn": self.conns[holder][0], "abrupt": abrupt})

    def section(self, start, stop, holder, fence, kind="redlockrun", limit=1, shared=False):
        """A section that writes once, halfway; a shared one reads a third of the way and writes
        back what it read two thirds of the way."""
        self.begin(start, holder, fence, kind, limit, shared)
        if shared:
            self.read(start + (stop - start) / 3, holder)
            self.write(start + (stop - start) * 2 / 3, holder)
        else:
            self.write((start + stop) / 2, holder)
        self.end(stop, holder)

    def verdict(self):
        """The checker's verdict; the times given in seconds are the recorder's nanoseconds."""
        events = [dict(e, t=int(e["t"] * 1e9), **({"started": int(e["started"] * 1e9)}
                                                  if "started" in e else {}))
                  for e in sorted(self.events, key=lambda e: e["t"])]
        taken = {}  # conn -> (slot, fence), of the semaphore sections open so far
        for event in events:
            if event["ev"] == "begin" and event.get("slot") == "auto":
                owner = {}  # slot -> the largest fence of the open sections in it
                for slot, fence in taken.values():
                    owner[slot] = max(owner.get(slot, fence), fence)
                free = set(range(event["limit"])) - set(owner)
                # None free: the slot whose newest section has the smallest fence is a stale
                # holder's, whose record lapsed.
                event["slot"] = min(free) if free else min(owner, key=owner.get)
                taken[event["conn"]] = (event["slot"], event["fence"])
            elif event["ev"] == "end":
                taken.pop(event["conn"], None)
        return check(events, self.contenders)


class CheckerTest(unittest.TestCase):
    def assertFlags(self, verdict, words):
        self.assertFalse(verdict.ok, "the checker let a bad history pass")
        self.assertTrue(any(words in p for p in verdict.problems), verdict.problems)

    def test_sections_one_after_another_pass(self):
        h = History()
        for i, holder in enumerate(["a", "b", "c"]):
            h.contender(holder)
            h.section(10 * i, 10 * i + 5, holder, 100 + i)
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.sections, v.explained, v.unexplained), (3, 0, 0))

    def test_an_overlap_nobody_allowed_fails(self):
        h = History()
        h.contender("a")
        h.contender("b")
        h.section(0, 10, "a", 1)
        h.section(5, 15, "b", 2)
        v = h.verdict()
        self.assertFlags(v, "unexplained overlap of a (fence 1) and b (fence 2)")
        self.assertEqual(v.unexplained, 1)

    def test_a_section_inside_another_is_an_overlap(self):
        h = History()
        h.contender("a")
        h.contender("b")
        h.begin(0, "a", 1)
        h.section(2, 3, "b", 2)
        h.end(10, "a")
        self.assertFlags(h.verdict(), "unexplained overlap")

    def test_a_lost_holder_still_running_when_the_next_began_fails(self):
        h = History()
        h.contender("a", status=76, expect=(76,))
        h.contender("b")
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.section(5, 15, "b", 2)
        h.end(8, "a", abrupt=True)
        v = h.verdict()
        self.assertFlags(v, "no fault in this scenario allows a, the stale holder, to overlap")
        self.assertEqual(v.lost, 1)

    def test_an_allowed_overlap_ordered_by_the_fence_passes(self):
        h = History()
        h.contender("a", status=76, expect=(76,), may_overlap=True)
        h.contender("b")
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.section(5, 15, "b", 2)
        h.write(12, "a", value=1)  # stale: refused by the recorder
        h.end(13, "a", abrupt=True)
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained, v.lost), (1, 0, 1))

    def test_an_allowed_overlap_longer_than_its_fault_allows_fails(self):
        # A TTL of 2 s, --kill-after 1s: a forgotten lock lets the stale holder run on for at most
        # 0.67 s until its renewal, 1 s more until its command is killed, and the stop margin.
        h = History()
        h.contender("a", status=76, expect=(76,), may_overlap=2.7)
        h.contender("b")
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.begin(5, "b", 2)
        h.write(6, "b")
        h.write(8, "a", value=1)  # stale: refused by the recorder
        h.end(15, "a", abrupt=True)
        h.end(16, "b")
        v = h.verdict()
        self.assertFlags(v, "unexplained overlap of a (fence 1) and b (fence 2): it lasted 10.0 s, "
                            "longer than the 2.7 s the fault allows a")
        self.assertEqual((v.explained, v.unexplained), (0, 1))

    def test_an_allowance_on_the_later_section_does_not_explain_the_stale_one(self):
        # The earlier holder, the smaller fence, was never told (it exits 0): its lock was split.
        h = History()
        h.contender("a")
        h.contender("b", may_overlap=3)
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.begin(5, "b", 2)
        h.write(5.5, "b")
        h.write(5.8, "a", value=1)  # refused
        h.end(6, "a")
        h.end(8, "b")
        v = h.verdict()
        self.assertFlags(v, "unexplained overlap of a (fence 1) and b (fence 2): no fault in this "
                            "scenario allows a")
        self.assertEqual((v.explained, v.unexplained), (0, 1))

    def test_an_overlap_the_resource_never_ordered_fails(self):
        # The newer holder never had an access accepted while the stale one kept writing: nothing
        # at the resource shows the fence ordering the two.
        for newer_reads in (True, False):
            h = History()
            h.contender("a", status=76, expect=(76,), may_overlap=3)
            h.contender("b")
            h.begin(0, "a", 1)
            h.write(1, "a")
            h.begin(5, "b", 2)
            if newer_reads:
                h.read(5.2, "b", accepted=False)
            h.write(6, "a", accepted=True)
            h.write(7, "a", accepted=True)
            h.end(7.5, "a", abrupt=True)
            h.end(8, "b")
            self.assertFlags(h.verdict(), "the newer holder had no access accepted while the "
                                          "stale one's were")

    def paused(self, status=76, resumed=None, ends=13):
        """A paused holder that may overlap a newer one (from 5 to 15) until the time RESUMED
        gives it (its resumption plus a margin; None: no bound given); it ends at ENDS."""
        h = History()
        h.contender("a", status=status, expect=(status,), may_overlap=False,
                    overlap_until=resumed)
        if resumed is None:
            h.contenders[-1]["may_overlap"] = True
        h.contender("b")
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.section(5, 15, "b", 2)
        h.write(12, "a", value=1)  # stale: refused
        h.end(ends, "a", abrupt=True)
        return h.verdict()

    def test_a_paused_holder_that_stops_shortly_after_it_resumes_passes(self):
        v = self.paused(resumed=14)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained), (1, 0))

    def test_a_paused_holder_that_runs_on_after_its_bound_fails(self):
        self.assertFlags(self.paused(resumed=11), "a ran on 2.0 s past the end its fault allows")

    def test_an_allowed_overlap_without_a_bound_fails(self):
        self.assertFlags(self.paused(), "the scenario gave a's overlap no bound")

    def test_an_allowed_stale_holder_that_was_never_told_fails(self):
        self.assertFlags(self.paused(status=0, resumed=14),
                         "a, the stale holder, exited 0, never told it lost the lock (76)")

    def broken(self, stale_ends, stale_fence=1, newer_begins=4.2, broken_at=4, status=76,
               lost_at=5.0):
        """A holder (TTL 3 s: it renews every second) whose claim a --break ended at BROKEN_AT,
        which it must say by its next renewal, a second later at most, and the margin (a second):
        by 6 by default; it says so at LOST_AT, and has the margin (a second) from then to stop.
        A waiter woken by the break begins at NEWER_BEGINS (fence 2) and writes; the broken
        section writes once more (refused, unless the fences are the wrong way) and ends at
        STALE_ENDS."""
        h = History()
        h.contender("a", status=status, expect=(status,), renew_every=1.0, broken_at=broken_at,
                    lost_at=lost_at)
        h.contender("b")
        h.begin(0, "a", stale_fence)
        h.write(1, "a")
        h.begin(newer_begins, "b", 2)
        h.write(newer_begins + 0.1, "b")
        h.write(newer_begins + 0.3, "a", value=1)
        h.end(stale_ends, "a", abrupt=True)
        h.end(newer_begins + 3, "b")
        return h.verdict()

    def test_a_broken_holder_that_stops_within_its_allowance_passes(self):
        v = self.broken(stale_ends=5.8)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained, v.lost), (1, 0, 1))

    def test_a_broken_holder_that_runs_on_past_its_allowance_fails(self):
        v = self.broken(stale_ends=6.5)
        self.assertFlags(v, "unexplained overlap of a (fence 1) and b (fence 2): a ran on 0.5 s "
                            "past the moment it said it lost the lock and 1.0 s to stop its "
                            "command")
        self.assertEqual((v.explained, v.unexplained), (0, 1))

    def test_a_broken_holder_that_runs_on_after_saying_it_lost_the_lock_fails(self):
        # Within its next renewal after the break, and yet 0.5 s past its own word.
        self.assertTrue(self.broken(stale_ends=5.8).ok)
        self.assertFlags(self.broken(stale_ends=5.8, lost_at=4.3),
                         "a ran on 0.5 s past the moment it said it lost the lock")

    def test_a_broken_holder_that_says_so_late_or_never_fails(self):
        self.assertTrue(self.broken(stale_ends=6.3, lost_at=5.9).ok)
        self.assertFlags(self.broken(stale_ends=6.6, lost_at=6.4),
                         "a said it lost the lock 0.4 s after its next renewal could have told "
                         "it (at most 1.0 s after the break, and 1.0 s)")
        self.assertFlags(self.broken(stale_ends=5.8, lost_at=None),
                         "a never said it lost the lock")

    def test_a_broken_holder_with_the_larger_fence_fails(self):
        # The same history passes with the fences the right way round: only the fence fails it.
        self.assertTrue(self.broken(stale_ends=5.8).ok)
        v = self.broken(stale_ends=5.8, stale_fence=5)
        self.assertFlags(v, "unexplained overlap of a (fence 5) and b (fence 2): the later "
                            "holder's fence is not larger")
        self.assertEqual((v.explained, v.unexplained), (0, 1))

    def test_an_overlap_that_began_before_the_break_fails(self):
        # The break explains nothing before it: b began while a's claim was whole.
        self.assertTrue(self.broken(stale_ends=5.8).ok)
        self.assertFlags(self.broken(stale_ends=5.8, newer_begins=3.5),
                         "the newer section began 0.5 s before the break that ended a's claim")

    def broken_before_it_began(self, stale_ends=5.5, accepted=False, broken=True, begins=4.5):
        """A run granted fence 1, whose claim a --break (at 4) ended before its command began: the
        waiter the break woke (fence 2) begins first, at 4.2, and the broken section at BEGINS,
        its accesses refused (unless ACCEPTED) as the newer holder has written; it says it lost
        the lock at 5 (or as it begins, if later) and ends at STALE_ENDS. BROKEN False: the same
        history without the break."""
        h = History()
        if broken:
            h.contender("a", status=76, expect=(76,), renew_every=1.0, broken_at=4,
                        lost_at=max(5, begins))
        else:
            h.contender("a", status=76, expect=(76,), may_overlap=3)
        h.contender("b")
        h.begin(4.2, "b", 2)
        h.write(4.3, "b")
        h.begin(begins, "a", 1)
        h.read(begins + 0.1, "a", accepted=accepted)
        h.write(begins + 0.2, "a", value=1, accepted=accepted)
        h.end(stale_ends, "a", abrupt=True)
        h.end(max(7, stale_ends + 1), "b")
        return h.verdict()

    def test_a_broken_holder_whose_section_began_last_passes_within_its_allowance(self):
        # Its grant came first, as its fence says: the break ended it before its command began.
        v = self.broken_before_it_began()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained, v.lost), (1, 0, 1))

    def test_a_broken_holder_whose_section_began_last_is_held_to_its_allowance(self):
        self.assertFlags(self.broken_before_it_began(stale_ends=6.5),
                         "unexplained overlap of b (fence 2) and a (fence 1): a ran on 0.5 s past "
                         "the moment it said it lost the lock")
        self.assertFlags(self.broken_before_it_began(accepted=True),
                         "the stale holder's access was accepted after the newer holder's")

    def test_a_broken_holder_whose_section_began_long_after_the_break_fails(self):
        # Its next renewal, a second after the break, had to tell it: a command that begins 8 s
        # after the break began without the lock, and its smaller fence is a fence gone back.
        self.assertTrue(self.broken_before_it_began(begins=5.9, stale_ends=6.2).ok)
        v = self.broken_before_it_began(begins=12, stale_ends=12.5)
        self.assertFlags(v, "fence went backwards: b had 2, then a began with 1")

    def test_only_a_break_lets_a_smaller_fence_begin_last(self):
        v = self.broken_before_it_began(broken=False)
        self.assertFlags(v, "unexplained overlap of b (fence 2) and a (fence 1): the later "
                            "holder's fence is not larger")
        self.assertFlags(v, "fence went backwards: b had 2, then a began with 1")

    def test_a_section_begun_after_a_break_that_did_not_name_it_keeps_the_fence_order(self):
        # c was not broken: its smaller fence beginning last is a fence gone backwards, even
        # though a broken holder's would not be.
        h = History()
        h.contender("a", status=76, expect=(76,), renew_every=1.0, broken_at=4)
        h.contender("b")
        h.contender("c")
        h.section(0, 5, "a", 1)
        h.section(5.5, 6, "b", 3)
        h.section(6.5, 7, "c", 2)
        self.assertFlags(h.verdict(), "fence went backwards: b had 3, then c began with 2")

    def test_the_break_counts_from_its_start_for_the_newer_and_its_end_for_the_stale(self):
        # --break ran from 4 to 4.5: the waiter it woke may begin during it (4.2), and the broken
        # holder must say it lost the lock by 4.5 + its renewal period + the margin.
        self.assertTrue(self.broken(stale_ends=6.8, broken_at=(4, 4.5), lost_at=6.4).ok)
        self.assertFlags(self.broken(stale_ends=6.8, broken_at=(4, 4.0), lost_at=6.4),
                         "a said it lost the lock 0.4 s after")
        self.assertFlags(self.broken(stale_ends=6.3, broken_at=(4.3, 4.5)),
                         "the newer section began 0.1 s before the break")

    def test_a_break_allowance_without_a_break_fails(self):
        self.assertFlags(self.broken(stale_ends=5.8, broken_at=None),
                         "a may overlap only after a --break, and no break named it")

    def test_a_broken_holder_never_told_fails(self):
        self.assertFlags(self.broken(stale_ends=5.8, status=0),
                         "a, the stale holder, exited 0, never told it lost the lock (76)")

    def test_an_allowed_overlap_whose_stale_write_was_accepted_fails(self):
        h = History()
        h.contender("a", status=76, expect=(76,), may_overlap=True)
        h.contender("b")
        h.begin(0, "a", 1)
        h.section(5, 15, "b", 2)
        h.write(12, "a", accepted=True)  # a resource that ignored the fence
        h.end(13, "a")
        self.assertFlags(h.verdict(), "stale holder's access was accepted")

    def test_a_stale_read_accepted_after_the_newer_holders_read_fails(self):
        h = History()
        h.contender("a", status=76, expect=(76,), may_overlap=True)
        h.contender("b")
        h.begin(0, "a", 1)
        h.begin(5, "b", 2)
        h.read(6, "b")
        h.read(7, "a", accepted=True)  # a resource that fenced writes only
        h.end(13, "a")
        h.end(15, "b")
        self.assertFlags(h.verdict(), "stale holder's access was accepted")

    def test_an_allowed_overlap_with_the_fences_the_wrong_way_fails(self):
        h = History()
        h.contender("a", may_overlap=True)
        h.contender("b")
        h.begin(0, "a", 5)
        h.write(1, "a")
        h.section(5, 15, "b", 2)  # refused: its fence is smaller
        h.write(12, "a")
        h.end(13, "a")
        v = h.verdict()
        self.assertFlags(v, "later holder's fence is not larger")
        self.assertFlags(v, "fence went backwards")

    def test_equal_fences_do_not_order_an_overlap(self):
        h = History()
        h.contender("a", may_overlap=True)
        h.contender("b")
        h.begin(0, "a", 7)
        h.section(5, 15, "b", 7)
        h.end(13, "a")
        self.assertFlags(h.verdict(), "fence is not larger")

    def test_a_classic_overlap_is_never_explained(self):
        h = History()
        h.contender("a", may_overlap=True)
        h.contender("c", kind="classic")
        h.begin(0, "a", 1)
        h.section(5, 15, "c", None, kind="classic")
        h.end(13, "a")
        self.assertFlags(h.verdict(), "classic section has no fence")

    def test_fences_that_go_backwards_without_an_overlap_fail(self):
        h = History()
        h.contender("a")
        h.contender("b")
        h.section(0, 5, "a", 10)
        h.section(6, 9, "b", 3)
        self.assertFlags(h.verdict(), "fence went backwards")

    def test_a_lost_increment_fails(self):
        h = History()
        h.contender("a", kind="classic")
        h.contender("b", kind="classic")
        h.begin(0, "a", None, kind="classic")
        h.write(1, "a", value=1)
        h.end(2, "a")
        h.begin(3, "b", None, kind="classic")
        h.write(4, "b", value=1)  # read before a's write landed: an increment lost
        h.end(5, "b")
        self.assertFlags(h.verdict(), "lost increment")

    def test_a_section_that_never_ended_fails(self):
        h = History()
        h.contender("a", status=None, expect=(0,))
        h.begin(0, "a", 1)
        v = h.verdict()
        self.assertFlags(v, "never ended")
        self.assertFlags(v, "killed at the end")

    def test_an_unexpected_exit_status_fails(self):
        h = History()
        h.contender("a", status=69, expect=(0, 76))
        self.assertFlags(h.verdict(), "a exited 69, expected [0, 76]")

    def test_success_without_a_section_fails(self):
        h = History()
        h.contender("a")
        self.assertFlags(h.verdict(), "exited 0 without a complete section")

    def test_success_with_a_killed_section_fails(self):
        h = History()
        h.contender("a")
        h.begin(0, "a", 1)
        h.end(1, "a", abrupt=True)
        self.assertFlags(h.verdict(), "exited 0 without a complete section")

    def test_a_section_of_a_stranger_fails(self):
        h = History()
        h.section(0, 1, "ghost", 1)
        self.assertFlags(h.verdict(), "did not start")

    def test_a_redlockrun_section_without_a_fence_fails(self):
        h = History()
        h.contender("a")
        h.begin(0, "a", None)
        h.write(1, "a", accepted=False)
        h.end(2, "a")
        self.assertFlags(h.verdict(), "had no REDLOCKRUN_FENCE")


class CheckAnswerTest(unittest.TestCase):
    """--check answers that a hold's section recorded: 0 (intact) is wrong while a newer holder's
    section runs from before the check started until after it answered."""

    assertFlags = CheckerTest.assertFlags

    def lost_hold(self, checks, newer_fence=2, newer_kind="redlockrun", stale_status=76):
        """A hold (fence 1) whose lock was lost: it runs on beside b, which begins at 5 and ends
        at 10, and ends at 9, allowed to. Its section's CHECKS are (started, answered, status)."""
        h = History()
        h.contender("a", status=stale_status, expect=(stale_status,), may_overlap=5)
        h.contender("b", kind=newer_kind)
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.begin(5, "b", newer_fence, kind=newer_kind)
        h.write(6, "b")
        h.write(7, "a", value=1)  # stale: refused
        for started, answered, status in checks:
            h.check(started, answered, "a", status)
        h.end(9, "a", abrupt=True)
        h.end(10, "b")
        return h.verdict()

    def test_a_check_of_0_inside_a_newer_holders_section_fails(self):
        v = self.lost_hold([(7.5, 7.6, 0)])
        self.assertFlags(v, "unexplained --check answer: a (fence 1) was told its hold was intact "
                            "(0) by a --check asked 2.50 s after the section of b (fence 2) "
                            "began, and answered before it ended; b is a newer holder")
        self.assertEqual((v.checks, v.wrong_checks), (1, 1))

    def test_a_check_of_0_before_the_newer_holder_began_passes(self):
        v = self.lost_hold([(2, 2.1, 0), (7.5, 7.6, 76)])
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.checks, v.wrong_checks, v.explained), (2, 0, 1))

    def test_a_check_of_76_inside_a_newer_holders_section_passes(self):
        v = self.lost_hold([(5.5, 5.6, 76), (7.5, 7.6, 76)])
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.checks, v.wrong_checks), (2, 0))

    def test_a_check_that_may_have_asked_before_the_newer_grant_passes(self):
        # Started before b's section began and answered after: Redis may have been asked before
        # b's grant, while a still held the lock. Likewise one answered after b's section ended.
        v = self.lost_hold([(4.9, 5.1, 0), (9.9, 10.1, 0)])
        self.assertTrue(v.ok, v.problems)

    def test_a_check_of_69_passes(self):
        self.assertTrue(self.lost_hold([(7.5, 7.6, 69)]).ok)

    def test_a_check_of_0_beside_an_older_stale_holder_passes(self):
        # The newer holder is the one asking: the stale one running on does not make it wrong.
        h = History()
        h.contender("a", status=76, expect=(76,), may_overlap=5)
        h.contender("b")
        h.begin(0, "a", 1)
        h.write(1, "a")
        h.begin(5, "b", 2)
        h.write(6, "b")
        h.check(6.5, 6.6, "b", 0)
        h.end(8, "a", abrupt=True)
        h.end(10, "b")
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.checks, v.wrong_checks), (1, 0))

    def test_a_check_of_0_inside_a_classic_section_fails(self):
        v = self.lost_hold([(7.5, 7.6, 0)], newer_fence=None, newer_kind="classic")
        self.assertFlags(v, "unexplained --check answer: a (fence 1) was told its hold was intact "
                            "(0) by a --check asked 2.50 s after the section of b (fence None) "
                            "began, and answered before it ended; b is a classic section")

    def test_a_check_of_0_inside_a_section_that_never_ended_fails(self):
        h = History()
        h.contender("a")
        h.contender("b")
        h.section(0, 4, "a", 1)
        h.begin(2, "b", 2)
        h.check(3, 3.1, "a", 0)
        self.assertFlags(h.verdict(), "unexplained --check answer: a (fence 1)")

    def test_readers_checks_of_0_beside_each_other_pass(self):
        h = History()
        for holder, fence in (("r1", 1), ("r2", 2)):
            h.contender(holder, shared=True)
        h.begin(0, "r1", 1, shared=True)
        h.begin(1, "r2", 2, shared=True)
        h.check(2, 2.1, "r1", 0)
        h.end(3, "r1")
        h.end(4, "r2")
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.checks, v.wrong_checks), (1, 0))

    def test_a_readers_check_of_0_inside_a_newer_writers_section_fails(self):
        h = History()
        h.contender("r", shared=True, status=76, expect=(76,), may_overlap=5)
        h.contender("x")
        h.begin(0, "r", 1, shared=True)
        h.begin(2, "x", 2)
        h.write(2.5, "x")
        h.check(3, 3.1, "r", 0)
        h.end(4, "r", abrupt=True)
        h.end(5, "x")
        self.assertFlags(h.verdict(), "unexplained --check answer: r (fence 1)")


class SemaphoreTest(unittest.TestCase):
    """Sections of --limit N holders: up to N at once, never beside an exclusive or classic one."""

    assertFlags = CheckerTest.assertFlags

    def semaphore(self, h, times, limit=3, first_fence=10, **contender):
        """Holders s0, s1, ... with sections at TIMES (start, stop) and fences growing from
        FIRST_FENCE (or given as a third element)."""
        for i, (start, stop, *fence) in enumerate(times):
            h.contender(f"s{i}", limit=limit, **contender)
            h.section(start, stop, f"s{i}", fence[0] if fence else first_fence + i, limit=limit)

    def test_n_sections_at_once_pass(self):
        h = History()
        self.semaphore(h, [(0, 10), (1, 11), (2, 12), (10.5, 20), (11.5, 21), (12.5, 22)])
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.sections, v.explained, v.unexplained), (6, 0, 0))

    def test_sections_that_begin_out_of_fence_order_pass(self):
        # A holder granted first may start its command last.
        h = History()
        self.semaphore(h, [(0, 10, 12), (1, 11, 10), (2, 12, 11)])
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)

    def test_n_plus_one_sections_at_once_fail(self):
        h = History()
        self.semaphore(h, [(0, 10), (1, 11), (2, 12), (3, 13)])
        v = h.verdict()
        self.assertFlags(v, "unexplained overlap beyond the limit 3: 4 semaphore sections at once")
        self.assertFlags(v, "no fault in this scenario allows the stale sections (the smallest "
                            "fences) to overlap: s0")
        self.assertEqual(v.unexplained, 1)

    def test_n_plus_two_with_one_stale_holder_fails(self):
        h = History()
        h.contender("stale", status=76, expect=(76,), may_overlap=True, limit=2)
        h.begin(0, "stale", 1, limit=2)
        h.write(1, "stale")
        self.semaphore(h, [(2, 10), (3, 11), (4, 12)], limit=2)
        h.write(5, "stale", accepted=False)
        h.end(13, "stale", abrupt=True)
        self.assertFlags(h.verdict(), "4 semaphore sections at once, stale (fence 1), s0 (fence "
                                      "10), s1 (fence 11), s2 (fence 12): no fault in this "
                                      "scenario allows the stale sections (the smallest fences) "
                                      "to overlap: s0")

    def test_a_section_beside_an_exclusive_one_fails(self):
        h = History()
        self.semaphore(h, [(0, 10), (1, 11)])
        h.contender("x")
        h.section(5, 15, "x", 20)
        self.assertFlags(h.verdict(), "unexplained overlap of s0 (fence 10) and x (fence 20)")

    def test_an_exclusive_section_inside_a_semaphore_section_fails(self):
        h = History()
        h.contender("x")
        h.section(0, 1, "x", 5)
        self.semaphore(h, [(2, 10)], first_fence=6)
        h.contender("y")
        h.section(3, 4, "y", 7)
        self.assertFlags(h.verdict(), "unexplained overlap of s0 (fence 6) and y (fence 7)")

    def test_a_section_beside_a_classic_one_fails(self):
        h = History()
        self.semaphore(h, [(0, 10)], may_overlap=True)
        h.contender("c", kind="classic")
        h.section(5, 15, "c", None, kind="classic")
        self.assertFlags(h.verdict(), "classic section has no fence")

    def test_repeated_fences_fail(self):
        h = History()
        self.semaphore(h, [(0, 10, 7), (1, 11, 7)])
        self.assertFlags(h.verdict(), "repeated fence 7: s0, s1")

    def test_an_exclusive_fence_larger_than_a_later_semaphore_fence_fails(self):
        h = History()
        h.contender("x")
        h.section(0, 5, "x", 20)
        self.semaphore(h, [(6, 10), (7, 11)])
        self.assertFlags(h.verdict(), "fence went backwards: x had 20, then s0 began with 10")

    def test_a_semaphore_fence_larger_than_a_later_exclusive_fence_fails(self):
        h = History()
        self.semaphore(h, [(0, 10, 30), (1, 11, 10)])
        h.contender("x")
        h.section(12, 15, "x", 20)
        self.assertFlags(h.verdict(), "fence went backwards: s0 had 30, then x began with 20")

    def test_a_section_that_began_after_a_later_grant_ended_counts_from_that_grant(self):
        # s1 (fence 11) was granted before s2 (fence 12), so it held the semaphore during s2's
        # whole section, even though its own began after s2 ended: with s0, three at once.
        times = [(0, 100, 10), (20, 30, 11), (5, 10, 12)]
        h = History()
        self.semaphore(h, times, limit=2)
        self.assertFlags(h.verdict(), "beyond the limit 2: 3 semaphore sections at once")
        h = History()
        self.semaphore(h, times, limit=3)
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)

    def test_sections_with_another_limit_at_once_fail(self):
        h = History()
        self.semaphore(h, [(0, 10)], limit=3)
        h.contender("two", limit=2)
        h.section(5, 15, "two", 20, limit=2)
        self.assertFlags(h.verdict(), "every holder of a semaphore must use the same limit")

    def stale_holder(self, accepted_after=False, stale_fence=1):
        """Limit 2: "stale" holds, s0 holds; stale is paused, s1 takes its place."""
        h = History()
        h.contender("stale", status=76, expect=(76,), may_overlap=True, limit=2)
        h.begin(0, "stale", stale_fence, limit=2)
        h.write(1, "stale")
        self.semaphore(h, [(2, 30), (10, 20)], limit=2)
        h.write(25, "stale", accepted=accepted_after)
        h.end(26, "stale", abrupt=True)
        return h.verdict()

    def test_an_allowed_overlap_beyond_the_limit_ordered_by_the_fence_passes(self):
        v = self.stale_holder()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained, v.lost), (1, 0, 1))

    def test_two_sections_open_at_once_in_one_slot_fail(self):
        h = History()
        for holder, start, stop, fence, slot in (("s0", 0, 10, 10, 0), ("s1", 1, 11, 11, 0)):
            h.contender(holder, limit=3)
            h.begin(start, holder, fence, limit=3, slot=slot)
            h.write(start + 0.5, holder)
            h.end(stop, holder)
        self.assertFlags(h.verdict(), "s0 (fence 10) and s1 (fence 11) held slot 0 at once: no "
                                      "fault in this scenario allows s0 to be stale")

    def test_one_slot_after_another_passes_and_a_missing_or_out_of_range_slot_fails(self):
        h = History()
        for holder, start, stop, fence in (("s0", 0, 10, 10), ("s1", 10, 20, 11)):
            h.contender(holder, limit=2)
            h.begin(start, holder, fence, limit=2, slot=1)
            h.end(stop, holder)
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        for slot in (None, 2):
            h = History()
            h.contender("s0", limit=2)
            h.begin(0, "s0", 10, limit=2, slot=slot)
            h.end(5, "s0")
            self.assertFlags(h.verdict(), f"had no REDLOCKRUN_SLOT from 0 to 1: {slot}")

    def test_a_stale_holder_whose_slot_went_to_a_newer_one_passes_only_within_its_bound(self):
        def history(stop):
            h = History()
            h.contender("stale", status=76, expect=(76,), may_overlap=2, limit=2)
            h.begin(0, "stale", 1, limit=2, slot=0)
            h.write(1, "stale")
            h.contender("newer", limit=2)
            h.begin(5, "newer", 2, limit=2, slot=0)
            h.write(6, "newer")
            h.end(stop, "stale", abrupt=True)
            h.end(20, "newer")
            return h.verdict()
        v = history(stop=6.5)
        self.assertTrue(v.ok, v.problems)
        self.assertFlags(history(stop=9), "held slot 0 at once")

    def test_an_allowed_overlap_whose_stale_write_was_accepted_fails(self):
        # s1 has ended by then: a fenced resource refuses the outnumbered holder for good.
        self.assertFlags(self.stale_holder(accepted_after=True),
                         "accepted an access of stale after 2 sections with larger fences")

    def test_an_allowed_overlap_with_the_fences_the_wrong_way_fails(self):
        self.assertFlags(self.stale_holder(stale_fence=50),
                         "no fault in this scenario allows the stale sections (the smallest "
                         "fences) to overlap: s0")

    def test_broken_semaphore_holders_stop_within_their_allowance(self):
        # Limit 2: both holders broken at 4 (renewing every second: until 6), two waiters take
        # their places at once; the recorder refuses the broken ones as the new ones write.
        def history(second_ends):
            h = History()
            for holder, fence in (("old1", 1), ("old2", 2)):
                h.contender(holder, status=76, expect=(76,), limit=2, renew_every=1.0,
                            broken_at=4, lost_at=5)
                h.begin(0, holder, fence, limit=2)
                h.write(1, holder)
            self.semaphore(h, [(4.2, 9), (4.4, 10)], limit=2)
            h.write(5, "old1", accepted=False)
            h.write(5, "old2", accepted=False)
            h.end(5.5, "old1", abrupt=True)
            h.end(second_ends, "old2", abrupt=True)
            return h.verdict()
        v = history(second_ends=5.9)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained), (2, 0))
        self.assertFlags(history(second_ends=7),
                         "old2 ran on 1.0 s past the moment it said it lost the lock")

    def test_two_stale_holders_are_refused_as_the_newer_ones_come(self):
        # A forgotten semaphore: both holders are stale; the second stale holder may go on until
        # the second newer one has its first access.
        h = History()
        for holder, fence in (("old1", 1), ("old2", 2)):
            h.contender(holder, status=76, expect=(76,), may_overlap=True, limit=2)
            h.begin(0, holder, fence, limit=2)
            h.write(1, holder)
        self.semaphore(h, [(5, 20), (4, 30)], limit=2)  # s1 began first, s0 wrote first (12.5)
        h.write(13, "old2")  # one newer holder, one place left
        h.write(14, "old1", accepted=False)
        h.write(20.5, "old2", accepted=False)
        h.end(22, "old1", abrupt=True)
        h.end(23, "old2", abrupt=True)
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained), (2, 0))
        h.write(21.5, "old2", accepted=True)  # after both newer ones had theirs
        self.assertFlags(h.verdict(), "accepted an access of old2")

    def test_a_write_of_its_own_counter_that_lost_an_increment_fails(self):
        h = History()
        h.contender("s", limit=2)
        h.begin(0, "s", 1, limit=2)
        h.write(1, "s")
        h.write(2, "s", value=0)  # a stale read's write, accepted
        h.end(3, "s")
        self.assertFlags(h.verdict(), "lost increment: the counter of its own went from 1 to 0")

    def test_semaphore_writes_leave_the_shared_counter_alone(self):
        h = History()
        h.contender("x")
        h.section(0, 1, "x", 1)
        self.semaphore(h, [(2, 10), (3, 11)], limit=2)
        h.contender("y")
        h.section(12, 13, "y", 20)  # the shared counter goes from 1 to 2
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)


class SharedTest(unittest.TestCase):
    """Sections of shared locks (redlockrun -s), readers: any number at once, never beside an
    exclusive, classic or semaphore section. A reader writes back the value it read."""

    assertFlags = CheckerTest.assertFlags

    def readers(self, h, times, first_fence=10, **contender):
        """Readers r0, r1, ... with sections at TIMES (start, stop) and fences growing from
        FIRST_FENCE (or given as a third element)."""
        for i, (start, stop, *fence) in enumerate(times):
            h.contender(f"r{i}", shared=True, **contender)
            h.section(start, stop, f"r{i}", fence[0] if fence else first_fence + i, shared=True)

    def test_readers_overlapping_each_other_pass(self):
        # Between two writers; the readers begin out of the order of their fences, as readers
        # granted together may.
        h = History()
        h.contender("x")
        h.section(0, 1, "x", 5)
        self.readers(h, [(2, 10, 12), (3, 9, 10), (4, 12, 11)])
        h.contender("y")
        h.section(13, 14, "y", 20)
        v = h.verdict()
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.sections, v.explained, v.unexplained), (5, 0, 0))

    def test_a_reader_overlapping_a_writer_without_an_allowance_fails(self):
        for reader_first in (True, False):
            h = History()
            h.contender("r", shared=True)
            h.contender("x")
            if reader_first:
                h.section(0, 10, "r", 1, shared=True)
                h.section(5, 15, "x", 2)
                names = "r (fence 1, shared) and x (fence 2)"
            else:
                h.section(0, 10, "x", 1)
                h.section(5, 15, "r", 2, shared=True)
                names = "x (fence 1) and r (fence 2, shared)"
            v = h.verdict()
            self.assertFlags(v, f"unexplained overlap of {names}: no fault in this scenario "
                                "allows")
            self.assertEqual(v.unexplained, 1)

    def test_a_reader_beside_a_classic_section_fails(self):
        # A classic client's section counts as exclusive, and has no fence to order it.
        h = History()
        self.readers(h, [(0, 10)], status=76, expect=(76,), may_overlap=True)
        h.contender("c", kind="classic")
        h.section(5, 15, "c", None, kind="classic")
        self.assertFlags(h.verdict(), "unexplained overlap of r0 (fence 10, shared) and c (fence "
                                      "None): a classic section has no fence")

    def paused_reader(self, resumed, reader_fence=1, write_back_accepted=None):
        """A reader (READER_FENCE) read 0 and was paused past its TTL; a writer (fence 2) begins
        at 5 and writes 1 at 10; the reader, continued, writes back 0 at 12 (refused unless
        WRITE_BACK_ACCEPTED) and ends at 13, 76. Its allowance ends at RESUMED."""
        h = History()
        h.contender("r", status=76, expect=(76,), overlap_until=resumed, shared=True)
        h.contender("x")
        h.begin(0, "r", reader_fence, shared=True)
        h.read(1, "r")
        h.section(5, 15, "x", 2)
        h.write(12, "r", value=0, accepted=write_back_accepted)
        h.end(13, "r", abrupt=True)
        return h.verdict()

    def test_a_writer_overlapping_a_paused_reader_within_its_allowance_passes(self):
        v = self.paused_reader(resumed=14)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained, v.lost), (1, 0, 1))

    def test_a_writer_overlapping_a_paused_reader_beyond_its_allowance_fails(self):
        v = self.paused_reader(resumed=11)
        self.assertFlags(v, "unexplained overlap of r (fence 1, shared) and x (fence 2): r ran on "
                            "2.0 s past the end its fault allows")
        self.assertEqual((v.explained, v.unexplained), (0, 1))

    def test_a_paused_reader_with_the_larger_fence_fails(self):
        v = self.paused_reader(resumed=14, reader_fence=3)
        self.assertFlags(v, "unexplained overlap of r (fence 3, shared) and x (fence 2): the later "
                            "holder's fence is not larger")
        self.assertFlags(v, "fence went backwards: r had 3, then x began with 2")

    def test_a_paused_readers_write_back_accepted_after_the_writer_fails(self):
        # A resource that served the stale reader: its write-back undoes the writer's increment.
        v = self.paused_reader(resumed=14, write_back_accepted=True)
        self.assertFlags(v, "the stale holder's access was accepted after the newer holder's")
        self.assertFlags(v, "lost increment: the counter went from 1 to 0, written back by r, a "
                            "shared section")

    def test_a_reader_overlapping_a_paused_writer_within_its_allowance_passes(self):
        def history(resumed):
            h = History()
            h.contender("x", status=76, expect=(76,), overlap_until=resumed)
            h.begin(0, "x", 1)
            h.read(0.5, "x")
            self.readers(h, [(5, 15), (6, 16)], first_fence=2)
            h.write(12, "x", value=1)  # refused: the readers' fences are larger
            h.end(13, "x", abrupt=True)
            return h.verdict()
        v = history(resumed=14)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.explained, v.unexplained), (2, 0))
        self.assertFlags(history(resumed=12), "x ran on 1.0 s past the end its fault allows")

    def test_a_lost_increment_of_a_writer_interleaving_with_a_reader_fails(self):
        # The reader read 0, the writer made it 1 in between, the reader wrote 0 back.
        h = History()
        h.contender("r", shared=True)
        h.contender("x")
        h.begin(0, "r", 1, shared=True)
        h.read(1, "r")
        h.begin(2, "x", 2)
        h.read(2.5, "x")
        h.write(3, "x")
        h.write(4, "r", value=0, accepted=True)
        h.end(5, "x")
        h.end(6, "r")
        self.assertFlags(h.verdict(), "lost increment: the counter went from 1 to 0, written back "
                                      "by r, a shared section, whose write-back must leave it as "
                                      "it was")

    def test_a_reader_that_changes_the_counter_fails(self):
        # Among readers alone, which may overlap: only the write-back rule sees it.
        h = History()
        self.readers(h, [(0, 10), (1, 11)])
        h.write(10.5, "r1", value=1)
        v = h.verdict()
        self.assertFlags(v, "lost increment: the counter went from 0 to 1, written back by r1")
        self.assertEqual(v.unexplained, 0)

    def test_a_write_under_a_reader_between_its_reads_fails(self):
        # The write came after the reader's write-back, before its next read: the reader saw the
        # counter change while it held the lock.
        h = History()
        h.contender("r", shared=True)
        h.contender("c", kind="classic")
        h.begin(0, "r", 1, shared=True)
        h.read(1, "r")
        h.write(2, "r")
        h.section(3, 4, "c", None, kind="classic")
        h.read(5, "r")
        h.write(6, "r")
        h.end(7, "r")
        self.assertFlags(h.verdict(), "the counter changed under r, a shared section: it read 0, "
                                      "1; a write ran while it held the lock")

    def test_a_reader_beside_a_semaphore_section_fails(self):
        # Even where the pair would be explained as a stale holder fenced off by a newer one:
        # redlockrun never lets shared and --limit holders share a key.
        for reader_first in (True, False):
            h = History()
            stale, newer = (("r", {"shared": True}), ("s", {"limit": 2}))[::1 if reader_first
                                                                           else -1]
            h.contender(stale[0], status=76, expect=(76,), may_overlap=True, **stale[1])
            h.contender(newer[0], **newer[1])
            h.begin(0, stale[0], 1, **stale[1])
            h.read(1, stale[0])
            h.section(5, 15, newer[0], 2, **newer[1])
            h.write(12, stale[0], value=0, accepted=False)
            h.end(13, stale[0], abrupt=True)
            v = h.verdict()
            names = ("r (fence 1, shared) and s (fence 2, limit 2)" if reader_first
                     else "s (fence 1, limit 2) and r (fence 2, shared)")
            self.assertFlags(v, f"unexplained overlap of {names}: redlockrun refuses to mix "
                                "--shared and --limit on one key")
            self.assertEqual((v.explained, v.unexplained), (0, 1))

    def test_a_reader_whose_fence_is_smaller_than_an_earlier_writers_fails(self):
        h = History()
        h.contender("x")
        h.section(0, 5, "x", 20)
        self.readers(h, [(6, 10)])
        self.assertFlags(h.verdict(), "fence went backwards: x had 20, then r0 began with 10")

    def test_a_writer_whose_fence_is_smaller_than_an_earlier_readers_fails(self):
        # The readers began out of their fences' order, which they may; the writer after them
        # must pass the largest of them, not the last to begin.
        h = History()
        self.readers(h, [(0, 4, 12), (1, 5, 10)])
        h.contender("x")
        h.section(6, 8, "x", 11)
        self.assertFlags(h.verdict(), "fence went backwards: r0 had 12, then x began with 11")

    def test_a_section_whose_mode_is_not_its_contenders_fails(self):
        h = History()
        h.contender("r", shared=True)
        h.section(0, 1, "r", 1)
        self.assertFlags(h.verdict(), "the section of r began as exclusive, and its contender is "
                                      "shared")

    def test_a_section_whose_limit_is_not_its_contenders_fails(self):
        # A semaphore's contender whose section began as an exclusive one, and the other way:
        # the limit is the contender's word against the section's, never silently taken over.
        h = History()
        h.contender("s", limit=3)
        h.section(0, 1, "s", 1)
        self.assertFlags(h.verdict(), "the section of s began with limit 1, and its contender was "
                                      "started with limit 3")
        h = History()
        h.contender("x")
        h.section(0, 1, "x", 1, limit=3)
        self.assertFlags(h.verdict(), "the section of x began with limit 3, and its contender was "
                                      "started with limit 1")
        h = History()
        h.contender("s", limit=3)
        h.section(0, 1, "s", 1, limit=3)
        self.assertTrue(h.verdict().ok)

    def test_a_contender_with_two_sections_fails(self):
        # One run, one command: a second section is the command run twice on one grant.
        h = History()
        h.contender("a")
        h.section(0, 1, "a", 1)
        h.section(2, 3, "a", 2)
        self.assertFlags(h.verdict(), "a had 2 critical sections in one run")


class RunTest(unittest.TestCase):
    """What a run adds to the checker's verdict (harness.run_scenario): a run that confirmed no
    fault, reached fewer sections than its scenario declares, or found Redis unavailable in every
    contender fails. The runs start a recorder and, for the last, a stand-in for redlockrun."""

    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="redlockrun-run-test.")
        self.binary = os.path.join(self.directory, "unavailable")
        with open(self.binary, "w", encoding="utf-8") as out:
            out.write("#!/bin/sh\nexit 69\n")
        os.chmod(self.binary, 0o755)
        self.environment = mock.patch.dict(os.environ, {"REDLOCKRUN": self.binary})
        self.environment.start()

    def tearDown(self):
        self.environment.stop()
        shutil.rmtree(self.directory)

    def run_of(self, function, sections=(0, 0)):
        spec = harness.Spec("self-test", "a self-test", function, 1, 1, 30, *sections)
        verdict, _ = harness.run_scenario(spec, False, 0)
        return verdict

    def test_a_confirmed_fault_passes(self):
        v = self.run_of(lambda s: s.confirm("the fault", lambda: True))
        self.assertTrue(v.ok, v.problems)

    def test_a_fault_that_cannot_be_confirmed_fails(self):
        v = self.run_of(lambda s: s.confirm("the fault", lambda: False, timeout=0.1))
        CheckerTest.assertFlags(self, v, "the fault could not be confirmed: the fault")

    def test_a_run_that_confirms_no_fault_fails(self):
        v = self.run_of(lambda s: None)
        CheckerTest.assertFlags(self, v, "the scenario never confirmed that its fault happened")

    def test_a_run_below_its_minimum_of_sections_fails(self):
        v = self.run_of(lambda s: s.confirm("the fault", lambda: True), sections=(1, 5))
        CheckerTest.assertFlags(self, v, "0 critical sections, fewer than the 1 this scenario "
                                         "must reach")

    def test_a_run_where_every_contender_found_redis_unavailable_fails(self):
        def unavailable(s):
            for _ in range(2):
                s.wait_exit(s.redlockrun(url="redis://127.0.0.1:1", expect=(69,)))
            s.confirm("the fault", lambda: True)
        v = self.run_of(unavailable, sections=(1, 1))
        CheckerTest.assertFlags(self, v, "every contender exited 69 (Redis unavailable): the run "
                                         "tested nothing")

    def test_shared_contenders_take_the_lock_shared_and_run_reader_sections(self):
        # A stand-in that logs its arguments and gives the command a fence of its own (its pid);
        # for --hold it prints the assignments, --release succeeds. A run and a hold, both shared,
        # hold the lock at once: their sections must say so, or the checker sees an overlap.
        arguments = os.path.join(self.directory, "arguments")
        with open(self.binary, "w", encoding="utf-8") as out:
            out.write(f"""#!/bin/sh
echo "$*" >>{arguments}
case " $* " in
*" --release "*) exit 0 ;;
*" --hold "*) echo "REDLOCKRUN_FENCE=$$; export REDLOCKRUN_FENCE"; exit 0 ;;
esac
for word; do shift; [ "$word" = -- ] && break; done
REDLOCKRUN_FENCE=$$ exec "$@"
""")

        def readers(s):
            both = [s.redlockrun(url="redis://127.0.0.1:1", shared=True, until="end"),
                    s.hold(url="redis://127.0.0.1:1", shared=True, until="end")]
            s.wait_for("both sections", lambda: all(s.began(c) for c in both))
            s.fire("end")
            s.confirm("two readers at once", lambda: True)
        v = self.run_of(readers, sections=(2, 2))
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.sections, v.explained, v.unexplained), (2, 0, 0))
        with open(arguments, encoding="utf-8") as logged:
            lines = logged.read().splitlines()
        self.assertEqual(sum(" -s " in f" {line} " for line in lines), 2, lines)
        with self.assertRaises(TypeError):
            harness.Scenario.redlockrun(None, url="u", shared=True, limit=2)

    def test_a_holds_section_runs_check_when_asked_and_the_recorder_logs_its_answer(self):
        # A stand-in whose --check answers 76 the second time; the hold's section runs it at the
        # scenario's request, and the recorder's check events carry the answers in order.
        count = os.path.join(self.directory, "checks")
        with open(self.binary, "w", encoding="utf-8") as out:
            out.write(f"""#!/bin/sh
case " $* " in
*" --release "*) exit 0 ;;
*" --hold "*) echo "REDLOCKRUN_FENCE=$$; export REDLOCKRUN_FENCE"; exit 0 ;;
*" --check "*) echo x >>{count}; [ "$(wc -l <{count})" -lt 2 ] || exit 76; exit 0 ;;
esac
exit 64
""")
        answers = []

        def checking(s):
            hold = s.hold(url="redis://127.0.0.1:1", until="end", checks=True)
            s.wait_for("the section", lambda: s.began(hold))
            answers.extend(hold.check() for _ in range(2))
            s.fire("end")
            s.confirm("two checks", lambda: True)
        v = self.run_of(checking, sections=(1, 1))
        self.assertTrue(v.ok, v.problems)
        self.assertEqual([a["status"] for a in answers], [0, 76])
        self.assertTrue(all(a["started"] < a["t"] for a in answers), answers)
        self.assertEqual((v.checks, v.wrong_checks), (2, 0))
        with self.assertRaises(TypeError):  # a hold started without checks=True
            harness.Hold.check(mock.Mock(checks=None, id="h1"))

    def test_an_interactive_hold_is_typed_at_the_shells_prompt_and_ends_with_the_shell(self):
        # A stand-in whose --release reports a loss: the shell typed into runs the hold, the
        # section and the release in turn, at its prompts, and exits with the release's status.
        with open(self.binary, "w", encoding="utf-8") as out:
            out.write("""#!/bin/sh
case " $* " in
*" --release "*) echo "stand-in: released" >&2; exit 76 ;;
*" --hold "*) echo "export REDLOCKRUN_FENCE=$$"; exit 0 ;;
esac
exit 64
""")
        held = []

        def by_hand(s):
            hold = s.interactive_hold(url="redis://127.0.0.1:1", expect=(76,), reaction=0.05)
            s.wait_exit(hold, timeout=20)
            held.append((hold.status, hold.log()))
            s.confirm("the shell exited", lambda: True)
        v = self.run_of(by_hand, sections=(1, 1))
        self.assertTrue(v.ok, v.problems)
        status, shown = held[0]
        self.assertEqual(status, 76, shown)
        self.assertIn("stand-in: released", shown)
        self.assertEqual(shown.count("interactive-owner> "), 3, shown)

    def test_a_scenario_must_declare_its_minimum_of_sections(self):
        with self.assertRaises(TypeError):
            harness.scenario("undeclared", "a promise")

    def test_an_overlap_allowance_must_be_a_bound(self):
        for allowance in (True, 0, -1, "yes"):
            with self.assertRaises(TypeError):
                harness.Contender(None, "redlockrun", "a", ["true"], (0,), allowance)


class RecorderTest(unittest.TestCase):
    """The recorder's fence rule, which the checker's verdicts on allowed overlaps rely on."""

    def setUp(self):
        self.resource = Resource(open(os.devnull, "w"))

    def admits(self, holder, fence, kind="redlockrun"):
        return self.resource.admits({"kind": kind, "holder": holder, "fence": fence})

    def test_a_larger_fence_is_admitted_and_a_smaller_one_refused_from_then_on(self):
        self.assertTrue(self.admits("a", 5))
        self.assertTrue(self.admits("a", 5))
        self.assertTrue(self.admits("b", 6))
        self.assertFalse(self.admits("a", 5))
        self.assertTrue(self.admits("b", 6))

    def test_the_same_fence_from_another_holder_is_refused(self):
        self.assertTrue(self.admits("a", 5))
        self.assertFalse(self.admits("b", 5))

    def test_a_redlockrun_section_without_a_fence_is_refused(self):
        self.assertFalse(self.admits("a", None))

    def test_a_connection_reset_ends_the_section(self):
        # A command killed with an answer unread resets the connection instead of closing it.
        import io
        import json
        import socket
        import threading
        log = io.StringIO()
        resource = Resource(log)
        server, client = socket.socketpair()
        serving = threading.Thread(target=resource.serve, args=(server, 1))
        serving.start()
        client.sendall(b"BEGIN redlockrun a h 5 0\nREAD\n")
        while log.getvalue().count("\n") < 2:  # both answered, neither read
            threading.Event().wait(0.01)
        client.close()
        serving.join(5)
        events = [json.loads(line) for line in log.getvalue().splitlines()]
        self.assertEqual([e["ev"] for e in events], ["begin", "read", "end"])
        self.assertTrue(events[-1]["abrupt"])

    def test_a_check_is_logged_once_answered_with_the_time_it_started(self):
        import io
        import json
        import socket
        import threading
        log = io.StringIO()
        resource = Resource(log)
        server, client = socket.socketpair()
        threading.Thread(target=resource.serve, args=(server, 1), daemon=True).start()
        answers = []
        for request in ("CHECKED 0", "BEGIN redlockrun a h 5 0", "CHECK", "CHECKED 76", "END"):
            client.sendall(request.encode() + b"\n")
            answers.append(client.recv(100).decode().strip())
        client.close()
        # A CHECKED without its CHECK is no answer to log.
        self.assertEqual(answers, ["ERR begin first", "OK", "OK", "OK", "OK"])
        events = [json.loads(line) for line in log.getvalue().splitlines()]
        self.assertEqual([e["ev"] for e in events], ["begin", "check", "end"])
        check = events[1]
        self.assertEqual((check["holder"], check["fence"], check["status"]), ("a", 5, 76))
        self.assertLessEqual(events[0]["t"], check["started"])
        self.assertLessEqual(check["started"], check["t"])

    def place(self, number, fence, limit=2):
        """A request of the semaphore section on connection NUMBER."""
        return self.resource.admits({"kind": "redlockrun", "holder": f"s{number}", "fence": fence,
                                     "limit": limit}, number)

    def test_n_semaphore_sections_are_admitted_at_once_whatever_their_fences(self):
        self.assertTrue(self.place(1, 8))
        self.assertTrue(self.place(2, 7))
        self.assertTrue(self.place(1, 8))
        self.assertTrue(self.place(2, 7))

    def test_the_n_plus_first_displaces_the_smallest_fence_for_good(self):
        self.assertTrue(self.place(1, 5))
        self.assertTrue(self.place(2, 6))
        self.assertTrue(self.place(3, 7))
        self.assertFalse(self.place(1, 5))
        self.assertTrue(self.place(2, 6))
        self.assertTrue(self.place(3, 7))
        self.resource.leave(3)
        self.assertFalse(self.place(1, 5))  # displaced: a free place does not take it back

    def test_an_n_plus_first_with_the_smallest_fence_is_refused(self):
        self.assertTrue(self.place(1, 5))
        self.assertTrue(self.place(2, 6))
        self.assertFalse(self.place(3, 4))
        self.assertTrue(self.place(1, 5))

    def test_a_place_frees_when_its_section_ends(self):
        self.assertTrue(self.place(1, 5))
        self.assertTrue(self.place(2, 6))
        self.resource.leave(1)
        self.assertTrue(self.place(3, 7))
        self.assertTrue(self.place(2, 6))

    def test_the_same_fence_in_two_places_is_refused(self):
        self.assertTrue(self.place(1, 5))
        self.assertFalse(self.place(2, 5))

    def test_exclusive_and_semaphore_fences_fence_each_other(self):
        self.assertTrue(self.place(1, 5))
        self.assertFalse(self.admits("x", 4))
        self.assertTrue(self.admits("x", 6))
        self.assertFalse(self.place(1, 5))
        self.assertFalse(self.place(2, 6))
        self.assertTrue(self.place(3, 7))

    def test_a_semaphore_section_keeps_a_counter_of_its_own(self):
        import io
        import json
        import socket
        import threading
        log = io.StringIO()
        resource = Resource(log)
        ends = [socket.socketpair() for _ in range(2)]
        for number, (server, _) in enumerate(ends, 1):
            threading.Thread(target=resource.serve, args=(server, number), daemon=True).start()
        answers = []
        for client, request in [(ends[0][1], "BEGIN redlockrun a h 5 0 2"),
                                (ends[1][1], "BEGIN redlockrun b h 6 0 2"),
                                (ends[0][1], "WRITE 1"), (ends[1][1], "WRITE 1"),
                                (ends[0][1], "READ"), (ends[1][1], "READ")]:
            client.sendall(request.encode() + b"\n")
            answers.append(client.recv(100).decode().strip())
        self.assertEqual(answers, ["OK", "OK", "ACCEPTED", "ACCEPTED", "VALUE 1", "VALUE 1"])
        self.assertEqual(resource.counter, 0)
        writes = [json.loads(line) for line in log.getvalue().splitlines()]
        self.assertTrue(all(e["own"] for e in writes if e["ev"] == "write"))
        for _, client in ends:
            client.close()

    def read(self, number, fence):
        """A request of the shared section on connection NUMBER."""
        return self.resource.admits({"kind": "redlockrun", "holder": f"r{number}", "fence": fence,
                                     "shared": True}, number)

    def test_readers_are_admitted_at_once_whatever_their_fences(self):
        self.assertTrue(self.read(1, 8))
        self.assertTrue(self.read(2, 7))
        self.assertTrue(self.read(3, 9))
        self.assertTrue(self.read(1, 8))
        self.assertTrue(self.read(2, 7))

    def test_readers_and_writers_fence_each_other(self):
        self.assertTrue(self.admits("x", 5))
        self.assertFalse(self.read(1, 4))  # granted before the writer: stale
        self.assertFalse(self.read(2, 5))
        self.assertTrue(self.read(3, 6))
        self.assertTrue(self.read(4, 7))
        self.assertFalse(self.admits("x", 5))  # a reader granted after it: stale
        self.assertFalse(self.admits("y", 6))
        self.assertTrue(self.admits("y", 8))
        self.assertFalse(self.read(3, 6))
        self.assertFalse(self.read(4, 7))

    def test_the_same_fence_from_two_readers_is_refused(self):
        self.assertTrue(self.read(1, 5))
        self.assertFalse(self.read(2, 5))
        self.resource.leave(1)
        self.assertTrue(self.read(2, 5))

    def test_a_reader_writes_the_shared_counter_and_says_it_is_shared(self):
        import io
        import json
        import socket
        import threading
        log = io.StringIO()
        resource = Resource(log)
        ends = [socket.socketpair() for _ in range(3)]
        for number, (server, _) in enumerate(ends, 1):
            threading.Thread(target=resource.serve, args=(server, number), daemon=True).start()
        answers = []
        for client, request in [(ends[0][1], "BEGIN redlockrun x h 5 0"),  # no MODE: exclusive
                                (ends[0][1], "WRITE 1"), (ends[0][1], "END"),
                                (ends[1][1], "BEGIN redlockrun a h 7 0 shared"),
                                (ends[2][1], "BEGIN redlockrun b h 6 0 shared"),
                                (ends[1][1], "READ"), (ends[2][1], "READ"),
                                (ends[1][1], "WRITE 1"), (ends[2][1], "WRITE 1")]:
            client.sendall(request.encode() + b"\n")
            answers.append(client.recv(100).decode().strip())
        self.assertEqual(answers, ["OK", "ACCEPTED", "OK", "OK", "OK", "VALUE 1", "VALUE 1",
                                   "ACCEPTED", "ACCEPTED"])
        self.assertEqual(resource.counter, 1)
        begins = [json.loads(line) for line in log.getvalue().splitlines()
                  if json.loads(line)["ev"] == "begin"]
        self.assertEqual([(e["holder"], e["limit"], e["shared"]) for e in begins],
                         [("x", 1, False), ("a", 1, True), ("b", 1, True)])
        for _, client in ends:
            client.close()

    def test_a_classic_section_is_never_refused(self):
        self.assertTrue(self.admits("a", 9))
        self.assertTrue(self.admits("c", None, kind="classic"))
        self.assertTrue(self.admits("a", 9))


if __name__ == "__main__":
    unittest.main()
