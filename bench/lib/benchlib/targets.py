"""The issue's targets for redlockrun, judged from one run's results. A target whose figure was not
run at the size it names (a smoke run) is "n/a", never a pass."""

from .peers import FLOOR_TO_RUN, HOLD, HOLD_TO_RUN, SECTION_TO_FLOCK
from .stats import extremes, paired_ratios, ratio

REDLOCKRUN = "redlockrun"
FLOCK = "flock(1)"
# The polling peer redlockrun's handoff is held against. The SETNX shell stays in figure 3 as a
# peer but is no target: its gap is whenever one of its shell loops next polls, which moved from
# 16 to 27.6 × flock(1)'s from run to run; flock(1)'s own gap is the steady yardstick.
REDIS_PY = "redis-py Lock"


FAILED = "**FAIL**"


def _verdict(ok):
    if ok is None:
        return "n/a"
    return "pass" if ok else FAILED


def _at(mapping, *path):
    for step in path:
        if not isinstance(mapping, dict) or step not in mapping:
            return None
        mapping = mapping[step]
    return mapping


def _fmt(value, unit="", digits=2):
    return "n/a" if value is None else f"{value:.{digits}f}{unit}"


def spread(bounds, what: str, unit=" ×", digits=2) -> str:
    """The spread beside a ratio, as " (what: low–high ×)"; "" when there is none to show."""
    if not bounds:
        return ""
    low, high = bounds
    return f" ({what}: {low:.{digits}f}–{high:.{digits}f}{unit})"


def signed(value, digits=1) -> str:
    """+1.0, -0.3, and +0.0 rather than -0.0 for a value that rounds to nothing."""
    return f"{round(value, digits) + 0.0:+.{digits}f}"


def _deb_beyond_floors(beyond) -> tuple:
    """The .deb's build, judged by what it costs beyond its two floors (figure 1): its whole time is
    mostly the loading of Debian's shared libraries and the protocol, which the floors measure and
    which follow the machine rather than redlockrun."""
    target = (".deb's build: uncontended cost beyond the library floor and the protocol floor "
              "≤ 0.3 × flock(1)")
    if not beyond or beyond.get("vs_flock") is None:
        return (target, "n/a", "n/a")
    measured = (_fmt(beyond["vs_flock"], " ×") +
                spread(beyond.get("vs_flock_middle_half"), "rounds' middle half") +
                f"; {_fmt(beyond.get('ms'), ' ms')}")
    return (target, measured, _verdict(beyond["vs_flock"] <= 0.3))


def _semaphore(figure) -> list:
    """The targets of --limit 2, from figure 8: judged only where it ran at the sizes they name."""
    figure = figure or {}
    limited = figure.get("limit") == 2
    at8 = _at(figure, "rows", figure.get("semaphore")) \
        if limited and figure.get("contenders") == 8 else None
    at200 = _at(figure, "bursts", "200") if limited else None
    rows = []
    for target, value in (("≤ 5 Redis requests per acquisition at N = 8",
                           _at(at8, "requests_per_acquisition")),
                          ("≤ 5 Redis requests per acquisition at N = 200",
                           _at(at200, "requests_per_acquisition"))):
        rows.append((f"`--limit 2`: {target}", _fmt(value),
                     _verdict(None if value is None else value <= 5)))
    gap = _at(at8, "gap_median_ms")
    rows.append(("`--limit 2`: median handoff gap ≤ 2 ms at N = 8", _fmt(gap, " ms"),
                 _verdict(None if gap is None else gap <= 2.0)))
    return rows


