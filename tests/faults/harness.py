"""The fault suite's framework: scenarios, the servers and contenders they start, and the teardown
that leaves nothing behind. README.md in this directory shows how a scenario is written."""
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass

import redis

import checker
import interactive_owner

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
CRITICAL = os.path.join(HERE, "critical.py")
CLASSIC = os.path.join(HERE, "..", "e2e", "classic_client.py")
RECORDER = os.path.join(HERE, "recorder.py")
INTERACTIVE_OWNER = os.path.join(HERE, "interactive_owner.py")
CLOCKSHIFT = os.path.join(HERE, "clockshift.c")


class ScenarioFailed(Exception):
    """Something the scenario itself waited for did not happen: the run fails with this message."""


@dataclass
class Spec:
    name: str
    promise: str
    function: object
    short_runs: int
    long_runs: int
    timeout: float
    short_sections: int
    long_sections: int

    def minimum(self, long_mode):
        """The critical sections each run must reach."""
        return self.long_sections if long_mode else self.short_sections


SCENARIOS = []


def scenario(name, promise, *, sections, runs=(1, 10), timeout=90):
    """Registers a scenario: sections is the minimum number of critical sections each run must
    reach (short mode, long mode), runs the number of runs (short mode, long mode); timeout bounds
    one run, in seconds."""
    short_sections, long_sections = sections
    if not 0 <= short_sections <= long_sections:
        raise ValueError(f"{name}: sections=(SHORT, LONG) is the minimum of critical sections a "
                         "run must reach in each mode, with 0 <= SHORT <= LONG")

    def register(function):
        SCENARIOS.append(Spec(name, " ".join(promise.split()), function, runs[0], runs[1], timeout,
                              short_sections, long_sections))
        return function
    return register


# How long a stopped command may take to end and its end to reach the recorder, on a loaded
# machine: the slack in every bound on an allowed overlap.
STOP_MARGIN = 1.0


def forgotten_lock(ttl, kill_after):
    """The longest (seconds) a holder whose lock Redis forgot may run on beside a newer holder:
    its next renewal, at most TTL/3 later, finds the lock gone; its command gets SIGTERM then, and
    SIGKILL KILL_AFTER later; plus STOP_MARGIN. TTL and KILL_AFTER in seconds, as passed to it."""
    return ttl / 3 + kill_after + STOP_MARGIN


@dataclass(frozen=True)
class UntilResumed:
    """may_overlap for a paused holder: its section may run on beside a newer one until WITHIN
    seconds after the scenario continues it (Contender.continue_all())."""
    within: float


def until_resumed(kill_after):
    """A paused holder notices the loss as soon as it runs again, and stops its command: SIGTERM,
    SIGKILL KILL_AFTER (seconds, as passed to it) later; plus STOP_MARGIN."""
    return UntilResumed(kill_after + STOP_MARGIN)


@dataclass(frozen=True)
class UntilBroken:
    """may_overlap for a holder whose claim a --break may end (Scenario.break_lock()): its section
    may run on beside a newer one until its next renewal, at most RENEW_EVERY seconds after the
    break, plus checker.BREAK_STOP_MARGIN; the checker counts it from the break."""
    renew_every: float


def until_broken(ttl):
    """A holder of TTL seconds (as passed to it) renews every TTL/3: a --break reaches it then."""
    return UntilBroken(ttl / 3)


@dataclass
class Break:
    """What one redlockrun --break did: its pid (which the broken holders' messages name), the
    lines it printed, the contenders those lines name as broken, with the fences they name, and
    when it ran (monotonic ns, the recorder's clock): from before it started to after it
    returned, the break having run on the server in between."""
    pid: int
    lines: list
    holders: list
    fences: dict
    started: int
    returned: int


def status_of(returncode):
    """An exit status as a shell shows it: 128+N for a process killed by signal N."""
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode


def session_members(session):
    """Every process whose session is SESSION: a contender and all it started, in any group."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            members.append(int(entry))
    return members


def all_stopped(pids):
    """Every one of PIDS that still runs is stopped (state T): a SIGSTOP has taken effect."""
    states = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            continue  # it has exited
    return bool(states) and all(state in "Tt" for state in states)


def leads_session(pid):
    """PID is a session leader, as a keeper is (it detaches with setsid)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[3]) == pid
    except (OSError, IndexError, ValueError):
        return False


def signal_session(session, sig):
    for pid in session_members(session):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# What redlockrun says when it finds its lock lost: at a renewal, a run's or a hold keeper's
# (run/lock_keeper.cpp); at a run's release, its command having ended first (run/lock_attempt.cpp);
# at a hold's --release (hold/hold.cpp, hold/keeperless_release.cpp).
LOSS_LINE = re.compile(rb"redlockrun: (lost the lock on |the lock on \S+ was lost|"
                       rb"the hold on \S+ was lost)")


