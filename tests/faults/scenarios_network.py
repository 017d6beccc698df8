"""Faults of the network between redlockrun and Redis: partitions, one-way partitions and packet
loss made with nftables between two network namespaces (netlab.py), latency, resets at a chosen
lock call and a server that never answers made by a proxy on loopback (netproxy.py). The scenarios
that use namespaces need root: without it they fail, saying so."""
import json
import os
import time

import netlab
from harness import PYTHON, HERE, Process, ScenarioFailed, scenario
from variants import semaphore_variant

NETPROXY = os.path.join(HERE, "netproxy.py")
STATS = {}  # a proxy's URL -> the file of its statistics


def make_lab(s):
    """Two namespaces for this run, removed at its teardown (after every process in them)."""
    problem = netlab.missing()
    if problem:
        raise ScenarioFailed(problem)
    lab = netlab.Lab()
    s.processes.insert(0, lab)  # teardown goes through processes in reverse: the lab goes last
    return lab


def redis_in(s, lab):
    """A Redis in the server's namespace, on its veth address: not loopback, hence protected
    mode off (the namespace has no other network)."""
    return s.redis(bind=netlab.SERVER_ADDRESS, prefix=lab.prefix_server,
                   options=["--protected-mode", "no"])


def start_proxy(s, r, mode, *args):
    """A netproxy.py in front of R (none for "silent"); returns its URL and the file that lists
    the resets it made."""
    ready = os.path.join(s.dir, f"proxy-{len(s.processes)}")
    upstream = str(r.port) if r is not None else "0"
    s.processes.append(Process([PYTHON, NETPROXY, ready, upstream, mode, *args], ready + ".log"))
    s.wait_for("the proxy", lambda: os.path.exists(ready), timeout=10)
    with open(ready, encoding="utf-8") as f:
        port = f.read().strip()
    url = f"redis://127.0.0.1:{port}"
    STATS[url] = ready + ".stats"
    return url, ready + ".resets"