def _shared(figure) -> list:
    """The targets of --shared, from figure 10: judged only where it ran at the sizes they name
    (6 readers and 2 writers; batches of 8 shared waiters; 200 shared waiters)."""
    figure = figure or {}
    loop = figure.get("loop") if (figure.get("readers"), figure.get("writers")) == (6, 2) else None
    batch = figure.get("batch") if _at(figure, "batch", "waiters") == 8 else None
    at200 = _at(figure, "bursts", "200")
    at8 = "`--shared`, N = 8 (6 readers, 2 writers)"
    rows = []
    value = _at(loop, "requests_per_acquisition")
    rows.append((f"{at8}: ≤ 5 Redis requests per acquisition", _fmt(value),
                 _verdict(None if value is None else value <= 5)))
    gap = _at(loop, "gap_median_ms")
    rows.append((f"{at8}: median handoff gap ≤ 2 ms", _fmt(gap, " ms"),
                 _verdict(None if gap is None else gap <= 2.0)))
    spread_ms = _at(batch, "spread_median_ms")
    rows.append(("`--shared`: the 8 shared waiters admitted by one release start within 5 ms of "
                 "each other (median)",
                 _fmt(spread_ms, " ms") + ("" if spread_ms is None else
                                           f" (largest: {_fmt(batch.get('spread_max_ms'), ' ms')})"),
                 _verdict(None if spread_ms is None else spread_ms <= 5.0)))
    value = _at(at200, "requests_per_acquisition")
    rows.append(("`--shared`: ≤ 5 Redis requests per acquisition with 200 waiters", _fmt(value),
                 _verdict(None if value is None else value <= 5)))
    return rows


def _hold(results: dict) -> list:
    """The targets of a section of a script locked with --hold and --release (figures 1 to 3): its
    time and its requests uncontended, and its handoff at N = 8: from a hold's release to a waiting
    plain run (figure 3's mixed row, its gaps only those), judged like for like against the same
    mix with the release made by the release floor, in the same repeats. The gap of the same mix of
    flock(1)'s own idiom (a `flock -u` in a script to a waiting flock(1)) and flock(1)'s plain gap
    are shown beside it, not judged: a hold's lock is renewed by a keeper that also releases it,
    and lives in Redis, so its release takes a hop to the keeper and one through Redis that
    `flock -u` has not (ARCHITECTURE.md, "Where a handoff's time goes"). The hold-to-hold row of
    figure 3 is no target: its gap takes in the waiting hold's own work after its grant (its
    keeper, its output, its script's eval)."""
    judged = []
    against_plain = _at(results, "uncontended", "hold_vs_plain_run") or {}
    times = against_plain.get("ratio")
    judged.append(("`--hold` + `--release`, uncontended: wall time ≤ 2 × a plain run's",
                   _fmt(times, " ×") + spread(against_plain.get("middle_half"),
                                              "rounds' middle half"),
                   _verdict(None if times is None else times <= 2.0)))

    trips = _at(results, "round_trips", "rows", HOLD) or {}
    requests, waited = trips.get("requests_per_run"), trips.get("waited_round_trips")
    measured = "n/a" if requests is None else \
        f"{_fmt(requests, '', 0)} requests; waits for {_fmt(waited, '', 1)} round trips"
    judged.append(("`--hold` + `--release`, uncontended: 2 Redis requests in all", measured,
                   _verdict(None if requests is None else requests == 2)))

    at8 = _at(results, "handoff", "by_contenders", "8", "rows") or {}
    gap = _at(at8, HOLD_TO_RUN, "gap_median_ms")
    beyond_floor = ratio(gap, _at(at8, FLOOR_TO_RUN, "gap_median_ms"))
    idiom = ratio(gap, _at(at8, SECTION_TO_FLOCK, "gap_median_ms"))
    gap_vs_flock = _at(at8, HOLD_TO_RUN, "gap_vs_flock")
    measured = _fmt(beyond_floor, " ×")
    if beyond_floor is not None:
        measured += spread(extremes(paired_ratios(
            _at(at8, HOLD_TO_RUN, "repeat_gap_median_ms") or [],
            _at(at8, FLOOR_TO_RUN, "repeat_gap_median_ms") or [])), "repeats")
    if beyond_floor is not None and idiom is not None and gap_vs_flock is not None:
        measured += (f"; not judged: {_fmt(idiom, ' ×')} `{SECTION_TO_FLOCK}`'s gap, "
                     f"{_fmt(gap_vs_flock, ' ×')} flock(1)'s plain gap")
    target = (f"Handoff from a `--release` to a waiting run: median gap ≤ 1.25 × that of "
              f"`{FLOOR_TO_RUN}` at N = 8")
    judged.append((target, measured,
                   _verdict(None if beyond_floor is None else beyond_floor <= 1.25)))
    return judged


