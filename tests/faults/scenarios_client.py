"""Faults of the clients: paused, killed, short of resources, with a wrong clock."""
import json
import os
import signal

from harness import ScenarioFailed, expect_after_expiry, first_begun, scenario, \
    stopped_lock_expiry, until_resumed
from variants import semaphore_variant

KILL_AFTER = 1  # --kill-after of a paused holder: how long its command may run on once it resumes



def fill(s, start, limit):
    """Starts the lock's holder, or with LIMIT one per slot of the semaphore, with START(), and
    waits for their sections; returns them. A waiter started next must wait."""
    holders = []
    for _ in range(limit or 1):
        holder = start()
        s.wait_for(f"{holder.id}'s section", lambda: s.began(holder))
        holders.append(holder)
    return holders


def pause_a_holder(s, r, whole):
    """Stops a holder past its TTL (WHOLE: redlockrun and its command, as a stalled machine; else
    redlockrun alone, its command running on) until a waiter has taken over, no earlier than the
    paused lock's expiry, and written; then the stale command writes once more before redlockrun
    continues and notices."""
    holder = s.redlockrun(r, name="holder", ttl="2s", until="holder-may-end", expect=(76,),
                          options=["--kill-after", f"{KILL_AFTER}s"],
                          may_overlap=until_resumed(KILL_AFTER))
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = [s.redlockrun(r, name="waiter", ttl="2s", steps=3) for _ in range(2)]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == 2)
    pid = holder.client_pid()
    if whole:
        holder.stop_all()
    else:
        holder.stop()
    s.sleep(0.2)  # a renewal sent just before the stop has run
    if owner_pid(s, r) != pid:
        raise ScenarioFailed(f"the lock's owner record does not name the paused holder ({pid})")
    record = stopped_lock_expiry(s, r, 2, holder.id)  # the lock's expiry, by the server's clock
    s.wait_for("a waiter's first write",
               lambda: any(e["accepted"] for w in waiters for e in s.writes_of(w)), timeout=15)
    expect_after_expiry(s, first_begun(s, waiters), record, holder.id)
    # Of all the orders in which a stalled machine's processes run again, the one that tests the
    # fence: the stale command writes before redlockrun can stop it.
    stale_writes = len(s.writes_of(holder))
    holder.signal_command(signal.SIGCONT)
    s.wait_for("the stale holder's write", lambda: len(s.writes_of(holder)) > stale_writes)
    holder.continue_all()
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")


@scenario("holder-paused", runs=(1, 10), sections=(3, 153), promise="""
    A holder (redlockrun and its command together, as a stalled machine) is stopped with SIGSTOP
    for longer than its TTL, while waiters wait; a waiter takes the expired lock and writes; the
    holder is continued. Promise: the overlap is allowed, but the fence orders it: the recorder
    refuses every write of the stale holder after the new holder's first write; the stale holder
    notices on continuing, stops its command and exits 76; the waiters exit 0.""")
def holder_paused(s):
    r = s.redis()
    pause_a_holder(s, r, whole=True)
    if s.long:
        s.load(lambda: s.redlockrun(r, ttl="2s"), workers=3, sections=25).join()
    if s.long:
        s.load(lambda: s.redlockrun(r, ttl="2s"), workers=3, sections=25).join()


@scenario("holder-redlockrun-paused", runs=(1, 10), sections=(3, 78), promise="""
    redlockrun alone is stopped with SIGSTOP past its TTL while its command runs on, unrenewed; a
    waiter takes the expired lock. Promise: the overlap is allowed (nothing running can stop the
    command), but the fence orders it: the stale command's writes are refused; redlockrun, once
    continued, stops its command and exits 76; the waiters exit 0.""")
def holder_redlockrun_paused(s):
    r = s.redis()
    pause_a_holder(s, r, whole=False)
    if s.long:
        s.load(lambda: s.redlockrun(r, ttl="2s"), workers=3, sections=25).join()


def confirm_killed(s, contender):
    """The SIGKILL took: the contender exited, and nothing of it (its command included) runs."""
    s.confirm(f"{contender.id} killed, its command with it",
              lambda: contender.finished() and not contender.process.members(), timeout=10)


def owner_pid(s, r):
    pid = r.call("HGET", "{" + s.key + "}:redlockrun:owner", "pid")
    return int(pid) if pid else None


