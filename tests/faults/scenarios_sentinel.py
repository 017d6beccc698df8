"""Failovers under Redis Sentinel: a master, two replicas and three sentinels on loopback, and
contenders that reach them through a redis-sentinel:// URL while the master is failed over, killed
or stopped, or a sentinel is down.

Which overlaps are allowed follows the rules of the other scenarios where Redis forgets a lock
(redis-restart, flushall): with --replicas 1 the lock is on a replica before a command starts and
after every renewal, so a failover must lose nothing: no overlap, no 76. Without it, asynchronous
replication may drop a grant or a renewal at the failover: the lock is then genuinely lost, and a
holder may exit 76 and its section overlap the next, which the fence must order, for no longer
than it takes the holder to notice (runs_of()). The checker requires the stale holder of every
such overlap to have been told (it exits 76): a holder that ran on, silently, next to another (a
lock split between two masters) fails the run, and so does a fence handed out twice.
"""
from harness import STOP_MARGIN, ScenarioFailed, scenario
from sentinel_group import Group


# How long after a failover the sentinel a run asks first may still name the old master, which
# takes writes until it is demoted: two of the sentinels' hello periods (2 s).
SENTINEL_NEWS = 4.0
# --kill-after of the runs that may lose their lock: it bounds how long their command runs on.
KILL_AFTER = 1


def confirm_failover(s, g, old, sentinels=None):
    """Waits until the sentinels name a master other than OLD (g.wait_for_new_master()), and
    confirms the failover."""
    g.wait_for_new_master(old, sentinels=sentinels)
    s.confirm(f"a failover: the sentinels name {g.master.address}, not {old.address}",
              lambda: g.master is not old)


def replicas_mode(s, first=True):
    """Whether this run holds its locks with --replicas 1: FIRST for even runs, not FIRST for odd
    ones."""
    return (s.run_index % 2 == 0) == first


def runs_of(replicas, ttl, options=("-v",)):
    """The options of a run and the statuses it may exit with, and whether its section may
    overlap another: with --replicas 1, nothing; without, the lock may be lost (76), and its
    section overlap the next, which the fence must order, for as long as the holder takes to
    notice: a renewal on the new master, at most TTL/3 after the sentinel it asks has heard of
    the failover, finds the lock gone; or renewals fail until its deadline, a TTL after the last
    one. TTL in seconds."""
    if replicas:
        return [*options, "--replicas", "1"], (0,), False
    noticed = max(SENTINEL_NEWS + ttl / 3, ttl)
    return ([*options, "--kill-after", f"{KILL_AFTER}s"], (0, 76),
            noticed + KILL_AFTER + STOP_MARGIN)


def holds_on(s, g, holder, replicas):
    """After a failover: the holder's renewals went to the new master, where the lock's owner
    record names its redlockrun and runs on past the TTL, or, without --replicas, the holder lost
    the lock and is exiting 76."""
    owner = g.master.call("HGET", "{" + s.key + "}:redlockrun:owner", "pid")
    if not holder.finished() and owner is not None and int(owner) == holder.client_pid() and \
            g.master.call("EXISTS", s.key):
        return
    if not replicas and (holder.finished() or holder.wait(10) is not None):
        return  # its exit status is the checker's to judge
    raise ScenarioFailed(f"the holder does not hold the lock on the new master {g.master.address} "
                         f"(its owner record names pid {owner!r}): {holder.log()[-2000:]}")


def contention(s, g, tag, replicas, ttl=2, options=(), waiters=2, load=(2, 3),
               load_expect=()):
    """A holder whose section runs until the event TAG, WAITERS blocked behind it, and LOAD
    (workers, sections each) of short runs queueing too, which may also exit with LOAD_EXPECT;
    returns the holder and the load. With REPLICAS (--replicas 1) none may lose its lock;
    without, any may (76), and may overlap. TTL in seconds."""
    options, expect, may_overlap = runs_of(replicas, ttl, ("-v", *options))

    def run(more_expected=(), **extra):
        return s.redlockrun(url=g.url, ttl=f"{ttl}s", options=options,
                            expect=expect + more_expected, may_overlap=may_overlap, **extra)
    holder = run(name="holder", until=tag)
    s.wait_for("the holder's section", lambda: s.began(holder))
    for _ in range(waiters):
        run(name="waiter", steps=3)
    s.wait_for("the waiters to block", lambda: g.master.blocked_clients() >= waiters)
    workers, sections = load
    return holder, s.load(lambda: run(load_expect, name="load"), workers=workers,
                          sections=sections)