def _high_availability(figure) -> list:
    """Figure 9's targets: waited round trips beyond the direct row of the same rounds. The
    connections each row opens are shown beside them: the proxy does not delay a handshake."""
    rows = (figure or {}).get("rows", {})
    direct = rows.get("direct", {})
    judged = []
    for name, target, most in (
            ("Sentinel", "Sentinel: waited round trips ≤ direct + 2", 2.0),
            ("Cluster, the key's own master",
             "Cluster, URL naming the key's own master: waited round trips ≤ direct + 0.5", 0.5),
            ("Cluster, another node",
             "Cluster, URL naming another node (one redirect): waited round trips ≤ direct + 2",
             2.0),
            ("--replicas 1",
             "`--replicas 1`: no extra request round trip (waited round trips ≤ direct + 0.5)",
             0.5)):
        row = rows.get(name)
        if not row or row.get("beyond_direct") is None:
            judged.append((target, "n/a", "n/a"))
            continue
        connections = row["connections_per_run"] - direct.get("connections_per_run", 0)
        measured = (f"{signed(row['beyond_direct'])} round trips (requests per run: "
                    f"{row['requests_per_run']:g}; connections: {signed(connections, 0)})")
        judged.append((target, measured, _verdict(row["beyond_direct"] <= most)))
    return judged


METRICS_TARGET = ("`--metrics-file`, uncontended: wall time ≤ 1.1 × a plain run's plus the "
                  "metrics floor's file work")