def holder_pids(s, r):
    """The pids of the lock's holders by its owner record: the exclusive holder's, or those of the
    semaphore's holders (each a record of its own)."""
    owner = r.call("HGETALL", "{" + s.key + "}:redlockrun:owner")
    pids = {int(owner[b"pid"])} if owner.get(b"pid") else set()
    for name, value in owner.items():
        if name.startswith(b"holder:"):
            pids.add(int(json.loads(value)["pid"]))
    return pids


def handoff_to_a_paused_waiter(s, r, pause, when):
    """A holder, a waiter W first in line and a second waiter X. W is stopped while it blocks;
    WHEN "blocked": W is continued after PAUSE seconds, before the holder releases; WHEN "granted":
    the holder releases, which grants the lock to W, whose reply waits unread for PAUSE seconds."""
    holder = s.redlockrun(r, name="holder", ttl="2s", until=f"release-{when}-{pause}")
    s.wait_for("the holder's section", lambda: s.began(holder))
    w = s.redlockrun(r, name="w", ttl="2s")
    s.wait_for("W to block", lambda: r.blocked_clients() == 1)
    x = s.redlockrun(r, name="x", ttl="2s")
    s.wait_for("X to block", lambda: r.blocked_clients() == 2)
    w.stop_all()
    if when == "blocked":
        s.sleep(pause)
        w.continue_all()
        s.fire(f"release-{when}-{pause}")
    else:
        s.fire(f"release-{when}-{pause}")
        s.wait_for("the grant to W", lambda: owner_pid(s, r) == w.client_pid())
        s.sleep(pause)
        w.continue_all()
    for contender in (holder, w, x):
        s.wait_exit(contender, timeout=30)


def random_pauses(s, r, pauses, longest, renew_every=1.0):
    """Stops contenders of the load at random moments — connecting, blocked, granted, running —
    for up to LONGEST seconds (less than what is left of a holder's validity after a renewal).
    A contender is not stopped again until it has had a renewal period (RENEW_EVERY) to run: two
    pauses of one holder with a moment between them would add up to more than that promise,
    and a holder that loses its lock then is right to."""
    import random
    import time
    resumed = {}
    for _ in range(pauses):
        now = time.monotonic()
        running = [c for c in list(s.contenders)
                   if not c.finished() and now - resumed.get(c.id, -1e9) > renew_every + 0.5]
        if running:
            victim = random.choice(running)
            try:
                if random.random() < 0.5:
                    victim.signal(signal.SIGSTOP)  # redlockrun alone
                else:
                    victim.stop_all()
            except ScenarioFailed:
                victim.continue_all()  # it ended meanwhile, or some of it did
                continue
            s.sleep(random.uniform(0.02, longest))
            victim.continue_all()
            resumed[victim.id] = time.monotonic()
        s.sleep(random.uniform(0.0, 0.2))


@scenario("waiter-paused", runs=(1, 10), sections=(36, 172), timeout=180, promise="""
    A waiter is stopped with SIGSTOP at points of the handoff: while it blocks (continued before
    the release, or after); once the release has granted it the lock and the reply waits unread,
    for a third of the TTL (it renews before starting) and for longer than the TTL (the grant
    expired: it must not start on it; the next waiter runs, and it waits again); and at random
    moments under load (for less than a holder's remaining validity). Promise: no overlap at all,
    no lost lock, every run exits 0.""")
def waiter_paused(s):
    r = s.redis()
    handoff_to_a_paused_waiter(s, r, 0.3, "blocked")
    handoff_to_a_paused_waiter(s, r, 3.0, "blocked")
    handoff_to_a_paused_waiter(s, r, 1.0, "granted")
    handoff_to_a_paused_waiter(s, r, 3.0, "granted")
    load = s.load(lambda: s.redlockrun(r, ttl="3s"), workers=4, sections=40 if s.long else 6)
    random_pauses(s, r, 40 if s.long else 8, longest=0.9)
    load.join()
    s.expect_free(r)


@scenario("redlockrun-killed", runs=(1, 10), sections=(5, 5), promise="""
    redlockrun is killed with SIGKILL: a holder while its command runs (the command must die with
    it, through PR_SET_PDEATHSIG, and the lock expires after its TTL), a waiter while it blocks,
    and a waiter the release has just granted the lock to (the grant expires unused). Promise: no
    overlap at all (the killed holder's command ends before the next holder begins); the killed
    runs end with 137, the others with 0; nothing stays locked.""")
