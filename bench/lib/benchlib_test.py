#!/usr/bin/python3
"""Self-tests of the benchmark's verdicts, on made-up results: no server, no tool, a second.

What a full run does with its numbers is checked here, since a full run takes minutes and its
numbers depend on the machine: a missed target fails it and leaves docs/performance.md alone, a
smoke run is never failed on a target, idle waiters that were not waiting, a peak RSS read before
any renewal and a failed run of the .deb's build are problems, figure 1 reports how its ratios
spread over the rounds and what the .deb's build costs beyond its two floors, and the restated
targets judge what they name, those of a section of a script locked with --hold and --release
too: its handoff from a release to a waiting run, whose gaps are taken only over the handoffs of
that kind in a mixed loop. Figure 10's readers and writers: where the lock changes hands and the gap
there, a writer overlapping anyone, the spread of a batch of readers' starts, and the targets of
--shared. The rows of redlockrun against other servers (Redis 6.2, Valkey 8.0): named from INFO, in
figure 1 and at figure 3's counted N only, never counted, checked as redlockrun's row is, judged by
no target, and said in the report to be what they are.
"""
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree

from benchlib import (checks, context, contention, critical_section, other_servers,  # noqa: E402
                      outcome, peers, report, targets)
from benchlib.builds import DEB  # noqa: E402
from benchlib.critical_section import EXCLUSIVE as X  # noqa: E402
from benchlib.critical_section import SHARED as S  # noqa: E402
from benchlib.critical_section import (admission_spread, kind_label, mode_handoffs,  # noqa: E402
                                       turns)
from benchlib.figures import handoff as handoff_figure  # noqa: E402
from benchlib.figures import load, uncontended  # noqa: E402
from benchlib.peers import (FLOCK_SECTION, FLOOR_TO_RUN, HOLD, HOLD_FLOOR,  # noqa: E402
                            HOLD_TO_RUN, SECTION_TO_FLOCK, Mix)


@dataclass
class FakeTool:
    name: str
    server: str
    polls: bool = False
    available: bool = True

    def argv(self, key, command):
        return [self.name, key, *command]


TOOLS = [FakeTool("redlockrun", "redis"), FakeTool("flock(1)", "local")]

MACHINE = {"date": "today", "cpu": "a CPU", "cores": 2, "memory": "1 GiB",
           "distribution": "Debian 12", "kernel": "6.1", "load_average": "0.0",
           "redis": "7.0", "etcd": "-", "python3_redis": "-", "util_linux": "-",
           "redlockrun": [], "redlockrun_source": "-", "redlockrun_binaries": {}}


def results(ratio_to_flock: float, smoke: bool = False, hold_vs_plain_run: float = 1.8,
            metrics_vs_plain_run: float = 1.3, metrics_vs_file_work: float = 1.02) -> dict:
    """A run of figure 1 only, whose default build took `ratio_to_flock` × flock(1) (the target:
    at most 1.6), a hold and its release `hold_vs_plain_run` × that (the target: at most 2), and a
    run with --metrics-file `metrics_vs_plain_run` × that and `metrics_vs_file_work` × that plus
    the metrics floor's file work (the target: at most 1.1)."""
    flock_ms = 2.0
    plain_run_ms = flock_ms * ratio_to_flock

    def row(ms):
        return {"median_ms": ms, "vs_flock": ms / flock_ms, "runs": 10, "failures": 0}

    rows = {"redlockrun": row(plain_run_ms), "flock(1)": row(flock_ms),
            HOLD: row(plain_run_ms * hold_vs_plain_run), FLOCK_SECTION: row(2.5 * flock_ms),
            uncontended.METRICS_ROW: row(plain_run_ms * metrics_vs_plain_run),
            "plain true": row(1.0)}
    return {"smoke": smoke, "skipped": {}, "machine": MACHINE,
            "uncontended": {"rows": rows, "hold_vs_plain_run": {
                "ratio": hold_vs_plain_run,
                "middle_half": (hold_vs_plain_run - 0.1, hold_vs_plain_run + 0.1)},
                "metrics_vs_plain_run": {
                "ratio": metrics_vs_plain_run,
                "middle_half": (metrics_vs_plain_run - 0.02, metrics_vs_plain_run + 0.02)},
                "metrics_vs_file_work": {
                "ratio": metrics_vs_file_work, "file_work_ms": 0.75,
                "middle_half": (metrics_vs_file_work - 0.02, metrics_vs_file_work + 0.02)}}}


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

    def test_a_target_without_a_number_fails_a_full_run_only(self):
        # results() is figure 1 alone: in a run of it (--only 1) the other figures' targets read
        # n/a and are left out; a full run (partial False) whose targets read n/a measured
        # nothing, and fails.
        partial = dict(results(1.2), partial=True)
        self.assertEqual(targets.failed(partial), [])
        full = dict(results(1.2), partial=False)
        missed = targets.failed(full)
        self.assertTrue(missed)
        self.assertTrue(all(m.endswith("n/a (no number in a full run)") for m in missed), missed)
        self.assertEqual(self.conclude(full), outcome.MISSED_TARGETS)
        self.assertFalse(self.docs.exists(), "docs/performance.md written from a run without numbers")

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

    def test_failed_runs_of_the_debs_build_are_a_problem(self):
        # A failed run is quick: its median, and its cost beyond the floors, would flatter it.
        run = results(1.2)
        run["uncontended"]["rows"][DEB] = {"median_ms": 4.0, "vs_flock": 2.0, "runs": 10,
                                           "failures": 2}
        self.assertEqual(self.conclude(run), outcome.PROBLEMS)
        self.assertTrue(any(f"{DEB} failed 2 runs" in line for line in self.logged),
                        self.logged)


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


def verdicts(run: dict) -> dict:
    return {target: (measured, verdict) for target, measured, verdict in targets.judge(run)}


def handoff_row(total_s: float, gap_ms: float, flock: dict = None) -> dict:
    """A row of figure 3 from 3 repeats that all measured the same."""
    row = {"total_s": total_s, "gap_median_ms": gap_ms, "gap_p99_ms": 2 * gap_ms,
           "acquisitions": 96, "overlaps": 0, "failures": 0, "timed_out": False,
           "repeat_total_s": [total_s] * 3, "repeat_gap_median_ms": [gap_ms] * 3}
    flock = flock or row
    row["total_vs_flock"] = total_s / flock["total_s"]
    row["gap_vs_flock"] = gap_ms / flock["gap_median_ms"]
    row["total_vs_flock_range"] = (row["total_vs_flock"],) * 2
    row["gap_vs_flock_range"] = (row["gap_vs_flock"],) * 2
    return row


def handoff(gap_vs_flock: float, setnx_gap_ms: float, hold_gap_vs_flock: float = None,
            contenders: int = 8, hold_to_run_vs_flock: float = None,
            floor_to_run_ms: float = 1.6) -> dict:
    """A run of figure 3 at N = `contenders` only: flock(1)'s median gap 1 ms, redlockrun's
    `gap_vs_flock` times that, the SETNX shell's `setnx_gap_ms` and redis-py's 60 ms; with
    `hold_gap_vs_flock`, sections of a script too: a hold's gap (to a waiting hold) that many times
    flock(1)'s, the flock(1) idiom's 2 ms, and the mixed rows: a release's gap to a waiting run
    `hold_to_run_vs_flock` times flock(1)'s (by default the hold's), the release floor's
    `floor_to_run_ms`, and flock -u's to a waiting flock(1) 1.5 ms."""
    flock = handoff_row(0.2, 1.0)
    rows = {"redlockrun": handoff_row(0.22, gap_vs_flock, flock), "flock(1)": flock,
            "redis-py Lock": handoff_row(5.0, 60.0, flock),
            "SETNX shell": handoff_row(2.0, setnx_gap_ms, flock)}
    if hold_gap_vs_flock is not None:
        rows[HOLD] = handoff_row(0.5, hold_gap_vs_flock, flock)
        rows[FLOCK_SECTION] = handoff_row(0.3, 2.0, flock)
        to_run = hold_gap_vs_flock if hold_to_run_vs_flock is None else hold_to_run_vs_flock
        for name, gap_ms in ((HOLD_TO_RUN, to_run), (FLOOR_TO_RUN, floor_to_run_ms),
                             (SECTION_TO_FLOCK, 1.5)):
            rows[name] = handoff_row(0.4, gap_ms, flock)
            rows[name].update(handoffs=30, repeat_handoffs=[10, 10, 10])
    return {"by_contenders": {str(contenders): {"iterations": 12, "rows": rows}},
            "hold_us": 1000, "repeats": 3, "counted_at": contenders}