class Process:
    """A process started in a session of its own, so that it and everything it starts can be
    signalled, stopped and killed together. Its output goes to LOG; with STAMPED, through a pipe
    that a thread copies there, noting when (monotonic ns, the recorder's clock) a line saying the
    lock was lost arrived: loss_reported."""

    def __init__(self, argv, log, env=None, stamped=False):
        self.argv = argv
        self.loss_reported = None
        self.copier = None
        with open(log, "ab") as out:
            target = subprocess.PIPE if stamped else out
            self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=target,
                                          stderr=subprocess.STDOUT if stamped else out,
                                          env=env, start_new_session=True)
        self.pid = self.popen.pid
        if stamped:
            self.copier = threading.Thread(target=self.copy, args=(self.popen.stdout, log),
                                           daemon=True)
            self.copier.start()

    def copy(self, pipe, log):
        """Copies the output to LOG line by line as it arrives, until every writer closed it (a
        hold's keeper may outlive the script)."""
        with pipe, open(log, "ab") as out:
            for line in pipe:
                if self.loss_reported is None and LOSS_LINE.search(line):
                    self.loss_reported = time.monotonic_ns()
                out.write(line)
                out.flush()

    def output_copied(self, timeout=2.0):
        """Waits, once, up to TIMEOUT seconds for the copier to reach the end of the output."""
        if self.copier is not None:
            self.copier.join(timeout)
            self.copier = None

    def members(self):
        return session_members(self.pid)

    def signal_all(self, sig):
        signal_session(self.pid, sig)

    def kill(self):
        self.signal_all(signal.SIGCONT)
        self.signal_all(signal.SIGKILL)
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass
        self.popen.wait()

    def running(self):
        return self.popen.poll() is None


class Redis:
    """A redis-server without persistence, on BIND:PORT and on a unix socket in the scenario's
    directory; the harness talks to it through the socket (which works from any namespace)."""

    def __init__(self, s, name, bind, port, prefix, options, clock=None):
        self.s, self.name, self.bind, self.prefix = s, name, bind, list(prefix)
        self.port = port or free_port()
        self.sock = os.path.join(s.dir, f"{name}.sock")
        self.options = list(options)
        self.process = None
        self.clock = clock  # a ServerClock that moves this server's wall clock, or None
        self.start()

    @property
    def url(self):
        return f"redis://{self.bind}:{self.port}"

    @property
    def address(self):
        return f"{self.bind}:{self.port}"

    def start(self, options=None):
        if options is not None:
            self.options = list(options)
        argv = self.prefix + [
            "redis-server", "--port", str(self.port), "--bind", self.bind, "--save", "",
            "--appendonly", "no", "--unixsocket", self.sock, "--unixsocketperm", "777",
            "--dir", self.s.dir, "--logfile", os.path.join(self.s.dir, f"{self.name}.log"),
            *self.options]
        env = None if self.clock is None else dict(os.environ, **self.clock.environment())
        self.process = Process(argv, os.path.join(self.s.dir, f"{self.name}.out"), env=env)
        self.s.processes.append(self.process)
        self.admin = redis.Redis(unix_socket_path=self.sock, socket_timeout=5)
        self.s.wait_for(f"{self.name} to answer", self.answers, timeout=10)
        self.run_id = self.admin.info("server")["run_id"]  # new at every start

    def answers(self):
        if not self.process.running():
            raise ScenarioFailed(f"{self.name} did not start: see {self.name}.log")
        try:
            return self.admin.ping()
        except redis.exceptions.RedisError:
            return False

    def restart(self, options=None):
        """SIGKILL, as a crash would, then a new server on the same port and socket: no data.
        Confirms that the old server is gone and a new one answers."""
        before = self.run_id
        old = self.process
        old.kill()
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        self.start(options)
        self.s.confirm(f"{self.name} restarted: the old server gone, a new one answering",
                       lambda: old.popen.returncode is not None and self.run_id != before)

    def pause(self):
        """SIGSTOP, confirmed: the server is stopped."""
        self.process.signal_all(signal.SIGSTOP)
        self.s.confirm(f"{self.name} stopped", lambda: all_stopped(self.process.members()),
                       timeout=5)

    def resume(self):
        self.process.signal_all(signal.SIGCONT)

    def call(self, *args):
        return self.admin.execute_command(*args)

    def blocked_clients(self):
        return self.admin.info("clients")["blocked_clients"]

    def server_time_ms(self):
        seconds, micros = self.call("TIME")
        return int(seconds) * 1000 + int(micros) // 1000


class ServerClock:
    """Moves the wall clock of the redis-servers started with it (Scenario.redis(clock=...)), as
    an operator's `date -s` or a misbehaving NTP would on the server's machine, and nothing
    else's: clockshift.c, preloaded into them, adds the offset this writes. Redis expires keys,
    and answers TIME, by that clock."""

    built = None  # the preloaded library, built once per process
    build_lock = threading.Lock()

    def __init__(self, s):
        self.s = s
        self.path = os.path.join(s.dir, "clock-offset")
        self.offset = 0.0
        with open(self.path, "wb") as out:
            out.write(struct.pack("=q", 0))

    @classmethod
    def library(cls):
        with cls.build_lock:
            if cls.built is None:
                folder = tempfile.mkdtemp(prefix="clockshift-")
                target = os.path.join(folder, "clockshift.so")
                built = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror",
                                        "-o", target, CLOCKSHIFT], capture_output=True, text=True)
                if built.returncode != 0:
                    raise ScenarioFailed(f"cannot build {CLOCKSHIFT}: {built.stderr.strip()}")
                cls.built = target
            return cls.built

    def environment(self):
        return {"LD_PRELOAD": self.library(), "CLOCKSHIFT_FILE": self.path}

    def jump(self, r, seconds):
        """Steps the clock of R (started with this clock) by SECONDS, forward or back, and
        confirms that its TIME moved by as much."""
        before = r.server_time_ms()
        local = time.monotonic()
        self.offset += seconds
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.pwrite(fd, struct.pack("=q", int(self.offset * 1e9)), 0)
        finally:
            os.close(fd)
        after = r.server_time_ms()
        moved = (after - before) / 1000 - (time.monotonic() - local)
        self.s.confirm(f"{r.name}'s clock jumped {seconds:+.0f} s (TIME moved {moved:+.1f} s "
                       "more than this machine's monotonic clock)",
                       lambda: abs(moved - seconds) < 1)