def proxy_stats(url):
    """What the proxy at URL did so far (netproxy.py): connections, chunks each way, delay_ms."""
    try:
        with open(STATS[url], encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {"connections": 0, "chunks": {"requests": 0, "replies": 0}, "delay_ms": 0.0}


def confirm_dropped(s, lab, each=False):
    """The nftables rules dropped packets (the fault happened): EACH way, for a random loss; for
    a partition, either way (a request dropped is never answered)."""
    dropped = lab.dropped()
    s.confirm(f"packets dropped, {'each way' if each else 'either way'} (nft counters: "
              f"{dropped})", lambda: (min if each else max)(dropped.values()) > 0)


def no_lock_left(s, r, prefix=(), limit=None):
    """The lock key and its owner record are gone, and a run with -n (and LIMIT) takes the lock at
    once."""
    left = [k for k in (s.key, f"{{{s.key}}}:redlockrun:owner") if r.call("EXISTS", k)]
    if left:
        raise ScenarioFailed(f"a lock was left behind: {', '.join(left)} still exist")
    s.wait_exit(s.redlockrun(r, name="after", options=["-n"], prefix=prefix, limit=limit),
                timeout=20)



def cut_off_holder(s, r, lab, limit):
    """A holder in the client's namespace, cut off by the faults, whose section runs until "end"
    (it must exit 76); with LIMIT, as many more beside Redis as fill the semaphore (they run on:
    exit 0); then a waiter beside Redis, blocked. Returns (holder, waiter)."""
    holder = s.redlockrun(r, name="holder", ttl="3s", prefix=lab.prefix_client, until="end",
                          expect=(76,), limit=limit)
    s.wait_for("the holder's section", lambda: s.began(holder))
    for _ in range((limit or 1) - 1):
        other = s.redlockrun(r, name="other", ttl="3s", prefix=lab.prefix_server, until="end",
                             limit=limit)
        s.wait_for(f"{other.id}'s section", lambda: s.began(other))
    waiter = s.redlockrun(r, name="waiter", ttl="3s", prefix=lab.prefix_server, limit=limit)
    s.wait_for("the waiter to block", lambda: r.blocked_clients() == 1)
    return holder, waiter


@scenario("net-holder-partitioned", runs=(1, 20), sections=(2, 2), timeout=90, promise="""
    A holder in one network namespace is cut off from Redis in another (nftables drops every
    packet both ways) while its command runs; a waiter beside Redis blocks. Promise: the holder
    stops its command before the server lets the lock expire and exits 76 (its section ends, on
    the recorder's clock, before the waiter's begins: no overlap is allowed); the waiter then
    takes the lock and exits 0. Needs root.""")
def holder_partitioned(s, limit=None):
    lab = make_lab(s)
    r = redis_in(s, lab)
    holder, waiter = cut_off_holder(s, r, lab, limit)
    lab.partition()
    s.wait_exit(holder, timeout=30)
    s.wait_for("the waiter's section", lambda: s.began(waiter), timeout=30)
    lab.heal()
    confirm_dropped(s, lab)
    s.fire("end")


semaphore_variant("net-holder-partitioned", holder_partitioned, runs=(1, 20), sections=(3, 3),
                  timeout=90, promise="""
    net-holder-partitioned with --limit 2: of two holders, the one in the client's namespace is
    cut off while the other, beside Redis, runs on, and a waiter blocks. Promise: the cut-off
    holder stops its command before its slot expires on the server and exits 76; the waiter takes
    that slot and exits 0; never more than two sections at once. Needs root.""")


@scenario("net-one-way-partition", runs=(2, 20), sections=(2, 2), timeout=90, promise="""
    As net-holder-partitioned, but only one way: Redis's replies are dropped (even runs: the
    holder's renewals still reach Redis and extend the lock, unacknowledged) or the holder's
    requests are (odd runs). Promise: the holder stops its command on its own deadline and exits
    76; no overlap with the waiter, who takes the lock once it expired on the server and exits 0.
    Needs root.""")
def one_way_partition(s, limit=None):
    lab = make_lab(s)
    r = redis_in(s, lab)
    holder, waiter = cut_off_holder(s, r, lab, limit)
    direction = "replies" if s.run_index % 2 == 0 else "requests"
    lab.partition(direction=direction)
    s.wait_exit(holder, timeout=30)
    s.wait_for("the waiter's section", lambda: s.began(waiter), timeout=30)
    lab.heal()
    confirm_dropped(s, lab)
    s.fire("end")


semaphore_variant("net-one-way-partition", one_way_partition, runs=(2, 20), sections=(3, 3),
                  timeout=90, promise="""
    net-one-way-partition with --limit 2: of two holders, the one in the client's namespace loses
    Redis's replies (even runs) or its requests (odd runs) while the other, beside Redis, runs on,
    and a waiter blocks. Promise: the cut-off holder stops its command on its own deadline and
    exits 76; the waiter takes its slot once it expired on the server and exits 0; never more
    than two sections at once. Needs root.""")


@scenario("net-waiter-partitioned", runs=(2, 10), sections=(2, 2), timeout=90, promise="""
    A waiter in one namespace blocks on a lock held beside Redis; the waiter is cut off (both
    ways) and the holder releases. Even runs: the partition heals within the waiter's -w 30s:
    the waiter reconnects, takes the lock and exits 0. Odd runs: it never heals within -w 4s: the
    waiter gives up with 69 (Redis unreachable when its wait ran out), never 0, within -w plus
    two --connect-timeout (1s). No overlap, no lock left behind. Needs root.""")
def waiter_partitioned(s, limit=None):
    lab = make_lab(s)
    r = redis_in(s, lab)
    holders = []
    for _ in range(limit or 1):  # the lock held, or every slot of the semaphore
        holder = s.redlockrun(r, name="holder", ttl="3s", prefix=lab.prefix_server,
                              until="release", limit=limit)
        s.wait_for(f"{holder.id}'s section", lambda: s.began(holder))
        holders.append(holder)
    heals = s.run_index % 2 == 0
    waiter = s.redlockrun(r, name="waiter", ttl="3s", prefix=lab.prefix_client,
                          options=["-w", "30s" if heals else "4s", "--connect-timeout", "1s"],
                          expect=(0,) if heals else (69,), limit=limit)
    s.wait_for("the waiter to block", lambda: r.blocked_clients() == 1)
    lab.partition()
    started = time.monotonic()
    s.fire("release")
    for holder in holders:
        s.wait_exit(holder, timeout=20)
    if heals:
        s.sleep(3)
        if waiter.finished():
            raise ScenarioFailed(f"the waiter gave up during the partition: {waiter.log()}")
        lab.heal()
        confirm_dropped(s, lab)
        s.wait_for("the waiter's section", lambda: s.began(waiter), timeout=20)
        s.wait_exit(waiter, timeout=20)
    else:
        s.wait_exit(waiter, timeout=20)
        took = time.monotonic() - started
        if took > 4 + 2 * 1 + 3:
            raise ScenarioFailed(f"the waiter took {took:.1f}s to give up (-w 4s)")
        lab.heal()
        confirm_dropped(s, lab)
    no_lock_left(s, r, prefix=lab.prefix_server, limit=limit)


semaphore_variant("net-waiter-partitioned", waiter_partitioned, runs=(2, 10), sections=(3, 3),
                  timeout=90, promise="""
    net-waiter-partitioned with --limit 2: both holders run beside Redis and release while the
    waiter, in the client's namespace, is cut off. Promise: as for the exclusive lock, the waiter
    takes a slot once the partition heals within its -w 30s (exit 0), or gives up with 69 within
    -w 4s plus two --connect-timeout; no overlap beyond the limit, no lock left behind. Needs
    root.""")


@scenario("net-latency", runs=(1, 4), sections=(6, 60), timeout=240, promise="""
    Every chunk between redlockrun and Redis, each way, is delayed 200 ms ± 100 ms (order kept),
    by a proxy: contenders with a TTL of 2 s, renewed every 0.67 s, run sections of about 1 s.
    Promise: no overlap, no lost increment; a holder could lose its lock only if a renewal's round
    trip exceeded its validity, which 600 ms at most does not: every run exits 0.""")
def latency(s, limit=None):
    r = s.redis()
    url, _ = start_proxy(s, r, "delay", "200", "100")
    # Each section takes about 2.5 s with the delays (its second of work, and the acquire, renew
    # and release round trips at up to 600 ms each), one after another: 60 of them in long mode.
    sections = 20 if s.long else 2
    s.load(lambda: s.redlockrun(url=url, ttl="2s", steps=4, step_ms=250, limit=limit), workers=3,
           sections=sections).join(timeout=230)
    stats = proxy_stats(url)
    chunks = stats["chunks"]["requests"] + stats["chunks"]["replies"]
    s.confirm(f"the proxy delayed chunks each way by 100 ms or more on average ({stats})",
              lambda: min(stats["chunks"].values()) > 0 and stats["delay_ms"] / chunks >= 100)


semaphore_variant("net-latency", latency, runs=(1, 5), sections=(6, 60), timeout=240, promise="""
    net-latency with --limit 2: three contenders at a time share the semaphore through the
    delaying proxy (200 ms ± 100 ms each way). Promise: never more than two sections at once, no
    lost increment, every run exits 0.""")


@scenario("net-packet-loss", runs=(1, 10), sections=(9, 60), timeout=120, promise="""
    5 % of the packets each way between contenders in one namespace and Redis in another are
    dropped at random (nftables numgen); TCP retransmits. Promise: no overlap, no lost increment;
    runs exit 0, or 76 if retransmissions stalled renewals past the lock's validity (TTL 3 s):
    a lost lock is reported, never overlapped; or 69 if retransmissions stalled a run's first
    connection or first request past --connect-timeout (5 s), which a run without -w does not
    retry.
    Needs root.""")
def packet_loss(s, limit=None):
    lab = make_lab(s)
    r = redis_in(s, lab)
    lab.loss(5)
    sections = 40 if s.long else 6
    # A short run sends a few hundred packets each way: now and then one way loses none at 5 %.
    # The contenders go on, a round more at a time (three at most), until each way has lost some,
    # so that the fault is confirmed rather than left to chance.
    for _ in range(4):
        s.load(lambda: s.redlockrun(r, ttl="3s", prefix=lab.prefix_client, steps=3, step_ms=100,
                                    expect=(0, 69, 76), limit=limit),
               workers=3, sections=sections).join(timeout=110)
        if min(lab.dropped().values()) > 0:
            break
    confirm_dropped(s, lab, each=True)


semaphore_variant("net-packet-loss", packet_loss, runs=(1, 10), sections=(9, 60), timeout=120,
                  promise="""
    net-packet-loss with --limit 2: three contenders at a time share the semaphore over a link
    that drops 5 % of the packets each way. Promise: never more than two sections at once, no
    lost increment; runs exit 0, 76 (a loss reported, never overlapped beyond the limit) or 69 (a
    first connection or request stalled past --connect-timeout). Needs root.""")


RESETS = [
    # (the call, when, which call of it, what the run must exit with)
    ("acquire", "after", 1, 69),  # a run's first call: no retry, and the grant is released
    ("acquire", "before", 1, 69),
    ("acquire", "after", 2, 0),  # a waiter's acquire: retried on a new connection
    ("renew", "after", 1, 0),
    ("renew", "before", 1, 0),
    ("release", "after", 1, 0),  # the resent release finds the lock gone: released
    ("release", "before", 1, 0),
]


@scenario("net-reset", runs=(len(RESETS), 4 * len(RESETS)), sections=(2, 2), timeout=90,
          promise="""
    A proxy resets a contender's connection (RST) at one lock call — acquire, renewal or release —
    either before the call reaches Redis or after Redis ran it and before its reply is back; each
    run takes the next case in turn, while another contender competes for the lock directly.
    Promise: no overlap; no lock left behind (the key and owner record are gone, and a run with -n
    then takes the lock at once); a renewal or release is sent again on a new connection (a resent
    release that finds the lock gone counts as released): exit 0; a waiter's acquire is retried:
    exit 0; a run's very first acquire is not retried: exit 69, its grant if any released.""")
def reset(s, limit=None):
    call, when, nth, status = RESETS[s.run_index % len(RESETS)]
    r = s.redis()
    url, resets = start_proxy(s, r, "reset", call, when, str(nth))
    direct = []
    if nth > 1:  # the proxied run must wait first: others hold the lock, or every slot
        for _ in range(limit or 1):
            first = s.redlockrun(r, name="direct", ttl="3s", until="direct-may-end", limit=limit)
            s.wait_for(f"the direct holder {first.id}", lambda: s.began(first))
            direct.append(first)
        proxied = s.redlockrun(url=url, name="proxied", ttl="3s", steps=3, step_ms=500,
                               expect=(status,), limit=limit)
        s.wait_for("the proxied run to block", lambda: r.blocked_clients() == 1)
        s.fire("direct-may-end")
    else:
        proxied = s.redlockrun(url=url, name="proxied", ttl="3s", steps=3, step_ms=500,
                               expect=(status,), limit=limit)
        direct.append(s.redlockrun(r, name="direct", ttl="3s", limit=limit))
    s.wait_exit(proxied, timeout=30)
    for first in direct:
        s.wait_exit(first, timeout=30)
    s.confirm(f"the proxy reset the connection at the {call} ({when})",
              lambda: os.path.exists(resets))
    no_lock_left(s, r, limit=limit)


semaphore_variant("net-reset", reset, runs=(len(RESETS), 4 * len(RESETS)), sections=(2, 2),
                  timeout=90, promise="""
    net-reset with --limit 2: the proxy resets a semaphore run's connection at its acquire,
    renewal or release, before or after Redis ran it, case after case, while direct runs share
    the semaphore (both slots held while the proxied run waits, for a waiter's acquire). Promise,
    as for the exclusive lock: a resent renewal or release and a waiter's retried acquire exit 0,
    a run's first acquire 69 with its grant released; no overlap beyond the limit; nothing left
    behind.""")


@scenario("net-silent-server", runs=(1, 10), sections=(0, 0), timeout=60, promise="""
    Redis's address accepts connections and never answers (a proxy that reads nothing). Promise:
    nothing hangs: a run with --connect-timeout 1s and -w 3s tries its first call again while -w
    lasts (a server that does not answer may be restarting), then exits 69 (Redis unavailable)
    within -w, one connect timeout and a margin; it never runs its command.""")
def silent_server(s):
    url, _ = start_proxy(s, None, "silent")
    started = time.monotonic()
    run = s.redlockrun(url=url, name="silent", options=["--connect-timeout", "1s", "-w", "3s"],
                       expect=(69,))
    s.wait_exit(run, timeout=30)
    s.confirm("the silent server accepted the run's connection",
              lambda: proxy_stats(url)["connections"] > 0)
    took = time.monotonic() - started
    if took > 3 + 1 + 2:
        raise ScenarioFailed(f"it took {took:.1f}s to give up on a silent server")