def round_trips(hold_requests: float) -> dict:
    """A run of figure 2: redlockrun's 2 requests, and `hold_requests` for a hold and its
    release, each waiting for as many round trips."""
    def row(requests):
        return {"requests_per_run": requests, "connections_per_run": 1.0, "per_connection": [],
                "no_delay_ms": 3.0, "delayed_ms": 3.0 + 40 * requests,
                "waited_round_trips": requests}

    return {"rows": {"redlockrun": row(2.0), HOLD: row(hold_requests)}, "delay_ms": 20}


def with_deb(beyond_floors_vs_flock: float, deb_vs_flock: float = 2.3) -> dict:
    """A run of figure 1 whose .deb's build took `deb_vs_flock` × flock(1) and cost
    `beyond_floors_vs_flock` × flock(1) beyond its two floors (the target: at most 0.3)."""
    run = results(1.2)
    run["uncontended"]["rows"][DEB] = {"median_ms": 2.0 * deb_vs_flock, "vs_flock": deb_vs_flock,
                                       "runs": 10, "failures": 0}
    run["uncontended"]["deb_beyond_floors"] = {
        "ms": 2.0 * beyond_floors_vs_flock, "vs_flock": beyond_floors_vs_flock,
        "vs_flock_middle_half": (beyond_floors_vs_flock - 0.1, beyond_floors_vs_flock + 0.1)}
    return run


DEFAULT_BUILD = "Uncontended wall time ≤ 1.6 × flock(1), default build"
DEB_BEYOND_FLOORS = (".deb's build: uncontended cost beyond the library floor and the protocol "
                     "floor ≤ 0.3 × flock(1)")
GAP_VS_FLOCK = "Median handoff gap ≤ 1.25 × flock(1)'s at N = 8"


class RestatedTargets(unittest.TestCase):
    def test_the_default_build_may_take_up_to_1_6_times_flock(self):
        self.assertEqual(verdicts(results(1.55))[DEFAULT_BUILD], ("1.55 ×", "pass"))
        self.assertEqual(verdicts(results(1.65))[DEFAULT_BUILD][1], targets.FAILED)

    def test_the_debs_build_is_judged_by_its_cost_beyond_the_floors(self):
        judged = verdicts(with_deb(0.25))
        self.assertEqual(judged[DEB_BEYOND_FLOORS],
                         ("0.25 × (rounds' middle half: 0.15–0.35 ×); 0.50 ms", "pass"))
        # Its whole time, which is mostly the libraries' loading and the protocol, is no target.
        self.assertEqual(targets.failed(with_deb(0.25, deb_vs_flock=2.3)), [])
        self.assertEqual(verdicts(with_deb(0.35))[DEB_BEYOND_FLOORS][1], targets.FAILED)

    def test_without_the_debs_build_or_a_floor_its_target_is_not_judged(self):
        self.assertEqual(verdicts(results(1.2))[DEB_BEYOND_FLOORS], ("n/a", "n/a"))

    def test_the_handoff_gap_may_be_up_to_1_25_times_flocks(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0)
        self.assertEqual(verdicts(run)[GAP_VS_FLOCK], ("1.20 × (repeats: 1.20–1.20 ×)", "pass"))
        run["handoff"] = handoff(1.3, setnx_gap_ms=12.0)
        self.assertEqual(verdicts(run)[GAP_VS_FLOCK][1], targets.FAILED)

    def test_the_setnx_shell_is_a_peer_in_the_figure_not_a_target(self):
        run = results(1.2)
        # 10 × slower than redlockrun: the old "≥ 20 × faster" target would have failed it.
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0)
        self.assertEqual(targets.failed(run), [])
        self.assertFalse(any("SETNX" in target for target in verdicts(run)))
        self.assertIn("| SETNX shell |", report.render(run))
        # redis-py keeps its target.
        redispy = "Handoff ≥ 20 × faster than redis-py Lock (median gap, N = 8)"
        self.assertEqual(verdicts(run)[redispy][1], "pass")


HOLD_TIME = "`--hold` + `--release`, uncontended: wall time ≤ 2 × a plain run's"
HOLD_REQUESTS = "`--hold` + `--release`, uncontended: 2 Redis requests in all"
HOLD_HANDOFF = ("Handoff from a `--release` to a waiting run: median gap ≤ 1.25 × that of "
                f"`{FLOOR_TO_RUN}` at N = 8")


METRICS_TIME = ("`--metrics-file`, uncontended: wall time ≤ 1.1 × a plain run's plus the metrics "
                "floor's file work")


class MetricsTarget(unittest.TestCase):
    """A run that keeps a metrics file costs at most a tenth more than a plain run and the file
    work any program that keeps such a file safely does (the metrics floor)."""

    def test_it_is_judged_against_the_plain_run_plus_the_file_work(self):
        # 1.3 × a plain run, which the file work explains: a pass.
        self.assertEqual(verdicts(results(1.2, metrics_vs_plain_run=1.3,
                                          metrics_vs_file_work=1.05))[METRICS_TIME],
                         ("1.05 × (rounds' middle half: 1.03–1.07 ×)", "pass"))
        slow = results(1.2, metrics_vs_plain_run=1.3, metrics_vs_file_work=1.15)
        self.assertEqual(verdicts(slow)[METRICS_TIME][1], targets.FAILED)
        self.assertIn(f"{METRICS_TIME}: 1.15 × (rounds' middle half: 1.13–1.17 ×)",
                      targets.failed(slow))

    def test_without_the_floor_it_is_not_judged(self):
        run = results(1.2)
        del run["uncontended"]["metrics_vs_file_work"]
        self.assertEqual(verdicts(run)[METRICS_TIME], ("n/a", "n/a"))

    def test_the_report_says_both_ratios(self):
        text = report.render(results(1.2))
        self.assertIn("`redlockrun --metrics-file` (each run counting itself into one file) over a "
                      "plain run of the same rounds: 1.30 ×", text)
        self.assertIn("beyond plain `true` that took 0.75 ms. `redlockrun --metrics-file` over a "
                      "plain run plus that file work, from the medians: 1.02 ×", text)

    def test_figure_1_computes_the_run_over_the_plain_run_plus_the_file_work(self):
        warm_up = [1.0] * 3
        # Per round: plain run, run with --metrics-file, metrics floor, plain true, in ms.
        rounds = [(2.0, 3.0, 1.5, 0.5), (2.2, 3.4, 1.7, 0.5), (1.8, 2.6, 1.3, 0.5),
                  (2.0, 3.2, 1.5, 0.5)]
        plain, metrics, floor, true = (warm_up + list(times) for times in zip(*rounds))
        launcher = FakeLauncher({"redlockrun": plain, "redlockrun --metrics-file": metrics,
                                 "metrics-floor": floor, "true": true, "flock(1)": plain})
        bench = FakeBench(launcher)
        bench.metrics_floor = ["metrics-floor"]
        figure = uncontended.run(bench)
        beyond = figure.get("metrics_vs_file_work") or {}
        # Medians: plain 2.0, metrics 3.1, floor 1.5, true 0.5: 3.1 / (2.0 + 1.0).
        self.assertAlmostEqual(beyond.get("ratio"), 3.1 / 3.0)
        self.assertAlmostEqual(beyond.get("file_work_ms"), 1.0)
        # Per round: 3.0/3.0, 3.4/3.4, 2.6/2.6, 3.2/3.0.
        low, high = beyond.get("middle_half")
        self.assertAlmostEqual(low, 1.0)
        self.assertLess(high, 3.2 / 3.0)
        self.assertAlmostEqual(figure["metrics_vs_plain_run"]["ratio"], 3.1 / 2.0)

    def test_without_the_floor_figure_1_has_no_such_ratio(self):
        launcher = FakeLauncher({"redlockrun": [1.0] * 7, "flock(1)": [1.0] * 7,
                                 "true": [0.5] * 7})
        self.assertIsNone(uncontended.run(FakeBench(launcher)).get("metrics_vs_file_work",
                                                                     "missing"))