def redlockrun_killed(s):
    r = s.redis()
    holder = s.redlockrun(r, name="holder", ttl="2s", until="never", expect=(137,))
    s.wait_for("the holder's section", lambda: s.began(holder))
    blocked = s.redlockrun(r, name="blocked", ttl="2s", expect=(137,))
    s.wait_for("a waiter to block", lambda: r.blocked_clients() == 1)
    waiters = [s.redlockrun(r, name="waiter", ttl="2s") for _ in range(2)]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == 3)
    blocked.signal(signal.SIGKILL)
    holder.signal(signal.SIGKILL)
    confirm_killed(s, blocked)
    confirm_killed(s, holder)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=20)

    holder = s.redlockrun(r, name="holder", ttl="2s", until="release")
    s.wait_for("the holder's section", lambda: s.began(holder))
    granted = s.redlockrun(r, name="granted", ttl="2s", expect=(137,))
    s.wait_for("a waiter to block", lambda: r.blocked_clients() == 1)
    last = s.redlockrun(r, name="waiter", ttl="2s")
    s.wait_for("the last waiter to block", lambda: r.blocked_clients() == 2)
    granted.stop_all()
    s.fire("release")
    s.wait_for("the grant to the stopped waiter", lambda: owner_pid(s, r) == granted.client_pid())
    granted.signal(signal.SIGKILL)
    granted.continue_all()
    confirm_killed(s, granted)
    s.wait_exit(last, timeout=20)
    s.expect_free(r)


@scenario("clock-skew", runs=(1, 10), sections=(26, 156), promise="""
    Contenders whose wall clock is hours off (libfaketime: +5 h and -3 h with the monotonic clock
    left alone, and +5 h applied to the monotonic clock too) hold, renew, wait and hand over
    among contenders with a true clock. The test checks that libfaketime is loaded into
    redlockrun and that the commands see the skewed time. Promise: no effect: no overlap, no lost
    lock, every run exits 0.""")
def clock_skew(s, limit=None):
    import time
    r = s.redis()
    skews = {
        "ahead": (["faketime", "--exclude-monotonic", "-f", "+5h"], 5 * 3600),
        "behind": (["faketime", "--exclude-monotonic", "-f", "-3h"], -3 * 3600),
        "monotonic-too": (["faketime", "-f", "+5h"], 5 * 3600),
    }
    for name, (prefix, offset) in skews.items():
        holder = fill(s, lambda: s.redlockrun(r, name=name, prefix=prefix, ttl="1500ms",
                                              until=f"end-{name}", limit=limit), limit)[-1]
        maps = open(f"/proc/{holder.client_pid()}/maps").read()
        s.confirm(f"libfaketime is loaded into redlockrun ({name})", lambda: "libfaketime" in maps)
        begin = next(e for e in s.read_events() if e["ev"] == "begin" and e["holder"] == holder.id)
        seen = begin["wall_ns"] / 1e9 - time.time()
        s.confirm(f"{name}: the command's clock is {offset} s off (it is {seen:.0f} s off)",
                  lambda: abs(seen - offset) <= 600)
        s.redlockrun(r, name="true-clock", ttl="1500ms", limit=limit)
        s.sleep(2)  # several renewals, with a waiter blocked
        s.fire(f"end-{name}")
    sections = 30 if s.long else 4
    loads = [s.load(lambda prefix=prefix: s.redlockrun(r, prefix=prefix, ttl="1500ms",
                                                       limit=limit),
                    workers=1, sections=sections) for prefix, _ in skews.values()]
    loads.append(s.load(lambda: s.redlockrun(r, ttl="1500ms", limit=limit), workers=2,
                        sections=sections))
    for load in loads:
        load.join()
    s.expect_free(r)


semaphore_variant("clock-skew", clock_skew, runs=(1, 10), sections=(29, 159), promise="""
    clock-skew with --limit 2: both slots are held by contenders whose wall clock is hours off
    (+5 h, -3 h, +5 h on the monotonic clock too) in turn, while a contender with a true clock
    waits, then skewed and true contenders share the semaphore. Promise: no effect: never more
    than two sections at once, no lost lock, every run exits 0.""")


# Lifts the soft address-space limit again for the critical section (Python needs far more than
# redlockrun), so that the limit tests redlockrun alone.
LIFT_MEMORY_LIMIT = ["/bin/sh", "-c", 'ulimit -S -v unlimited && exec "$@"', "sh"]


