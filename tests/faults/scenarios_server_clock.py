"""The server's wall clock jumps (an operator's `date -s`, a misbehaving NTP) under a holder. Redis
and Valkey expire keys, and answer TIME, by that clock: a jump forward ends every lock early, as a
Redis that forgot the lock would; a jump back keeps the lock longer, and must change nothing for a
holder that renews. The jumps move the server's clock alone (harness.ServerClock)."""

from harness import ScenarioFailed, ServerClock, forgotten_lock, scenario

# --kill-after of the holders that lose their lock to a jump: it bounds how long their command may
# run on. A hold's script needs room to run --release after the SIGTERM (scenarios_hold.py).
KILL_AFTER = {"run": 1, "hold": 2}
TTL = 2
JUMP = 60  # seconds: far more than a TTL, as a clock set by hand is off


def holder_and_waiters(s, r, kind, holder_expect, may_overlap):
    """A holder (a run, or a hold's script) whose section runs until "holder-may-end", with -v,
    then a run and a hold blocked behind it."""
    start = s.redlockrun if kind == "run" else s.hold
    holder = start(r, name="holder", ttl=f"{TTL}s", until="holder-may-end",
                   options=["--kill-after", f"{KILL_AFTER[kind]}s", "-v"], expect=holder_expect,
                   may_overlap=may_overlap)
    s.wait_for("the holder's section", lambda: s.began(holder))
    waiters = []
    for begin in (s.redlockrun, s.hold):
        waiters.append(begin(r, name="waiter", ttl=f"{TTL}s"))
        s.wait_for(f"{waiters[-1].id} to block", lambda: r.blocked_clients() == len(waiters))
    return holder, waiters


def said(s, contender, words, timeout=10):
    """Fails the run unless CONTENDER's output says WORDS within TIMEOUT seconds."""
    try:
        s.wait_for(f"{contender.id} to say {words!r}", lambda: words in contender.log(),
                   timeout=timeout)
    except ScenarioFailed:
        raise ScenarioFailed(f"{contender.id} never said {words!r}: "
                             f"{contender.log().strip()[-600:]!r}") from None


def more_load(s, r):
    """Long mode: runs and holds contending on the server whose clock jumped."""
    if s.long:
        loads = [s.load(lambda: s.redlockrun(r, ttl=f"{TTL}s"), workers=2, sections=20),
                 s.load(lambda: s.hold(r, ttl=f"{TTL}s"), workers=2, sections=10)]
        for load in loads:
            load.join(timeout=240)


def jump_forward(s, kind):
    clock = ServerClock(s)
    r = s.redis(clock=clock)
    holder, waiters = holder_and_waiters(s, r, kind, holder_expect=(76,),
                                         may_overlap=forgotten_lock(TTL, KILL_AFTER[kind]))
    clock.jump(r, JUMP)  # confirmed: the server's TIME moved on by as much
    s.wait_exit(holder, timeout=30)
    said(s, holder, "the server's clock jumped forward by about")
    s.fire("holder-may-end")
    for waiter in waiters:
        s.wait_exit(waiter, timeout=30)
    more_load(s, r)


def jump_back(s, kind):
    clock = ServerClock(s)
    r = s.redis(clock=clock)
    holder, waiters = holder_and_waiters(s, r, kind, holder_expect=(0,), may_overlap=False)
    clock.jump(r, -JUMP)
    said(s, holder, "the server's clock jumped back by about")  # at its next renewal, with -v
    s.fire("holder-may-end")
    for contender in [holder] + waiters:
        s.wait_exit(contender, timeout=30)
    more_load(s, r)


@scenario("server-clock-forward", runs=(1, 10), sections=(3, 63), promise="""
    While a run holds the lock (TTL 2 s, -v) and a run and a hold wait, the server's wall clock
    jumps 60 s forward: Redis expires the key at once, as if it forgot the lock. Promise: the
    waiters take the lock in turn and exit 0; the holder's next renewal finds the lock gone, says
    that the server's clock jumped forward, stops its command and exits 76. A waiter may begin
    before the holder notices: that overlap is allowed, bounded as for a forgotten lock, and the
    fence orders it.""")
def server_clock_forward(s):
    jump_forward(s, "run")


@scenario("server-clock-back", runs=(1, 10), sections=(3, 63), promise="""
    While a run holds the lock (TTL 2 s, -v) and a run and a hold wait, the server's wall clock
    jumps 60 s back. Promise: no effect on the lock: the holder's next renewal says that the
    clock jumped back and keeps it; then the holder, and the waiters in turn, run to the end and
    exit 0; no overlap.""")
def server_clock_back(s):
    jump_back(s, "run")


@scenario("hold-server-clock-forward", runs=(1, 5), sections=(3, 63), timeout=180, promise="""
    server-clock-forward with a hold's script as the holder. Promise: the keeper's next renewal
    finds the lock gone, says that the server's clock jumped forward, and stops the script, whose
    --release reports the loss: 76; the waiters take the lock in turn and exit 0; an overlap is
    allowed and bounded as for a forgotten lock, and the fence orders it.""")
def hold_server_clock_forward(s):
    jump_forward(s, "hold")


@scenario("hold-server-clock-back", runs=(1, 5), sections=(3, 63), timeout=180, promise="""
    server-clock-back with a hold's script as the holder. Promise: no effect on the lock: the
    keeper's next renewal says that the clock jumped back and keeps it; the script, and the
    waiters in turn, run to the end and exit 0; no overlap.""")
def hold_server_clock_back(s):
    jump_back(s, "hold")