class HoldTargets(unittest.TestCase):
    """A section of a script locked with --hold and --release: its time beside a plain run's, its
    requests, and its handoff beside flock(1)'s."""

    def test_a_hold_and_its_release_may_take_up_to_twice_a_plain_run(self):
        self.assertEqual(verdicts(results(1.2, hold_vs_plain_run=1.95))[HOLD_TIME],
                         ("1.95 × (rounds' middle half: 1.85–2.05 ×)", "pass"))
        slow = results(1.2, hold_vs_plain_run=2.05)
        self.assertEqual(verdicts(slow)[HOLD_TIME][1], targets.FAILED)
        self.assertEqual(targets.failed(slow),
                         [f"{HOLD_TIME}: 2.05 × (rounds' middle half: 1.95–2.15 ×)"])

    def test_a_hold_and_its_release_send_two_requests(self):
        run = results(1.2)
        run["round_trips"] = round_trips(hold_requests=2.0)
        self.assertEqual(verdicts(run)[HOLD_REQUESTS],
                         ("2 requests; waits for 2.0 round trips", "pass"))
        for requests in (3.0, 1.0):  # a renewal, say; or a release that never reached Redis
            run["round_trips"] = round_trips(hold_requests=requests)
            self.assertEqual(verdicts(run)[HOLD_REQUESTS][1], targets.FAILED, requests)

    def test_the_handoff_from_a_release_to_a_run_may_be_up_to_1_25_times_the_release_floors(self):
        # Judged like for like: against the same mix with the release made by the release floor
        # (1.6 ms here); flock -u's gap to a waiting flock(1) (1.5 ms) and flock(1)'s plain gap
        # (1 ms) are shown beside it, not judged.
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.8)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF],
                         ("1.12 × (repeats: 1.12–1.12 ×); not judged: 1.20 × "
                          f"`{SECTION_TO_FLOCK}`'s gap, 1.80 × flock(1)'s plain gap", "pass"))
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=2.1)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF][1], targets.FAILED)
        self.assertIn(f"{HOLD_HANDOFF}: 1.31 × (repeats: 1.31–1.31 ×); not judged: 1.40 × "
                      f"`{SECTION_TO_FLOCK}`'s gap, 2.10 × flock(1)'s plain gap",
                      targets.failed(run))
        # The plain run's own handoff target still judges the plain run alone.
        self.assertEqual(verdicts(run)[GAP_VS_FLOCK][1], "pass")

    def test_the_handoff_target_judges_the_release_not_the_keeper_or_redis(self):
        run = results(1.2)
        # 1.6 × flock -u's gap, which the keeper and Redis make so for the floor too (1.5 ×):
        # the release itself adds 7 %.
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=2.4,
                                 floor_to_run_ms=2.25)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF][1], "pass")
        self.assertEqual(targets.failed(run), [])
        # The same gap beside a floor of 1.6 ms: the release adds half, which fails.
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=2.4)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF][1], targets.FAILED)

    def test_the_handoff_target_judges_the_release_to_a_run_not_to_a_hold(self):
        run = results(1.2)
        # A hold waiting for a hold takes 3 × flock(1)'s gap (its own keeper, output and eval
        # included): information only; the release to a waiting run, 1.1 ms, is what is judged.
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=3.0,
                                 hold_to_run_vs_flock=1.1)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF][1], "pass")
        self.assertEqual(targets.failed(run), [])
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.0,
                                 hold_to_run_vs_flock=2.1)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF][1], targets.FAILED)  # 2.1 / 1.6 ms
        self.assertFalse(any("waiting hold" in target for target in verdicts(run)))

    def test_the_release_to_a_run_is_judged_by_the_spread_of_its_repeats(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        rows = run["handoff"]["by_contenders"]["8"]["rows"]
        rows[HOLD_TO_RUN]["repeat_gap_median_ms"] = [1.2, 1.6, 2.0]
        rows[FLOOR_TO_RUN]["repeat_gap_median_ms"] = [1.6, 1.6, 1.6]
        self.assertEqual(verdicts(run)[HOLD_HANDOFF][0],
                         "0.75 × (repeats: 0.75–1.25 ×); not judged: 0.80 × "
                         f"`{SECTION_TO_FLOCK}`'s gap, 1.20 × flock(1)'s plain gap")

    def test_without_their_figures_the_hold_targets_are_not_judged(self):
        run = results(1.2)
        del run["uncontended"]["hold_vs_plain_run"]
        judged = verdicts(run)
        for target in (HOLD_TIME, HOLD_REQUESTS, HOLD_HANDOFF):
            self.assertEqual(judged[target], ("n/a", "n/a"), target)
        # A smoke run's handoff has its sections at a smaller N: no verdict at N = 8.
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=5.0, contenders=3)
        self.assertEqual(verdicts(run)[HOLD_HANDOFF], ("n/a", "n/a"))

    def test_a_missed_hold_target_fails_the_run(self):
        directory = Path(tempfile.mkdtemp(prefix="benchlib-test."))
        run = results(1.2)
        run["round_trips"] = round_trips(hold_requests=3.0)
        logged = []
        status = outcome.conclude(run, TOOLS, directory / "report.md", None, logged.append)
        self.assertEqual(status, outcome.MISSED_TARGETS)
        self.assertIn(f"MISSED TARGET: {HOLD_REQUESTS}: 3 requests; waits for 3.0 round trips",
                      logged)


