"""Other servers beside the bench's own Redis (Debian's 7.0), for figures 1 and 3 (issue 29): Redis
6.2.16 and Valkey 8.0.1, each built from the project's source tarball by tests/compat/build-servers
(cached per machine: once built, a call costs well under a second) and started as a RedisServer of
its own. Each gives a row, "redlockrun (Valkey 8.0.1)": the default build with `-u` naming that
server, timed in the same rounds (figure 1) and repeats (figure 3, at its counted N only) as every
other row. The rows show what the server changes for redlockrun; they are no target's, and the
other figures, which measure the lock on the bench's Redis, leave them out.

A row names its server as the server's INFO does, not as the tarball does; a server that says it
is other than its tarball names is a wrong build, which ends the run as a failed build does.
"""
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .peers import Tool, on_server
from .servers import RedisServer

REPOSITORY = Path(__file__).resolve().parents[3]
BUILD_SERVERS = REPOSITORY / "tests" / "compat" / "build-servers"
TARBALLS = ("redis-6.2.16.tar.gz", "valkey-8.0.1.tar.gz")
# What the report says of each row, and where the build comes from.
ORIGIN = "built from its source tarball by tests/compat/build-servers"


def build(tarball: str, builder: Path = BUILD_SERVERS) -> Path:
    """The bin folder of the server that `builder` (build-servers) builds from `tarball`, a name
    its SHA256SUMS lists; RuntimeError, with build-servers' own message, if there is none."""
    command = f"tests/compat/build-servers {tarball}"
    try:
        result = subprocess.run([str(builder), tarball], capture_output=True, text=True)
    except OSError as error:
        raise RuntimeError(f"{command}: {error}") from error
    if result.returncode != 0:
        last_words = result.stderr.strip().splitlines()[-1:] or [
            f"exit status {result.returncode}"]
        raise RuntimeError(f"{command}: {last_words[0]}")
    name, _, bin_folder = result.stdout.strip().partition("\t")
    if name != tarball.removesuffix(".tar.gz") or not (Path(bin_folder) / "redis-server").is_file():
        raise RuntimeError(f"{command} printed {result.stdout.strip()!r}, not the name and the "
                           "bin folder of a server")
    return Path(bin_folder)


def identity(info: dict) -> tuple:
    """(name, version) from a server's INFO server section: Valkey names itself in server_name and
    gives its own version under valkey_version (its redis_version, 7.2.4, is the Redis version it
    is compatible with); Redis has no server_name, and its version is redis_version."""
    name = info.get("server_name") or "redis"
    version = info.get(f"{name}_version") or info.get("redis_version") or "?"
    return name.capitalize(), version


def row_name(name: str, version: str) -> str:
    return f"redlockrun ({name} {version})"


def named(tarball: str, info: dict) -> tuple:
    """(name, version) of the server built from `tarball`, from its INFO server section;
    RuntimeError if the server says it is another than the tarball names (a wrong build)."""
    name, version = identity(info)
    if f"{name}-{version}".lower() != tarball.removesuffix(".tar.gz").lower():
        raise RuntimeError(f"the server built from {tarball} says it is {name} {version}")
    return name, version


def skipped_name(tarball: str) -> str:
    """A row's name in the skipped list, where its server never answered INFO."""
    return f"redlockrun ({tarball.removesuffix('.tar.gz')})"


@dataclass
class OtherServer:
    server: RedisServer
    row: Tool  # redlockrun against it


def start(tarball: str, redlockrun: Tool, workdir: Path, builder: Path = BUILD_SERVERS):
    """The server built from `tarball`, started, and its row (`redlockrun`: peers.make_tools()'s
    first tool)."""
    bin_folder = build(tarball, builder)
    server = RedisServer(workdir, binary=str(bin_folder / "redis-server")).start()
    try:
        name, version = named(tarball, server.info("server"))
    except BaseException:
        server.stop()
        raise
    summary = f"redlockrun -u URL against {name} {version}, {ORIGIN} ({tarball})"
    return OtherServer(server, on_server(redlockrun, row_name(name, version), server.url, summary))


def start_all(redlockrun: Tool, workdir: Path, smoke: bool, skipped: dict, started: list,
              builder: Path = BUILD_SERVERS, tarballs=TARBALLS) -> list:
    """Starts the server of each of `tarballs`, adding it to `started` (which the caller stops),
    and returns their rows. A server that cannot be built or started is an error of a full run
    (RuntimeError), as a missing peer is; a smoke run leaves its row out, saying why in
    `skipped`."""
    rows = []
    for tarball in tarballs:
        try:
            other = start(tarball, redlockrun, workdir, builder)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
            if not smoke:
                raise RuntimeError(f"a full run needs {tarball}'s server: {error}") from error
            skipped[skipped_name(tarball)] = str(error)
            continue
        started.append(other.server)
        rows.append(other.row)
    return rows