@scenario("open-files-limit", runs=(1, 10), sections=(14, 92), promise="""
    Contenders run with `ulimit -n` small: 6 descriptors (enough: standard input, output, error,
    the signal pipe and the connection), 5 (no room for the connection) and 4 (no room for the
    signal pipe), among contenders without a limit. Promise: with 6, no difference (exit 0,
    including waiting and renewing); with 5 or 4, exit 71 saying why, before anything is taken;
    no overlap; nothing stays locked.""")
def open_files_limit(s, limit=None):
    r = s.redis()
    holder = fill(s, lambda: s.redlockrun(r, name="six", prefix=["prlimit", "--nofile=6"],
                                          ttl="1500ms", until="end", limit=limit), limit)[0]
    limits = open(f"/proc/{holder.client_pid()}/limits").read()
    s.confirm("redlockrun runs with 6 descriptors (/proc/PID/limits)",
              lambda: any(line.startswith("Max open files") and line.split()[3:5] == ["6", "6"]
                          for line in limits.splitlines()))
    waiter = s.redlockrun(r, name="six", prefix=["prlimit", "--nofile=6"], ttl="1500ms",
                          limit=limit)
    s.wait_for("a waiter to block", lambda: r.blocked_clients() == 1)
    for files in (5, 4):
        s.wait_exit(s.redlockrun(r, name=f"limit{files}-", prefix=["prlimit", f"--nofile={files}"],
                                 expect=(71,), limit=limit))
    s.sleep(1.5)  # renewals with 6 descriptors
    s.fire("end")
    s.wait_exit(waiter)
    sections = 30 if s.long else 4
    loads = [s.load(lambda n=n: s.redlockrun(r, name=f"limit{n}-",
                                             prefix=["prlimit", f"--nofile={n}"],
                                             expect=(0,) if n >= 6 else (71,), limit=limit),
                    workers=1, sections=sections) for n in (4, 5, 6, 8)]
    loads.append(s.load(lambda: s.redlockrun(r, limit=limit), workers=1, sections=sections))
    for load in loads:
        load.join()
    s.expect_free(r)


semaphore_variant("open-files-limit", open_files_limit, runs=(1, 10), sections=(15, 93),
                  promise="""
    open-files-limit with --limit 2: both slots are held, renewed and waited for by runs with 6
    descriptors, and runs with 4, 5, 6, 8 descriptors and without a limit share the semaphore.
    Promise: with 6 or more, no difference (exit 0); with 5 or 4, exit 71 saying why, before
    anything is taken; no overlap beyond the limit; nothing stays locked.""")


# What a run that exits with each status under a memory limit must have said, one of: redlockrun's
# own message; the dynamic loader's (it cannot map a library, or, a few pages later, allocate the
# initial thread's TLS); for an abort, redlockrun's terminate handler's, which says that the C++
# runtime could not allocate an exception (app.cpp): an abort for any other reason fails the run.
OUT_OF_MEMORY_SAYS = {
    71: ("redlockrun: out of memory",),
    127: ("error while loading shared libraries",
          "cannot allocate TLS data structures for initial thread"),
    134: ("redlockrun: out of memory: the C++ runtime could not allocate an exception",),
}


@scenario("memory-limit", runs=(1, 5), sections=(15, 45), promise="""
    redlockrun runs under `ulimit -v` limits raised step by step from too small for the dynamic
    loader to map the C library until it runs, among contenders without a limit. Promise: whatever
    the limit, nothing stays locked and nothing overlaps. Every run ends with 0 (it ran), 71 (out
    of memory, said so, the lock released if it was taken), or, below what redlockrun's own code
    needs to start, 127 (the dynamic loader gave up) or 134 (the C++ runtime could not allocate
    even the exception that reports it); below that, 139 (the kernel could not map the program).
    """)