class Contender:
    """One redlockrun run, or one run of the classic client, whose command is a critical section."""

    def __init__(self, s, kind, ident, argv, expect, may_overlap, limit=1, shared=False):
        seconds = isinstance(may_overlap, (int, float)) and not isinstance(may_overlap, bool)
        if not (may_overlap is False or isinstance(may_overlap, (UntilResumed, UntilBroken))
                or seconds and may_overlap > 0):
            raise TypeError(f"{ident}: may_overlap is False, the longest in seconds its section "
                            "may run on beside a newer holder (forgotten_lock()), "
                            f"until_resumed() or until_broken(), not {may_overlap!r}")
        self.s, self.kind, self.id = s, kind, ident
        self.expect, self.may_overlap, self.limit = set(expect), may_overlap, limit
        self.shared = shared
        self.overlap_until = None  # monotonic ns: the end of an UntilResumed allowance
        self.broken_between = None  # monotonic ns: the --break that named it, from start to end
        self.process = Process(argv, os.path.join(s.dir, "contenders", f"{ident}.log"),
                               env=s.env, stamped=True)
        self.status = None

    def wait(self, timeout=None):
        try:
            self.process.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.status = status_of(self.process.popen.returncode)
        return self.status

    def finished(self):
        return self.process.popen.poll() is not None

    def client_pid(self):
        """redlockrun's own pid (or the classic client's), under any command prefix."""
        wanted = self.s.redlockrun_binary if self.kind == "redlockrun" else None
        for pid in sorted(self.process.members()):
            try:
                if wanted and os.path.realpath(f"/proc/{pid}/exe") == wanted:
                    return pid
                if not wanted and CLASSIC.split("/")[-1].encode() in open(
                        f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[1]:
                    return pid
            except (OSError, IndexError):
                continue
        raise ScenarioFailed(f"{self.id}: its client process is gone")

    def signal(self, sig):
        """Signals redlockrun (or the classic client) alone, not its command."""
        os.kill(self.client_pid(), sig)

    def signal_command(self, sig):
        """Signals the command (the critical section and anything it started) alone."""
        client = self.client_pid()
        for pid in self.process.members():
            if pid != client:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def stop_all(self):
        """Stops the contender and its command together, as a stalled machine would, and confirms
        that every process of it is stopped."""
        self.process.signal_all(signal.SIGSTOP)
        self.s.confirm(f"{self.id} stopped (every process of it)",
                       lambda: all_stopped(self.process.members()), timeout=5)

    def stop(self):
        """Stops redlockrun (or the classic client) alone, its command running on, and confirms
        that it is stopped."""
        pid = self.client_pid()
        os.kill(pid, signal.SIGSTOP)
        self.s.confirm(f"{self.id}'s client stopped", lambda: all_stopped([pid]), timeout=5)

    def continue_all(self):
        self.process.signal_all(signal.SIGCONT)
        if isinstance(self.may_overlap, UntilResumed):
            self.overlap_until = time.monotonic_ns() + int(self.may_overlap.within * 1e9)

    def log(self):
        if self.finished():
            self.process.output_copied()
        with open(os.path.join(self.s.dir, "contenders", f"{self.id}.log"), errors="replace") as f:
            return f.read()

    def record(self):
        """What the checker reads (checker.py says what each entry means). A hold's record is a
        run's: its section is fenced the same way."""
        self.process.output_copied()
        bound = self.may_overlap
        return {"id": self.id, "kind": self.kind, "status": self.status, "expect": self.expect,
                "may_overlap": bound is not False,
                "overlap_for": None if isinstance(bound, (bool, UntilResumed, UntilBroken))
                else bound,
                "overlap_until": self.overlap_until,
                "renew_every": bound.renew_every if isinstance(bound, UntilBroken) else None,
                "broken_between": self.broken_between,
                "loss_reported": self.process.loss_reported, "limit": self.limit,
                "shared": self.shared}


# The owner of a hold: a POSIX sh script that takes the lock with --hold, runs the critical section
# and ends the hold with --release, as a script locking a section of itself would. It exits with
# --release's status (0: kept to the end, 76: lost), or with --hold's if the lock was not taken.
# A loss stops the owner with SIGTERM (its whole group: the script leads one, as the contender's
# session leader); the trap lets the section die of it, the script then reports the loss through
# --release. A trap that runs a command, unlike an ignored signal, is reset in the section. The
# section is a child of the script (sh waits for it, as it does for any command but its last), so
# a signal to the script alone leaves it running.
HOLD_TRAP = """\
trap 'echo "hold script: SIGTERM, the hold was lost" >&2' TERM
"""
HOLD_SCRIPT = """\
{trap}assignments=$({hold}) || exit
eval "$assignments"
{critical}
{release}
"""


class Hold(Contender):
    """A hold (redlockrun --hold) whose owner is a script running the critical section
    (HOLD_SCRIPT). Its "client" is the keeper the hold leaves, found by the handle file whose
    owner is the script, or, before the lock is taken, the redlockrun --hold waiting for it."""

    def __init__(self, s, ident, argv, expect, may_overlap, shared=False, checks=None):
        super().__init__(s, "redlockrun", ident, argv, expect, may_overlap, shared=shared)
        self.keeper = None  # the keeper's pid, once seen
        self.checks = checks  # the file of the checks asked of its section (critical.py), if any
        self.checks_asked = 0

    def check(self, timeout=15):
        """Has the section run `redlockrun --check` once more, and returns its answer as the
        recorder logged it: the "check" event, with its "status", and "started" and "t", the
        recorder's times from before the call to after it (the moment Redis was asked lies
        between). The hold must have been started with checks=True, and its section be running."""
        if self.checks is None:
            raise TypeError(f"{self.id}: a hold's section runs --check only with checks=True")
        self.checks_asked += 1
        asked = self.checks_asked
        with open(self.checks + ".new", "w", encoding="utf-8") as out:
            out.write(str(asked))
        os.replace(self.checks + ".new", self.checks)  # whole: the section reads it at any time
        self.s.wait_for(f"{self.id}'s --check number {asked} to answer",
                        lambda: len(self.s.checks_of(self)) >= asked, timeout)
        return self.s.checks_of(self)[asked - 1]

    def owner_pid(self):
        """The hold's owner: the script."""
        return self.process.pid

    def keeper_pid(self):
        """The keeper's pid while it runs, else None."""
        if self.keeper is None:
            owner_pid = self.owner_pid()
            for pid, owner in self.s.handles():
                if owner_pid is not None and owner == owner_pid:
                    self.keeper = pid
        return self.keeper if self.keeper is not None and self.s.is_keeper(self.keeper) else None

    def client_pid(self):
        keeper = self.keeper_pid()
        if keeper is not None:
            return keeper
        if self.keeper is None:  # still taking the lock: the --hold in the script's session
            for pid in sorted(self.process.members()):
                try:
                    if os.path.realpath(f"/proc/{pid}/exe") == self.s.redlockrun_binary:
                        return pid
                except OSError:
                    continue
        raise ScenarioFailed(f"{self.id}: neither its keeper nor its redlockrun --hold runs")

    def signal_command(self, sig):
        """Signals the script and its section (the keeper is not in their session)."""
        self.process.signal_all(sig)

    def stop_all(self):
        """Stops the script, its section and the keeper together, as a stalled machine would."""
        keeper = self.keeper_pid()
        self.process.signal_all(signal.SIGSTOP)
        if keeper is not None:
            os.kill(keeper, signal.SIGSTOP)
        pids = self.process.members() + ([keeper] if keeper is not None else [])
        self.s.confirm(f"{self.id} stopped (its script, section and keeper)",
                       lambda: all_stopped(pids), timeout=5)

    def continue_all(self):
        keeper = self.keeper_pid()
        if keeper is not None:
            os.kill(keeper, signal.SIGCONT)
        super().continue_all()


class InteractiveHold(Hold):
    """A hold taken by hand in an interactive bash at a terminal (interactive_owner.py): the shell
    is the owner, a child of the contender's process in a session of its own, the terminal's."""

    def owner_pid(self):
        """The shell's pid (the one child of the contender's process), or None before it runs."""
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == self.process.pid:
                        return int(entry)
            except (OSError, IndexError, ValueError):
                continue
        return None

    def signal_command(self, sig):
        raise TypeError(f"{self.id}: the shell and its jobs are in the terminal's session, out of "
                        "the contender's")

    def stop_all(self):
        self.signal_command(signal.SIGSTOP)


class Scenario:
    """One run of a scenario: its directory, recorder, servers and contenders."""

    def __init__(self, spec, long_mode, run_index):
        self.spec, self.long, self.run_index = spec, long_mode, run_index
        self.dir = tempfile.mkdtemp(prefix=f"redlockrun-faults-{spec.name}.")
        os.chmod(self.dir, 0o755)
        os.mkdir(os.path.join(self.dir, "contenders"))
        os.mkdir(os.path.join(self.dir, "events"))
        self.redlockrun_binary = os.path.realpath(os.environ["REDLOCKRUN"])
        self.key = "job"
        self.host = socket.gethostname()
        self.processes = []
        self.contenders = []
        self.threads = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.counter = 0
        self.deadline = time.monotonic() + spec.timeout
        self.env = dict(os.environ)
        # CI (which CI systems set) would have waiters say that they wait: contenders run as
        # cron runs them.
        for name in ("REDLOCKRUN_URL", "REDIS_URL", "REDISCLI_AUTH", "CI"):
            self.env.pop(name, None)
        self.env["XDG_CONFIG_HOME"] = os.path.join(self.dir, "no-config")
        # The run's holds (their handles and sockets) live in a folder of its own, which only
        # its keepers name in their environment.
        self.runtime = os.path.join(self.dir, "runtime")
        os.mkdir(self.runtime, 0o700)
        self.env["XDG_RUNTIME_DIR"] = self.runtime
        self.recorder_sock = os.path.join(self.dir, "recorder.sock")
        self.recorder_log = os.path.join(self.dir, "records.jsonl")
        self.recorder = Process([PYTHON, RECORDER, self.recorder_sock, self.recorder_log],
                                os.path.join(self.dir, "recorder.out"))
        self.processes.append(self.recorder)
        self.wait_for("the recorder", lambda: os.path.exists(self.recorder_sock), timeout=10)
        self.events, self.events_read = [], 0
        self.confirmed = []  # the faults the run confirmed (confirm())

    # --- servers and contenders -----------------------------------------------------------------

    def redis(self, name="redis", bind="127.0.0.1", port=None, prefix=(), options=(),
              clock=None):
        """A redis-server; with CLOCK, a ServerClock that can move its wall clock."""
        return Redis(self, name, bind, port, prefix, options, clock)

    def next_id(self, name):
        with self.lock:
            self.counter += 1
            return f"{name}{self.counter}"

    def critical(self, kind, ident, host, steps, step_ms, until, limit=1, shared=False,
                 checks=None):
        """critical.py's command line; its MODE is LIMIT, or shared for a shared lock's section.
        CHECKS is the file through which the scenario asks a hold's section to run --check."""
        argv = [PYTHON, CRITICAL, self.recorder_sock, kind, ident, host or self.host, str(steps),
                str(step_ms), "shared" if shared else str(limit)]
        if until is not None:
            argv.append(self.event_path(until))
        if checks is not None:
            argv += ["--checks", checks, self.redlockrun_binary]
        return argv

    def redlockrun(self, server=None, url=None, name="r", key=None, ttl="3s", options=(),
                   prefix=(), wrap=(), host=None, steps=2, step_ms=20, until=None, expect=(0,),
                   may_overlap=False, limit=None, shared=False):
        """Starts `PREFIX redlockrun -u URL -k KEY -t TTL [--limit LIMIT | -s] OPTIONS -- WRAP
        critical section`. The section does STEPS increments of STEP_MS, or goes on until the event
        UNTIL is fired. LIMIT N makes it one of a semaphore's N holders (None: an exclusive lock);
        SHARED a shared lock's holder, whose section reads (critical.py). A section is one or the
        other: a scenario that wants redlockrun to refuse both passes -s in OPTIONS."""
        if shared and limit is not None:
            raise TypeError("a section is shared or one of a semaphore's, not both: pass -s in "
                            "options to have redlockrun refuse --shared with --limit")
        ident = self.next_id(name)
        url = url or server.url
        mode = ["--limit", str(limit)] if limit is not None else ["-s"] if shared else []
        argv = list(prefix) + [self.redlockrun_binary, "-u", url, "-k", key or self.key,
                               "-t", ttl, *mode, *options, "--", *wrap,
                               *self.critical("redlockrun", ident, host, steps, step_ms, until,
                                              limit or 1, shared)]
        return self.add(Contender(self, "redlockrun", ident, argv, expect, may_overlap,
                                  limit or 1, shared))

    def hold(self, server=None, url=None, name="h", key=None, ttl="3s", options=(), prefix=(),
             host=None, steps=2, step_ms=20, until=None, expect=(0,), may_overlap=False,
             shared=False, checks=False, trap_term=True):
        """Starts `PREFIX sh SCRIPT`, the owner of a hold (HOLD_SCRIPT): it evals `redlockrun -u URL
        -k KEY -t TTL [-s] --hold OPTIONS`, runs the critical section (STEPS, STEP_MS, UNTIL as for
        redlockrun()) and ends with `redlockrun --release`. OPTIONS go to --hold (--kill-after,
        --on-lost...), EXPECT and MAY_OVERLAP are those of the script's exit status and section;
        SHARED makes it a shared hold, whose section reads. CHECKS lets the scenario have the
        section run `redlockrun --check` (Hold.check()). TRAP_TERM False leaves out the trap:
        the script dies of a SIGTERM (143), as a script without one does."""
        ident = self.next_id(name)
        hold = [self.redlockrun_binary, "-u", url or server.url, "-k", key or self.key, "-t", ttl,
                *(["-s"] if shared else []), "--hold", *options]
        checks = self.event_path(f"{ident}.checks") if checks else None
        script = HOLD_SCRIPT.format(
            trap=HOLD_TRAP if trap_term else "",
            hold=shlex.join(hold),
            critical=shlex.join(self.critical("redlockrun", ident, host, steps, step_ms, until,
                                              shared=shared, checks=checks)),
            release=shlex.join([self.redlockrun_binary, "--release"]))
        path = os.path.join(self.dir, "contenders", f"{ident}.sh")
        with open(path, "w", encoding="utf-8") as out:
            out.write(script)
        return self.add(Hold(self, ident, list(prefix) + ["/bin/sh", path], expect, may_overlap,
                             shared, checks))

    def interactive_hold(self, server=None, url=None, name="h", key=None, ttl="3s", options=(),
                         host=None, steps=2, step_ms=20, until=None, expect=(0,),
                         may_overlap=False, reaction=1.0):
        """Starts an interactive bash at a terminal of its own (interactive_owner.py) and types
        into it, at its prompt, what a person holding a lock by hand would: `eval "$(redlockrun -u
        URL -k KEY -t TTL --hold OPTIONS)" || exit`, then the critical section as a foreground job,
        then `redlockrun --release; exit $?`. The contender exits with the shell's status (76: the
        shell survived a loss and --release reported it). The terminal's output is its log.
        REACTION is how long after a prompt its line is typed: a person's second, who reads the
        terminal first."""
        ident = self.next_id(name)
        hold = [self.redlockrun_binary, "-u", url or server.url, "-k", key or self.key, "-t", ttl,
                "--hold", *options]
        rcfile = os.path.join(self.dir, "contenders", f"{ident}.bashrc")
        with open(rcfile, "w", encoding="utf-8") as out:
            out.write(f"unset HISTFILE\nPS1={shlex.quote(interactive_owner.PROMPT.decode())}\n")
        lines = [f'eval "$({shlex.join(hold)})" || exit',
                 shlex.join(self.critical("redlockrun", ident, host, steps, step_ms, until)),
                 f"{shlex.quote(self.redlockrun_binary)} --release; exit $?"]
        return self.add(InteractiveHold(self, ident, [PYTHON, INTERACTIVE_OWNER, rcfile,
                                                     str(reaction), *lines],
                                        expect, may_overlap))

    def handles(self):
        """(keeper, owner) pids of the holds whose handle files are in this run's folder."""
        folder = os.path.join(self.runtime, "redlockrun")
        found = []
        for name in os.listdir(folder) if os.path.isdir(folder) else ():
            if not name.startswith("hold.") or "." in name[len("hold."):]:
                continue  # a socket, or a record being written
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as record:
                    fields = dict(line.partition("=")[::2] for line in record.read().splitlines())
                found.append((int(fields.get("keeper") or 0), int(fields.get("owner") or 0)))
            except (OSError, ValueError):
                continue
        return [(keeper, owner) for keeper, owner in found if keeper > 0]

    def is_keeper(self, pid):
        """PID is a keeper of this run's: redlockrun, with this run's folder of holds in its
        environment (a pid reused since by anything else is not)."""
        try:
            if os.path.realpath(f"/proc/{pid}/exe") != self.redlockrun_binary:
                return False
            with open(f"/proc/{pid}/environ", "rb") as environ:
                return f"XDG_RUNTIME_DIR={self.runtime}".encode() in environ.read().split(b"\0")
        except OSError:
            return False

    def keepers(self):
        """The keepers of this run's holds that still run: those the handle files name, and any
        other redlockrun with this run's folder in its environment (a keeper between its start
        and its record)."""
        pids = {keeper for keeper, _ in self.handles()}
        pids.update(int(entry) for entry in os.listdir("/proc") if entry.isdigit())
        contenders = {c.process.pid for c in self.contenders}  # a run leads its session too
        return sorted(pid for pid in pids if pid not in contenders and leads_session(pid)
                      and self.is_keeper(pid))

    def expect_keepers_gone(self, timeout=5):
        """Fails the run if a keeper still runs once every contender has exited: each hold ends
        with its owner, and a lost one when --release is told of the loss."""
        give_up = time.monotonic() + timeout  # past the run's own deadline too: this is after it
        while left := self.keepers():
            if time.monotonic() > give_up:
                owners = dict(self.handles())
                raise ScenarioFailed("keepers outlived their owners: " + ", ".join(
                    f"{pid} (owner {owners.get(pid, 'unknown')})" for pid in left))
            time.sleep(0.05)

    def classic(self, server=None, address=None, name="c", key=None, unit="ms", timeout=3,
                prefix=(), host=None, steps=2, step_ms=20, until=None, expect=(0,)):
        """Starts the classic-algorithm client (SETNX/GETSET, its own clock), which takes the lock,
        runs the critical section, and releases. It has no fence: it may never overlap anyone."""
        ident = self.next_id(name)
        address = address or server.address
        argv = list(prefix) + [PYTHON, CLASSIC, address, key or self.key, unit, str(timeout),
                               "run", *self.critical("classic", ident, host, steps, step_ms, until)]
        return self.add(Contender(self, "classic", ident, argv, expect, False))

    def add(self, contender):
        with self.lock:
            if self.stopping.is_set():
                contender.process.kill()
                raise ScenarioFailed("contender started after the scenario ended")
            self.contenders.append(contender)
            self.processes.append(contender.process)
        return contender

    def load(self, start, workers, sections, pause=0.0):
        """Runs WORKERS background loops, each starting SECTIONS contenders one after another with
        start() (e.g. lambda: s.redlockrun(r)), PAUSE seconds apart; join() waits for them,
        stop() has them start no more and waits for them."""
        stop = threading.Event()

        def loop():
            for _ in range(sections):
                if self.stopping.is_set() or stop.is_set():
                    return
                try:
                    start().wait()
                except ScenarioFailed:
                    return
                if pause:
                    time.sleep(random.uniform(0, pause))
        threads = [threading.Thread(target=loop, daemon=True) for _ in range(workers)]
        for thread in threads:
            thread.start()
        self.threads.extend(threads)
        return Load(self, threads, stop)

    def break_lock(self, server=None, url=None, key=None):
        """Runs `redlockrun -u URL -k KEY --break` (an operator ending every holder's claim) and
        returns its Break. Each contender its lines name (by pid: a run's redlockrun, a hold's
        script) must exit 76 from then on, and its allowance of until_broken() runs from the
        break: a newer section may begin once --break has started, and the broken one must end
        within the allowance after --break returned. Fails the run if --break fails or names a
        holder nobody started."""
        argv = [self.redlockrun_binary, "-u", url or server.url, "-k", key or self.key, "--break"]
        started = time.monotonic_ns()
        process = subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            out, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise ScenarioFailed("redlockrun --break did not return within 30 s")
        returned = time.monotonic_ns()
        if process.returncode != 0:
            raise ScenarioFailed(f"redlockrun --break exited {process.returncode}: {err.strip()}")
        lines = out.splitlines()
        with self.lock:
            by_pid = {c.process.pid: c for c in self.contenders}
        holders, fences = [], {}
        for line in lines:
            claim = re.search(r": broke the claim of \S+ pid (\d+), fence (\d+)", line)
            if claim is None:
                continue
            contender = by_pid.get(int(claim[1]))
            if contender is None:
                raise ScenarioFailed(f"--break broke a holder nobody started: {line}")
            contender.expect = {checker.LOST}
            contender.broken_between = (started, returned)
            holders.append(contender)
            fences[contender.id] = int(claim[2])
        return Break(process.pid, lines, holders, fences, started, returned)

    # --- events ---------------------------------------------------------------------------------

    def event_path(self, name):
        return os.path.join(self.dir, "events", name)

    def fire(self, name):
        """Fires an event: sections started with until=NAME end their work."""
        open(self.event_path(name), "w").close()

    def read_events(self):
        """The recorder's events so far (read incrementally)."""
        with open(self.recorder_log, encoding="utf-8") as log:
            log.seek(self.events_read)
            for line in log:
                if not line.endswith("\n"):
                    break
                self.events.append(json.loads(line))
                self.events_read += len(line.encode())
        return self.events

    def began(self, contender):
        return any(e["ev"] == "begin" and e["holder"] == contender.id for e in self.read_events())

    def writes_of(self, contender):
        """The recorder's write events of CONTENDER's section, each with "accepted"."""
        events = self.read_events()
        conns = {e["conn"] for e in events if e["ev"] == "begin" and e["holder"] == contender.id}
        return [e for e in events if e["ev"] == "write" and e["conn"] in conns]

    def checks_of(self, contender):
        """The recorder's check events of CONTENDER's section (a hold's, Hold.check()), in order."""
        events = self.read_events()
        conns = {e["conn"] for e in events if e["ev"] == "begin" and e["holder"] == contender.id}
        return [e for e in events if e["ev"] == "check" and e["conn"] in conns]

    def sections_begun(self):
        return sum(e["ev"] == "begin" for e in self.read_events())

    def wait_for(self, what, condition, timeout=30):
        """Polls CONDITION until it holds; fails the run after TIMEOUT seconds."""
        give_up = min(time.monotonic() + timeout, self.deadline)
        while not condition():
            if time.monotonic() > give_up:
                raise ScenarioFailed(f"timed out waiting for {what}")
            time.sleep(0.02)

    def wait_exit(self, contender, timeout=60):
        self.wait_for(f"{contender.id} to exit", contender.finished, timeout)
        return contender.wait()

    def expect_free(self, server, key=None):
        """Fails the run if KEY is locked in SERVER (for what must leave nothing behind)."""
        if server.call("EXISTS", key or self.key):
            raise ScenarioFailed(f"{key or self.key} is still locked")

    def sleep(self, seconds):
        time.sleep(seconds)

    def confirm(self, fault, condition, timeout=0):
        """Asserts that the scenario's FAULT happened (condition() is true, within TIMEOUT
        seconds): the run fails, saying so, if it cannot be confirmed. Every run must confirm at
        least one."""
        give_up = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= give_up:
                raise ScenarioFailed(f"the fault could not be confirmed: {fault}")
            time.sleep(0.02)
        self.confirmed.append(fault)

    def commandstats(self, server):
        """SERVER's INFO commandstats and errorstats: {"cmdstat_eval": {"calls": N, ...},
        "errorstat_NOSCRIPT": {"count": N}, ...}."""
        stats = server.admin.info("commandstats")
        for name, value in server.admin.info("errorstats").items():
            # redis-py leaves a lone "count=N" unparsed
            stats[name] = value if isinstance(value, dict) else {
                "count": int(str(value).partition("count=")[2] or 0)}
        return stats

    # --- the end --------------------------------------------------------------------------------

    def finish(self, timeout=60):
        """Waits for every contender (killing those still running after TIMEOUT: their status
        stays None, which the checker reports as hung), then stops everything."""
        give_up = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, give_up - time.monotonic()))
        self.stopping.set()
        for contender in list(self.contenders):
            if contender.wait(max(0.0, give_up - time.monotonic())) is None:
                contender.process.kill()
                contender.status = None

    def kill_keepers(self):
        """Kills every keeper of this run's holds: none may outlive the run (a keeper is in a
        session of its own, out of reach of its contender's teardown)."""
        for pid in self.keepers():
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def teardown(self, keep=False):
        with self.lock:  # no load thread adds a contender after this
            self.stopping.set()
            processes = list(self.processes)
        self.kill_keepers()
        for process in reversed(processes):
            process.kill()
        self.kill_keepers()  # one that a --hold forked while it was being killed
        for thread in self.threads:
            thread.join(5)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


