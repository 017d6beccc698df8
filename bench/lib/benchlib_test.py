#!/usr/bin/python3
"""Self-tests of the benchmark's verdicts, on made-up results: no server, no tool, a second.

What a full run does with its numbers is checked here, since a full run takes minutes and its
numbers depend on the machine: a missed target fails it and leaves docs/performance.md alone, a
smoke run is never failed on a target, idle waiters that were not waiting and a peak RSS read
before any renewal are problems, and figure 1 reports how its ratios spread over the rounds.
"""
import sys
import tempfile
import unittest
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree

from benchlib import checks, outcome  # noqa: E402
from benchlib.figures import uncontended  # noqa: E402


@dataclass
class FakeTool:
    name: str
    server: str
    polls: bool = False

    def argv(self, key, command):
        return [self.name, key, *command]


TOOLS = [FakeTool("redlockrun", "redis"), FakeTool("flock(1)", "local")]

MACHINE = {"date": "today", "cpu": "a CPU", "cores": 2, "memory": "1 GiB",
           "distribution": "Debian 12", "kernel": "6.1", "load_average": "0.0",
           "redis": "7.0", "etcd": "-", "python3_redis": "-", "util_linux": "-",
           "redlockrun": [], "redlockrun_source": "-", "redlockrun_binaries": {}}


def results(ratio_to_flock: float, smoke: bool = False) -> dict:
    """A run of figure 1 only, whose default build took `ratio_to_flock` × flock(1) (the target:
    at most 1.5)."""
    flock_ms = 2.0

    def row(ms):
        return {"median_ms": ms, "vs_flock": ms / flock_ms, "runs": 10, "failures": 0}

    return {"smoke": smoke, "skipped": {}, "machine": MACHINE,
            "uncontended": {"rows": {"redlockrun": row(flock_ms * ratio_to_flock),
                                     "flock(1)": row(flock_ms), "plain true": row(1.0)}}}


class Conclusion(unittest.TestCase):
    def setUp(self):
        self.directory = Path(tempfile.mkdtemp(prefix="benchlib-test."))
        self.output = self.directory / "report.md"
        self.docs = self.directory / "docs" / "performance.md"
        self.logged = []

    def conclude(self, run: dict, **options) -> int:
        return outcome.conclude(run, TOOLS, self.output, self.docs, self.logged.append, **options)

    def test_a_run_that_meets_its_targets_passes_and_updates_the_docs(self):
        self.assertEqual(self.conclude(results(1.2)), 0)
        self.assertEqual(self.docs.read_text(), self.output.read_text())

    def test_a_missed_target_fails_the_run_and_leaves_the_docs_alone(self):
        self.assertNotEqual(self.conclude(results(1.8)), 0)
        self.assertIn("**FAIL**", self.output.read_text())
        self.assertFalse(self.docs.exists(), "docs/performance.md written from a failing run")
        self.assertTrue(any("1.80 ×" in line for line in self.logged), self.logged)

    def test_without_enforcement_a_missed_target_is_reported_but_passes(self):
        self.assertEqual(self.conclude(results(1.8), enforce_targets=False), 0)
        self.assertIn("**FAIL**", self.output.read_text())
        self.assertFalse(self.docs.exists(), "docs/performance.md written from a failing run")

    def test_a_smoke_run_is_never_failed_on_a_target(self):
        self.assertEqual(self.conclude(results(5.0, smoke=True)), 0)
        self.assertIn("not judged (smoke)", self.output.read_text())

    def test_a_failed_check_fails_the_run_and_leaves_the_docs_alone(self):
        run = results(1.2)
        run["uncontended"]["rows"]["redlockrun"]["failures"] = 3
        self.assertNotEqual(self.conclude(run), 0)
        self.assertFalse(self.docs.exists())


def idle(alive_at_end: int, blocked_at_end) -> dict:
    """Figure 4 with 4 idle redlockrun waiters, all waiting at the window's start."""
    waiting_at_start = {"alive": 4, "blocked": 4 if blocked_at_end is not None else None}
    row = {"requests_per_second": 0.2, "script_commands_per_second": 0.2, "window_s": 10,
           "waiters": 4, "waiting_at_start": waiting_at_start,
           "waiting_at_end": {"alive": alive_at_end, "blocked": blocked_at_end}}
    contended = {"redlockrun": {"requests_per_acquisition": 4.0,
                                "script_commands_per_acquisition": 12.0}}
    return {"contended": {"contenders": 8, "rows": contended}, "idle": {"redlockrun": row}}


class Checks(unittest.TestCase):
    def problems(self, **figures) -> list:
        run = {"smoke": True}
        run.update(figures)
        return checks.problems(run, TOOLS)

    def test_idle_waiters_that_waited_throughout_are_no_problem(self):
        self.assertEqual(self.problems(load=idle(4, 4)), [])

    def test_an_idle_waiter_that_stopped_running_is_a_problem(self):
        found = self.problems(load=idle(3, 3))
        self.assertTrue(any("3 of 4 idle waiters still running" in p for p in found), found)

    def test_an_idle_waiter_not_blocked_in_blpop_is_a_problem(self):
        found = self.problems(load=idle(4, 2))
        self.assertTrue(any("2 clients blocked in BLPOP" in p for p in found), found)

    def test_a_polling_waiter_is_not_asked_to_block(self):
        self.assertEqual(self.problems(load=idle(4, None)), [])

    def test_a_peak_rss_read_before_any_renewal_is_a_problem(self):
        memory = {"rows": {"redlockrun": {"peak_rss_mib": 2.9, "runs": 1, "renewals_fewest": 0},
                           "flock(1)": {"peak_rss_mib": 1.4, "runs": 1}}}
        found = self.problems(memory=memory)
        self.assertTrue(any("renewed its lock 0 times" in p for p in found), found)
        memory["rows"]["redlockrun"]["renewals_fewest"] = 3
        self.assertEqual(self.problems(memory=memory), [])


class FakeLauncher:
    """Times each tool by a fixed schedule, one value per round."""

    def __init__(self, schedule: dict):
        self.schedule = {name: list(times) for name, times in schedule.items()}

    def timed(self, argv):
        return self.schedule[argv[0]].pop(0) / 1000, 0


class FakeSettings:
    uncontended_rounds = 4


class FakeBench:
    def __init__(self, launcher):
        self.settings = FakeSettings()
        self.tools = TOOLS
        self.reference = TOOLS[1]
        self.launcher = launcher
        self.builds, self.floor, self.library_floor = {}, [], []

    def available(self):
        return self.tools

    def key(self, what):
        return what


class Spread(unittest.TestCase):
    def test_figure_1_gives_the_middle_half_of_the_rounds_ratios(self):
        warm_up = [1.0] * 3
        # Per round, redlockrun over flock(1): 1.0, 2.0, 1.5, 3.0; their medians: 1.75 / 1.0.
        launcher = FakeLauncher({"redlockrun": warm_up + [1.0, 2.0, 1.5, 3.0],
                                 "flock(1)": warm_up + [1.0, 1.0, 1.0, 1.0],
                                 "true": warm_up + [0.5] * 4})
        row = uncontended.run(FakeBench(launcher))["rows"]["redlockrun"]
        self.assertAlmostEqual(row["vs_flock"], 1.75)
        self.assertEqual(row.get("vs_flock_middle_half"), (1.0, 2.0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
