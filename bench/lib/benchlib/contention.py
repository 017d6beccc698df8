"""Contention scenarios shared by figures 3 to 6, 8 and 10: contenders that loop over the critical
section (all of one tool, figure 3's mixes of two, or figure 10's readers and writers of one key),
and a burst of waiters that queue behind one holder."""
import contextlib
import os
import time
from pathlib import Path

from .critical_section import (EXCLUSIVE, SHARED, CriticalSectionLog, handoffs, handoffs_between,
                               kind_label, mode_handoffs, slot_handoffs)
from .servers import MonitorRecording, wait_until
from .spawn import run_contenders, stop_all


def _recording(bench, tool, count: bool):
    """MONITOR while a Redis tool runs, if asked to count. Counting runs are separate from timed
    runs: MONITOR makes Redis copy every command, a script's own ones too, to the recording, and
    the recording thread competes with this driver's contender threads, which would slow down
    exactly the tools whose requests are counted."""
    if count and tool.server == "redis":
        return MonitorRecording(bench.redis)
    return contextlib.nullcontext()


def _handoffs(tool, records: list, launches: dict) -> dict:
    """An exclusive lock's handoffs (every gap between consecutive holders), a semaphore's (the
    gaps of slots that a waiter wanted; see slot_handoffs), or those of readers and writers (the
    changes of hands between them; see mode_handoffs)."""
    if tool.shared:
        return mode_handoffs(records, launches)
    if tool.limit > 1:
        return slot_handoffs(records, tool.limit, launches)
    return handoffs(records)


def _requests(monitor, acquisitions: int) -> dict:
    if monitor is None or not acquisitions:
        return {}
    client, inside = monitor.counts()
    return {"requests": client, "script_commands": inside,
            "requests_per_acquisition": client / acquisitions,
            "script_commands_per_acquisition": inside / acquisitions}


def _loop(bench, name: str, argv_of, contenders: int, iterations: int, seconds: float,
          recording) -> tuple:
    """`contenders` loops on one new key, contender C running argv_of(KEY, LOG, C) `iterations`
    times, or for `seconds`, within `recording` (a MONITOR, or nothing). (the run's outcome, the
    critical section's records, the end of the time allowed or 0.0, the recording)."""
    key = bench.key(f"{name}-{contenders}")
    log = CriticalSectionLog(bench.helper, bench.workdir / f"{key}.log", bench.settings.hold_us)
    until = time.monotonic() + seconds if seconds else 0.0
    with recording as monitor:
        outcome = run_contenders(bench.launcher, lambda c: argv_of(key, log, c), contenders,
                                 iterations=iterations, until=until,
                                 time_limit=bench.settings.run_time_limit_s)
    return outcome, log.records(), until, monitor


def _result(outcome: dict, records: list, until: float) -> dict:
    return {"seconds": outcome["seconds"], "failures": len(outcome["failures"]),
            "timed_out": outcome["timed_out"], "records": records,
            "until_ns": int(until * 1e9) if until else None, "launches": outcome["launches"]}


def looping(bench, tool, contenders: int, iterations: int = 0, seconds: float = 0.0,
            count: bool = False) -> dict:
    """`contenders` loops, each running `tool KEY critical-section` `iterations` times, or for
    `seconds`. The critical section's log gives the handoffs and each contender's acquisitions;
    `launches` says when each contender started each run."""
    outcome, records, until, monitor = _loop(
        bench, tool.name, lambda key, log, c: tool.argv(key, log.command(c)), contenders,
        iterations, seconds, _recording(bench, tool, count))
    result = _result(outcome, records, until)
    result.update(_handoffs(tool, records, outcome["launches"]))
    result.update(_requests(monitor, len(records)))
    return result


RELEASING, WAITING = "releasing", "waiting"


def mixed_looping(bench, mix, contenders: int, iterations: int) -> dict:
    """looping() with the contenders of a peers.Mix, all on one key, each looping over
    mix.tool_of(itself) (half over mix.releasing, half over mix.waiting). Each holder's line in
    the log says which kind it was, and the gaps are only those from a releasing holder to a
    waiting one ("handoffs" says how many); overlaps are counted over every handoff."""
    def argv_of(key, log, contender):
        kind = RELEASING if mix.tool_of(contender) is mix.releasing else WAITING
        return mix.tool_of(contender).argv(key, log.command(kind_label(kind, contender)))

    # The key is named after the two tools (the row's name has an arrow, unwelcome in a file name).
    outcome, records, until, _ = _loop(bench, f"{mix.releasing.name} to {mix.waiting.name}",
                                       argv_of, contenders, iterations, 0.0,
                                       contextlib.nullcontext())
    result = _result(outcome, records, until)
    result.update(handoffs_between(records, RELEASING, WAITING))
    return result