def memory_limit(s, limit=None):
    r = s.redis()
    step = 20_000 if s.long else 60_000
    load = s.load(lambda: s.redlockrun(r, limit=limit), workers=1, sections=40 if s.long else 10)
    statuses = []
    address_space = 2_000_000
    # Up from a limit too small to start, until five runs in a row have run: the band where
    # redlockrun starts but runs out of memory moves with the build, so it is searched, not assumed.
    while statuses[-5:] != [0] * 5:
        if address_space > 64_000_000:
            raise ScenarioFailed(f"no run succeeded with up to 64 MB (statuses: {statuses[-5:]}); "
                                 "a sanitizer build cannot run under ulimit -v")
        # Each status is allowed only below every limit at which redlockrun got further: once
        # its own code ran (71, 0), the loader and the runtime have had enough; once they had
        # (127, 134), so had the kernel.
        expect = {0, 71}
        if not {0, 71} & set(statuses):
            expect |= {127, 134}
            if all(status == 139 for status in statuses):
                expect.add(139)  # the kernel could not even map the program: SIGSEGV during exec
        c = s.redlockrun(r, name=f"as{address_space // 1000}k-",
                         prefix=["prlimit", f"--as={address_space}:unlimited"],
                         wrap=LIFT_MEMORY_LIMIT, expect=expect, limit=limit)
        status = s.wait_exit(c)
        statuses.append(status)
        said = OUT_OF_MEMORY_SAYS.get(status)
        if said and not any(text in c.log() for text in said):
            raise ScenarioFailed(f"{c.id} exited {status} without any of {said!r} on its standard "
                                 f"error: {c.log()}")
        if c.process.pid in holder_pids(s, r):  # prlimit execs redlockrun: the same pid
            raise ScenarioFailed(f"{c.id} exited {status} and left the lock held: {c.log()}")
        address_space += step
    s.confirm(f"the smallest limit was too small for redlockrun (statuses {statuses[:3]}...)",
              lambda: statuses[0] != 0)
    load.join()
    s.expect_free(r)


semaphore_variant("memory-limit", memory_limit, runs=(1, 5), sections=(15, 45), promise="""
    memory-limit with --limit 2: --limit 2 runs under `ulimit -v` limits raised step by step
    from too small to start until they run, beside --limit 2 runs without a limit. Promise, as
    for the exclusive lock: whatever the limit, nothing stays locked (no slot is left held by a
    run that failed) and nothing overlaps beyond the limit; each run ends with 0, 71 (out of
    memory, said so), or below what redlockrun's own code needs, 127, 134 or 139.""")


CLOSE = {
    "stdin": "<&-",
    "stdout": ">&-",
    "stderr": "2>&-",
    "all": "<&- >&- 2>&-",
}


@scenario("closed-stdio", runs=(1, 10), sections=(25, 155), promise="""
    redlockrun is started with standard input, output or error closed, or all three, among
    contenders with them open, holding, renewing, waiting and handing over. Promise: no
    difference: no overlap, no lost lock, every run exits 0.""")
def closed_stdio(s, limit=None):
    r = s.redis()

    def closing(what):
        return ["/bin/sh", "-c", f'exec "$@" {CLOSE[what]}', "sh"]

    holder = fill(s, lambda: s.redlockrun(r, name="all", prefix=closing("all"), ttl="1500ms",
                                          until="end", limit=limit), limit)[0]
    # redlockrun opens /dev/null onto a closed standard descriptor: the harness gave it a log.
    outputs = [os.readlink(f"/proc/{holder.client_pid()}/fd/{fd}") for fd in (1, 2)]
    s.confirm(f"redlockrun started with output and error closed (they are {outputs})",
              lambda: outputs == ["/dev/null", "/dev/null"])
    waiters = [s.redlockrun(r, name=what, prefix=closing(what), ttl="1500ms", limit=limit)
               for what in CLOSE]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == len(CLOSE))
    s.sleep(1.5)  # renewals
    s.fire("end")
    sections = 30 if s.long else 4
    loads = [s.load(lambda what=what: s.redlockrun(r, name=what, prefix=closing(what),
                                                   limit=limit),
                    workers=1, sections=sections) for what in CLOSE]
    loads.append(s.load(lambda: s.redlockrun(r, limit=limit), workers=1, sections=sections))
    for waiter in waiters:
        s.wait_exit(waiter)
    for load in loads:
        load.join()
    s.expect_free(r)


semaphore_variant("closed-stdio", closed_stdio, runs=(1, 10), sections=(26, 156), promise="""
    closed-stdio with --limit 2: both slots are held by runs started with standard input, output
    and error closed, while runs with one or all of them closed wait, then share the semaphore
    with runs that have them open. Promise: no difference: never more than two sections at once,
    no lost lock, every run exits 0.""")