class HoldChecks(unittest.TestCase):
    """The rows of a hold are checked as redlockrun's own: numbers, no failed run, no overlap."""

    def test_a_run_with_every_hold_row_is_no_problem(self):
        run = results(1.2)
        run["round_trips"] = round_trips(hold_requests=2.0)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        self.assertEqual(checks.problems(run, TOOLS), [])

    def test_figure_1_without_a_hold_row_is_a_problem(self):
        run = results(1.2)
        del run["uncontended"]["rows"][HOLD]
        found = checks.problems(run, TOOLS)
        self.assertIn(f"figure 1: no number for {HOLD}", found)
        run = results(1.2)
        del run["uncontended"]["rows"][FLOCK_SECTION]
        self.assertIn(f"figure 1: no number for {FLOCK_SECTION}", checks.problems(run, TOOLS))

    def test_failed_holds_in_figure_1_are_a_problem(self):
        # A failed hold is quick: its median would flatter it.
        run = results(1.2)
        run["uncontended"]["rows"][HOLD]["failures"] = 2
        self.assertIn(f"figure 1: {HOLD} failed 2 runs; see the error log",
                      checks.problems(run, TOOLS))

    def test_figure_2_without_the_holds_requests_is_a_problem(self):
        run = results(1.2)
        run["round_trips"] = round_trips(hold_requests=2.0)
        del run["round_trips"]["rows"][HOLD]
        self.assertIn(f"figure 2: no number for {HOLD}'s requests", checks.problems(run, TOOLS))

    def test_figure_3_needs_the_sections_at_its_counted_n_only(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0)
        found = checks.problems(run, TOOLS)
        self.assertIn(f"figure 3: no number for {HOLD}'s gap at N = 8", found)
        self.assertIn(f"figure 3: no number for {FLOCK_SECTION}'s gap at N = 8", found)
        run["handoff"]["counted_at"] = 64  # sections run at N = 64 then, not at 8
        self.assertEqual(checks.problems(run, TOOLS), [])

    def test_holds_that_overlap_or_fail_in_figure_3_are_a_problem(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        rows = run["handoff"]["by_contenders"]["8"]["rows"]
        rows[HOLD]["overlaps"] = 1
        rows[HOLD]["counted_failures"] = 2
        found = checks.problems(run, TOOLS)
        self.assertIn(f"{HOLD} let two holders overlap (1 times)", found)
        self.assertIn(f"{HOLD} runs failed (2); see the error log", found)

    def test_figure_3_needs_its_mixed_rows_at_its_counted_n(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        rows = run["handoff"]["by_contenders"]["8"]["rows"]
        del rows[HOLD_TO_RUN], rows[FLOOR_TO_RUN], rows[SECTION_TO_FLOCK]
        found = checks.problems(run, TOOLS)
        self.assertIn(f"figure 3: no number for {HOLD_TO_RUN}'s gap at N = 8", found)
        self.assertIn(f"figure 3: no number for {FLOOR_TO_RUN}'s gap at N = 8", found)
        self.assertIn(f"figure 3: no number for {SECTION_TO_FLOCK}'s gap at N = 8", found)

    def test_mixed_rows_that_overlap_or_fail_are_a_problem(self):
        for name in (HOLD_TO_RUN, FLOOR_TO_RUN, SECTION_TO_FLOCK):
            run = results(1.2)
            run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
            row = run["handoff"]["by_contenders"]["8"]["rows"][name]
            row["overlaps"], row["failures"] = 2, 3
            found = checks.problems(run, TOOLS)
            self.assertIn(f"figure 3: {name} at N = 8: two holders overlapped (2 times)", found)
            self.assertIn(f"figure 3: {name} at N = 8: 3 runs failed; see the error log", found)

    def test_a_mixed_row_without_a_handoff_of_its_kind_in_a_repeat_is_a_problem(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        row = run["handoff"]["by_contenders"]["8"]["rows"][HOLD_TO_RUN]
        row["repeat_handoffs"] = [10, 0, 10]  # its median still a number, from two repeats
        found = checks.problems(run, TOOLS)
        self.assertEqual(found, [f"figure 3: {HOLD_TO_RUN} at N = 8: handoffs of the kind "
                                 "measured per repeat: [10, 0, 10]; every one of the 3 repeats "
                                 "needs one"])
        row["repeat_handoffs"] = [10, 10]  # a repeat missing altogether
        self.assertEqual(len(checks.problems(run, TOOLS)), 1)
        row["repeat_handoffs"] = [1, 1, 1]
        self.assertEqual(checks.problems(run, TOOLS), [])

    def test_the_report_shows_the_mixed_rows_and_what_their_gaps_are(self):
        run = results(1.2)
        run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        text = report.render(run)
        self.assertIn(f"| {HOLD_TO_RUN} | 2.00 × |", text)
        self.assertIn(f"gaps of the 30 handoffs from {HOLD} to redlockrun only", text)
        self.assertIn(f"gaps of the 30 handoffs from {HOLD_FLOOR} to redlockrun only", text)
        self.assertIn(f"gaps of the 30 handoffs from {FLOCK_SECTION} to flock(1) only", text)


class MixedHandoffs(unittest.TestCase):
    """The gaps of a mixed row are only those from a releasing holder to a waiting one."""

    def test_only_gaps_from_the_releasing_kind_to_the_waiting_kind_count(self):
        label = critical_section.kind_label
        ms = 1_000_000
        # hold, run, run, hold, hold, run: gaps 2 (hold→run), 3 (run→run), 4 (run→hold),
        # 5 (hold→hold), 6 (hold→run) ms.
        kinds, gaps = ["hold", "run", "run", "hold", "hold", "run"], [2, 3, 4, 5, 6]
        records, at = [], 0
        for index, kind in enumerate(kinds):
            records.append((label(kind, index), at, at + ms))
            at += ms + (gaps[index] * ms if index < len(gaps) else 0)
        found = critical_section.handoffs_between(records, "hold", "run")
        self.assertEqual(found["gaps_ms"], [2.0, 6.0])
        self.assertEqual(found["handoffs"], 2)
        self.assertEqual(found["acquisitions"], 6)
        self.assertEqual(found["overlaps"], 0)
        self.assertEqual(critical_section.handoffs_between(records, "run", "hold")["gaps_ms"],
                         [4.0])

    def test_overlaps_count_over_every_handoff(self):
        label = critical_section.kind_label
        # A run that started before the run before it ended: not a counted handoff, still an
        # overlap.
        records = [(label("hold", 0), 0, 10), (label("run", 1), 12, 20),
                   (label("run", 3), 15, 30)]
        found = critical_section.handoffs_between(records, "hold", "run")
        self.assertEqual(found["overlaps"], 1)
        self.assertEqual(found["handoffs"], 1)

    def test_a_mixed_loop_labels_each_holder_with_its_kind(self):
        # A fake lock: runs one at a time, each starting after a gap that says what handed over
        # to what (hold → run 3 ms, anything else 7 ms), so that the gaps counted show which
        # handoffs were taken.
        directory = Path(tempfile.mkdtemp(prefix="benchlib-test."))
        bench = FakeContentionBench(directory)
        hold, plain = FakeTool("hold", "redis"), FakeTool("run", "redis")
        figure_row = contention.mixed_looping(bench, Mix("mixed", hold, plain), 4, 3)
        sequence = bench.launcher.sequence
        self.assertEqual(len(sequence), 12)
        self.assertEqual(sorted(sequence.count(tool) for tool in ("hold", "run")), [6, 6])
        hold_to_run = sum(1 for previous, current in zip(sequence, sequence[1:])
                          if (previous, current) == ("hold", "run"))
        self.assertGreater(hold_to_run, 0)
        self.assertEqual(figure_row["handoffs"], hold_to_run)
        self.assertEqual(figure_row["gaps_ms"], [3.0] * hold_to_run)
        self.assertEqual(figure_row["overlaps"], 0)
        self.assertEqual(figure_row["failures"], 0)


def ms(value: float) -> int:
    """A time on the critical section's clock (ns), given in ms."""
    return round(value * 1e6)


def section(label: str, start_ms: float, end_ms: float) -> tuple:
    return (label, ms(start_ms), ms(end_ms))


# Writers W0 and W1, readers R0, R1 and R2, labelled in the log as figure 10 labels them.
W0, W1 = kind_label(X, 0), kind_label(X, 1)
R0, R1, R2 = kind_label(S, 0), kind_label(S, 1), kind_label(S, 2)
# Each section's start and end in ms. The lock changes hands W0 → readers (1.0 to 1.5), readers →
# W1 (4.1, the last reader's end, to 4.4), W1 → W0 (5.4 to 5.6), W0 → R0 (6.6 to 7.0), and R0 → W1
# (8.0 to 20.0), when nobody was waiting: W1's run started at 19.5. R2 follows R1 without
# overlapping it, in the same shared turn.
READERS_AND_WRITERS = [section(W0, 0.0, 1.0), section(R0, 1.5, 2.5), section(R1, 1.8, 3.0),
                       section(R2, 3.1, 4.1), section(W1, 4.4, 5.4), section(W0, 5.6, 6.6),
                       section(R0, 7.0, 8.0), section(W1, 20.0, 21.0)]
# When each contender started each of its runs: W0 waits from 4.0, R0 from 6.0, W1 from 0 and
# again from 19.5.
LAUNCHES = {W0: [0, ms(4.0)], R0: [0, ms(6.0)], R1: [0], R2: [0], W1: [0, ms(19.5)]}


class ReadersAndWriters(unittest.TestCase):
    """Figure 10's gap, at a change of hands only, and its check: nothing overlaps a writer."""

    def test_the_readers_between_two_writers_make_one_turn(self):
        self.assertEqual(turns(READERS_AND_WRITERS),
                         [(X, 0, ms(1.0)), (S, ms(1.5), ms(4.1)), (X, ms(4.4), ms(5.4)),
                          (X, ms(5.6), ms(6.6)), (S, ms(7.0), ms(8.0)), (X, ms(20.0), ms(21.0))])

    def test_the_gap_runs_from_the_lock_becoming_free_to_the_next_turns_first_start(self):
        found = mode_handoffs(READERS_AND_WRITERS, LAUNCHES)
        # From the last reader's end, not the first's; none between R1 and R2; none at 8.0, where
        # the lock stood idle.
        self.assertEqual([round(gap, 6) for gap in found["gaps_ms"]], [0.5, 0.3, 0.2, 0.4])
        self.assertEqual(found["changes"], ["x→s", "s→x", "x→x", "x→s"])
        self.assertEqual((found["acquisitions"], found["readers"], found["peak_shared"],
                          found["mode_overlaps"]), (8, 4, 2, 0))

    def test_a_reader_overlapping_a_writer_is_counted(self):
        reader = kind_label(S, 3)
        for section_of_reader in (section(reader, 0.5, 0.8),   # inside a writer's section
                                  section(reader, 5.0, 5.5),   # from inside one to after its end
                                  section(reader, 4.3, 4.5)):  # from before one's start
            records = sorted(READERS_AND_WRITERS + [section_of_reader],
                             key=lambda record: record[1])
            self.assertEqual(mode_handoffs(records, LAUNCHES)["mode_overlaps"], 1,
                             section_of_reader)

    def test_writers_overlapping_each_other_are_counted_readers_are_not(self):
        writers = [section(W0, 0.0, 1.0), section(W1, 0.9, 1.9)]
        self.assertEqual(mode_handoffs(writers, {})["mode_overlaps"], 2)
        readers = [section(R0, 0.0, 1.0), section(R1, 0.1, 1.1), section(R2, 0.2, 0.3)]
        self.assertEqual(mode_handoffs(readers, {})["mode_overlaps"], 0)
        self.assertEqual(mode_handoffs(readers, {})["peak_shared"], 3)

    def test_the_spread_of_a_batch_runs_from_its_first_readers_start_to_its_last(self):
        batch = [section(W0, 0.0, 1.0), section(R1, 1.5, 2.5), section(R0, 1.2, 2.2),
                 section(R2, 5.2, 6.2)]
        spread, first = admission_spread(batch)
        self.assertAlmostEqual(spread, 4.0)
        self.assertAlmostEqual(first, 0.2)
        self.assertEqual(admission_spread([section(W0, 0.0, 1.0)]), (None, None))


def shared_figure(readers=6, writers=2, batch=8, waiters="200", requests=3.5, gap_ms=1.5,
                  spread_ms=3.0, requests_200=4.0) -> dict:
    """A run of figure 10 at the sizes its targets name, unless told otherwise."""
    def problems():
        return {"mode_overlaps": 0, "peak_shared": 6, "failures": 0, "timed_out": False}

    loop = {"total_s": 0.5, "gap_median_ms": gap_ms, "gap_p99_ms": 2 * gap_ms, "gaps": 40,
            "gaps_by_change": {"x→x": 4, "x→s": 18, "s→x": 18},
            "gap_median_by_change_ms": {"x→x": gap_ms, "x→s": gap_ms, "s→x": gap_ms},
            "acquisitions": 288, "reader_acquisitions": 216, "mean_holders": 1.2,
            "requests_per_acquisition": requests, "script_commands_per_acquisition": 30.0,
            "counted_peak_shared": 5, "counted_mode_overlaps": 0, "counted_failures": 0,
            **problems()}
    return {"reader": "redlockrun -s", "writer": "redlockrun", "readers": readers,
            "writers": writers, "iterations": 12, "repeats": 3, "hold_us": 1000, "cap": 100,
            "loop": loop,
            "batch": {"waiters": batch, "repeats": 3, "spread_median_ms": spread_ms,
                      "spread_max_ms": spread_ms + 1, "spreads_ms": [spread_ms] * 3,
                      "first_start_median_ms": 1.0, "acquisitions": 3 * (batch + 1),
                      **problems()},
            "bursts": {waiters: {"drain_s": 0.3, "acquisitions": 201,
                                 "requests_per_acquisition": requests_200,
                                 "script_commands_per_acquisition": 200.0, **problems()}}}


SHARED_REQUESTS = "`--shared`, N = 8 (6 readers, 2 writers): ≤ 5 Redis requests per acquisition"
SHARED_GAP = "`--shared`, N = 8 (6 readers, 2 writers): median handoff gap ≤ 2 ms"
SHARED_SPREAD = ("`--shared`: the 8 shared waiters admitted by one release start within 5 ms of "
                 "each other (median)")
SHARED_200 = "`--shared`: ≤ 5 Redis requests per acquisition with 200 waiters"


class SharedTargets(unittest.TestCase):
    def judged(self, **options) -> dict:
        run = results(1.2)
        run["shared"] = shared_figure(**options)
        return verdicts(run)

    def test_a_batch_may_spread_over_up_to_5_ms(self):
        self.assertEqual(self.judged(spread_ms=4.0)[SHARED_SPREAD],
                         ("4.00 ms (largest: 5.00 ms)", "pass"))
        self.assertEqual(self.judged(spread_ms=5.0)[SHARED_SPREAD][1], "pass")
        self.assertEqual(self.judged(spread_ms=6.0)[SHARED_SPREAD][1], targets.FAILED)

    def test_readers_and_writers_may_take_5_requests_and_a_2_ms_gap(self):
        judged = self.judged(requests=5.0, gap_ms=2.0, requests_200=5.0)
        for target in (SHARED_REQUESTS, SHARED_GAP, SHARED_200):
            self.assertEqual(judged[target][1], "pass", target)
        judged = self.judged(requests=5.1, gap_ms=2.1, requests_200=5.1)
        for target in (SHARED_REQUESTS, SHARED_GAP, SHARED_200):
            self.assertEqual(judged[target][1], targets.FAILED, target)

    def test_a_missed_shared_target_fails_the_run(self):
        run = results(1.2)
        run["shared"] = shared_figure(spread_ms=6.0)
        self.assertEqual(targets.failed(run), [f"{SHARED_SPREAD}: 6.00 ms (largest: 7.00 ms)"])

    def test_other_sizes_are_not_judged(self):
        judged = self.judged(readers=4, writers=2, batch=4, waiters="6", requests=9.0,
                             gap_ms=9.0, spread_ms=9.0, requests_200=9.0)
        for target in (SHARED_REQUESTS, SHARED_GAP, SHARED_SPREAD, SHARED_200):
            self.assertEqual(judged[target], ("n/a", "n/a"), target)
        run = results(1.2, smoke=True)
        run["shared"] = shared_figure(spread_ms=9.0)
        self.assertEqual(verdicts(run)[SHARED_SPREAD][1], "not judged (smoke)")
        self.assertEqual(targets.failed(run), [])


def scale_figure(superseding: dict) -> dict:
    """A run of figure 6 whose redlockrun rows are sound, with `superseding`'s --supersede cells."""
    cell = {"gap_median_ms": 1.0, "gap_p99_ms": 2.0, "drain_s": 0.1, "requests_per_acquisition": 4.0,
            "script_commands_per_acquisition": 9.0, "acquisitions": 9, "overlaps": 0,
            "failures": 0, "timed_out": False}
    return {"rows": {"redlockrun": {"8": dict(cell), "200": dict(cell)}}, "waiters": [8, 200],
            "superseding": superseding}


def superseding_cell(runs: int, requests_per_run: float = 3.5, **changes) -> dict:
    """A --supersede burst of `runs` runs: each but the last superseded, two sections run."""
    cell = {"runs": runs + 1, "superseded": runs - 1, "ran": 2, "failures": 0, "overlaps": 0,
            "timed_out": False, "requests_per_run": requests_per_run,
            "script_commands_per_run": 9.0}
    cell.update(changes)
    return cell


SUPERSEDE_8 = "`--supersede`: ≤ 5 Redis requests per run, 8 runs each superseding the one before"
SUPERSEDE_200 = "`--supersede`: ≤ 5 Redis requests per run, 200 runs each superseding the one before"


class Superseding(unittest.TestCase):
    def run_with(self, **cells) -> dict:
        run = results(1.2)
        run["scale"] = scale_figure({runs: cell for runs, cell in cells.items()})
        return run

    def test_up_to_5_requests_per_run_pass_at_8_and_200_runs(self):
        judged = verdicts(self.run_with(**{"8": superseding_cell(8, 5.0),
                                           "200": superseding_cell(200, 4.2)}))
        self.assertEqual(judged[SUPERSEDE_8], ("5.00", "pass"))
        self.assertEqual(judged[SUPERSEDE_200], ("4.20", "pass"))
        judged = verdicts(self.run_with(**{"8": superseding_cell(8, 5.1),
                                           "200": superseding_cell(200, 5.1)}))
        self.assertEqual(judged[SUPERSEDE_8][1], targets.FAILED)
        self.assertEqual(judged[SUPERSEDE_200][1], targets.FAILED)

    def test_a_full_run_without_the_rows_misses_the_targets(self):
        judged = verdicts(self.run_with())
        self.assertEqual(judged[SUPERSEDE_8], ("n/a", "n/a"))
        run = self.run_with()
        run["partial"] = False
        self.assertIn(f"{SUPERSEDE_8}: n/a (no number in a full run)", targets.failed(run))

    def test_a_sound_burst_is_no_problem_and_shows_in_the_report(self):
        run = self.run_with(**{"8": superseding_cell(8), "200": superseding_cell(200)})
        self.assertEqual([p for p in checks.problems(run, TOOLS) if "figure 6" in p], [])
        self.assertIn("| 200 | 3.50 | 199 | 2 |", report.render(run))

    def test_a_burst_that_went_wrong_is_a_problem(self):
        for changes, problem in (
                ({"superseded": 6}, "6 of 7 runs superseded"),
                ({"ran": 3}, "3 sections run, not 2"),
                ({"failures": 1}, "1 failures"),
                ({"overlaps": 1}, "1 overlaps"),
                ({"timed_out": True}, "timed out")):
            run = self.run_with(**{"8": superseding_cell(8, **changes),
                                   "200": superseding_cell(200)})
            found = [p for p in checks.problems(run, TOOLS) if "figure 6" in p]
            self.assertEqual(len(found), 1, changes)
            self.assertIn(f"redlockrun --supersede with 8 runs: {problem}", found[0])

    def test_a_missing_number_is_a_problem(self):
        run = self.run_with(**{"8": superseding_cell(8)})
        self.assertIn("figure 6: no number for redlockrun --supersede's requests with 200 runs",
                      checks.problems(run, TOOLS))


class SharedChecks(unittest.TestCase):
    def problems(self, figure: dict) -> list:
        run = results(1.2)
        run["shared"] = figure
        return checks.problems(run, TOOLS)

    def test_a_sound_run_is_no_problem_and_shows_in_the_report(self):
        run = results(1.2)
        run["shared"] = shared_figure()
        self.assertEqual(checks.problems(run, TOOLS), [])
        text = report.render(run)
        self.assertIn("## 10. Shared locks (`-s`)", text)
        self.assertIn("| 6 × `redlockrun -s`, 2 × `redlockrun` |", text)

    def test_a_writer_overlapping_another_section_is_a_problem(self):
        for place in ("loop", "batch"):
            figure = shared_figure()
            figure[place]["mode_overlaps"] = 1
            found = self.problems(figure)
            self.assertEqual(len(found), 1, found)
            self.assertIn("1 exclusive sections overlapped another section", found[0])
        figure = shared_figure()
        figure["loop"]["counted_mode_overlaps"] = 2
        figure["bursts"]["200"]["mode_overlaps"] = 1
        self.assertEqual(self.problems(figure),
                         ["figure 10: 6 readers and 2 writers: 2 exclusive sections overlapped "
                          "another section",
                          "figure 10: 200 shared waiters: 1 exclusive sections overlapped "
                          "another section"])

    def test_more_readers_than_the_cap_or_failed_runs_are_a_problem(self):
        figure = shared_figure()
        figure["bursts"]["200"]["peak_shared"] = 101
        figure["batch"]["failures"] = 1
        found = self.problems(figure)
        self.assertIn("figure 10: 200 shared waiters: 101 shared holders at once, more than the "
                      "cap of 100", found)
        self.assertIn("figure 10: batches of 8 shared waiters: 1 runs failed; see the error log",
                      found)

    def test_a_figure_without_its_numbers_is_a_problem(self):
        figure = shared_figure()
        figure["loop"]["gap_median_ms"] = None  # no change of hands seen with someone waiting
        figure["batch"]["spread_median_ms"] = None
        found = self.problems(figure)
        self.assertIn("figure 10: no number for readers and writers' gap", found)
        self.assertIn("figure 10: no number for the spread of 8 shared waiters' starts", found)


class FakeLauncher:
    """Times each tool by a fixed schedule, one value per round."""

    def __init__(self, schedule: dict):
        self.given = schedule
        self.schedule = {name: list(times) for name, times in schedule.items()}

    def timed(self, argv):
        # A run with --metrics-file is the same binary: it has a schedule of its own if given one,
        # or else a copy of the binary's.
        name = argv[0] + (" --metrics-file" if "--metrics-file" in argv else "")
        if name not in self.schedule:
            self.schedule[name] = list(self.given[argv[0]])
        return self.schedule[name].pop(0) / 1000, 0


class FakeSettings:
    uncontended_rounds = 4


class FakeBench:
    def __init__(self, launcher, with_deb_and_floors=False, sections=(), server_rows=()):
        self.settings = FakeSettings()
        self.tools = TOOLS
        self.reference = TOOLS[1]
        self.launcher = launcher
        self.sections = list(sections)
        self.server_rows = list(server_rows)
        self.workdir = Path("/nonexistent/bench-work")  # the fake launcher runs nothing there
        self.builds, self.floor, self.library_floor, self.metrics_floor = {}, [], [], []
        if with_deb_and_floors:
            self.builds = {DEB: Path("deb")}
            self.floor, self.library_floor = ["protocol-floor"], ["library-floor"]
            self.metrics_floor = ["metrics-floor"]

    def available(self):
        return list(self.tools)  # a list of its own, as Bench's: figure 3 adds to it

    def available_sections(self, in_mixes=False):
        return [tool for tool in self.sections
                if in_mixes or not getattr(tool, "mix_only", False)]

    def key(self, what):
        return what


class FakeLockLauncher:
    """Runs the critical section's command of each argv (TOOL KEY HELPER LOG HOLD_US LABEL) one at
    a time, as a lock would, on a made-up clock: each holder starts 3 ms after a "hold" holder
    ends if it is a "run", 7 ms after in any other case, and holds for 1 ms. `sequence`: the tools
    in the order they held."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sequence, self.clock_ns = [], 0

    def run(self, argv, timeout=None):
        tool, _, _, log, _, label = argv
        with self.lock:
            previous = self.sequence[-1] if self.sequence else None
            start = self.clock_ns + (3 if (previous, tool) == ("hold", "run") else 7) * 1_000_000
            self.clock_ns = start + 1_000_000
            self.sequence.append(tool)
            with open(log, "a") as lines:
                lines.write(f"{label} {start} {self.clock_ns}\n")
        time.sleep(0.001)  # let another contender's thread take the next turn
        return subprocess.CompletedProcess(argv, 0)


class FakeContentionSettings:
    hold_us = 1000
    run_time_limit_s = 30


class FakeContentionBench:
    def __init__(self, workdir: Path):
        self.settings = FakeContentionSettings()
        self.workdir = workdir
        self.helper = Path("critical-section")
        self.launcher = FakeLockLauncher()

    def key(self, what):
        return what.replace(" ", "-")


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


    def test_figure_1_times_a_hold_against_the_plain_run_of_the_same_rounds(self):
        warm_up = [1.0] * 3
        # Per round, the hold over the plain run: 2.0, 1.5, 2.0, 3.0; their medians: 3.0 / 1.75.
        launcher = FakeLauncher({"redlockrun": warm_up + [1.0, 2.0, 1.5, 3.0],
                                 HOLD: warm_up + [2.0, 3.0, 3.0, 9.0],
                                 FLOCK_SECTION: warm_up + [1.5] * 4,
                                 "flock(1)": warm_up + [1.0] * 4, "true": warm_up + [0.5] * 4})
        sections = [FakeTool(HOLD, "redis"), FakeTool(FLOCK_SECTION, "local")]
        figure = uncontended.run(FakeBench(launcher, sections=sections))
        self.assertAlmostEqual(figure["rows"][HOLD]["median_ms"], 3.0)
        self.assertAlmostEqual(figure["rows"][FLOCK_SECTION]["vs_flock"], 1.5)
        hold = figure.get("hold_vs_plain_run") or {}
        self.assertAlmostEqual(hold.get("ratio"), 3.0 / 1.75)
        self.assertEqual(hold.get("middle_half"), (1.5, 2.0))
        text = "\n".join(report._uncontended(figure))
        self.assertIn(f"| {HOLD} | 3.00 × |", text)
        self.assertIn(f"`{HOLD}` over a plain run (`redlockrun -k KEY true`) of the same rounds: "
                      "1.71 × (rounds' middle half: 1.50–2.00 ×)", text)

    def test_without_sections_figure_1_has_no_hold_ratio(self):
        launcher = FakeLauncher({"redlockrun": [1.0] * 7, "flock(1)": [1.0] * 7,
                                 "true": [0.5] * 7})
        self.assertIsNone(uncontended.run(FakeBench(launcher)).get("hold_vs_plain_run",
                                                                     "missing"))


class BeyondFloors(unittest.TestCase):
    """Figure 1's .deb − library floor − (protocol floor − plain true): what the .deb's build costs
    beyond loading its libraries and beyond the protocol."""

    def figure(self, with_deb_and_floors=True) -> dict:
        warm_up = [1.0] * 3
        # Per round: .deb, library floor, protocol floor, plain true, flock(1), in ms.
        rounds = [(4.0, 2.0, 2.5, 0.8, 2.0), (5.0, 2.2, 2.5, 0.9, 2.0),
                  (5.4, 1.8, 2.7, 0.7, 2.0), (7.0, 2.0, 2.3, 0.8, 2.0)]
        deb, library, protocol, true, flock = (warm_up + list(times) for times in zip(*rounds))
        launcher = FakeLauncher({"deb": deb, "library-floor": library,
                                 "protocol-floor": protocol, "true": true, "flock(1)": flock,
                                 "redlockrun": flock, "metrics-floor": true})
        return uncontended.run(FakeBench(launcher, with_deb_and_floors))

    def test_figure_1_gives_the_debs_cost_beyond_its_two_floors(self):
        beyond = self.figure().get("deb_beyond_floors") or {}
        # Medians: .deb 5.2, library floor 2.0, protocol floor 2.5, true 0.8, flock(1) 2.0 ms.
        self.assertAlmostEqual(beyond.get("ms"), 5.2 - 2.0 - (2.5 - 0.8))
        self.assertAlmostEqual(beyond.get("vs_flock"), 1.5 / 2.0)
        # Per round: 0.3, 1.2, 1.6 and 3.5 ms, over flock(1)'s 2 ms.
        low, high = beyond.get("vs_flock_middle_half")
        self.assertAlmostEqual(low, 0.15)
        self.assertAlmostEqual(high, 0.8)

    def test_figure_1_shows_it_in_the_report(self):
        figure = self.figure()
        text = "\n".join(report._uncontended(figure))
        self.assertIn(".deb − library floor − (protocol floor − plain true)", text)
        self.assertIn("0.75 × flock(1) (rounds' middle half: 0.15–0.80 ×), 1.50 ms", text)

    def test_without_the_debs_build_and_the_floors_there_is_no_difference(self):
        figure = self.figure(with_deb_and_floors=False)
        self.assertIsNone(figure.get("deb_beyond_floors", "missing"))
        self.assertNotIn("library floor −", "\n".join(report._uncontended(figure)))


VALKEY = "redlockrun (Valkey 8.0.1)"
REDIS_6_2 = "redlockrun (Redis 6.2.16)"
SERVER_ROWS = {REDIS_6_2: "redlockrun -u URL against Redis 6.2.16, built from redis-6.2.16.tar.gz",
               VALKEY: "redlockrun -u URL against Valkey 8.0.1, built from valkey-8.0.1.tar.gz"}


def server_row(name: str) -> peers.Tool:
    """A row of redlockrun against another server, whose program is named as the row is."""
    return peers.Tool(name, SERVER_ROWS[name], peers.OTHER_SERVER, False,
                      [name, "-u", "redis://127.0.0.1:7001"], lambda key, command: [key, *command])


def with_server_rows(vs_flock: float = 5.0, gap_vs_flock: float = 10.0) -> dict:
    """A run of figures 1 and 3 (at N = 8, with the sections) whose rows of redlockrun against
    other servers took `vs_flock` × flock(1) uncontended and `gap_vs_flock` × its handoff gap:
    far beyond every target of the redlockrun row, which meets them all."""
    run = results(1.2)
    run["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
    run["server_rows"] = dict(SERVER_ROWS)
    run["uncontended"]["server_rows"] = dict(SERVER_ROWS)
    run["handoff"]["server_rows"] = dict(SERVER_ROWS)
    flock = run["handoff"]["by_contenders"]["8"]["rows"]["flock(1)"]
    for name in SERVER_ROWS:
        run["uncontended"]["rows"][name] = {"median_ms": 2.0 * vs_flock, "vs_flock": vs_flock,
                                            "runs": 10, "failures": 0}
        run["handoff"]["by_contenders"]["8"]["rows"][name] = handoff_row(1.0, gap_vs_flock,
                                                                         flock)
    return run


class FakeHandoffSettings:
    handoff = {2: 5, 8: 3, 64: 1}
    handoff_repeats = 2
    hold_us = 1000


class FakeHandoffBench(FakeBench):
    def __init__(self, server_rows):
        super().__init__(None, server_rows=server_rows)
        self.settings = FakeHandoffSettings()

    def log(self, message):
        pass


class OtherServers(unittest.TestCase):
    """redlockrun against other servers than the bench's Redis: a row each in figure 1 and at
    figure 3's counted N, never counted, never judged by a target."""

    def test_the_row_names_the_server_and_version_its_info_gives(self):
        valkey = {"redis_version": "7.2.4", "server_name": "valkey", "valkey_version": "8.0.1"}
        self.assertEqual(other_servers.named("valkey-8.0.1.tar.gz", valkey), ("Valkey", "8.0.1"))
        redis = {"redis_version": "6.2.16", "redis_mode": "standalone"}
        self.assertEqual(other_servers.named("redis-6.2.16.tar.gz", redis), ("Redis", "6.2.16"))
        self.assertEqual(other_servers.row_name("Valkey", "8.0.1"), VALKEY)
        # Valkey's redis_version is the Redis it is compatible with, not what it is.
        with self.assertRaisesRegex(RuntimeError, "says it is Redis 7.2.4"):
            other_servers.named("valkey-8.0.1.tar.gz", {"redis_version": "7.2.4"})
        with self.assertRaisesRegex(RuntimeError, "says it is Redis 7.0.15"):
            other_servers.named("redis-6.2.16.tar.gz", {"redis_version": "7.0.15"})

    def builder(self, script: str) -> Path:
        builder = Path(tempfile.mkdtemp(prefix="benchlib-test.")) / "build-servers"
        builder.write_text("#!/bin/sh\n" + script)
        builder.chmod(0o755)
        return builder

    def test_a_server_that_cannot_be_built_is_skipped_in_a_smoke_run_only(self):
        builder = self.builder("echo 'build-servers: building valkey-8.0.1.tar.gz failed' >&2\n"
                               "exit 1\n")
        redlockrun = FakeTool("redlockrun", "redis")
        skipped, started = {}, []
        rows = other_servers.start_all(redlockrun, Path("."), True, skipped, started, builder)
        self.assertEqual((rows, started), ([], []))
        self.assertEqual(skipped, {
            f"redlockrun ({name})": f"tests/compat/build-servers {name}.tar.gz: build-servers: "
                                    "building valkey-8.0.1.tar.gz failed"
            for name in ("redis-6.2.16", "valkey-8.0.1")})
        with self.assertRaisesRegex(RuntimeError, "a full run needs redis-6.2.16.tar.gz's server: "
                                                  "tests/compat/build-servers"):
            other_servers.start_all(redlockrun, Path("."), False, {}, [], builder)

    def test_build_servers_printing_no_server_is_an_error(self):
        builder = self.builder("printf 'redis-6.2.16\\t/nonexistent/bin\\n'\n")
        with self.assertRaisesRegex(RuntimeError, "not the name and the bin folder of a server"):
            other_servers.build("redis-6.2.16.tar.gz", builder)

    def test_they_run_against_their_own_server_and_in_no_other_figure(self):
        redlockrun = peers.Tool("redlockrun", "", "redis", False, ["redlockrun"],
                                lambda key, command: ["-k", key, "--", *command])
        row = peers.on_server(redlockrun, VALKEY, "redis://127.0.0.1:7001", "")
        self.assertEqual(row.argv("K", ["true"]),
                         ["redlockrun", "-u", "redis://127.0.0.1:7001", "-k", "K", "--", "true"])
        # Figures 2 and 4 to 10 take bench.available(): even among the tools, it is not there.
        bench = context.Bench(None, Path("."), [redlockrun, row], None, None, None, None,
                              server_rows=[row])
        self.assertEqual(bench.available(), [redlockrun])
        self.assertEqual(bench.available(servers=("redis",)), [redlockrun])

    def test_figure_1_times_them_in_the_same_rounds(self):
        warm_up = [1.0] * 3
        launcher = FakeLauncher({"redlockrun": warm_up + [1.0] * 4, VALKEY: warm_up + [2.0] * 4,
                                 "flock(1)": warm_up + [1.0] * 4, "true": warm_up + [0.5] * 4})
        figure = uncontended.run(FakeBench(launcher, server_rows=[server_row(VALKEY)]))
        self.assertEqual(figure["rows"][VALKEY]["runs"], 4)
        self.assertAlmostEqual(figure["rows"][VALKEY]["vs_flock"], 2.0)
        self.assertEqual(figure.get("server_rows"), {VALKEY: SERVER_ROWS[VALKEY]})

    def test_figure_3_runs_them_at_its_counted_n_only_and_never_counts_them(self):
        calls = []

        def looping(bench, tool, contenders, iterations=0, count=False):
            calls.append((tool.name, contenders, count))
            run = {"seconds": 1.0, "gaps_ms": [1.0], "acquisitions": contenders * iterations,
                   "overlaps": 0, "failures": 0, "timed_out": False}
            if count:
                run["requests_per_acquisition"] = 4.0
            return run

        rows = [server_row(name) for name in SERVER_ROWS]
        original, handoff_figure.looping = handoff_figure.looping, looping
        try:
            figure = handoff_figure.run(FakeHandoffBench(rows))
        finally:
            handoff_figure.looping = original
        for name in SERVER_ROWS:
            self.assertEqual([call for call in calls if call[0] == name],
                             [(name, 8, False)] * 2, calls)  # in both repeats, at N = 8
            self.assertIn(name, figure["by_contenders"]["8"]["rows"])
            for contenders in ("2", "64"):
                self.assertNotIn(name, figure["by_contenders"][contenders]["rows"])
        self.assertIn(("redlockrun", 8, True), calls)  # the bench's Redis is counted
        # So figure 4, which shows the counted rows, has redlockrun's and none of theirs.
        self.assertEqual(list(load._contended(figure)["rows"]), ["redlockrun"])
        self.assertEqual(figure.get("server_rows"), SERVER_ROWS)

    def test_no_target_judges_them(self):
        run = with_server_rows()
        without = results(1.2)
        without["handoff"] = handoff(1.2, setnx_gap_ms=12.0, hold_gap_vs_flock=1.2)
        self.assertEqual(targets.judge(run), targets.judge(without))
        self.assertEqual(targets.failed(run), [])
        self.assertEqual(checks.problems(run, TOOLS), [])

    def test_the_report_shows_them_and_says_what_they_are(self):
        text = report.render(with_server_rows())
        self.assertIn(f"| {VALKEY} | 5.00 × |", text)  # figure 1
        self.assertIn(f"| {REDIS_6_2} | 5.00 × |", text)
        self.assertIn(f"| {VALKEY} | 5.00 × | 5.00–5.00 × | 10.0 × |", text)  # figure 3
        self.assertIn(f"`{REDIS_6_2}` and `{VALKEY}` are the default build of redlockrun "
                      "against other servers than the bench's own Redis", text)
        self.assertEqual(text.count("no target judges them"), 2)  # figures 1 and 3
        self.assertIn("in the same repeats at N = 8 only", text)
        self.assertIn("| Other servers (figures 1 and 3) | redlockrun -u URL against Redis 6.2.16",
                      text)
        self.assertNotIn("Other servers", report.render(results(1.2)))
        self.assertNotIn("against other servers", report.render(results(1.2)))

    def test_their_failures_overlaps_and_missing_numbers_are_problems(self):
        run = with_server_rows()
        run["uncontended"]["rows"][VALKEY]["failures"] = 2
        row = run["handoff"]["by_contenders"]["8"]["rows"][REDIS_6_2]
        row["overlaps"] = 1
        found = checks.problems(run, TOOLS)
        self.assertIn(f"figure 1: {VALKEY} failed 2 runs; see the error log", found)
        self.assertIn(f"{REDIS_6_2} let two holders overlap (1 times)", found)
        run = with_server_rows()
        del run["uncontended"]["rows"][VALKEY]
        del run["handoff"]["by_contenders"]["8"]["rows"][REDIS_6_2]
        found = checks.problems(run, TOOLS)
        self.assertIn(f"figure 1: no number for {VALKEY}", found)
        self.assertIn(f"figure 3: no number for {REDIS_6_2}'s gap at N = 8", found)
        # Only at the counted N: a smoke run's, say, is 3.
        run["handoff"]["counted_at"] = 3
        self.assertFalse(any(REDIS_6_2 in problem for problem in checks.problems(run, TOOLS)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