def readers_and_writers(bench, reader, writer, readers: int, writers: int, iterations: int,
                        count: bool = False) -> dict:
    """looping() with `readers` contenders running `reader` (redlockrun -s) and `writers` running
    `writer` (plain redlockrun), all on one key, `iterations` times each. The log labels readers
    "shared.0"... and writers "exclusive.0"..., which mode_handoffs() reads: the changes of hands
    between writers and readers, and any section that overlapped a writer's. With `count`, their
    requests are counted (MONITOR)."""
    labels = [kind_label(SHARED, number) for number in range(readers)] + \
        [kind_label(EXCLUSIVE, number) for number in range(writers)]

    def argv_of(key, log, contender):
        tool = reader if contender < readers else writer
        return tool.argv(key, log.command(labels[contender]))

    outcome, records, until, monitor = _loop(bench, f"{reader.name} and {writer.name}", argv_of,
                                             readers + writers, iterations, 0.0,
                                             _recording(bench, reader, count))
    result = _result(outcome, records, until)
    result["launches"] = {labels[contender]: times
                          for contender, times in outcome["launches"].items()}
    result.update(mode_handoffs(records, result["launches"]))
    result.update(_requests(monitor, len(records)))
    return result


def _blocked_flock_waiters(lock_file: Path) -> int:
    """Requests blocked on lock_file: /proc/locks lists each as "N: -> FLOCK ... PID MAJ:MIN:INODE"."""
    try:
        status = os.stat(lock_file)
    except FileNotFoundError:
        return 0
    device = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    with open("/proc/locks") as locks:
        return sum(1 for line in locks if "->" in line and f" {device} " in line)


def _ready_probe(bench, tool, key: str, waiters: int, monitoring: bool):
    """A test of "all waiters are queued", so that the burst starts with every one of them waiting.
    None if the tool offers none; a fixed settle time is used then."""
    if tool.server == "redis" and not tool.polls:  # redlockrun: waiters block in BLPOP
        return lambda: int(bench.redis.info_field("clients", "blocked_clients") or 0) >= waiters
    if tool.name == "flock(1)":
        lock_file = Path(tool.argv(key, [])[-1])  # flock's argument after the key
        return lambda: _blocked_flock_waiters(lock_file) >= waiters
    if tool.server == "redis":
        # A polling client that keeps its connection: the holder, every waiter, this INFO's
        # connection, and MONITOR's if there is one.
        others = 2 + (1 if monitoring else 0)
        return lambda: int(bench.redis.info_field("clients", "connected_clients") or 0) >= \
            waiters + others
    return None


