"""Semaphores (--limit N): contention with exclusive runs and classic clients; holders killed,
paused or forgotten by a restarted server; a waiter stopped in the queue."""
import json
import signal

from harness import (ScenarioFailed, begin_of, expect_after_expiry, first_begun, forgotten_lock,
                     scenario, until_resumed)

# --kill-after of the holders that may overlap: it bounds how long their command may run on.
KILL_AFTER = 1


def most_at_once(s, limit):
    """The most sections of --limit LIMIT holders the recorder saw open at once."""
    ids = {c.id for c in s.contenders if c.limit == limit}
    open_now, most, conns = 0, 0, set()
    for event in s.read_events():
        if event["ev"] == "begin" and event["holder"] in ids:
            conns.add(event["conn"])
            open_now += 1
            most = max(most, open_now)
        elif event["ev"] == "end" and event["conn"] in conns:
            open_now -= 1
    return most


def holder_record(s, r, pid):
    """The semaphore's record of the holder whose redlockrun is PID (its expiry_ms, fence, ...),
    or None."""
    owner = r.call("HGETALL", "{" + s.key + "}:redlockrun:owner")
    pid = str(pid)
    for name, value in owner.items():
        if name.startswith(b"holder:"):
            record = json.loads(value)
            if str(record.get("pid")) == pid:
                return record
    return None


def lock_state(s, r):
    """What a refused run must leave as it was, and the holders' renewals do not change: the
    semaphore's limit, its holders and their fences, and its queue."""
    tag = "{" + s.key + "}:redlockrun:"
    owner = r.call("HGETALL", tag + "owner")
    holders = {name: json.loads(value)["fence"] for name, value in owner.items()
               if name.startswith(b"holder:")}
    return owner.get(b"limit"), holders, r.call("ZRANGE", tag + "queue", 0, -1)


def more_load(s, r, limit, sections=25):
    """Long mode: contention among semaphore holders on the server the fault hit."""
    if s.long:
        s.load(lambda: s.redlockrun(r, limit=limit, ttl="2s", steps=3), workers=limit + 2,
               sections=sections).join()
        s.expect_free(r)


@scenario("semaphore-contention", runs=(1, 10), sections=(37, 361), timeout=300, promise="""
    No fault: --limit 3 runs (more of them than the limit, so that some wait in the queue),
    exclusive redlockrun runs and clients of the classic algorithm contend for one key. Promise:
    never more than 3 semaphore sections at once (and at least 2 at some point, or the scenario
    tests nothing), never a semaphore section beside an exclusive or classic one, no lost
    increment, every run exits 0, nothing stays locked. First, while a --limit 3 run holds the
    key, a --limit 2 run is refused with 64 and changes nothing in the key, its owner hash or its
    queue.""")
