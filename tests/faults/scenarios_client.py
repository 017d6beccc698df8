"""Faults of the clients: paused, killed, short of resources, with a wrong clock."""
import signal

from harness import scenario


def pause_a_holder(s, r, whole):
    """Stops a holder past its TTL (WHOLE: redlockrun and its command, as a stalled machine; else
    redlockrun alone, its command running on) until a waiter has taken over and written; then the
    stale command writes once more before redlockrun continues and notices."""
    holder = s.redlockrun(r, name="holder", ttl="2s", until="holder-may-end", expect=(76,),
                          may_overlap=True)
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = [s.redlockrun(r, name="waiter", ttl="2s", steps=3) for _ in range(2)]
    s.wait_for("the waiters to block", lambda: r.blocked_clients() == 2)
    if whole:
        holder.stop_all()
    else:
        holder.signal(signal.SIGSTOP)
    s.wait_for("a waiter's first write",
               lambda: any(e["accepted"] for w in waiters for e in s.writes_of(w)), timeout=15)
    # Of all the orders in which a stalled machine's processes run again, the one that tests the
    # fence: the stale command writes before redlockrun can stop it.
    stale_writes = len(s.writes_of(holder))
    holder.signal_command(signal.SIGCONT)
    s.wait_for("the stale holder's write", lambda: len(s.writes_of(holder)) > stale_writes)
    holder.continue_all()
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")


@scenario("holder-paused", runs=(1, 20), promise="""
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


@scenario("holder-redlockrun-paused", runs=(1, 20), promise="""
    redlockrun alone is stopped with SIGSTOP past its TTL while its command runs on, unrenewed; a
    waiter takes the expired lock. Promise: the overlap is allowed (nothing running can stop the
    command), but the fence orders it: the stale command's writes are refused; redlockrun, once
    continued, stops its command and exits 76; the waiters exit 0.""")
def holder_redlockrun_paused(s):
    r = s.redis()
    pause_a_holder(s, r, whole=False)
    if s.long:
        s.load(lambda: s.redlockrun(r, ttl="2s"), workers=3, sections=25).join()