def rounds(s, g, count, replicas, fault, settle_after=1.5, **contention_options):
    """COUNT rounds in the long run, one in the short: a holder, waiters and queued runs
    (contention(), with CONTENTION_OPTIONS), then FAULT(ROUND_NUMBER), which may return more loads
    to wait for; SETTLE_AFTER seconds for renewals and the queue to reach the new master; the
    holder checked there (holds_on()) and let go."""
    for round_number in range(count if s.long else 1):
        if round_number:
            g.settle()
        tag = f"end-{round_number}"
        holder, load = contention(s, g, tag, replicas, **contention_options)
        more = fault(round_number) or ()
        s.sleep(settle_after)
        holds_on(s, g, holder, replicas)
        s.fire(tag)
        s.wait_exit(holder, timeout=30)
        for started in (load, *more):
            started.join(timeout=60)


@scenario("sentinel-failover", runs=(2, 4), sections=(9, 27), timeout=150, promise="""
    SENTINEL FAILOVER, while a holder runs, two waiters wait and more runs queue, all through a
    redis-sentinel:// URL (1 master, 2 replicas, 3 sentinels), through a sentinel other than the
    one the runs ask first; long runs fail over again and again. The old master keeps taking writes
    for seconds after the failover, until the sentinels demote it. Even runs hold every lock with
    --replicas 1. Promise: the holder renews on the new master and runs on past its TTL; the
    waiters and the queue acquire there; no overlap, no lost lock, every run exits 0. Odd runs,
    without --replicas: a grant or renewal that replication dropped is a lost lock, 76; an overlap
    is allowed only with a holder that exited 76, and the fence orders it.""")
def sentinel_failover(s):
    g = Group(s)

    def fail_over(round_number):
        confirm_failover(s, g, g.failover(via=1 + (s.run_index + round_number) % 2))
    rounds(s, g, 3, replicas_mode(s), fail_over)  # then renewals, the queue moving there


@scenario("sentinel-failover-grants", runs=(2, 4), sections=(5, 10), timeout=150, promise="""
    SENTINEL FAILOVER while short runs follow one another (three at a time), so that locks are
    granted and released all through the failover, through a sentinel other than the one the runs
    ask first; long runs fail over again. Even runs hold every lock with --replicas 1. Promise: a
    grant is made on the master the sentinels name, and with --replicas 1 it reaches the replica
    that will be promoted: no overlap, no lost lock, and the fence only grows, every run exits 0.
    Odd runs, without --replicas: 76 allowed, an overlap only with a holder that exited 76, and
    the fence must still grow (a fence handed out twice fails the run).""")
def sentinel_failover_grants(s):
    g = Group(s)
    options, expect, may_overlap = runs_of(replicas_mode(s), 2)
    for round_number in range(2 if s.long else 1):
        if round_number:
            g.settle()
        begun = s.sections_begun()
        stream = s.load(lambda: s.redlockrun(url=g.url, ttl="2s", options=options, expect=expect,
                                             may_overlap=may_overlap, name="run", steps=3),
                        workers=3, sections=1000)
        s.wait_for("runs under way", lambda: s.sections_begun() >= begun + 5)
        confirm_failover(s, g, g.failover(via=1 + (s.run_index + round_number) % 2))
        s.sleep(1.5)  # grants on the new master
        stream.stop()


