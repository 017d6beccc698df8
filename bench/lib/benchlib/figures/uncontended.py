"""Figure 1: uncontended overhead. The wall time of `tool KEY true`, and of plain `true`; for
redlockrun, of each build (benchlib/builds.py).

The tools run interleaved, round after round, so that a slow spell of a shared machine falls on all of
them alike; the medians and their ratios come from the same rounds. Each round runs them in a new
order, shuffled from a fixed seed: what ran just before a start-up changes its time (a program
started right after the SETNX shell's bash and redis-cli processes, or after redis-py's Python, finds
less of itself in the CPU's caches), and a fixed or merely rotated order would give every tool the
same predecessor in every round, the cheapest for one and the most expensive for another.

Beside each ratio of medians, the spread of the rounds' own ratios (the tool's time in a round over
flock(1)'s in the same round): their middle half, from the 25th to the 75th percentile.

The .deb's build loads Debian's shared C++ libraries and speaks the protocol; the library floor
times the first, the protocol floor's time beyond plain `true` the second. What is left, .deb −
library floor − (protocol floor − plain true), is what redlockrun's own work costs in that build:
the part of its time that redlockrun can change, rather than the machine's loader and network.

A section of a script locked with `redlockrun --hold` and `--release` (peers/redlockrun-hold, with
`true` as the section) runs in the same rounds, beside the flock(1) idiom it replaces
(peers/flock-section); the hold is also given as a ratio to the plain run, and the rounds' spread of
that ratio.

A plain run with `--metrics-file` (figure 1's row METRICS_ROW, each run counting itself into a file
of the bench's work folder) runs in the same rounds too, with the metrics floor
(bench/helpers/metrics_floor.c), which does only the file work on the same file: lock, read, write,
fsync, rename. The run is given as a ratio to the plain run (what keeping the metrics costs), and as
a ratio to the plain run plus the floor's time beyond plain `true` (what it costs beyond the file
work any program that keeps such a file safely must do: the part redlockrun can change).

redlockrun against other servers than the bench's own Redis (Debian's 7.0) runs in the same rounds
too, a row each, named by its server and version ("redlockrun (Valkey 8.0.1)"): the default build
with `-u` naming Redis 6.2.16 or Valkey 8.0.1 (benchlib/other_servers.py). They show what the
server changes; no target judges them.
"""
import random

from ..builds import DEB
from ..floor import LIBRARY_NAME as LIBRARY_FLOOR
from ..floor import METRICS_NAME as METRICS_FLOOR
from ..floor import NAME as FLOOR
from ..peers import HOLD
from ..stats import median, middle_half, paired_ratios, ratio

PLAIN_TRUE = "plain true"
METRICS_ROW = "redlockrun --metrics-file"