def semaphore_contention(s):
    r = s.redis()
    holder = s.redlockrun(r, name="sem", limit=3, until="first-may-end")
    s.wait_for("the first holder's section", lambda: s.began(holder))
    before = lock_state(s, r)
    if before[0] != b"3" or len(before[1]) != 1:
        raise ScenarioFailed(f"the owner hash does not show one holder of limit 3: {before}")
    s.wait_exit(s.redlockrun(r, name="other-limit", limit=2, expect=(64,)), timeout=10)
    if lock_state(s, r) != before:
        raise ScenarioFailed("a run with another --limit changed the semaphore")
    s.fire("first-may-end")
    s.wait_exit(holder)
    sections = 60 if s.long else 6
    loads = [
        s.load(lambda: s.redlockrun(r, name="sem", limit=3, steps=3, step_ms=40), workers=5,
               sections=sections),
        s.load(lambda: s.redlockrun(r, name="excl"), workers=1, sections=sections // 2,
               pause=0.3),
        s.load(lambda: s.classic(r), workers=1, sections=sections // 2, pause=0.3),
    ]
    for load in loads:
        load.join(timeout=240)
    s.confirm("contention: two semaphore sections or more ran at once",
              lambda: most_at_once(s, 3) >= 2)
    s.expect_free(r)


@scenario("semaphore-holder-killed", runs=(1, 10), sections=(4, 104), promise="""
    Of a --limit 2 semaphore's two holders, one keeps renewing while the other's redlockrun is
    killed with SIGKILL, and two waiters wait. Promise: the killed holder's command dies with it
    (exit 137); its slot frees when its own expiry passes, not earlier (checked against its record
    on the server), and goes to the waiter that queued first, while the other holder still holds;
    then the second waiter runs. No overlap beyond the limit; the others exit
    0; nothing stays locked.""")
def semaphore_holder_killed(s):
    r = s.redis()
    killed = s.redlockrun(r, name="killed", limit=2, ttl="2s", until="never", expect=(137,))
    s.wait_for("the first holder's section", lambda: s.began(killed))
    renewing = s.redlockrun(r, name="renewing", limit=2, ttl="2s", until="end")
    s.wait_for("the second holder's section", lambda: s.began(renewing))
    waiters = []
    for _ in range(2):  # one after the other: the queue's order is known
        waiters.append(s.redlockrun(r, name="waiter", limit=2, ttl="2s"))
        s.wait_for("the waiters to block", lambda: r.blocked_clients() == len(waiters))
    s.sleep(1)  # a renewal or two of both holders
    pid = killed.client_pid()
    killed.signal(signal.SIGKILL)
    s.confirm(f"{killed.id} killed, its command with it",
              lambda: killed.finished() and not killed.process.members(), timeout=10)
    s.wait_exit(killed, timeout=10)
    s.sleep(0.2)  # a renewal sent just before the kill has run
    record = holder_record(s, r, pid)
    if record is None:
        raise ScenarioFailed("the killed holder's record left the owner hash before its expiry")
    s.wait_for("a waiter's section", lambda: first_begun(s, waiters) is not None, timeout=10)
    first = first_begun(s, waiters)
    if renewing.finished():
        raise ScenarioFailed("the renewing holder ended before a waiter took the freed slot")
    expect_after_expiry(s, first, record, killed.id)
    if first is not waiters[0]:
        raise ScenarioFailed(f"{first.id} ran before {waiters[0].id}, which had queued first")
    s.fire("end")
    for contender in [renewing] + waiters:
        s.wait_exit(contender, timeout=20)
    s.expect_free(r)
    more_load(s, r, 2)


@scenario("semaphore-holder-paused", runs=(1, 10), sections=(4, 104), promise="""
    Of a --limit 2 semaphore's two holders, the first granted (redlockrun and its command together,
    as a stalled machine) is stopped with SIGSTOP past its TTL while the other renews and two
    waiters wait; a waiter takes the paused holder's slot and writes; the paused command is
    continued first and writes once more, then redlockrun. Promise: the overlap of three sections
    is allowed, and fenced: the recorder, which has two places, gives the paused holder's to the
    newer fence and refuses every later request of the paused holder; the paused holder notices
    on continuing, stops its command and exits 76; the others exit 0; nothing stays locked.""")
def semaphore_holder_paused(s):
    r = s.redis()
    paused = s.redlockrun(r, name="paused", limit=2, ttl="2s", until="paused-may-end",
                          options=["--kill-after", f"{KILL_AFTER}s"], expect=(76,),
                          may_overlap=until_resumed(KILL_AFTER))
    s.wait_for("the first holder's section", lambda: s.began(paused))
    renewing = s.redlockrun(r, name="renewing", limit=2, ttl="2s", until="end")
    s.wait_for("the second holder's section", lambda: s.began(renewing))
    waiters = [s.redlockrun(r, name="waiter", limit=2, ttl="2s", steps=3) for _ in range(2)]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == 2)
    paused.stop_all()
    s.sleep(0.2)  # a renewal sent just before the stop has run
    record = holder_record(s, r, paused.client_pid())
    s.wait_for("a waiter's first write",
               lambda: any(e["accepted"] for w in waiters for e in s.writes_of(w)), timeout=15)
    expect_after_expiry(s, first_begun(s, waiters), record, paused.id)
    stale_writes = len(s.writes_of(paused))
    paused.signal_command(signal.SIGCONT)
    s.wait_for("the stale holder's write", lambda: len(s.writes_of(paused)) > stale_writes)
    paused.continue_all()
    s.wait_exit(paused, timeout=20)
    s.fire("paused-may-end")
    s.fire("end")
    for contender in [renewing] + waiters:
        s.wait_exit(contender, timeout=20)
    s.expect_free(r)
    more_load(s, r, 2)


@scenario("semaphore-redis-restart", runs=(1, 10), sections=(4, 104), promise="""
    While both holders of a --limit 2 semaphore run and two waiters wait, redis-server is killed
    with SIGKILL and restarted without persistence: the semaphore is forgotten. Promise: the
    waiters wait through the outage and take both slots; each holder's next renewal finds its
    record gone, and it stops its command and exits 76. The overlaps until then are allowed, and
    fenced: the fences, re-seeded from the server's time in µs, are larger, and the recorder gives
    the holders' places to them. The waiters exit 0; nothing stays locked.""")
