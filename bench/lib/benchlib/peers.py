"""The tools compared, each run as `tool KEY COMMAND...` (bench/peers/ has them as scripts).

Compiled tools (redlockrun, flock, etcdctl) are started directly, with the same command line their
wrapper in bench/peers/ execs: a shell in front would add the same ~1 ms to each and hide the
differences. The two hand-written Redis clients are scripts, so their wrappers are the tools.

Two more rows lock a section of a shell script rather than wrap a command, and so are scripts too:
redlockrun --hold ... --release, and the flock(1) idiom it stands beside (flock FD ... flock -u FD).
They run in figures 1 to 3 only, beside the plain run and flock(1) (section_tools()). In figure 3
each also contends with its plain tool on one key (mixes()): the handoff from a script's release to
a waiting run. A third section runs only there, in a mix of its own: a hold ended by the release
floor (bench/helpers/release_floor.c) instead of `redlockrun --release`, the yardstick of what the
release itself costs.
"""
import dataclasses
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PEERS_DIR = Path(__file__).resolve().parent.parent.parent / "peers"


@dataclass
class Tool:
    name: str  # as the report shows it
    summary: str  # one line for the report
    server: str  # "redis", "etcd", "local", or OTHER_SERVER (redlockrun against another Redis)
    polls: bool  # waits by polling rather than by being woken
    command: list  # the part of the command line before KEY (and its options)
    key_then_command: callable = None  # KEY, COMMAND -> the rest of the command line
    missing: str = ""  # why the tool cannot run here; "" if it can
    notes: list = field(default_factory=list)
    limit: int = 1  # holders the lock lets in at once: 1, or N for redlockrun --limit N
    shared: bool = False  # takes the lock shared (redlockrun -s), beside exclusive holders
    mix_only: bool = False  # a section that runs only in figure 3's mixed rows (HOLD_FLOOR)

    @property
    def available(self) -> bool:
        return not self.missing

    def argv(self, key: str, command: list) -> list:
        return [*self.command, *self.key_then_command(key, command)]


def with_limit(tool: Tool, limit: int) -> Tool:
    """redlockrun as a counting semaphore of `limit` holders, in a row of its own."""
    return dataclasses.replace(tool, name=f"{tool.name} --limit {limit}",
                               command=[*tool.command, "--limit", str(limit)], limit=limit)


def with_shared(tool: Tool) -> Tool:
    """redlockrun taking the lock shared, as flock(1)'s -s, in a row of its own."""
    return dataclasses.replace(tool, name=f"{tool.name} -s", command=[*tool.command, "-s"],
                               shared=True)


# Tool.server of redlockrun run against a server other than the bench's own Redis (on_server()):
# nothing that watches the bench's Redis (MONITOR, CLIENT LIST, INFO) may be used to measure it.
OTHER_SERVER = "another server"


def on_server(tool: Tool, name: str, url: str, summary: str) -> Tool:
    """redlockrun with `-u URL`, in a row of its own: against another server than the bench's."""
    return dataclasses.replace(tool, name=name, summary=summary, server=OTHER_SERVER,
                               command=[*tool.command, "-u", url])


# The rows of section_tools(): their names in the report, and the tool each one is a way of using.
HOLD = "redlockrun --hold + --release"
FLOCK_SECTION = "flock(1) + flock -u"
SECTION_OF = {HOLD: "redlockrun", FLOCK_SECTION: "flock(1)"}
# The section that runs in its mixed row only: a hold ended by the release floor.
HOLD_FLOOR = "redlockrun --hold + release floor"


def section_tools(tools: list) -> list:
    """A section of a script locked by redlockrun --hold and --release, and by flock(1)'s idiom;
    each can run where the tool it uses can (`tools`: make_tools()'s)."""
    sections = [
        Tool(HOLD, "eval \"$(redlockrun -k KEY --hold)\"; COMMAND; redlockrun --release (sh)",
             "redis", False, ["sh", str(PEERS_DIR / "redlockrun-hold")],
             lambda key, command: [key, *command]),
        Tool(FLOCK_SECTION, "exec 9>FILE; flock 9; COMMAND; flock -u 9 (sh)", "local", False,
             ["sh", str(PEERS_DIR / "flock-section")], lambda key, command: [key, *command]),
        Tool(HOLD_FLOOR, "eval \"$(redlockrun -k KEY --hold)\"; COMMAND; release-floor (sh)",
             "redis", False, ["sh", str(PEERS_DIR / "release-floor-hold")],
             lambda key, command: [key, *command], mix_only=True),
    ]
    missing = {tool.name: tool.missing for tool in tools}
    for section in sections:
        section.missing = missing[SECTION_OF.get(section.name, "redlockrun")]
    return sections


# The mixed rows of figure 3: contenders of two kinds on one key, half releasing a section of a
# script and half waiting to run a command, and the handoffs from the first kind to the second.
HOLD_TO_RUN = "redlockrun --release → waiting run"
FLOOR_TO_RUN = "release floor → waiting run"
SECTION_TO_FLOCK = "flock -u → waiting flock(1)"
# Each mixed row: its releasing section, and the plain tool that waits (on the same lock: flock(1)
# and peers/flock-section name their lock file alike).
MIXED = {HOLD_TO_RUN: (HOLD, "redlockrun"), FLOOR_TO_RUN: (HOLD_FLOOR, "redlockrun"),
         SECTION_TO_FLOCK: (FLOCK_SECTION, "flock(1)")}


