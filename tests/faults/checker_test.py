#!/usr/bin/python3
"""Self-tests of the checker: synthetic histories, good and bad. Each bad one must be flagged, so
that a scenario's "no unexplained overlap" means something."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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

    def contender(self, holder, status=0, expect=(0,), may_overlap=False, kind="redlockrun"):
        self.contenders.append({"id": holder, "kind": kind, "status": status,
                                "expect": set(expect), "may_overlap": may_overlap})

    def begin(self, t, holder, fence, kind="redlockrun"):
        self.conns[holder] = (len(self.conns) + 1, kind, fence)
        self.events.append({"t": t, "ev": "begin", "conn": self.conns[holder][0], "kind": kind,
                            "holder": holder, "host": "h", "fence": fence, "wall_ns": 0})

    def write(self, t, holder, value=None, accepted=None):
        """A write as the recorder would judge it, unless accepted says otherwise."""
        conn, kind, fence = self.conns[holder]
        if accepted is None:
            accepted = kind != "redlockrun" or self.largest is None or fence >= self.largest
        if accepted and kind == "redlockrun":
            self.largest = fence
        if value is None:
            value = self.counter + 1
        if accepted:
            self.counter = value
        self.events.append({"t": t, "ev": "write", "conn": conn, "value": value,
                            "accepted": accepted})

    def read(self, t, holder, accepted=None):
        conn, kind, fence = self.conns[holder]
        if accepted is None:
            accepted = kind != "redlockrun" or self.largest is None or fence >= self.largest
        if accepted and kind == "redlockrun":
            self.largest = fence
        self.events.append({"t": t, "ev": "read", "conn": conn, "value": self.counter,
                            "accepted": accepted})

    def end(self, t, holder, abrupt=False):
        self.events.append({"t": t, "ev": "end", "conn": self.conns[holder][0], "abrupt": abrupt})

    def section(self, start, stop, holder, fence, kind="redlockrun"):
        self.begin(start, holder, fence, kind)
        self.write((start + stop) / 2, holder)
        self.end(stop, holder)

    def verdict(self):
        self.events.sort(key=lambda e: e["t"])
        return check(self.events, self.contenders)


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
        self.assertFlags(v, "no fault in this scenario allows it")
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
        h.contender("a", may_overlap=True)
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

    def test_a_classic_section_is_never_refused(self):
        self.assertTrue(self.admits("a", 9))
        self.assertTrue(self.admits("c", None, kind="classic"))
        self.assertTrue(self.admits("a", 9))


if __name__ == "__main__":
    unittest.main()