def semaphore_redis_restart(s):
    r = s.redis()
    holders = []
    for _ in range(2):
        holder = s.redlockrun(r, name="holder", limit=2, ttl="2s", until="holders-may-end",
                              options=["--kill-after", f"{KILL_AFTER}s"], expect=(76,),
                              may_overlap=forgotten_lock(2, KILL_AFTER))
        s.wait_for(f"{holder.id}'s section", lambda: s.began(holder))
        holders.append(holder)
    waiters = [s.redlockrun(r, name="waiter", limit=2, ttl="2s", steps=3) for _ in range(2)]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == 2)
    r.restart()  # confirmed: a new server
    for holder in holders:
        s.wait_exit(holder, timeout=20)
    s.fire("holders-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    s.expect_free(r)
    more_load(s, r, 2)


def queue_places(s, r):
    """The semaphore's queue: {member "ARRIVAL:ID": kept until, in ms by the server's clock}."""
    queue = r.call("ZRANGE", "{" + s.key + "}:redlockrun:queue", 0, -1, "WITHSCORES")
    return {member.decode(): float(score) for member, score in zip(queue[::2], queue[1::2])}


def server_ms(r):
    seconds, micros = r.call("TIME")
    return int(seconds) * 1000 + int(micros) // 1000


def full_with_two_waiters(s, r, events):
    """A --limit 2 semaphore whose holders run until EVENTS, and two waiters queued one after
    the other; returns (holders, first waiter, second waiter)."""
    holders = []
    for event in events:
        holder = s.redlockrun(r, name="holder", limit=2, ttl="2s", until=event)
        s.wait_for(f"{holder.id}'s section", lambda: s.began(holder))
        holders.append(holder)
    first = s.redlockrun(r, name="first", limit=2, ttl="2s")
    s.wait_for("the first waiter to block", lambda: r.blocked_clients() == 1)
    second = s.redlockrun(r, name="second", limit=2, ttl="2s")
    s.wait_for("the second waiter to block", lambda: r.blocked_clients() == 2)
    return holders, first, second


@scenario("semaphore-waiter-paused", runs=(1, 5), sections=(8, 108), timeout=120, promise="""
    A --limit 2 semaphore is full and two waiters queue; the first is stopped with SIGSTOP
    (redlockrun and all). (1) A holder ends at once: its release wakes the stopped waiter, whose
    pending request takes the slot on the server and waits unread. Promise: that grant expires
    after its TTL unused; the second waiter runs no earlier than that; continued, the first waiter
    does not run on its expired grant but waits again, and runs. (2) The holders run on: the
    stopped waiter loses its place 10 s after its last request ran on the server (the acquire
    pipelined behind its BLPOP, which runs when the BLPOP times out, up to 5 s after the stop, is
    the last). Promise: once the place has lapsed and a holder ends,
    the second waiter takes the slot; the first, continued, queues again and runs later. No
    overlap beyond the limit; every run exits 0; nothing stays locked.""")
def semaphore_waiter_paused(s):
    r = s.redis()
    holders, first, second = full_with_two_waiters(s, r, ("h1-may-end", "h2-may-end"))
    pid = first.client_pid()
    first.stop_all()
    s.fire("h1-may-end")
    s.wait_for("the stopped waiter's grant", lambda: holder_record(s, r, pid) is not None,
               timeout=10)
    record = holder_record(s, r, pid)
    s.wait_for("the second waiter's section", lambda: s.began(second), timeout=20)
    expect_after_expiry(s, second, record, first.id)  # its grant expired unused
    first.continue_all()
    s.fire("h2-may-end")
    for contender in holders + [first, second]:
        s.wait_exit(contender, timeout=30)

    holders, first, second = full_with_two_waiters(s, r, ("h3-may-end", "h4-may-end"))
    first.stop_all()
    s.sleep(0.2)  # a request sent just before the stop has run
    places = queue_places(s, r)
    if len(places) != 2:
        raise ScenarioFailed(f"the queue does not hold the two waiters: {places}")
    stopped = min(places)  # the first to arrive
    # The acquire pipelined behind the stopped waiter's BLPOP still runs when the BLPOP times out
    # (within 5 s): that request keeps its place 10 s more. Hence the place's time is read again.
    while stopped in places and server_ms(r) <= places[stopped] + 200:
        s.sleep(0.2)
        places = queue_places(s, r)
    s.fire("h3-may-end")
    s.wait_for("the second waiter's section", lambda: s.began(second), timeout=20)
    if stopped in queue_places(s, r):
        raise ScenarioFailed("the stopped waiter kept its place past its time")
    # Fences grow with every grant: nobody's section began with a fence between the last
    # holder's and the second waiter's, and the stopped waiter began none.
    low, high = begin_of(s, holders[1])["fence"], begin_of(s, second)["fence"]
    between = [e for e in s.read_events() if e["ev"] == "begin" and low < e["fence"] < high]
    if between or s.began(first):
        raise ScenarioFailed("a grant went to someone between the last holder and the second "
                             "waiter: the stopped waiter kept its place")
    first.continue_all()
    s.fire("h4-may-end")
    for contender in holders + [first, second]:
        s.wait_exit(contender, timeout=30)
    s.expect_free(r)
    more_load(s, r, 2)


def queued(s, r):
    return r.call("ZCARD", "{" + s.key + "}:redlockrun:queue")


def end_of(s, contender):
    """The recorder's time (monotonic ns) at which CONTENDER's section ended."""
    conn = begin_of(s, contender)["conn"]
    return next(e for e in s.read_events() if e["ev"] == "end" and e["conn"] == conn)["t"]


def expect_soon_after(s, waiter, freed_at, what):
    """Fails the run if WAITER's section began long after FREED_AT (the recorder's clock): the
    wake-up meant for it was lost, and only its own BLPOP's timeout (up to 5 s) let it in."""
    delay_ms = (begin_of(s, waiter)["t"] - freed_at) / 1e6
    if delay_ms > 2500:
        raise ScenarioFailed(f"{waiter.id} began {delay_ms:.0f} ms after {what}: a wake-up was "
                             "lost on the way to it")


@scenario("semaphore-other-limit-refused", runs=(2, 10), sections=(4, 112), timeout=120,
          promise="""
    While an exclusive run holds the key, --limit 2 waiters (-w 30s) and --limit 3 waiters queue
    in turn: A1, B1, B2, A2, B3, A3 (A: --limit 2, B: --limit 3). A1 takes a slot and runs on; each
    B, woken for the other slot, is refused (64) for its limit and passes the wake-up on, to the
    next B or to A2; A2's release wakes B3, refused too, which passes it to A3. Promise: every
    --limit 2 waiter runs its section and exits 0, each B exits 64 without a section, and A2 and
    A3 begin within 2.5 s of the slot freeing (the exclusive section's end, A2's end), not when
    their own BLPOP times out; never two limits at once, no overlap beyond the limit; nothing
    stays locked.""")
def semaphore_other_limit_refused(s):
    r = s.redis()
    for round_number in range(3 if s.long else 1):
        end = f"round-{round_number}"
        # TTLs longer than a BLPOP's cap (5 s): a waiter whose wake-up is lost sleeps that long.
        exclusive = s.redlockrun(r, name="excl", ttl="30s", until=f"{end}-exclusive")
        s.wait_for("the exclusive section", lambda: s.began(exclusive))
        waiters = {}
        for name in ("A1", "B1", "B2", "A2", "B3", "A3"):  # one after the other: a known order
            waiters[name] = s.redlockrun(
                r, name=name, ttl="30s", limit=2 if name.startswith("A") else 3,
                options=("-w", "30s"), expect=(0,) if name.startswith("A") else (64,),
                until=end if name == "A1" else None)
            s.wait_for(f"{name} to queue", lambda: queued(s, r) == len(waiters))
        s.fire(f"{end}-exclusive")
        s.wait_for("A1's section", lambda: s.began(waiters["A1"]), timeout=10)
        s.wait_for("A2's section", lambda: s.began(waiters["A2"]), timeout=10)
        expect_soon_after(s, waiters["A2"], end_of(s, exclusive), "the exclusive section ended")
        s.wait_exit(waiters["A2"], timeout=10)
        s.wait_for("A3's section", lambda: s.began(waiters["A3"]), timeout=10)
        expect_soon_after(s, waiters["A3"], end_of(s, waiters["A2"]), "A2's section ended")
        for name in ("B1", "B2", "B3", "A3"):
            s.wait_exit(waiters[name], timeout=10)
        refused = [waiters[name] for name in ("B1", "B2", "B3")]
        s.confirm("the --limit 3 waiters were refused for their limit (64, saying so)",
                  lambda: all(b.status == 64 and "--limit" in b.log() for b in refused))
        s.fire(end)
        s.wait_exit(waiters["A1"], timeout=10)
        s.wait_exit(exclusive, timeout=10)
        s.expect_free(r)
    more_load(s, r, 2)