class Load:
    def __init__(self, s, threads, stop):
        self.s, self.threads, self.stopped = s, threads, stop

    def stop(self, timeout=120):
        """Starts no more contenders, and waits for those started."""
        self.stopped.set()
        self.join(timeout)

    def join(self, timeout=120):
        give_up = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, give_up - time.monotonic()))
            if thread.is_alive():
                raise ScenarioFailed("the load did not finish in time")


def begin_of(s, contender):
    """The recorder's BEGIN event of CONTENDER's section."""
    return next(e for e in s.read_events() if e["ev"] == "begin" and e["holder"] == contender.id)


def first_begun(s, contenders):
    """The first of CONTENDERS whose section has begun, or None."""
    begun = [c for c in contenders if s.began(c)]
    return min(begun, key=lambda c: begin_of(s, c)["t"]) if begun else None


# How late a holder's last renewal may have come, on a loaded machine, after a third of its TTL: the
# slack in checking a stopped holder's lock against the server's clock (stopped_lock_expiry()).
RENEWAL_LATENESS = 1.0


def stopped_lock_expiry(s, r, ttl, whose):
    """The record ({"expiry_ms"}) of the lock of WHOSE, a holder whose renewals just stopped (it,
    or its keeper, is stopped or killed): the key's value, checked first against the server's TIME
    and the TTL it was given (seconds). Its last renewal ran before that TIME, and no more than a
    third of the TTL + RENEWAL_LATENESS before it, so the expiry lies within [TIME + 2 TTL/3 -
    RENEWAL_LATENESS, TIME + TTL]: a value outside (another unit, no TTL, a stale one) fails the
    run instead of becoming what the waiters are judged by. None if the key is gone."""
    now = r.server_time_ms()
    value = r.call("GET", s.key)
    if value is None:
        return None
    expiry = int(value)
    low = now + int((ttl * 2 / 3 - RENEWAL_LATENESS) * 1000)
    high = now + int(ttl * 1000) + 1
    if not low <= expiry <= high:
        raise ScenarioFailed(
            f"{whose}'s lock expires {expiry - now} ms after the server's TIME; with a TTL of "
            f"{ttl} s renewed every third of it, between {low - now} and {high - now} ms")
    return {"expiry_ms": expiry}


