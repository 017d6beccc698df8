"""Shared locks (-s): readers together and writers alone under contention; a reader and a writer
killed or paused; a restarted server; flushed scripts; a writer stopped or killed in the queue; a
server paused while a writer is queued; a reader cut off from Redis."""
import signal
import subprocess
import time

from harness import (ScenarioFailed, begin_of, expect_after_expiry, forgotten_lock, scenario,
                     stopped_lock_expiry, until_resumed)
from scenarios_semaphore import holder_record

# --kill-after of the holders that may overlap: it bounds how long their command may run on.
KILL_AFTER = 1


def most_readers_at_once(s):
    """The most shared sections the recorder saw open at once."""
    ids = {c.id for c in s.contenders if c.shared}
    open_now, most, conns = 0, 0, set()
    for event in s.read_events():
        if event["ev"] == "begin" and event["holder"] in ids:
            conns.add(event["conn"])
            open_now += 1
            most = max(most, open_now)
        elif event["ev"] == "end" and event["conn"] in conns:
            open_now -= 1
    return most


def more_load(s, r, sections=30):
    """Long mode: readers and a writer contend on the server the fault hit."""
    if s.long:
        loads = [s.load(lambda: s.redlockrun(r, name="reader", shared=True, ttl="2s", steps=3),
                        workers=3, sections=sections),
                 s.load(lambda: s.redlockrun(r, name="writer", ttl="2s"), workers=1,
                        sections=sections // 3, pause=0.1)]
        for load in loads:
            load.join()
        s.expect_free(r)


def readers_and_writer(s, r, reader_options=(), reader_expect=(0,), may_overlap=False):
    """Two readers whose sections run until the event "readers-may-end" and a writer queued
    behind them; returns (readers, writer)."""
    readers = []
    for _ in range(2):
        reader = s.redlockrun(r, name="reader", shared=True, ttl="2s", until="readers-may-end",
                              options=["--kill-after", f"{KILL_AFTER}s", *reader_options],
                              expect=reader_expect, may_overlap=may_overlap)
        s.wait_for(f"{reader.id}'s section", lambda: s.began(reader))
        readers.append(reader)
    writer = s.redlockrun(r, name="writer", ttl="2s", steps=3)
    s.wait_for("the writer to block", lambda: r.blocked_clients() == 1)
    return readers, writer


@scenario("shared-contention", runs=(1, 8), sections=(55, 555), timeout=300, promise="""
    No fault: shared runs (-s, four at a time), exclusive runs and clients of the classic
    algorithm contend for one key. Promise: shared sections overlap only each other (and at
    least two of them run at once at some point, or the scenario tests nothing); an exclusive or
    classic section overlaps nothing; no reader sees the counter change under it and no
    increment is lost; the writers, queued among a stream of readers, are not starved: every run
    exits 0 within the run's time, nothing stays locked.""")
def shared_contention(s):
    r = s.redis()
    sections = 60 if s.long else 6
    loads = [
        s.load(lambda: s.redlockrun(r, name="reader", shared=True, steps=3, step_ms=40),
               workers=4, sections=sections * 2),
        s.load(lambda: s.redlockrun(r, name="writer"), workers=2, sections=sections // 2,
               pause=0.1),
        s.load(lambda: s.classic(r), workers=1, sections=sections // 4 or 1, pause=0.3),
    ]
    for load in loads:
        load.join(timeout=280)
    s.confirm("contention: two shared sections or more ran at once",
              lambda: most_readers_at_once(s) >= 2)
    s.expect_free(r)


@scenario("shared-reader-killed", runs=(1, 8), sections=(3, 103), promise="""
    Of two readers, one keeps renewing while the other's redlockrun is killed with SIGKILL, and a
    writer waits. Promise: the killed reader's command dies with it (exit 137); the writer runs
    no earlier than the killed reader's own expiry (checked against its record on the server)
    and the other reader's release; no section overlaps the writer's; the others exit 0; nothing
    stays locked.""")
def shared_reader_killed(s):
    r = s.redis()
    killed = s.redlockrun(r, name="killed", shared=True, ttl="2s", until="never",
                          expect=(137,))
    s.wait_for("the first reader's section", lambda: s.began(killed))
    renewing = s.redlockrun(r, name="renewing", shared=True, ttl="2s", until="end")
    s.wait_for("the second reader's section", lambda: s.began(renewing))
    writer = s.redlockrun(r, name="writer", ttl="2s", steps=3)
    s.wait_for("the writer to block", lambda: r.blocked_clients() == 1)
    s.sleep(1)  # a renewal or two of both readers
    pid = killed.client_pid()
    killed.signal(signal.SIGKILL)
    s.confirm(f"{killed.id} killed, its command with it",
              lambda: killed.finished() and not killed.process.members(), timeout=10)
    s.wait_exit(killed, timeout=10)
    s.sleep(0.2)  # a renewal sent just before the kill has run
    record = holder_record(s, r, pid)
    s.fire("end")
    s.wait_for("the writer's section", lambda: s.began(writer), timeout=10)
    expect_after_expiry(s, writer, record, killed.id)
    for contender in (renewing, writer):
        s.wait_exit(contender, timeout=20)
    s.expect_free(r)
    more_load(s, r)


@scenario("shared-reader-paused", runs=(1, 8), sections=(3, 103), promise="""
    A reader (redlockrun and its command together, as a stalled machine) is stopped with SIGSTOP
    past its TTL while the other reader ends and a writer waits; the writer takes the lock after
    the paused reader's expiry and writes; the paused command is continued first and reads and
    writes back once more, then redlockrun. Promise: the overlap is allowed, and fenced: the
    recorder refuses the stale reader's requests after the writer's, so its write-back cannot
    undo the writer's increment; the paused reader notices on continuing, stops its command and
    exits 76; the others exit 0; nothing stays locked.""")
def shared_reader_paused(s):
    r = s.redis()
    paused = s.redlockrun(r, name="paused", shared=True, ttl="2s", until="paused-may-end",
                          options=["--kill-after", f"{KILL_AFTER}s"], expect=(76,),
                          may_overlap=until_resumed(KILL_AFTER))
    s.wait_for("the paused reader's section", lambda: s.began(paused))
    other = s.redlockrun(r, name="other", shared=True, ttl="2s", until="other-may-end")
    s.wait_for("the other reader's section", lambda: s.began(other))
    writer = s.redlockrun(r, name="writer", ttl="2s", steps=3)
    s.wait_for("the writer to block", lambda: r.blocked_clients() == 1)
    paused.stop_all()
    s.sleep(0.2)  # a renewal sent just before the stop has run
    record = holder_record(s, r, paused.client_pid())
    s.fire("other-may-end")
    s.wait_for("the writer's first write",
               lambda: any(e["accepted"] for e in s.writes_of(writer)), timeout=15)
    expect_after_expiry(s, writer, record, paused.id)
    stale_writes = len(s.writes_of(paused))
    paused.signal_command(signal.SIGCONT)
    s.wait_for("the stale reader's write-back", lambda: len(s.writes_of(paused)) > stale_writes)
    paused.continue_all()
    s.wait_exit(paused, timeout=20)
    s.fire("paused-may-end")
    for contender in (other, writer):
        s.wait_exit(contender, timeout=20)
    s.expect_free(r)
    more_load(s, r)


@scenario("shared-writer-paused", runs=(1, 8), sections=(3, 103), promise="""
    A writer (redlockrun and its command together) is stopped with SIGSTOP past its TTL while two
    readers wait; both take the lock together after the writer's expiry and read; the paused
    command is continued first and writes once more, then redlockrun. Promise: the overlaps are
    allowed, and fenced: the recorder refuses the stale writer's write after the readers'
    requests; the writer notices on continuing, stops its command and exits 76; the readers exit
    0; nothing stays locked.""")
def shared_writer_paused(s):
    r = s.redis()
    writer = s.redlockrun(r, name="writer", ttl="2s", until="writer-may-end",
                          options=["--kill-after", f"{KILL_AFTER}s"], expect=(76,),
                          may_overlap=until_resumed(KILL_AFTER))
    s.wait_for("the writer's section", lambda: s.began(writer))
    readers = [s.redlockrun(r, name="reader", shared=True, ttl="2s", steps=3) for _ in range(2)]
    s.wait_for("the readers to block", lambda: r.blocked_clients() == 2)
    writer.stop_all()
    s.sleep(0.2)  # a renewal sent just before the stop has run
    # The key holds the writer's expiry, in ms (redlockrun's default unit).
    record = stopped_lock_expiry(s, r, 2, writer.id)
    s.wait_for("both readers' sections", lambda: all(s.began(x) for x in readers), timeout=15)
    for reader in readers:
        expect_after_expiry(s, reader, record, writer.id)
    stale_writes = len(s.writes_of(writer))
    writer.signal_command(signal.SIGCONT)
    s.wait_for("the stale writer's write", lambda: len(s.writes_of(writer)) > stale_writes)
    writer.continue_all()
    s.wait_exit(writer, timeout=20)
    s.fire("writer-may-end")
    for reader in readers:
        s.wait_exit(reader, timeout=20)
    s.expect_free(r)
    more_load(s, r)


@scenario("shared-redis-restart", runs=(1, 8), sections=(3, 103), promise="""
    While two readers hold the lock and a writer waits, redis-server is killed with SIGKILL and
    restarted without persistence: the lock is forgotten. Promise: the writer waits through the
    outage and runs; each reader's next renewal finds its record gone, and it stops its command
    and exits 76. The overlaps until then are allowed, and fenced: the writer's fence, re-seeded
    from the server's time in µs, is larger, and the recorder refuses the readers after it. The
    writer exits 0; nothing stays locked.""")
def shared_redis_restart(s):
    r = s.redis()
    readers, writer = readers_and_writer(s, r, reader_expect=(76,),
                                         may_overlap=forgotten_lock(2, KILL_AFTER))
    r.restart()  # confirmed: a new server
    for reader in readers:
        s.wait_exit(reader, timeout=20)
    s.fire("readers-may-end")
    s.wait_exit(writer, timeout=30)
    s.expect_free(r)
    more_load(s, r)


@scenario("shared-script-flush", runs=(1, 8), sections=(33, 136), promise="""
    SCRIPT FLUSH, again and again, while readers and writers take, renew, hand over and release
    the lock. Promise: nothing changes: EVALSHA's NOSCRIPT is answered by EVAL; shared sections
    overlap only each other, no lost increment, every run exits 0.""")
def shared_script_flush(s):
    r = s.redis()
    readers_and_writer(s, r)
    r.call("SCRIPT", "FLUSH")
    s.sleep(1)  # a renewal or two, and the writer's next attempt, meet an empty script cache
    r.call("SCRIPT", "FLUSH")
    s.fire("readers-may-end")
    sections = 40 if s.long else 9
    loads = [s.load(lambda: s.redlockrun(r, name="reader", shared=True, ttl="2s"), workers=3,
                    sections=sections),
             s.load(lambda: s.redlockrun(r, name="writer", ttl="2s"), workers=1,
                    sections=sections // 3)]
    while any(thread.is_alive() for load in loads for thread in load.threads):
        r.call("SCRIPT", "FLUSH")
        s.sleep(0.05)
    for load in loads:
        load.join()
    stats = s.commandstats(r)
    s.confirm("EVALSHA met NOSCRIPT and EVAL answered it (INFO errorstats, commandstats)",
              lambda: stats.get("errorstat_NOSCRIPT", {}).get("count", 0) > 0
              and stats.get("cmdstat_eval", {}).get("calls", 0) > 0)
    s.expect_free(r)


@scenario("shared-writer-waiting-paused", runs=(1, 5), sections=(3, 53), timeout=120, promise="""
    A reader holds the lock; a writer queues, and a second reader queues behind it; the writer is
    stopped with SIGSTOP (redlockrun and all). The reader ends: its release wakes the stopped
    writer, whose pending request may take the lock on the server and wait unread. Promise: the
    second reader, though it could have shared the lock with the first, never ran before the
    writer's claim ended: not before the writer's unused grant expired or its place in the queue
    lapsed; continued, the writer does not run on an expired grant but waits again, and runs; no
    section overlaps the writer's; every run exits 0; nothing stays locked.""")
def shared_writer_waiting_paused(s):
    r = s.redis()
    first = s.redlockrun(r, name="first", shared=True, ttl="2s", until="first-may-end")
    s.wait_for("the first reader's section", lambda: s.began(first))
    writer = s.redlockrun(r, name="writer", ttl="2s", options=["-w", "60s"])
    s.wait_for("the writer to block", lambda: r.blocked_clients() == 1)
    second = s.redlockrun(r, name="second", shared=True, ttl="2s", options=["-w", "60s"])
    s.wait_for("the second reader to block", lambda: r.blocked_clients() == 2)
    s.sleep(0.3)
    if s.began(second):
        raise ScenarioFailed("the second reader went ahead of the writer queued before it")
    writer.stop_all()
    stopped_at = time.monotonic_ns()  # the recorder's clock: CLOCK_MONOTONIC, machine-wide
    s.fire("first-may-end")
    s.wait_exit(first, timeout=10)
    s.wait_for("the second reader's section", lambda: s.began(second), timeout=40)
    waited_s = (begin_of(s, second)["t"] - stopped_at) / 1e9
    s.confirm(f"the stopped writer held up the reader queued behind it ({waited_s:.1f} s)",
              lambda: waited_s >= 1.5)
    writer.continue_all()
    s.wait_exit(second, timeout=20)
    s.wait_exit(writer, timeout=40)
    s.expect_free(r)
    more_load(s, r, sections=15)


@scenario("shared-writer-waiting-killed", runs=(1, 5), sections=(2, 52), timeout=120, promise="""
    A reader holds the lock (TTL 2 s); a writer queues, and a second reader queues behind it; the
    writer is killed with SIGKILL as it waits, and cannot give up its place. The reader ends: its
    release wakes the dead writer. Promise: the second reader does not wait for the writer's place
    to lapse (10 s after its last request), only for the 1 s a woken waiter has to come: it starts
    within 6 s of the release; the killed writer ran nothing (exit 137); no overlap; the others exit
    0; nothing stays locked.""")
def shared_writer_waiting_killed(s):
    r = s.redis()
    first = s.redlockrun(r, name="first", shared=True, ttl="2s", until="first-may-end")
    s.wait_for("the first reader's section", lambda: s.began(first))
    writer = s.redlockrun(r, name="writer", ttl="2s", options=["-w", "60s"], expect=(137,))
    s.wait_for("the writer to block", lambda: r.blocked_clients() == 1)
    second = s.redlockrun(r, name="second", shared=True, ttl="2s", options=["-w", "60s"])
    s.wait_for("the second reader to block", lambda: r.blocked_clients() == 2)
    writer.signal(signal.SIGKILL)
    s.confirm(f"{writer.id} killed", lambda: writer.finished(), timeout=10)
    s.wait_for("the killed writer's connection to close", lambda: r.blocked_clients() == 1)
    released = time.monotonic_ns()  # the recorder's clock: CLOCK_MONOTONIC, machine-wide
    s.fire("first-may-end")
    s.wait_exit(first, timeout=10)
    s.wait_for("the second reader's section", lambda: s.began(second), timeout=20)
    waited_s = (begin_of(s, second)["t"] - released) / 1e9
    if waited_s > 6:
        raise ScenarioFailed(f"the second reader started {waited_s:.1f} s after the release: the "
                             "killed writer's place held it up")
    if s.began(writer):
        raise ScenarioFailed("the killed writer's section ran")
    s.wait_exit(second, timeout=20)
    s.wait_exit(writer, timeout=10)
    s.expect_free(r)
    more_load(s, r, sections=15)


def connected(r, contenders):
    """Whether each of CONTENDERS (runs without a prefix: redlockrun is the process started) has a
    TCP connection to R's port; made while R is stopped, it waits in R's accept queue."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{r.port} )"],
                         capture_output=True, text=True, check=True).stdout
    return all(f"pid={c.process.popen.pid}," in out for c in contenders)


@scenario("shared-writer-queued-server-pause", runs=(1, 8), sections=(4, 104), promise="""
    A reader holds the lock (TTL 2 s) and a writer queues behind it; redis-server is stopped with
    SIGSTOP for 2.5 s, past the TTL, and two more readers are started meanwhile (their
    connections wait in the stopped server's accept queue). The server runs the writer's pending
    request only once continued, and grants it the lock for the whole TTL; counted from when the
    writer sent that request, the grant comes back with its validity spent. Promise: the writer
    keeps its turn: it renews the grant and its section begins before both late readers'; the
    first reader's renewals go unanswered, it stops its command and exits 76 before the writer
    begins (no overlap); the others exit 0; nothing stays locked.""")
def shared_writer_queued_server_pause(s):
    r = s.redis()
    first = s.redlockrun(r, name="first", shared=True, ttl="2s", until="first-may-end",
                         options=["--kill-after", f"{KILL_AFTER}s"], expect=(76,))
    s.wait_for("the first reader's section", lambda: s.began(first))
    writer = s.redlockrun(r, name="writer", ttl="2s", options=["-v", "-w", "60s"])
    s.wait_for("the writer to be queued and block",
               lambda: r.call("ZCARD", "{" + s.key + "}:redlockrun:queue") == 1
               and r.blocked_clients() == 1)
    r.pause()  # confirmed: stopped
    paused_at = time.monotonic()
    late = [s.redlockrun(r, name="late", shared=True, ttl="2s", options=["-w", "60s"])
            for _ in range(2)]
    s.confirm("the late readers connected while the server was stopped",
              lambda: connected(r, late), timeout=2)
    s.sleep(max(0.0, 2.5 - (time.monotonic() - paused_at)))
    r.resume()
    s.wait_exit(first, timeout=20)
    s.confirm("the writer's grant came back with its validity spent on its clock (its -v log)",
              lambda: "its validity ran out on this machine's clock" in writer.log(), timeout=20)
    for reader in late:
        s.wait_for(f"{reader.id}'s section", lambda: s.began(reader), timeout=20)
        if not s.began(writer) or begin_of(s, reader)["t"] < begin_of(s, writer)["t"]:
            raise ScenarioFailed(f"{reader.id}, started while the server was stopped, began before "
                                 f"{writer.id}, which had queued before the stop")
    s.fire("first-may-end")
    for contender in (writer, *late):
        s.wait_exit(contender, timeout=20)
    s.expect_free(r)
    more_load(s, r)


@scenario("shared-net-reader-partitioned", runs=(1, 10), sections=(3, 3), timeout=90, promise="""
    Of two readers, one in a network namespace of its own is cut off from Redis (nftables drops
    every packet both ways) while the other, beside Redis, runs on, and a writer beside Redis
    waits. Promise: the cut-off reader stops its command before its claim expires on the server
    and exits 76 (its section ends before the writer's begins: no overlap is allowed); the
    writer takes the lock once the other reader has ended and exits 0. Needs root.""")
def shared_net_reader_partitioned(s):
    from scenarios_network import confirm_dropped, make_lab, redis_in
    lab = make_lab(s)
    r = redis_in(s, lab)
    cut_off = s.redlockrun(r, name="cut-off", shared=True, ttl="3s", prefix=lab.prefix_client,
                           until="end", expect=(76,))
    s.wait_for("the cut-off reader's section", lambda: s.began(cut_off))
    other = s.redlockrun(r, name="other", shared=True, ttl="3s", prefix=lab.prefix_server,
                         until="other-may-end")
    s.wait_for("the other reader's section", lambda: s.began(other))
    writer = s.redlockrun(r, name="writer", ttl="3s", prefix=lab.prefix_server)
    s.wait_for("the writer to block", lambda: r.blocked_clients() == 1)
    lab.partition()
    s.wait_exit(cut_off, timeout=30)
    s.fire("other-may-end")
    s.wait_for("the writer's section", lambda: s.began(writer), timeout=30)
    lab.heal()
    confirm_dropped(s, lab)
    s.fire("end")
    s.wait_exit(other, timeout=20)
    s.wait_exit(writer, timeout=20)
