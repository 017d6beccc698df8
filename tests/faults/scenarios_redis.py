"""Faults of the Redis server: crashes, stalls, pauses, flushed scripts and data, eviction."""

import time

import redis

from harness import STOP_MARGIN, ScenarioFailed, forgotten_lock, scenario
from variants import semaphore_variant

# --kill-after of the holders that may overlap: it bounds how long their command may run on.
KILL_AFTER = 1


def holder_and_waiters(s, r, waiters=3, holder_expect=(0,), may_overlap=False, ttl="2s",
                       limit=None):
    """A holder whose section runs until the event "holder-may-end" (with --kill-after
    KILL_AFTER), or with LIMIT as many as fill the semaphore, and WAITERS blocked behind them;
    returns (holders, waiters)."""
    holders = []
    for _ in range(limit or 1):
        holder = s.redlockrun(r, name="holder", ttl=ttl, until="holder-may-end",
                              options=["--kill-after", f"{KILL_AFTER}s"], expect=holder_expect,
                              may_overlap=may_overlap, limit=limit)
        s.wait_for(f"{holder.id}'s section", lambda: s.began(holder))
        holders.append(holder)
    queued = [s.redlockrun(r, name="waiter", ttl=ttl, limit=limit) for _ in range(waiters)]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == waiters)
    return holders, queued



def write_blocks(r):
    """A write from another client does not return within half a second (a paused server);
    it runs once the pause ends, in database 1, out of the lock's way."""
    probe = redis.Redis(unix_socket_path=r.sock, db=1, socket_timeout=0.5)
    try:
        probe.set("fault-probe", 1)
        return False
    except redis.exceptions.TimeoutError:
        return True
    finally:
        probe.close()


def more_load(s, r, sections=25, limit=None):
    """Long mode: contention on the server the fault hit, to catch what it left behind."""
    if s.long:
        s.load(lambda: s.redlockrun(r, ttl="2s", limit=limit), workers=3,
               sections=sections).join()


@scenario("redis-restart", runs=(1, 15), sections=(4, 79), promise="""
    While a lock is held and three waiters wait, redis-server is killed with SIGKILL and restarted
    without persistence: the lock is forgotten. Promise: the waiters go on waiting through the
    outage (reconnecting) and then each runs, exit 0; the holder's next renewal finds the lock gone
    and it stops its command and exits 76. A waiter may start before the holder notices: that
    overlap is allowed, and the fence, re-seeded from the server's time in µs, orders it.""")
def redis_restart(s):
    r = s.redis()
    (holder,), waiters = holder_and_waiters(s, r, holder_expect=(76,),
                                            may_overlap=forgotten_lock(2, KILL_AFTER))
    r.restart()  # confirmed: a new server
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_load(s, r)


@scenario("redis-stopped", runs=(1, 10), sections=(4, 79), promise="""
    redis-server is stopped with SIGSTOP for longer than the TTL while a lock is held and waiters
    wait, then continued. Promise: the holder's renewals go unanswered, so its local deadline,
    which falls before the key's expiry on the server, passes: it stops its command and exits 76
    before any waiter can start; no overlap at all. When the server continues, the key has
    expired by its clock and the waiters run, exit 0.""")
def redis_stopped(s, limit=None):
    r = s.redis()
    holders, waiters = holder_and_waiters(s, r, holder_expect=(76,), limit=limit)
    r.pause()  # confirmed: stopped
    for holder in holders:
        s.wait_exit(holder, timeout=20)
    s.sleep(0.5)  # past the key's expiry on the server's clock
    r.resume()
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=40)
    more_load(s, r, limit=limit)


semaphore_variant("redis-stopped", redis_stopped, runs=(1, 10), sections=(5, 80), promise="""
    redis-stopped with --limit 2: both holders of the semaphore run and three waiters wait when
    redis-server is stopped past the TTL. Promise: each holder's deadline passes before its slot
    expires on the server: both stop their command and exit 76 before any waiter can start; no
    overlap beyond the limit. Continued, the server has expired both slots and the waiters run,
    exit 0.""")


@scenario("redis-client-pause", runs=(1, 10), sections=(4, 79), promise="""
    CLIENT PAUSE WRITE, for longer than the TTL, while a lock is held and waiters wait: every
    script call blocks (Redis also stops expiring keys meanwhile). Promise: as for a stopped
    server, the holder's deadline passes, it stops its command and exits 76; no overlap; the
    waiters run after the pause, exit 0.""")
def redis_client_pause(s, limit=None):
    r = s.redis()
    holders, waiters = holder_and_waiters(s, r, holder_expect=(76,), limit=limit)
    r.call("CLIENT", "PAUSE", 3000, "WRITE")
    s.confirm("CLIENT PAUSE WRITE: a write from another client blocks",
              lambda: write_blocks(r))
    for holder in holders:
        s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=40)
    more_load(s, r, limit=limit)


