"""The queue users can see, and --supersede, under faults: waiters killed, stopped and woken while
they wait. The checker's rules are unchanged (never two exclusive holders);
what --supersede adds is held by the contenders' expected statuses: a superseded waiter exits 75
and never has a section, so a grant it should not have had fails its run twice over (its status
and its section)."""
import json
import signal
import subprocess

from harness import scenario


def block_count(s, r, count, what):
    s.wait_for(what, lambda: r.blocked_clients() == count)


def waiting_ids(r):
    """The ids of the waiters in the queue, in order."""
    return [member.decode().split(":", 1)[1]
            for member in r.call("ZRANGE", "{job}:redlockrun:queue", 0, -1)]


@scenario("supersede", runs=(1, 5), sections=(3, 3), timeout=120, promise="""
    Deploys queue behind a holder, each with --supersede, beside one without: each newer one ends
    the older one's wait, also one stopped with SIGSTOP (its wake-up and answer wait unread), and
    one killed with SIGKILL. Promise: never two holders; every superseded waiter exits 75 without
    a section; the killed one 137; the waiter without --supersede keeps its place and runs first,
    the newest next; nothing stays locked.""")
def supersede(s):
    r = s.redis()
    supersede = ("--supersede",)
    holder = s.redlockrun(r, name="holder", ttl="2s", until="release")
    s.wait_for("the holder's section", lambda: s.began(holder))
    patient = s.redlockrun(r, name="patient", ttl="2s")
    block_count(s, r, 1, "the patient waiter to block")

    # A newer one ends an older one's wait at once.
    first = s.redlockrun(r, name="first", ttl="2s", options=supersede, expect=(75,))
    block_count(s, r, 2, "the first deploy to block")
    second = s.redlockrun(r, name="second", ttl="2s", options=supersede, expect=(75,))
    s.wait_exit(first, timeout=10)
    s.confirm("the first deploy superseded by the second", lambda: first.status == 75)
    block_count(s, r, 2, "the second deploy to block")

    # Stopped as it waits, the older one hears it when it goes on.
    second.stop_all()
    third = s.redlockrun(r, name="third", ttl="2s", options=supersede, expect=(137,))
    s.wait_for("the third deploy to queue", lambda: len(waiting_ids(r)) == 2)
    second.continue_all()
    s.wait_exit(second, timeout=10)

    # Killed as it waits, it is ended all the same: its record and place lapse.
    third.signal(signal.SIGKILL)
    s.wait_exit(third, timeout=10)
    fourth = s.redlockrun(r, name="fourth", ttl="2s", options=supersede)
    block_count(s, r, 2, "the fourth deploy to block")
    s.confirm("the killed deploy out of the line", lambda: len(waiting_ids(r)) == 2, timeout=5)

    s.fire("release")
    for contender in (holder, patient, fourth):
        s.wait_exit(contender, timeout=30)
    begun = [e["holder"] for e in s.read_events() if e["ev"] == "begin"]
    s.confirm("the waiter without --supersede ran before the newest deploy",
              lambda: begun.index(patient.id) < begun.index(fourth.id)
              if patient.id in begun and fourth.id in begun else False)
    s.expect_free(r)


@scenario("supersede-woken", runs=(1, 5), sections=(2, 2), timeout=90, promise="""
    A waiter with --supersede is stopped where it no longer blocks (its wait ran out) and a
    release wakes it for the free lock; before it can ask, a newer one with --supersede takes the
    lock, runs and lets it go. Promise: the older one, going on with a wake-up and a free lock,
    exits 75 without a section; never two holders; nothing stays locked.""")
def supersede_woken(s):
    r = s.redis()
    holder = s.redlockrun(r, name="holder", ttl="2s", until="release")
    s.wait_for("the holder's section", lambda: s.began(holder))
    older = s.redlockrun(r, name="older", ttl="2s", options=("--supersede",), expect=(75,))
    block_count(s, r, 1, "the older deploy to block")
    older.stop_all()
    # Its BLPOP runs out within the holder's renewal period (the TTL's third): it no longer blocks.
    block_count(s, r, 0, "the older deploy's wait to run out")
    s.fire("release")
    s.wait_exit(holder, timeout=10)
    s.confirm("the older deploy woken for the free lock",
              lambda: r.call("LLEN", f"{{job}}:redlockrun:wake:{waiting_ids(r)[0]}") == 1
              if waiting_ids(r) else False, timeout=5)
    newer = s.redlockrun(r, name="newer", ttl="2s", options=("--supersede",))
    s.wait_exit(newer, timeout=20)
    older.continue_all()
    s.wait_exit(older, timeout=20)
    s.expect_free(r)