def run(bench) -> dict:
    tools = bench.available()
    key = {tool.name: bench.key("uncontended") for tool in tools}
    commands = {tool.name: tool.argv(key[tool.name], ["true"]) for tool in tools}
    for section in bench.available_sections():
        commands[section.name] = section.argv(bench.key("uncontended"), ["true"])
    redlockrun = bench.tools[0]
    for name, binary in bench.builds.items():
        commands[name] = [str(binary), *redlockrun.argv(bench.key("uncontended"), ["true"])[1:]]
    for row in bench.server_rows:
        commands[row.name] = row.argv(bench.key("uncontended"), ["true"])
    if redlockrun.available:
        plain = redlockrun.argv(bench.key("uncontended"), ["true"])
        commands[METRICS_ROW] = [plain[0], "--metrics-file",
                                 str(bench.workdir / "redlockrun.prom"), *plain[1:]]
    if bench.floor:
        commands[FLOOR] = [*bench.floor, bench.key("uncontended"), "true"]
    if bench.library_floor:
        commands[LIBRARY_FLOOR] = [*bench.library_floor, bench.key("uncontended"), "true"]
    if bench.metrics_floor:
        commands[METRICS_FLOOR] = [*bench.metrics_floor, str(bench.workdir / "redlockrun.prom")]
    commands[PLAIN_TRUE] = ["true"]
    names = list(commands)

    samples = {name: [] for name in names}
    failures = {name: 0 for name in names}
    warm_up_rounds = 3  # loads the Lua scripts, the page cache, etcd's first lease...
    shuffler = random.Random(1)  # the same orders in every run of the benchmark
    for round_number in range(warm_up_rounds + bench.settings.uncontended_rounds):
        order = list(names)
        shuffler.shuffle(order)
        for name in order:
            seconds, status = bench.launcher.timed(commands[name])
            if round_number < warm_up_rounds:
                continue
            if status != 0:
                failures[name] += 1
            samples[name].append(seconds * 1000)

    flock_samples = samples[bench.reference.name]
    reference = median(flock_samples)
    rows = {}
    for name in names:
        value = median(samples[name])
        # Each round times every tool once, so a round's ratio compares runs made moments apart:
        # how far those ratios spread says how much the ratio of medians can be trusted.
        rows[name] = {"median_ms": value, "vs_flock": ratio(value, reference),
                      "vs_flock_middle_half": middle_half(paired_ratios(samples[name],
                                                                        flock_samples)),
                      "runs": len(samples[name]), "failures": failures[name]}
    return {"rows": rows, "order": names,
            "server_rows": {row.name: row.summary for row in bench.server_rows},
            "deb_beyond_floors": _beyond_floors(samples, bench.reference.name),
            "hold_vs_plain_run": _vs_plain_run(samples, HOLD, redlockrun.name),
            "metrics_vs_plain_run": _vs_plain_run(samples, METRICS_ROW, redlockrun.name),
            "metrics_vs_file_work": _metrics_vs_file_work(samples, redlockrun.name)}


def _metrics_vs_file_work(samples: dict, plain_run: str):
    """A run with --metrics-file over a plain run plus the metrics floor's time beyond plain
    `true`: the ratio from the medians, and the middle half of the same ratio taken round by
    round; None unless all four ran."""
    if not all(samples.get(name) for name in (METRICS_ROW, plain_run, METRICS_FLOOR, PLAIN_TRUE)):
        return None

    def floor(plain, metrics_floor, true):
        return plain + metrics_floor - true

    parts = [samples[plain_run], samples[METRICS_FLOOR], samples[PLAIN_TRUE]]
    per_round = [floor(*times) for times in zip(*parts)]
    return {"ratio": ratio(median(samples[METRICS_ROW]), floor(*(median(p) for p in parts))),
            "middle_half": middle_half(paired_ratios(samples[METRICS_ROW], per_round)),
            "file_work_ms": median(samples[METRICS_FLOOR]) - median(samples[PLAIN_TRUE])}


def _vs_plain_run(samples: dict, name: str, plain_run: str):
    """A row (a hold and its release, a run with --metrics-file) over a plain run of the same
    rounds: the ratio of the medians, and the middle half of the rounds' own ratios; None unless
    both ran."""
    if not samples.get(name) or not samples.get(plain_run):
        return None
    return {"ratio": ratio(median(samples[name]), median(samples[plain_run])),
            "middle_half": middle_half(paired_ratios(samples[name], samples[plain_run]))}


def _beyond_floors(samples: dict, reference: str):
    """.deb − library floor − (protocol floor − plain true), from the medians, in ms and in
    × flock(1), with the middle half of the same difference taken round by round over flock(1)'s
    time in that round; None without the .deb's build or either floor."""
    if not all(samples.get(name) for name in (DEB, LIBRARY_FLOOR, FLOOR)):
        return None
    parts = [samples[DEB], samples[LIBRARY_FLOOR], samples[FLOOR], samples[PLAIN_TRUE]]

    def beyond(deb, library, protocol, true):
        return deb - library - (protocol - true)

    milliseconds = beyond(*(median(part) for part in parts))
    per_round = [beyond(*times) for times in zip(*parts)]
    return {"ms": milliseconds, "vs_flock": ratio(milliseconds, median(samples[reference])),
            "vs_flock_middle_half": middle_half(paired_ratios(per_round, samples[reference]))}