def expect_after_expiry(s, waiter, record, whose):
    """Fails the run if WAITER's section began before RECORD (WHOSE lock or semaphore slot, with
    its "expiry_ms") expired by the server's clock: a lock freed early. The server and the
    section read the same machine's wall clock. A missing record fails too: nothing was checked."""
    if record is None:
        raise ScenarioFailed(f"{whose}'s record was gone before its expiry: nothing to check "
                             f"{waiter.id if waiter else 'the waiter'}'s beginning against")
    if waiter is None:
        raise ScenarioFailed(f"no waiter began after {whose}'s expiry")
    began_ms = begin_of(s, waiter)["wall_ns"] / 1e6
    if began_ms < record["expiry_ms"]:
        raise ScenarioFailed(f"{waiter.id} began {record['expiry_ms'] - began_ms:.0f} ms before "
                             f"{whose}'s lock expired")


UNAVAILABLE = 69


def run_scenario(spec, long_mode, index, keep=False):
    """One run of SPEC: the scenario, its teardown, and the checker's verdict on its history, to
    which it adds what only the run can tell: the scenario failed, confirmed no fault, reached
    fewer critical sections than it must, or every contender found Redis unavailable. Returns
    (verdict, contenders); KEEP leaves a failed run's directory in place."""
    s = Scenario(spec, long_mode, index)
    failed = None
    try:
        spec.function(s)
        s.finish()
        s.expect_keepers_gone()
    except ScenarioFailed as error:
        failed = str(error)
    except KeyboardInterrupt:
        s.teardown()
        raise
    except Exception:  # a bug in the scenario: shown whole, and the run fails
        failed = traceback.format_exc()
    finally:
        if failed is not None:
            s.finish(timeout=0)
        s.teardown(keep=True)
    contenders = [c.record() for c in s.contenders]
    verdict = checker.check(s.read_events(), contenders)
    if failed is not None:  # first: what follows from it (hung contenders...) comes after
        verdict.problems.insert(0, f"the scenario failed: {failed}")
    elif not s.confirmed:
        verdict.problems.append("the scenario never confirmed that its fault happened")
    minimum = spec.minimum(long_mode)
    if verdict.sections < minimum:
        verdict.problems.append(f"{verdict.sections} critical sections, fewer than the {minimum} "
                                "this scenario must reach")
    if minimum and contenders and all(c["status"] == UNAVAILABLE for c in contenders):
        verdict.problems.append(f"every contender exited {UNAVAILABLE} (Redis unavailable): the "
                                "run tested nothing")
    if verdict.ok or not keep:
        shutil.rmtree(s.dir, ignore_errors=True)
    else:
        verdict.problems.append(f"kept in {s.dir}")
    return verdict, contenders
