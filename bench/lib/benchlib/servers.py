"""The servers the benchmark starts on loopback, and stops afterwards: redis-server, etcd, the
delaying proxy, and a MONITOR recording of what clients send to Redis."""
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

BENCH_LIB = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A port nobody listens on right now. Another process may take it before our server binds it,
    so callers retry (tests run in parallel with this benchmark)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(predicate, timeout: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class RedisServer:
    """A throwaway redis-server: loopback only, no persistence, like the end-to-end tests'.

    `options(port)` gives more of its options, made afresh for each attempt to start it (a cluster
    node's bus port and config file go with its port). `binary` is the redis-server to run: the
    one on PATH (Debian's), or another server's, such as one tests/compat/build-servers built."""

    def __init__(self, workdir: Path, options=None, binary: str = "redis-server"):
        self.workdir = workdir
        self.options = options or (lambda port: [])
        self.binary = binary
        self.process = None
        self.port = None

    def _command(self, port: int) -> list:
        return [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.workdir),
                "--logfile", str(self.workdir / f"redis-{port}.log"), *self.options(port)]

    def start(self) -> "RedisServer":
        for _ in range(10):
            port = free_port()
            process = subprocess.Popen(
                self._command(port),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.port = port
            if wait_until(lambda: process.poll() is not None or self._answers(process), 10):
                if process.poll() is None:
                    self.process = process
                    return self
            stop_process(process)
        raise RuntimeError(f"could not start {self.binary} on a free loopback port")

    def _answers(self, process: subprocess.Popen) -> bool:
        """Whether this server answers. The process id tells it from a server that another test
        started on the same port, which answers while this one is still failing to bind."""
        try:
            return self.info_field("server", "process_id") == str(process.pid)
        except (OSError, RuntimeError, subprocess.TimeoutExpired):
            return False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def command(self, *args: str) -> str:
        """One command through redis-cli (always installed with redis-server); its raw output."""
        result = subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True,
                                text=True, timeout=10)
        if result.returncode != 0:
            raise RuntimeError(f"redis-cli {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout.strip()

    def info(self, section: str) -> dict:
        """One section of INFO, field -> value."""
        lines = self.command("INFO", section).splitlines()
        return dict(line.strip().split(":", 1) for line in lines
                    if ":" in line and not line.startswith("#"))

    def info_field(self, section: str, field: str) -> str:
        return self.info(section).get(field, "")

    def client_addresses(self) -> set:
        """HOST:PORT of every client connected now."""
        return {field.split("=", 1)[1] for line in self.command("CLIENT", "LIST").splitlines()
                for field in line.split() if field.startswith("addr=")}

    def clients_blocked_in(self, command: str) -> int:
        """How many clients CLIENT LIST shows blocked (flag b) in COMMAND, named as it names it
        (lower case: "blpop")."""
        blocked = 0
        for line in self.command("CLIENT", "LIST").splitlines():
            fields = dict(field.split("=", 1) for field in line.split() if "=" in field)
            if fields.get("cmd") == command and "b" in fields.get("flags", ""):
                blocked += 1
        return blocked

    def stop(self) -> None:
        if self.process:
            stop_process(self.process)


class SentinelServer(RedisServer):
    """One Redis Sentinel watching one master, which it knows as `master_name` at
    127.0.0.1:`master_port`. Sentinel rewrites its config file as it learns, so the file is its
    own, in the work directory."""

    def __init__(self, workdir: Path, master_name: str, master_port: int):
        super().__init__(workdir)
        self.master_name = master_name
        self.master_port = master_port

    def _command(self, port: int) -> list:
        config = self.workdir / f"sentinel-{port}.conf"
        config.write_text(f"port {port}\nbind 127.0.0.1\ndir {self.workdir}\n"
                          f"logfile {self.workdir / f'sentinel-{port}.log'}\n"
                          f"sentinel monitor {self.master_name} 127.0.0.1 {self.master_port} 1\n")
        return ["redis-server", str(config), "--sentinel"]


class EtcdServer:
    """A single-member etcd. Its data lives on tmpfs when there is one, so that its fsyncs cost no
    more than Redis's absent persistence: the comparison is of the lock protocols, not of disks."""

    def __init__(self, workdir: Path):
        shm = Path("/dev/shm")
        base = shm if shm.is_dir() and os.access(shm, os.W_OK) else workdir
        self.datadir = Path(subprocess.check_output(
            ["mktemp", "-d", str(base / "redlockrun-bench-etcd.XXXXXX")], text=True).strip())
        self.workdir = workdir
        self.process = None
        self.port = None

    def start(self) -> "EtcdServer":
        for _ in range(10):
            client_port, peer_port = free_port(), free_port()
            client_url, peer_url = f"http://127.0.0.1:{client_port}", f"http://127.0.0.1:{peer_port}"
            shutil.rmtree(self.datadir / "member", ignore_errors=True)
            with open(self.workdir / "etcd.log", "ab") as log:
                process = subprocess.Popen(
                    ["etcd", "--name", "bench", "--data-dir", str(self.datadir / "member"),
                     "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                     "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                     "--initial-cluster", f"bench={peer_url}", "--logger", "zap",
                     "--log-level", "error"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            self.port = client_port
            if wait_until(lambda: process.poll() is not None or self._answers(), 20, 0.1):
                if process.poll() is None:
                    self.process = process
                    return self
            stop_process(process)
        raise RuntimeError(f"could not start etcd; see {self.workdir / 'etcd.log'}")

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _answers(self) -> bool:
        result = subprocess.run(["etcdctl", "--endpoints", self.endpoint, "endpoint", "health"],
                                capture_output=True, timeout=10)
        return result.returncode == 0

    def stop(self) -> None:
        if self.process:
            stop_process(self.process)
        shutil.rmtree(self.datadir, ignore_errors=True)


class DelayProxy:
    """bench/lib/delay_proxy.py in its own process, so that its work never competes with this
    driver's threads for the Python interpreter lock."""

    def __init__(self, upstream_port: int, delay_ms: float, count_resp: bool):
        command = ["/usr/bin/python3", str(BENCH_LIB / "delay_proxy.py"),
                   "--upstream", f"127.0.0.1:{upstream_port}", "--delay-ms", str(delay_ms)]
        if count_resp:
            command.append("--resp")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        ready = self.process.stdout.readline().split()
        if len(ready) != 2:
            stop_process(self.process)
            raise RuntimeError("the delaying proxy did not start")
        self.port, self.control_port = int(ready[0]), int(ready[1])

    def _control(self, request: str) -> str:
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=10) as control:
            control.sendall(request.encode() + b"\n")
            return control.makefile().readline()

    def stats(self) -> dict:
        return json.loads(self._control("stats"))

    def set_delay(self, delay_ms: float) -> None:
        """The delay of every chunk that arrives from now on, on open connections too."""
        self._control(f"delay {delay_ms:g}")

    def stop(self) -> None:
        stop_process(self.process)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class MonitorRecording:
    """What clients send to Redis while a scenario runs, recorded with MONITOR.

    MONITOR shows commands that clients send as `TS [DB HOST:PORT] "NAME" ...` and those a Lua
    script runs as `TS [DB lua] "NAME" ...`: both are counted, apart. The driver's own INFO polls
    are left out. Clients keep their direct connections, so the timings taken meanwhile carry no
    proxy latency. A thread reads the feed into memory as it comes.
    """

    def __init__(self, redis: RedisServer):
        self.redis = redis
        self.lines: list[bytes] = []
        self._socket = None
        self._reader = None

    def __enter__(self) -> "MonitorRecording":
        self._socket = socket.create_connection(("127.0.0.1", self.redis.port), timeout=10)
        self._socket.sendall(b"*1\r\n$7\r\nMONITOR\r\n")
        self._feed = self._socket.makefile("rb")
        if self._feed.readline().strip() != b"+OK":
            raise RuntimeError("MONITOR was refused")
        self._socket.settimeout(None)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        try:
            for line in self._feed:
                self.lines.append(line)
        except (OSError, ValueError):
            pass  # closed by __exit__

    def __exit__(self, *exc) -> None:
        time.sleep(0.2)  # let the last commands reach the recording
        self._socket.shutdown(socket.SHUT_RDWR)
        self._reader.join(timeout=5)
        self._socket.close()

    def commands(self, start: float = 0.0, end: float = float("inf")):
        """(timestamp, client address or 'lua', command name) for each recorded command."""
        found = []
        for raw in list(self.lines):
            parts = raw.decode("utf-8", "replace").lstrip("+").split(" ", 3)
            if len(parts) < 4 or not parts[1].startswith("["):
                continue
            try:
                stamp = float(parts[0])
            except ValueError:
                continue
            name = parts[3].split(" ", 1)[0].strip('"\r\n').upper()
            if name == "INFO" or not start <= stamp <= end:
                continue
            found.append((stamp, parts[2].rstrip("]"), name))
        return found

    def counts(self, start: float = 0.0, end: float = float("inf"), ignore=frozenset()):
        """(client requests, commands run inside scripts), leaving out the clients in `ignore`."""
        recorded = [command for command in self.commands(start, end) if command[1] not in ignore]
        inside = sum(1 for _, who, _ in recorded if who == "lua")
        return len(recorded) - inside, inside

    def clients(self) -> int:
        """How many client connections have sent something so far."""
        return len({who for _, who, _ in self.commands() if who != "lua"})