def burst(bench, tool, waiters: int, count: bool = False, holder=None) -> dict:
    """One holder (or, for a semaphore of N, N holders) holds the lock until every waiter is queued,
    then lets go: the W waiters take it one after the other (N at a time). W+N acquisitions, W
    handoffs, none of them with a newcomer barging in.

    `holder` is the tool the holders run, `tool` by default: shared waiters (redlockrun -s) queue
    behind an exclusive holder, whose one release lets them in together (up to the lock's cap of
    shared holders). The log's labels then say which is which: "exclusive.0" for the holder,
    "shared.0"... for the waiters."""
    holder = holder or tool
    if tool.shared:
        holder_label, waiter_label = (lambda number: kind_label(EXCLUSIVE, number),
                                      lambda number: kind_label(SHARED, number))
    else:
        holder_label, waiter_label = (lambda number: "holder", lambda number: number)
    key = bench.key(f"{tool.name}-burst-{waiters}")
    log = CriticalSectionLog(bench.helper, bench.workdir / f"{key}.log", bench.settings.hold_us)
    gate = Path(bench.workdir / f"{key}.gate")
    # Each holder leaves a file saying it holds the lock, then holds it until the gate is opened.
    holders = [bench.workdir / f"{key}.holder-{number}" for number in range(holder.limit)]
    hold_until_gate = 'touch "$1"; while [ ! -e "$2" ]; do sleep 0.01; done; shift 2; exec "$@"'
    limit = bench.settings.run_time_limit_s
    processes, launches = [], {}
    with _recording(bench, tool, count) as monitor:
        try:
            start = time.perf_counter()
            for number, holding in enumerate(holders):
                processes.append(bench.launcher.start(holder.argv(key, [
                    "sh", "-c", hold_until_gate, "sh", str(holding), str(gate),
                    *log.command(holder_label(number))])))
            wait_until(lambda: all(holding.exists() for holding in holders), limit)
            for waiter in range(waiters):
                launches[waiter_label(waiter)] = [time.monotonic_ns()]
                processes.append(bench.launcher.start(
                    tool.argv(key, log.command(waiter_label(waiter)))))
            probe = _ready_probe(bench, tool, key, waiters, monitor is not None)
            if probe is None or not wait_until(probe, limit, 0.05):
                time.sleep(2.0)  # no probe (or it never came true): settle for a while
            time.sleep(0.1)
            queued = time.perf_counter()
            gate.touch()
            timed_out = not wait_until(lambda: all(p.poll() is not None for p in processes),
                                       limit, 0.01)
            done = time.perf_counter()
        finally:
            stop_all(processes)
    records = log.records()
    result = {"setup_seconds": queued - start, "drain_seconds": done - queued,
              "timed_out": timed_out, "records": records,
              "failures": sum(1 for p in processes if p.returncode not in (0, None))}
    result.update(_handoffs(tool, records, launches))
    result.update(_requests(monitor, len(records)))
    return result


# The exit status of a run that a newer one with --supersede ended as it waited.
SUPERSEDED = 75


def superseding_burst(bench, tool, waiters: int) -> dict:
    """One holder holds the lock while W runs of `tool` (redlockrun --supersede) come one after the
    other, each once the one before it waits: each one supersedes the one before it, which gives
    up with 75. Then the holder lets go, and the last one takes the lock. Its requests are counted
    (MONITOR), over the W + 1 runs: requests per run. A run that ends otherwise than as the newest
    (running) or as a superseded one (75) is a failure."""
    key = bench.key(f"{tool.name}-superseding-{waiters}")
    log = CriticalSectionLog(bench.helper, bench.workdir / f"{key}.log", bench.settings.hold_us)
    gate = Path(bench.workdir / f"{key}.gate")
    holding = bench.workdir / f"{key}.holder"
    hold_until_gate = 'touch "$1"; while [ ! -e "$2" ]; do sleep 0.01; done; shift 2; exec "$@"'
    limit = bench.settings.run_time_limit_s
    blocked = lambda: int(bench.redis.info_field("clients", "blocked_clients") or 0)  # noqa: E731
    processes, waiting = [], []
    timed_out = False
    with MonitorRecording(bench.redis) as monitor:
        try:
            processes.append(bench.launcher.start(tool.argv(key, [
                "sh", "-c", hold_until_gate, "sh", str(holding), str(gate),
                *log.command("holder")])))
            wait_until(holding.exists, limit)
            for waiter in range(waiters):
                process = bench.launcher.start(tool.argv(key, log.command(waiter)))
                processes.append(process)
                waiting.append(process)
                # The one before it has given up, and this one waits.
                if not wait_until(lambda: blocked() == 1 and all(
                        p.poll() is not None for p in waiting[:-1]), limit, 0.005):
                    timed_out = True
                    break
            gate.touch()
            timed_out = timed_out or not wait_until(
                lambda: all(p.poll() is not None for p in processes), limit, 0.01)
        finally:
            stop_all(processes)
    records = log.records()
    statuses = [p.returncode for p in waiting]
    superseded = sum(1 for status in statuses if status == SUPERSEDED)
    result = {"runs": waiters + 1, "superseded": superseded, "ran": len(records),
              "timed_out": timed_out,
              "failures": sum(1 for status in [processes[0].returncode, *statuses]
                              if status not in (0, SUPERSEDED))}
    result.update(handoffs(records))
    client, inside = monitor.counts()
    result.update({"requests": client, "requests_per_run": client / (waiters + 1),
                   "script_commands_per_run": inside / (waiters + 1)})
    return result
