"""redlockrun --break: an operator ends every holder's claim on a lock at once. Each broken holder
(a run, or a hold's keeper) learns of it at its next renewal, stops its command (or the hold's
owner) and exits 76 naming the break; meanwhile a waiter woken by the break may already hold the
lock. The checker allows that overlap only with the larger fence, and only until the break plus
the broken holder's renewal period and checker.BREAK_STOP_MARGIN (until_broken())."""
import random

from harness import ScenarioFailed, begin_of, scenario, until_broken

# The holders' TTL in seconds: they renew every second, so a broken section may run on for a
# second after the break, and the margin.
TTL = 3
TTL_OPTION = f"{TTL}s"
# --kill-after: the sections die of the SIGTERM; a hold's script needs a moment after it to run
# --release, which reports the loss, before a SIGKILL would make it exit 137.
OPTIONS = ["--kill-after", "2s"]


def confirm_broken(s, r, brk, holders):
    """Confirms that the break BRK named each of HOLDERS by its pid with the fence its section
    began with, and that the server keeps their claims as broken (C:redlockrun:broken)."""
    fences = {h.id: begin_of(s, h)["fence"] for h in holders}
    ids = ", ".join(f"{h.id} (fence {fences[h.id]})" for h in holders)
    s.confirm(f"--break named {ids} by pid and fence, and the server records {len(holders)} "
              f"broken claims (it printed {brk.lines})",
              lambda: all(brk.fences.get(h.id) == int(fences[h.id]) for h in holders)
              and r.call("HLEN", f"{{{s.key}}}:redlockrun:broken") >= len(holders))


def expect_told_of_break(contender, brk):
    """Fails the run unless CONTENDER's message says that its lock was broken, and by whom."""
    said = contender.log()
    if f"pid {brk.pid} (redlockrun --break)" not in said or "it was broken by" not in said:
        raise ScenarioFailed(f"{contender.id} exited {contender.status}, but its message does not "
                             f"name the break by pid {brk.pid}: {said.strip()[-300:]!r}")


def broken_holder_and_waiters(s, r, start_holder, start_waiters):
    """START_HOLDER (s.redlockrun or s.hold) a holder whose section runs until the break stops it,
    then START_WAITERS, each blocked behind it in turn; break the lock and confirm what the break
    ended. The holder must exit 76 naming the break; the waiters, woken by the break, run in turn
    and exit 0."""
    holder = start_holder(r, name="holder", ttl=TTL_OPTION, until="never", options=OPTIONS,
                          expect=(76,), may_overlap=until_broken(TTL))
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = []
    for start in start_waiters:
        waiters.append(start(r, name="waiter", ttl=TTL_OPTION, steps=3, options=OPTIONS))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    brk = s.break_lock(r)
    confirm_broken(s, r, brk, [holder])
    s.wait_exit(holder, timeout=15)
    expect_told_of_break(holder, brk)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    s.expect_free(r)


def breaks_under_load(s, r, start, sections=20):
    """Long mode: three workers start holders (START, allowed to overlap after a break) one after
    another while the lock is broken every 0.2 to 1 s; each holder a break names must exit 76,
    naming that break, every other one 0. Confirms that the breaks named holders."""
    if not s.long:
        return
    load = s.load(start, workers=3, sections=sections)
    breaks = []
    while any(thread.is_alive() for thread in load.threads):
        s.sleep(random.uniform(0.2, 1.0))
        breaks.append(s.break_lock(r))
    load.join(timeout=60)
    named = sum(len(brk.holders) for brk in breaks)
    s.confirm(f"the {len(breaks)} breaks under load named holders ({named})", lambda: named > 0)
    for brk in breaks:
        for holder in brk.holders:
            expect_told_of_break(holder, brk)


@scenario("break-run", runs=(1, 4), sections=(4, 64), timeout=240, promise="""
    Runs contend for one key (TTL 3 s: they renew every second); while one holds it, its section
    running until stopped, and three wait, redlockrun --break ends its claim (confirmed: the
    break names it by pid and fence, and the server records its claim as broken). Promise: the
    waiters, woken by the break, take the lock in turn with larger fences and exit 0; the broken
    run's next renewal finds the loss, it stops its command and exits 76, its message naming the
    break; its section may overlap the next holder's only with the smaller fence and only until
    the break + its renewal period (1 s) + the stop margin (1 s). Long mode: runs one after
    another, three at a time, under a break every 0.2 to 1 s: each one broken exits 76, naming
    the break, the others 0, the same allowance.""")
def break_run(s):
    r = s.redis()
    broken_holder_and_waiters(s, r, s.redlockrun, [s.redlockrun] * 3)
    breaks_under_load(s, r, lambda: s.redlockrun(r, ttl=TTL_OPTION, steps=4, step_ms=30,
                                                 options=OPTIONS, may_overlap=until_broken(TTL)))


@scenario("break-hold", runs=(1, 4), sections=(4, 64), timeout=240, promise="""
    The same with holds: scripts that take the lock with --hold, run their section and --release
    it (TTL 3 s: the keeper renews every second). While one holds, three wait (two holds and a
    run); redlockrun --break ends the holding script's claim (confirmed as for break-run).
    Promise: the waiters take the lock in turn and exit 0; the broken hold's keeper finds the
    loss at its next renewal and stops its owner (SIGTERM to the script's group: the section
    ends), and the script's --release reports the loss, naming the break: the script exits 76;
    the overlap allowance is break-run's. Long mode: holds under a break every 0.2 to 1 s.""")
def break_hold(s):
    r = s.redis()
    broken_holder_and_waiters(s, r, s.hold, [s.hold, s.redlockrun, s.hold])
    breaks_under_load(s, r, lambda: s.hold(r, ttl=TTL_OPTION, steps=4, step_ms=30,
                                           options=OPTIONS, may_overlap=until_broken(TTL)))


@scenario("break-semaphore", runs=(1, 4), sections=(4, 64), timeout=240, promise="""
    Two --limit 2 runs hold the semaphore (TTL 3 s), their sections running until stopped, and
    two more wait; redlockrun --break ends both claims (confirmed: the break names both, by pid
    and fence). Promise: the two waiters, woken by the break, take both places and exit 0; each
    broken run stops its command at its next renewal and exits 76, naming the break; the broken
    sections may run beside the new ones (beyond the limit) only as the fences order them and
    only until the break + 1 s + the stop margin. Long mode: --limit 2 runs, three at a time,
    under a break every 0.2 to 1 s.""")
def break_semaphore(s):
    r = s.redis()
    holders = [s.redlockrun(r, name="holder", ttl=TTL_OPTION, until="never", limit=2,
                            options=OPTIONS, expect=(76,), may_overlap=until_broken(TTL))
               for _ in range(2)]
    s.wait_for("both holders' sections", lambda: all(s.began(h) for h in holders))
    waiters = []
    for _ in range(2):
        waiters.append(s.redlockrun(r, name="waiter", ttl=TTL_OPTION, steps=3, limit=2,
                                    options=OPTIONS))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    brk = s.break_lock(r)
    confirm_broken(s, r, brk, holders)
    for holder in holders:
        s.wait_exit(holder, timeout=15)
        expect_told_of_break(holder, brk)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    s.expect_free(r)
    breaks_under_load(s, r, lambda: s.redlockrun(r, ttl=TTL_OPTION, steps=4, step_ms=30,
                                                 limit=2, options=OPTIONS,
                                                 may_overlap=until_broken(TTL)))