semaphore_variant("redis-client-pause", redis_client_pause, runs=(1, 10), sections=(5, 80),
                  promise="""
    redis-client-pause with --limit 2: CLIENT PAUSE WRITE past the TTL while both holders of the
    semaphore run and three waiters wait. Promise: both holders' deadlines pass; they stop their
    commands and exit 76; no overlap beyond the limit; the waiters run after the pause, exit
    0.""")


def version_tuple(version):
    """"6.0.20" -> (6, 0, 20): what INFO's redis_version says (Valkey's says 7.2.4)."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


@scenario("script-flush", runs=(1, 10), sections=(22, 124), promise="""
    SCRIPT FLUSH, again and again, while locks are taken, renewed, handed over and released under
    contention. Promise: nothing changes: EVALSHA's NOSCRIPT is answered by EVAL; no overlap, no
    lost lock, every run exits 0.""")
def script_flush(s, limit=None):
    r = s.redis()
    holder_and_waiters(s, r, limit=limit)
    r.call("SCRIPT", "FLUSH")
    s.sleep(1)  # a renewal or two, and the waiters' next attempts, meet an empty script cache
    r.call("SCRIPT", "FLUSH")
    s.fire("holder-may-end")
    load = s.load(lambda: s.redlockrun(r, ttl="2s", limit=limit), workers=3,
                  sections=40 if s.long else 6)
    reloaded = False
    while any(thread.is_alive() for thread in load.threads):
        r.call("SCRIPT", "FLUSH")
        s.sleep(0.05)
        # A script cached again since the flush was sent by EVAL, which redlockrun sends only
        # after EVALSHA met NOSCRIPT (or on its way out after a failure, which fails the run).
        reloaded |= r.admin.info("memory")["number_of_cached_scripts"] > 0
    load.join()
    stats = s.commandstats(r)
    # Redis 6.0 has no INFO errorstats (6.2 brought it): there the reloaded scripts are the proof.
    counts_errors = version_tuple(r.admin.info("server")["redis_version"]) >= (6, 2)
    s.confirm("EVALSHA met NOSCRIPT and EVAL answered it (INFO errorstats, memory)",
              lambda: reloaded and (stats.get("errorstat_NOSCRIPT", {}).get("count", 0) > 0
                                    or not counts_errors))


semaphore_variant("script-flush", script_flush, runs=(1, 10), sections=(23, 125), promise="""
    script-flush with --limit 2: SCRIPT FLUSH again and again while the semaphore's slots are
    taken, renewed, handed over and released under contention. Promise: nothing changes:
    EVALSHA's NOSCRIPT is answered by EVAL; no overlap beyond the limit, no lost lock, every run
    exits 0.""")


@scenario("flushall", runs=(1, 15), sections=(4, 79), promise="""
    FLUSHALL while a lock is held and waiters wait: the lock, its owner record and the fence
    counter are gone. Promise: a waiter takes the lock at once and may overlap the holder until
    the holder's next renewal finds the lock gone and stops its command (exit 76): that overlap is
    allowed, and the fence, re-seeded from the server's time in µs, still grows, so it orders the
    two. Waiters exit 0.""")
def flushall(s):
    r = s.redis()
    (holder,), waiters = holder_and_waiters(s, r, holder_expect=(76,),
                                            may_overlap=forgotten_lock(2, KILL_AFTER))
    held = r.call("EXISTS", s.key) == 1
    r.call("FLUSHALL")
    s.confirm("FLUSHALL removed the lock it found held",
              lambda: held and s.commandstats(r)["cmdstat_flushall"]["calls"] == 1)
    # FLUSHALL wakes nobody: a waiter finds the lock free when its BLPOP times out.
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_load(s, r)


def application(r):
    """An application sharing the server, in database 1 (maxmemory counts the whole server)."""
    return redis.Redis(unix_socket_path=r.sock, db=1, socket_timeout=10)


def fill_memory(r, megabytes, stay_over_limit=False):
    """Writes MEGABYTES of filler keys without expiry, as an application sharing the server would;
    returns how many writes the server refused (out of memory). With STAY_OVER_LIMIT (a server
    that evicts nothing), goes on until the memory stays over maxmemory."""
    refused = 0
    client = application(r)
    pipe = client.pipeline(transaction=False)
    for i in range(megabytes * 1024):
        pipe.set(f"filler:{i}", "x" * 1000)
        if i % 256 == 255:
            refused += sum(isinstance(a, Exception) for a in pipe.execute(raise_on_error=False))
    if not stay_over_limit:
        return refused
    # Buffers in flight (the pipelines' own, the clients') count as used memory while they last,
    # so the memory falls back below the limit once they are freed, and the lock's writes would
    # go through. Single writes top it up until one is refused, until it stays over the limit.
    limit = int(r.admin.config_get("maxmemory")["maxmemory"])
    topped = 0
    for _ in range(50):
        time.sleep(0.2)
        if r.admin.info("memory")["used_memory"] > limit:
            break
        while topped < 100_000:
            topped += 1
            try:
                client.set(f"filler:top:{topped}", "x" * 1000)
            except redis.exceptions.ResponseError:
                refused += 1
                break
    return refused


def evicting_policy(s, policy, may_overlap):
    """A server with 3 MB for data and POLICY; the memory fills up while a lock is held and
    waiters wait. Returns the holder and waiters."""
    r = s.redis(options=["--maxmemory", "3mb", "--maxmemory-policy", policy])
    (holder,), waiters = holder_and_waiters(s, r, holder_expect=(0, 76), may_overlap=may_overlap,
                                            ttl="3s")
    return r, (holder, waiters)


def confirm_evicted(s, r):
    s.confirm("the lock key was evicted",
              lambda: r.call("EXISTS", s.key) == 0
              and r.admin.info("stats")["evicted_keys"] > 0)


@scenario("evicted-allkeys-lru", runs=(1, 10), sections=(4, 4), promise="""
    maxmemory with allkeys-lru, and an application fills the memory while a lock is held and
    waiters wait: Redis evicts the lock key (and may evict the fence counter). This is what goes
    wrong with an allkeys-* policy: the lock is forgotten, as after a restart. Promise: the holder
    finds the lock gone at its next renewal and stops its command (76); the overlap with a waiter
    that took the evicted lock meanwhile is allowed, and the fence orders it. Users must run the
    lock's Redis with noeviction.""")