def judge(results: dict) -> list:
    """(target, what was measured, verdict) rows."""
    rows = []

    ratio = _at(results, "uncontended", "rows", REDLOCKRUN, "vs_flock")
    rounds = _at(results, "uncontended", "rows", REDLOCKRUN, "vs_flock_middle_half")
    rows.append(("Uncontended wall time ≤ 1.6 × flock(1), default build",
                 _fmt(ratio, " ×") + spread(rounds, "rounds' middle half"),
                 _verdict(None if ratio is None else ratio <= 1.6)))
    rows.append(_deb_beyond_floors(_at(results, "uncontended", "deb_beyond_floors")))

    trips = _at(results, "round_trips", "rows", REDLOCKRUN)
    if trips:
        requests, waited = trips.get("requests_per_run"), trips.get("waited_round_trips")
        ok = requests == 2 and waited is not None and abs(waited - 2) < 0.5
        rows.append(("Exactly 2 request round trips after connecting",
                     f"{_fmt(requests, '', 0)} requests; waits for {_fmt(waited, '', 1)} round trips",
                     _verdict(ok)))
    else:
        rows.append(("Exactly 2 request round trips after connecting", "n/a", "n/a"))

    at8 = _at(results, "handoff", "by_contenders", "8", "rows") or {}
    gap = _at(at8, REDLOCKRUN, "gap_median_ms")
    rows.append(("Median handoff gap ≤ 2 ms at N = 8", _fmt(gap, " ms"),
                 _verdict(None if gap is None else gap <= 2.0)))
    gap_vs_flock = _at(at8, REDLOCKRUN, "gap_vs_flock")
    rows.append(("Median handoff gap ≤ 1.25 × flock(1)'s at N = 8",
                 _fmt(gap_vs_flock, " ×") + spread(_at(at8, REDLOCKRUN, "gap_vs_flock_range"),
                                                   "repeats"),
                 _verdict(None if gap_vs_flock is None else gap_vs_flock <= 1.25)))
    total = _at(at8, REDLOCKRUN, "total_vs_flock")
    rows.append(("N = 8 loop: total time ≤ 1.5 × flock(1)'s",
                 _fmt(total, " ×") + spread(_at(at8, REDLOCKRUN, "total_vs_flock_range"),
                                            "repeats"),
                 _verdict(None if total is None else total <= 1.5)))
    theirs = _at(at8, REDIS_PY, "gap_median_ms")
    speedup = theirs / gap if theirs is not None and gap else None
    repeats = extremes(paired_ratios(_at(at8, REDIS_PY, "repeat_gap_median_ms") or [],
                                     _at(at8, REDLOCKRUN, "repeat_gap_median_ms") or []))
    theirs_total, ours_total = _at(at8, REDIS_PY, "total_s"), _at(at8, REDLOCKRUN, "total_s")
    total_speedup = theirs_total / ours_total if theirs_total and ours_total else None
    rows.append((f"Handoff ≥ 20 × faster than {REDIS_PY} (median gap, N = 8)",
                 f"{_fmt(speedup, ' ×', 1)}{spread(repeats, 'repeats', digits=1)}; "
                 f"total time: {_fmt(total_speedup, ' ×', 1)}",
                 _verdict(None if speedup is None else speedup >= 20)))

    per_acquisition = _at(at8, REDLOCKRUN, "requests_per_acquisition")
    rows.append(("≤ 5 Redis requests per acquisition at N = 8", _fmt(per_acquisition),
                 _verdict(None if per_acquisition is None else per_acquisition <= 5)))
    at200 = _at(results, "scale", "rows", REDLOCKRUN, "200", "requests_per_acquisition")
    rows.append(("≤ 5 Redis requests per acquisition at N = 200", _fmt(at200),
                 _verdict(None if at200 is None else at200 <= 5)))
    for runs in ("8", "200"):
        value = _at(results, "scale", "superseding", runs, "requests_per_run")
        rows.append((f"`--supersede`: ≤ 5 Redis requests per run, {runs} runs each superseding "
                     "the one before", _fmt(value), _verdict(None if value is None else value <= 5)))

    idle = _at(results, "load", "idle", REDLOCKRUN, "requests_per_second")
    rows.append(("An idle waiter sends ≤ 1 request per second", _fmt(idle, "/s"),
                 _verdict(None if idle is None else idle <= 1)))

    fairness = _at(results, "fairness", "rows", REDLOCKRUN, "min_over_max")
    contenders = _at(results, "fairness", "contenders")
    rows.append(("Fairness: min/max acquisitions ≥ 0.5 across 8 contenders", _fmt(fairness),
                 _verdict(None if fairness is None or contenders != 8 else fairness >= 0.5)))

    rss = _at(results, "memory", "rows", REDLOCKRUN, "peak_rss_mib")
    rows.append(("Peak RSS ≤ 4 MiB while the command runs", _fmt(rss, " MiB"),
                 _verdict(None if rss is None else rss <= 4.0)))

    rows += _hold(results)
    # The "≤ 1.1 × a plain run" cannot hold with the fsync it also asks for: on the
    # reference machine the file work alone (the metrics floor) is a third of a plain run. Judged
    # instead: the run over a plain run plus the floor's file work (bench/README.md).
    metrics = _at(results, "uncontended", "metrics_vs_file_work") or {}
    times = metrics.get("ratio")
    rows.append((METRICS_TARGET,
                 _fmt(times, " ×") + spread(metrics.get("middle_half"), "rounds' middle half"),
                 _verdict(None if times is None else times <= 1.1)))
    rows += _semaphore(results.get("semaphore"))
    rows += _shared(results.get("shared"))
    rows += _high_availability(results.get("high_availability"))
    if results.get("smoke"):
        # A smoke run's counts are far too small for a verdict, and a shared machine's noise far
        # too large: it only shows that the figures work, and is never failed on a target.
        rows = [(target, measured, "not judged (smoke)") for target, measured, _ in rows]
    return rows


def failed(results: dict) -> list:
    """The targets this run missed, with what was measured; none for a smoke run. A target without
    a number (n/a) is missed in a full run, where every figure ran and a target that reads n/a
    measures nothing; in a run of some figures (--only: results["partial"], which bench/run always
    sets; absent, the results count as partial) it is left out."""
    partial = results.get("partial", True) or results.get("smoke", False)
    return [f"{target}: {measured}" + ("" if verdict == FAILED else " (no number in a full run)")
            for target, measured, verdict in judge(results)
            if verdict == FAILED or (verdict == "n/a" and not partial)]