@dataclass
class Mix:
    """Contenders on one key that are not all alike: contender C runs `releasing` when C is odd
    and `waiting` when C is even (so, of 8, 4 of each), taking turns as the lock decides. Its
    handoffs that count are those from a `releasing` holder to a `waiting` one: for HOLD_TO_RUN,
    a script's `redlockrun --release` handing the lock to a plain run that waits for it. Of an odd
    number (a smoke run's 3), the one more is a waiting one: a loop has no counted handoff only if
    every waiting holder came before every releasing one, which the more waiting holders there
    are the less likely it is (and a run starts faster than a hold)."""
    name: str
    releasing: Tool
    waiting: Tool

    def tool_of(self, contender: int) -> Tool:
        return self.releasing if contender % 2 else self.waiting


def mixes(tools: list, sections: list) -> list:
    """The mixed rows whose two tools can both run here (`tools`: make_tools()'s, `sections`:
    section_tools()'s)."""
    by_name = {tool.name: tool for tool in [*tools, *sections] if tool.available}
    found = []
    for name, (releasing, waiting) in MIXED.items():
        if releasing in by_name and waiting in by_name:
            found.append(Mix(name, by_name[releasing], by_name[waiting]))
    return found


def _python_has_redis() -> bool:
    # Debian's python3-redis belongs to /usr/bin/python3, whatever python3 comes first on PATH.
    result = subprocess.run(["/usr/bin/python3", "-c", "import redis"], capture_output=True)
    return result.returncode == 0


def make_tools(redlockrun: Path, flock_dir: Path) -> list:
    """Every tool, the first being redlockrun and the second the reference, flock(1)."""
    tools = [
        Tool("redlockrun", "this project: Lua scripts, waiters block on a wake-up list", "redis",
             False, [str(redlockrun)], lambda key, command: ["-k", key, "--", *command]),
        Tool("flock(1)", "util-linux flock(1) on a local file: the kernel's lock, no network",
             "local", False, ["flock"],
             lambda key, command: [str(flock_dir / f"{key}.lock"), *command]),
        Tool("etcdctl lock", "etcd's own lock (lease + revision order, waiters watch)", "etcd",
             False, ["etcdctl", "lock"], lambda key, command: [key, "--", *command]),
        Tool("redis-py Lock", "redis-py's Lock: SET NX PX, polling every 0.1 s (its default)",
             "redis", True, ["/usr/bin/python3", str(PEERS_DIR / "redispy-lock")],
             lambda key, command: [key, *command]),
        Tool("SETNX shell", "textbook SETNX/GET/GETSET loop in bash + redis-cli, polling 0.1 s",
             "redis", True, ["bash", str(PEERS_DIR / "setnx-lock")],
             lambda key, command: [key, *command]),
    ]
    requirements = {
        "redlockrun": ([str(redlockrun)], "the redlockrun binary"),
        "flock(1)": (["flock"], "flock (util-linux)"),
        "etcdctl lock": (["etcd", "etcdctl"], "etcd-server and etcd-client"),
        "redis-py Lock": (["/usr/bin/python3", "redis-cli"], "python3-redis"),
        "SETNX shell": (["bash", "redis-cli"], "redis-tools"),
    }
    for tool in tools:
        programs, package = requirements[tool.name]
        if not all(shutil.which(program) for program in programs):
            tool.missing = f"{package} not installed"
        elif tool.name == "redis-py Lock" and not _python_has_redis():
            tool.missing = "python3-redis not installed"
    return tools


def tool_environment(redis_url: str, etcd_endpoint: str, redlockrun: Path, scratch: Path,
                     release_floor: Path = None, runtime: Path = None) -> dict:
    """The environment every tool runs in: where its server is, and nothing that overrides it.
    `scratch` is a folder of the bench's own, made with mode 0700: it holds the script sections'
    lock files, and the holds' handles unless `runtime` (one on tmpfs) is given. `release_floor`:
    the binary peers/release-floor-hold runs."""
    environment = dict(os.environ)
    # CI (which CI systems set) would have redlockrun say that it waits: tools run as cron runs them.
    for variable in ("REDLOCKRUN_URL", "REDISCLI_AUTH", "ETCDCTL_API", "REDLOCKRUN_VERBOSE", "CI"):
        environment.pop(variable, None)
    environment["REDIS_URL"] = redis_url
    environment["ETCDCTL_ENDPOINTS"] = etcd_endpoint
    environment["REDLOCKRUN"] = str(redlockrun)  # the binary that peers/redlockrun-hold runs
    if release_floor is not None:
        environment["RELEASE_FLOOR"] = str(release_floor)
    # --hold keeps its handles in $XDG_RUNTIME_DIR/redlockrun: here, not in the user's own folder.
    environment["XDG_RUNTIME_DIR"] = str(runtime or scratch)
    environment["FLOCK_DIR"] = str(scratch)  # peers/flock-section's lock files
    # The C locale: flock(1) (util-linux) then loads no locale files, which makes it ~0.3 ms faster
    # than under C.UTF-8. The floor is set as low as it goes, and the same on every machine.
    environment["LC_ALL"] = "C"
    return environment
