"""Faults of holds (redlockrun --hold): a lock held by a detached keeper for a script's section.
Each hold contender is a script that takes the lock with --hold, runs the critical section and ends
with --release (harness.HOLD_SCRIPT); the faults hit the script, its keeper, the server and the
network between the keeper and the server."""
import os
import signal
import time

from harness import CRITICAL, Hold, ScenarioFailed, begin_of, expect_after_expiry, first_begun, \
    forgotten_lock, scenario, stopped_lock_expiry, until_resumed

# --kill-after of the holds that may lose their lock: after the SIGTERM that ends its section, the
# script runs --release before the keeper's SIGKILL; two seconds leave room for that on a loaded
# machine (a SIGKILL would make the script exit 137 instead of reporting the loss).
KILL_AFTER = 2
HOLD_OPTIONS = ["--kill-after", f"{KILL_AFTER}s"]

# How long a hold whose keeper was killed runs on beside the next holder: nothing stops its
# section, so the scenario ends it once the newer holder and the stale section have each written
# (a few 20 ms steps, and the scenario's polling); seconds, from the newer section's beginning,
# with room for a loaded machine.
UNRENEWED_SECTION = 5.0

# How long a lost hold's section runs on beside the next holder in hold-check-after-loss: with
# --on-lost ignore nothing stops it, so the scenario ends it once its --check has answered (a call
# to the keeper, which asks Redis, and the scenario's polling of the recorder); seconds from the
# newer section's beginning, with room for a loaded machine.
CHECKED_SECTION = 5.0