@scenario("sentinel-master-killed", runs=(2, 4), sections=(7, 21), timeout=150, promise="""
    The master is killed with SIGKILL while a holder runs and waiters wait, once the replicas have
    everything it wrote; the sentinels promote a replica (down-after 1.5 s); the killed node then
    restarts empty as a replica, and long runs do it again. Even runs hold every lock with
    --replicas 1 (TTL 8 s, longer than the failover takes). Promise: the holder's renewals reach
    the new master once the sentinels name it and it runs on; the waiters acquire there; no
    overlap, every run exits 0. Odd runs, without --replicas: as for sentinel-failover, 76 is
    allowed, and an overlap only with a holder that exited 76, ordered by the fence.""")
def sentinel_master_killed(s):
    g = Group(s)

    def kill_master(_):
        g.settle()  # the lock and the queue are on both replicas
        old = g.master
        old.process.kill()
        s.confirm("the master killed", lambda: not old.process.running())
        confirm_failover(s, g, old)
        g.restart_as_replica(old)
    rounds(s, g, 3, replicas_mode(s), kill_master, settle_after=1, ttl=8, load=(2, 2))


@scenario("sentinel-master-paused", runs=(2, 4), sections=(3, 6), timeout=150, promise="""
    The master is stopped with SIGSTOP while a holder runs and waiters wait, until the sentinels
    have all named a promoted replica; then it is continued, and comes back as a writable master
    holding the old lock until the sentinels demote it (seconds later): the dangerous case, a
    second master that the contenders blocked on it and their unanswered requests reach again.
    Runs use --connect-timeout 2s and a TTL of 8 s; even runs --replicas 1. Promise: the holder
    renews on the new master and runs on; waiters acquire there, and a grant from the continued
    old master is released, never used; no overlap, every run exits 0, except a run that starts
    while the master is stopped, which may give up after --connect-timeout: 69. Odd runs, without
    --replicas: 76 allowed, and an overlap only with a holder that exited 76, ordered by the
    fence.""")
def sentinel_master_paused(s):
    g = Group(s)

    def pause_master(_):
        g.settle()
        old = g.master
        try:
            old.pause()  # confirmed: stopped
            confirm_failover(s, g, old)
        finally:
            old.resume()
    # Then the continued old master is still a master: blocked requests run there.
    rounds(s, g, 2, replicas_mode(s), pause_master, ttl=8, load=(2, 2),
           options=["--connect-timeout", "2s"], load_expect=(69,))


@scenario("sentinel-sentinel-down", runs=(1, 4), sections=(9, 18), timeout=150, promise="""
    The sentinel that every run asks first is killed with SIGKILL while a holder runs and waiters
    wait; the master is failed over through another; once the old master, still a master until
    the sentinels demote it, has let its copy of the lock expire, the killed sentinel restarts
    from its configuration file, which names the old master until the others tell it otherwise,
    and new runs start at once. Every run with --replicas 1: without it, a run that the restarted
    sentinel sends to the old master (a master still, and its ROLE says so) takes the lock there
    beside the holder, which nothing in one sentinel's answer can tell (BUGS in redlockrun(1)).
    Promise: runs ask the next sentinel while one is down; the holder renews on the new master and
    runs on; a run never takes a lock on the old master beside the holder: no overlap, every run
    exits 0, or 69 for a new run that the restarted sentinel sends to the old master, which no
    replica follows any more, and whose grant is therefore undone.""")
def sentinel_sentinel_down(s):
    g = Group(s)
    options, expect, may_overlap = runs_of(True, 2)

    def restart_stale_sentinel(_):
        sentinel = g.sentinels[0]
        g.kill_sentinel(0)
        s.confirm("the sentinel asked first killed", lambda: not sentinel.running())
        old = g.failover(via=1)
        confirm_failover(s, g, old, sentinels=[1, 2])
        s.wait_for("the lock to expire on the old master", lambda: not old.call("EXISTS", s.key))
        g.start_sentinel(0)
        return [s.load(lambda: s.redlockrun(url=g.url, ttl="2s", options=options, name="late",
                                            expect=expect + (69,), may_overlap=may_overlap),
                       workers=2, sections=2)]
    rounds(s, g, 2, True, restart_stale_sentinel, settle_after=2.5)