@scenario("queue-order", runs=(1, 5), sections=(5, 5), timeout=120, promise="""
    Four waiters queue behind a holder, one after another. The second is stopped until its wait
    runs out, and goes on: its latest request is now newer than those of the two behind it, and
    it blocks again after them. --status --json lists the waiters; the holder lets go. Promise:
    they run in the order --status listed them, the order they came in (not the order of their
    latest requests); never two holders; nothing stays locked.""")
def queue_order(s):
    r = s.redis()
    holder = s.redlockrun(r, name="holder", ttl="2s", until="release")
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = []
    for number in range(4):
        waiters.append(s.redlockrun(r, name=f"w{number}", ttl="2s"))
        block_count(s, r, number + 1, f"waiter w{number} to block")
    waiters[1].stop_all()
    # Its BLPOP runs out within the holder's renewal period (the TTL's third).
    block_count(s, r, 3, "the stopped waiter's wait to run out")
    waiters[1].continue_all()
    block_count(s, r, 4, "the stopped waiter to block again")

    listed = subprocess.run([s.redlockrun_binary, "-u", r.url, "-k", s.key, "--status", "--json"],
                            capture_output=True, text=True, timeout=10, check=False)
    s.confirm("--status --json answered that the lock is held", lambda: listed.returncode == 75)
    pids = [str(waiter["pid"]) for waiter in json.loads(listed.stdout)["waiters"]]
    s.confirm("--status lists the waiters in the order they came",
              lambda: pids == [str(waiter.client_pid()) for waiter in waiters])

    s.fire("release")
    for contender in (holder, *waiters):
        s.wait_exit(contender, timeout=30)
    begun = [e["holder"] for e in s.read_events() if e["ev"] == "begin"]
    s.confirm("they ran in the order --status listed them",
              lambda: begun == [holder.id, *(waiter.id for waiter in waiters)])
    s.expect_free(r)


@scenario("supersede-restart", runs=(1, 5), sections=(2, 2), timeout=120, promise="""
    An older deploy with --supersede waits behind a holder and is stopped with SIGSTOP; a newer
    one supersedes it. redis-server, which keeps an append-only file (fsync always), is then
    killed with SIGKILL and restarted: it comes back with the lock, the queue and the waiters'
    records. The older deploy goes on. Promise: it hears it was superseded (75) and never has a
    section; the holder keeps its lock through the restart and runs to its end; the newer deploy
    runs after it; never two holders; nothing stays locked.""")
def supersede_restart(s):
    r = s.redis(options=("--appendonly", "yes", "--appendfsync", "always"))
    holder = s.redlockrun(r, name="holder", ttl="3s", until="release")
    s.wait_for("the holder's section", lambda: s.began(holder))
    older = s.redlockrun(r, name="older", ttl="3s", options=("--supersede",), expect=(75,))
    block_count(s, r, 1, "the older deploy to block")
    older.stop_all()
    newer = s.redlockrun(r, name="newer", ttl="3s", options=("--supersede", "-v"))
    # The older one's wake-up is served to its stopped connection: only the newer one blocks.
    block_count(s, r, 1, "the newer deploy to supersede the older one and block")
    s.confirm("the newer deploy named the newest in the waiters' records",
              lambda: r.call("HEXISTS", "{job}:redlockrun:waiters", "superseding:1") == 1)
    # Killed before the newer one has read its first answer, the server would leave it a first
    # request without an answer, which a run without -w does not ride out (69): the long run saw
    # that once under load. Its waiting message (-v) says it has the answer.
    s.wait_for("the newer deploy's answer", lambda: "in line" in newer.log())
    r.restart(options=("--appendonly", "yes", "--appendfsync", "always"))
    s.confirm("the lock and the newest deploy's name came back with the server",
              lambda: r.call("EXISTS", "job") == 1
              and r.call("HEXISTS", "{job}:redlockrun:waiters", "superseding:1") == 1)
    older.continue_all()
    s.wait_exit(older, timeout=30)
    s.fire("release")
    s.wait_exit(holder, timeout=30)
    s.wait_exit(newer, timeout=30)
    s.expect_free(r)