def more_holds(s, r, sections=20):
    """Long mode: holds (and a run) contending on the server the fault hit, to catch what it left
    behind, and to drive the holds' share of the long run."""
    if s.long:
        loads = [s.load(lambda: s.hold(r, ttl="2s"), workers=3, sections=sections),
                 s.load(lambda: s.redlockrun(r, ttl="2s"), workers=1, sections=sections // 3)]
        for load in loads:
            load.join(timeout=240)


def hold_and_waiters(s, r, holder_expect=(0,), may_overlap=False, ttl="2s", steps=2):
    """A hold whose section runs until the event "holder-may-end", then two holds and a run
    blocked behind it (waiters, each with STEPS increments); returns (holder, waiters)."""
    holder = s.hold(r, name="holder", ttl=ttl, until="holder-may-end", options=HOLD_OPTIONS,
                    expect=holder_expect, may_overlap=may_overlap)
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = []
    for start in (s.hold, s.redlockrun, s.hold):
        waiters.append(start(r, name="waiter", ttl=ttl, steps=steps))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    return holder, waiters


def hold_sections(s):
    """How many sections of holds the recorder saw begin."""
    holds = {c.id for c in s.contenders if isinstance(c, Hold)}
    return sum(e["ev"] == "begin" and e["holder"] in holds for e in s.read_events())


@scenario("hold-contention", runs=(1, 5), sections=(27, 135), timeout=240, promise="""
    No fault: holds (scripts that take the lock with --hold, run their section and --release it),
    redlockrun runs and clients of the classic algorithm contend for one key. Promise: no overlap
    at all, no lost increment; every hold's --release reports it kept to the end (the script
    exits 0), and so does every run and client.""")
def hold_contention(s):
    r = s.redis()
    sections = 30 if s.long else 6
    loads = [
        s.load(lambda: s.hold(r, ttl="2s"), workers=3, sections=sections),
        s.load(lambda: s.redlockrun(r, ttl="2s"), workers=2, sections=sections // 2),
        s.load(lambda: s.classic(r), workers=1, sections=sections // 2),
    ]
    for load in loads:
        load.join(timeout=220)
    s.confirm(f"holds held the lock ({hold_sections(s)} sections) and contenders waited for it "
              "(BLPOP)", lambda: hold_sections(s) >= 3 * sections
              and s.commandstats(r).get("cmdstat_blpop", {}).get("calls", 0) > 0)


def kill_owner(s, hold):
    """SIGKILL to the hold's script and everything in its process group (its section, or the
    redlockrun --hold it waits for), as a crashed job's would be; confirmed: none of it runs."""
    os.killpg(hold.process.pid, signal.SIGKILL)
    s.confirm(f"{hold.id}'s script killed, its section with it",
              lambda: hold.finished() and not hold.process.members(), timeout=10)


@scenario("hold-owner-killed", runs=(1, 5), sections=(4, 70), timeout=180, promise="""
    The script that owns a hold (TTL 10 s) is killed with SIGKILL, its process group with it, while
    its section runs, and a script waiting in --hold for the same lock is killed likewise; two holds
    and a run wait. Promise: the keeper sees its owner exit and releases the lock at once: the
    next section begins within 3 s of the kill, far sooner than the TTL, and the keeper is gone;
    no overlap (the killed section ended with its group); the killed scripts end with 137, the
    others with 0.""")
def hold_owner_killed(s):
    r = s.redis()
    holder = s.hold(r, name="holder", ttl="10s", until="never", expect=(137,))
    s.wait_for("the holder's section", lambda: s.began(holder))
    blocked = s.hold(r, name="blocked", ttl="10s", expect=(137,))
    s.wait_for("the waiting hold to block", lambda: r.blocked_clients() == 1)
    waiters = []
    for start in (s.hold, s.redlockrun, s.hold):
        waiters.append(start(r, name="waiter", ttl="10s"))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters) + 1)
    keeper = holder.keeper_pid()
    if keeper is None:
        raise ScenarioFailed(f"{holder.id} holds the lock, but no keeper of its runs")
    kill_owner(s, blocked)
    killed_ns = time.time_ns()
    kill_owner(s, holder)
    s.wait_for("the next section (the keeper releases the lock when its owner exits)",
               lambda: first_begun(s, waiters) is not None, timeout=20)
    after = (begin_of(s, first_begun(s, waiters))["wall_ns"] - killed_ns) / 1e9
    if after > 3:
        raise ScenarioFailed(f"the next section began {after:.1f} s after the owner was killed: "
                             "the keeper did not release the lock when its owner exited")
    s.wait_for(f"the keeper ({keeper}) to end with its owner", lambda: not s.is_keeper(keeper),
               timeout=5)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    s.expect_free(r)
    more_holds(s, r)


def section_process(s, hold):
    """The pid of HOLD's critical section, confirmed to be a child process of its script (sh
    waits for it): a signal to the script alone does not reach it."""
    def child():
        for pid in hold.process.members():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    argv = cmdline.read().split(b"\0")
                with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if CRITICAL.encode() in argv and parent == hold.process.pid:
                return pid
        return None
    s.confirm(f"{hold.id}'s section runs as a child process of its script",
              lambda: child() is not None, timeout=5)
    return child()


def section_end(s, contender):
    """The recorder's end event of CONTENDER's section, or None while it runs."""
    events = s.read_events()
    conns = {e["conn"] for e in events if e["ev"] == "begin" and e["holder"] == contender.id}
    return next((e for e in events if e["ev"] == "end" and e["conn"] in conns), None)


@scenario("hold-owner-killed-section-runs", runs=(2, 6), sections=(4, 70), timeout=180,
          promise="""
    Only the script that owns a hold (TTL 10 s) is killed, not its process group: with SIGKILL in
    even runs, with SIGTERM in odd ones (a script without a trap, which dies of it), while its
    section, a child process of the script, runs on; two holds and a run wait. Promise: the keeper
    sees its owner exit and stops what it left running (SIGTERM, SIGKILL after --kill-after), and
    lets the lock go only once none of it is left: the next section begins after the killed
    script's section ended (no overlap at all), within 3 s of the kill, and the keeper is gone;
    the killed script ends with 137 (143), the others with 0.""")
def hold_owner_killed_section_runs(s):
    r = s.redis()
    sig = signal.SIGKILL if s.run_index % 2 == 0 else signal.SIGTERM
    holder = s.hold(r, name="holder", ttl="10s", until="holder-may-end", options=HOLD_OPTIONS,
                    trap_term=sig == signal.SIGKILL, expect=(128 + sig,))
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = []
    for start in (s.hold, s.redlockrun, s.hold):
        waiters.append(start(r, name="waiter", ttl="10s"))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    section = section_process(s, holder)
    keeper = holder.keeper_pid()
    if keeper is None:
        raise ScenarioFailed(f"{holder.id} holds the lock, but no keeper of its runs")
    killed = time.monotonic_ns()  # the recorder's clock
    killed_ns = time.time_ns()  # the sections' wall clock
    os.kill(holder.process.pid, sig)
    s.wait_exit(holder, timeout=10)
    s.confirm(f"{holder.id}'s script killed alone with {sig.name} ({holder.status}) while its "
              f"section (pid {section}) ran on",
              lambda: holder.status == 128 + sig and
              (section_end(s, holder) is None or section_end(s, holder)["t"] > killed))
    s.wait_for("the next section (the keeper releases the lock once its owner's section ended)",
               lambda: first_begun(s, waiters) is not None, timeout=20)
    after = (begin_of(s, first_begun(s, waiters))["wall_ns"] - killed_ns) / 1e9
    # A section the keeper left running ends now, so that the checker sees the overlap.
    s.fire("holder-may-end")
    if after > 3:
        raise ScenarioFailed(f"the next section began {after:.1f} s after the owner was killed: "
                             "the keeper did not stop its section and release at once")
    s.wait_for(f"the keeper ({keeper}) to end with its owner", lambda: not s.is_keeper(keeper),
               timeout=10)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    s.expect_free(r)
    more_holds(s, r)


@scenario("hold-keeper-killed", runs=(1, 5), sections=(4, 70), timeout=180, promise="""
    A hold's keeper is killed with SIGKILL while its script's section runs; two holds and a run
    wait. Nothing stops the section: it runs on, unrenewed, and the lock lapses after its TTL.
    Promise: the next holder begins no earlier than the lapsed lock's expiry; the overlap with the
    unrenewed section is allowed, but the fence orders it: the recorder refuses the stale section's
    writes after the newer holder's first; the script's --release then reports the loss (76);
    the waiters exit 0.""")
def hold_keeper_killed(s):
    r = s.redis()
    holder, waiters = hold_and_waiters(s, r, holder_expect=(76,), may_overlap=UNRENEWED_SECTION,
                                       steps=3)
    keeper = holder.keeper_pid()
    holder.signal(signal.SIGKILL)  # its "client" is the keeper
    s.confirm(f"{holder.id}'s keeper killed, its script running on",
              lambda: not s.is_keeper(keeper) and not holder.finished(), timeout=5)
    stale_runs_on(s, r, holder, waiters)
    s.fire("holder-may-end")
    s.wait_exit(holder, timeout=20)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_holds(s, r)


def stale_runs_on(s, r, holder, waiters, stale_runs_again=None):
    """With HOLDER's lock no longer renewed: a waiter takes it no earlier than its expiry and
    writes, and then the stale section (continued by stale_runs_again(), if it was stopped too)
    writes once more, which the recorder must refuse."""
    s.sleep(0.2)  # a renewal sent just before the fault has run
    record = stopped_lock_expiry(s, r, 2, holder.id)
    s.wait_for("a waiter's first write",
               lambda: any(e["accepted"] for w in waiters for e in s.writes_of(w)), timeout=15)
    expect_after_expiry(s, first_begun(s, waiters), record, holder.id)
    stale_writes = len(s.writes_of(holder))
    if stale_runs_again:
        stale_runs_again()
    s.wait_for("the stale section's write", lambda: len(s.writes_of(holder)) > stale_writes)


@scenario("hold-keeper-paused", runs=(1, 5), sections=(4, 70), timeout=180, promise="""
    A hold's keeper is stopped with SIGSTOP past the TTL while its script's section runs on,
    unrenewed; two holds and a run wait; a waiter takes the expired lock and writes, and the stale
    section writes once more; then the keeper is continued. Promise: the overlap is allowed, but
    the fence orders it (the stale write is refused); once continued, the keeper finds the lock
    lost and stops its owner with SIGTERM (its group: the section ends); the script, which traps
    SIGTERM, reports the loss through --release and exits 76, within --kill-after of the
    continue; the waiters exit 0.""")
def hold_keeper_paused(s):
    r = s.redis()
    holder, waiters = hold_and_waiters(s, r, holder_expect=(76,),
                                       may_overlap=until_resumed(KILL_AFTER), steps=3)
    holder.stop()  # the keeper, confirmed stopped
    stale_runs_on(s, r, holder, waiters)
    holder.continue_all()
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_holds(s, r)


@scenario("hold-stalled", runs=(1, 5), sections=(4, 70), timeout=180, promise="""
    A hold's script, its section and its keeper are stopped together with SIGSTOP past the TTL, as
    on a stalled machine; two holds and a run wait; a waiter takes the expired lock and writes.
    Of the orders in which they run again, the one that tests the fence: the script and its
    section first (the section writes once more), then the keeper. Promise: the overlap is
    allowed, but the fence orders it (the stale write is refused); the keeper finds the lock lost
    and stops its owner's group; the script reports the loss through --release and exits 76,
    within --kill-after of the continue; the waiters exit 0.""")
def hold_stalled(s):
    r = s.redis()
    holder, waiters = hold_and_waiters(s, r, holder_expect=(76,),
                                       may_overlap=until_resumed(KILL_AFTER), steps=3)
    holder.stop_all()  # confirmed: the script, its section and the keeper stopped
    stale_runs_on(s, r, holder, waiters,
                  stale_runs_again=lambda: holder.signal_command(signal.SIGCONT))
    holder.continue_all()
    s.wait_exit(holder, timeout=20)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_holds(s, r)


@scenario("hold-redis-restart", runs=(1, 5), sections=(4, 70), timeout=180, promise="""
    While a hold's section runs and two holds and a run wait, redis-server is killed with SIGKILL
    and restarted without persistence: the lock is forgotten. Promise: the waiting holds and run
    go on waiting through the outage and then each runs, exit 0; the keeper's next renewal finds
    the lock gone and stops its owner (SIGTERM to its group), whose --release reports the loss:
    76. A waiter may begin before the keeper notices: that overlap is allowed, and the fence
    orders it.""")
def hold_redis_restart(s):
    r = s.redis()
    holder, waiters = hold_and_waiters(s, r, holder_expect=(76,),
                                       may_overlap=forgotten_lock(2, KILL_AFTER))
    r.restart()  # confirmed: a new server
    s.wait_exit(holder, timeout=30)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_holds(s, r)


@scenario("hold-redis-paused", runs=(2, 6), sections=(4, 70), timeout=180, promise="""
    redis-server is stopped with SIGSTOP (even runs), or its clients paused with CLIENT PAUSE WRITE
    (odd runs), for longer than the TTL while a hold's section runs and two holds and a run wait.
    Promise, as for a run: the keeper's renewals go unanswered, its deadline, which falls before
    the key's expiry on the server, passes, and it stops its owner's section before any waiter can
    begin: no overlap at all; the script's --release reports the loss (76). After the pause the
    waiters run, exit 0.""")
def hold_redis_paused(s):
    r = s.redis()
    holder, waiters = hold_and_waiters(s, r, holder_expect=(76,))
    if s.run_index % 2 == 0:
        r.pause()  # confirmed: stopped
        s.wait_for("the holder's section to end", lambda: section_ended(s, holder), timeout=20)
        s.sleep(0.5)  # past the key's expiry on the server's clock
        r.resume()
    else:
        from scenarios_redis import write_blocks  # here: importing it registers its scenarios
        r.call("CLIENT", "PAUSE", 3000, "WRITE")
        s.confirm("CLIENT PAUSE WRITE: a write from another client blocks",
                  lambda: write_blocks(r))
    s.wait_exit(holder, timeout=30)
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=40)
    more_holds(s, r)


@scenario("hold-check-after-loss", runs=(2, 10), sections=(2, 68), timeout=120, promise="""
    A hold (TTL 60 s, so that its keeper renews only every 20 s, and --on-lost ignore, so that its
    section runs on after a loss) has its section run --check while it holds the lock; then its
    lock is broken with redlockrun --break (even runs) or its key deleted with DEL (odd runs), long
    before the keeper's next renewal; a waiting hold takes the lock, its section begins and writes;
    then the first hold's section runs --check again. Promise: --check asks Redis when it is run,
    not the keeper's last renewal: the first answers 0, the second 76, and no --check answers 0
    while a newer holder's section runs (the checker fails such an answer). The lost section runs
    on beside the newer one until the scenario ends it after the second check: that overlap is
    allowed, and fenced (the recorder refuses its writes after the newer holder's first). The
    lost hold's --release reports the loss (76); the waiter exits 0.""")
def hold_check_after_loss(s):
    r = s.redis()
    holder = s.hold(r, name="holder", ttl="60s", until="holder-may-end", checks=True,
                    options=["--on-lost", "ignore"], expect=(76,), may_overlap=CHECKED_SECTION)
    s.wait_for("the holder's section", lambda: s.began(holder))
    held = holder.check()
    waiter = s.hold(r, name="waiter", ttl="2s", until="waiter-may-end")
    s.wait_for("the waiter to block", lambda: r.blocked_clients() == 1)
    if s.run_index % 2 == 0:
        from scenarios_break import confirm_broken  # as write_blocks
        confirm_broken(s, r, s.break_lock(r), [holder])
    else:
        deleted = r.call("DEL", s.key)
        s.confirm(f"DEL deleted {holder.id}'s lock", lambda: deleted == 1)
    s.wait_for("the waiter's first write",
               lambda: any(e["accepted"] for e in s.writes_of(waiter)), timeout=20)
    lost = holder.check()
    s.fire("holder-may-end")
    s.wait_exit(holder, timeout=30)
    s.fire("waiter-may-end")
    s.wait_exit(waiter, timeout=30)
    if (held["status"], lost["status"]) != (0, 76):
        raise ScenarioFailed(f"--check answered {held['status']} while {holder.id} held the lock "
                             f"and {lost['status']} once {waiter.id} held it: expected 0, then 76")
    more_holds(s, r)


def terminal_of(pid):
    """The controlling terminal of PID (its tty_nr in /proc), 0 for none."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[4])
    except (OSError, IndexError, ValueError):
        return 0


@scenario("hold-interactive-owner-lost", runs=(1, 5), sections=(3, 69), timeout=120, promise="""
    A person holds a lock by hand: an interactive bash at a terminal of its own (a pseudo-terminal)
    is typed `eval "$(redlockrun --hold)"`, then the critical section as a foreground job; a hold
    and a run wait. The server's clients are paused with CLIENT PAUSE WRITE for 4 s, past the TTL
    (2 s): the keeper's renewals go unanswered and its deadline passes. Promise: the keeper stops
    the shell's foreground job (SIGTERM to its process group), says so on the terminal, and spares
    the shell, which ignores SIGTERM as interactive shells do: the job's section ends before any
    waiter's section begins (no overlap at all), and the shell runs the next line typed,
    `redlockrun --release`, which reports the loss, and exits with its status (76); the waiters
    exit 0.""")
def hold_interactive_owner_lost(s):
    from scenarios_redis import write_blocks  # as in hold_redis_paused
    r = s.redis()
    # --kill-after well past the pause: what stops the job is the SIGTERM, not a SIGKILL after it.
    holder = s.interactive_hold(r, name="holder", ttl="2s", until="holder-may-end",
                                options=["--kill-after", "6s"], expect=(76,))
    s.wait_for("the holder's section", lambda: s.began(holder))
    shell = holder.owner_pid()
    s.confirm(f"the hold's owner is the interactive shell (pid {shell}), at a terminal",
              lambda: shell in {owner for _, owner in s.handles()} and terminal_of(shell) != 0)
    waiters = []
    for start in (s.hold, s.redlockrun):
        waiters.append(start(r, name="waiter", ttl="2s"))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    r.call("CLIENT", "PAUSE", 4000, "WRITE")
    s.confirm("CLIENT PAUSE WRITE: a write from another client blocks", lambda: write_blocks(r))
    s.wait_for("a waiter's section", lambda: first_begun(s, waiters) is not None, timeout=20)
    s.fire("holder-may-end")  # a job left running ends now, so that the checker sees the overlap
    s.wait_exit(holder, timeout=30)
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    told = "stopping the foreground job of the shell that holds the lock"
    if told not in holder.log():
        raise ScenarioFailed(f"the terminal of {holder.id} does not show the keeper's {told!r}: "
                             f"{holder.log().strip()[-400:]!r}")
    more_holds(s, r)


def section_ended(s, contender):
    """CONTENDER's section has ended (the recorder saw its END, or its connection close)."""
    events = s.read_events()
    conns = {e["conn"] for e in events if e["ev"] == "begin" and e["holder"] == contender.id}
    return any(e["ev"] == "end" and e["conn"] in conns for e in events)


@scenario("hold-partitioned", runs=(1, 5), sections=(3, 3), timeout=120, promise="""
    A hold's script and keeper run in one network namespace, cut off from Redis in another
    (nftables drops every packet both ways) while its section runs; a hold and a run beside Redis
    wait. Promise: the keeper's renewals fail, its deadline passes before the server lets the lock
    expire, and it stops its owner's section then: the section ends, on the recorder's clock,
    before any waiter's begins (no overlap at all); the script's --release reports the loss (76);
    the waiters take the lock in turn and exit 0. Needs root.""")
def hold_partitioned(s):
    from scenarios_network import confirm_dropped, make_lab, redis_in  # as write_blocks
    lab = make_lab(s)
    r = redis_in(s, lab)
    holder = s.hold(r, name="holder", ttl="3s", prefix=lab.prefix_client, until="end",
                    options=HOLD_OPTIONS, expect=(76,))
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = []
    for start in (s.hold, s.redlockrun):
        waiters.append(start(r, name="waiter", ttl="3s", prefix=lab.prefix_server))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    lab.partition()
    s.wait_for("the holder's section to end", lambda: section_ended(s, holder), timeout=30)
    s.wait_for("a waiter's section", lambda: first_begun(s, waiters) is not None, timeout=30)
    s.wait_exit(holder, timeout=40)
    lab.heal()
    confirm_dropped(s, lab)
    s.fire("end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
