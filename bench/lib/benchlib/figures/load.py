"""Figure 4: Redis load.

- Under contention: client requests per acquisition, from figure 3's runs at 8 contenders (or the
  largest count a smoke run uses), with the commands Lua scripts ran inside Redis beside them.
- Idle waiters: K waiters queue behind a holder of the same tool that keeps the lock for longer
  than the window, and MONITOR counts what the waiters send during the window: requests per second
  per waiter. The holder's own requests (renewals) are left out.
- The window counts only if the waiters were waiting in it: at its start and at its end every
  waiter must still be running (none gave up, failed or got the lock), and those of a tool that
  waits by blocking (redlockrun) must each be blocked in BLPOP, as CLIENT LIST shows. Both are
  looked at just outside the window, so that the look is not counted as load.
- redlockrun once more, behind a holder of the classic SETNX algorithm (a bare timestamp written
  with redis-cli): such a holder releases with a plain DEL that wakes nobody, so redlockrun has to
  look again now and then, and this row shows how often.
"""
import time

from ..servers import MonitorRecording, wait_until
from ..spawn import stop_all

CLASSIC_HOLDER = "redlockrun, behind a classic-algorithm holder"


def _contended(handoff: dict) -> dict:
    by_contenders = handoff["by_contenders"]
    contenders = str(handoff["counted_at"])
    rows = {name: {key: row.get(key) for key in
                   ("requests_per_acquisition", "script_commands_per_acquisition")}
            for name, row in by_contenders[contenders]["rows"].items()
            if "requests_per_acquisition" in row}
    return {"contenders": int(contenders), "rows": rows}


def _hold_the_classic_way(bench, key: str, seconds: float) -> None:
    now_s, now_us = bench.redis.command("TIME").split()
    expiry_ms = int(now_s) * 1000 + int(now_us) // 1000 + int(seconds * 1000)
    bench.redis.command("SET", key, str(expiry_ms), "PX", str(int(seconds * 1000)))


def _waiting(bench, tool, waiters: list) -> dict:
    """How many waiters are still running, and (for a tool that blocks) blocked in BLPOP. A
    waiter between two BLPOPs (its timeout ran out and it looks again; behind a classic holder,
    which wakes nobody, it also pauses between them) is not blocked for a moment, so the count is
    given a few seconds to reach them all at once."""
    blocked = []  # the last count seen

    def all_blocked() -> bool:
        blocked[:] = [bench.redis.clients_blocked_in("blpop")]
        return blocked[0] == len(waiters)

    if not tool.polls:
        wait_until(all_blocked, 5)
    return {"alive": sum(1 for waiter in waiters if waiter.poll() is None),
            "blocked": blocked[0] if blocked else None}


def _idle(bench, tool, classic_holder: bool = False) -> dict:
    settings = bench.settings
    key = bench.key(f"{tool.name}-idle")
    # Held well past the window: the look at its end may take a few seconds (see _waiting).
    hold_s = settings.idle_settle_s + settings.idle_window_s + 10
    processes = []
    try:
        if classic_holder:
            _hold_the_classic_way(bench, key, hold_s)
        else:
            processes.append(bench.launcher.start(tool.argv(key, ["sleep", str(hold_s)])))
            if not wait_until(lambda: bench.redis.command("EXISTS", key) == "1", 30):
                raise RuntimeError(f"{tool.name} did not take {key}")
        holder = bench.redis.client_addresses()  # the holder's connection, if it keeps one
        with MonitorRecording(bench.redis) as monitor:
            waiters = [bench.launcher.start(tool.argv(key, ["true"]))
                       for _ in range(settings.idle_waiters)]
            processes += waiters
            time.sleep(settings.idle_settle_s)
            at_start = _waiting(bench, tool, waiters)
            start = time.time()
            time.sleep(settings.idle_window_s)
            end = time.time()
            at_end = _waiting(bench, tool, waiters)
    finally:
        stop_all(processes)
        bench.redis.command("DEL", key)
    client, inside = monitor.counts(start, end, ignore=holder)
    per_waiter_second = settings.idle_waiters * (end - start)
    return {"requests_per_second": client / per_waiter_second,
            "script_commands_per_second": inside / per_waiter_second,
            "window_s": end - start, "waiters": settings.idle_waiters,
            "waiting_at_start": at_start, "waiting_at_end": at_end}


def run(bench, handoff: dict) -> dict:
    idle = {}
    for tool in bench.available(("redis",)):
        bench.log(f"  {tool.name}: {bench.settings.idle_waiters} idle waiters")
        idle[tool.name] = _idle(bench, tool)
    redlockrun = bench.tools[0]
    bench.log(f"  {CLASSIC_HOLDER}")
    idle[CLASSIC_HOLDER] = _idle(bench, redlockrun, classic_holder=True)
    return {"contended": _contended(handoff), "idle": idle}