def evicted_allkeys_lru(s):
    r, (holder, waiters) = evicting_policy(s, "allkeys-lru", forgotten_lock(3, KILL_AFTER))
    fill_memory(r, 8)
    confirm_evicted(s, r)
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    if holder.status != 76:
        raise ScenarioFailed(f"the holder of an evicted lock exited {holder.status}, not 76")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)


@scenario("evicted-volatile-lru", runs=(1, 10), sections=(1, 1), promise="""
    maxmemory with volatile-lru, and an application fills the memory with keys that have no expiry
    while a lock is held: the lock key and its owner record, which have an expiry, are the only
    keys volatile-* may evict, so they go first. Promise, as for allkeys-lru: the holder stops its
    command (76) at its next renewal; the overlap is allowed and the fence orders it (the counter,
    which expires only days after the last grant, survives or, evicted, gives way to the server's
    clock). With nothing left to evict, the waiters' acquires are refused for
    memory: each ends with 69, saying so, or runs (0) if it tried again after the application
    freed its keys. Users must run the lock's Redis with noeviction.""")
def evicted_volatile_lru(s):
    # With nothing left to evict, the holder's renewals may be refused for memory until its
    # deadline, a TTL after the last one that ran: only then is its command stopped.
    r, (holder, waiters) = evicting_policy(s, "volatile-lru", 3 + KILL_AFTER + STOP_MARGIN)
    for waiter in waiters:
        waiter.expect = {0, 69}
    fill_memory(r, 8)
    confirm_evicted(s, r)
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    if holder.status != 76:
        raise ScenarioFailed(f"the holder of an evicted lock exited {holder.status}, not 76")
    application(r).flushdb()


@scenario("memory-full-noeviction", runs=(1, 10), sections=(1, 1), promise="""
    maxmemory with noeviction, and an application fills the memory while a lock is held and
    waiters wait, then frees it: Redis refuses writes that need memory but never drops the lock.
    Promise: no overlap at all. The holder's renewals keep the lock while it can (exit 0) or fail
    until its deadline, when it stops its command (76) before the key expires; a waiter whose
    acquire is refused for memory ends with 69, saying so, or runs once the memory is freed
    (0).""")
def memory_full_noeviction(s):
    r = s.redis(options=["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"])
    _, waiters = holder_and_waiters(s, r, holder_expect=(0, 76), ttl="3s")
    for waiter in waiters:
        waiter.expect = {0, 69}
    refused = fill_memory(r, 8, stay_over_limit=True)
    s.confirm("the memory filled up: the application's writes were refused", lambda: refused > 0)
    if r.call("EXISTS", s.key) != 1:
        raise ScenarioFailed("noeviction dropped the lock key")
    s.confirm("renewals or acquires were refused for memory (INFO errorstats: OOM)",
              lambda: s.commandstats(r).get("errorstat_OOM", {}).get("count", 0) > refused,
              timeout=5)  # renewals and acquires meet a full memory
    application(r).flushdb()
    s.fire("holder-may-end")
