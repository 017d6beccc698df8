"""Starting the tools: one timed run, or many contenders at once."""
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path


class Launcher:
    """Runs commands with the tools' environment; their error output goes to one log file, so a
    tool that fails says why without cluttering the report."""

    def __init__(self, environment: dict, error_log: Path):
        self.environment = environment
        self.error_log = error_log
        self._paths = {}

    def _path(self, program: str) -> str:
        if program not in self._paths:
            self._paths[program] = shutil.which(program, path=self.environment.get("PATH"))
        return self._paths[program]

    def timed(self, argv: list) -> tuple:
        """(wall seconds, exit status) of one run. posix_spawn (vfork underneath) and waitpid
        directly: the least overhead Python can add to the measurement, and the same for each tool.
        """
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 2, str(self.error_log),
                    os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)]
        start = time.perf_counter()
        pid = os.posix_spawn(self._path(argv[0]), argv, self.environment, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        elapsed = time.perf_counter() - start
        return elapsed, os.waitstatus_to_exitcode(status)

    def run(self, argv: list, stderr=None, **options) -> subprocess.CompletedProcess:
        """One run to its end; its error output goes to `stderr` (an open file) if given, else to
        the error log."""
        with open(self.error_log, "ab") as errors:
            return subprocess.run(argv, env=self.environment, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=stderr or errors, **options)

    def start(self, argv: list) -> subprocess.Popen:
        """A background run in its own session, so that stop_all() can end it with its children."""
        with open(self.error_log, "ab") as errors:
            return subprocess.Popen(argv, env=self.environment, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=errors,
                                    start_new_session=True)


def stop_all(processes: list) -> None:
    for process in processes:
        if process.poll() is None:
            try:
                os.killpg(process.pid, 15)
            except ProcessLookupError:
                pass
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


def run_contenders(launcher: Launcher, make_argv, contenders: int, iterations: int = 0,
                   until: float = 0.0, time_limit: float = 600.0) -> dict:
    """Runs `contenders` loops at once, each starting make_argv(contender) again and again: either
    `iterations` times, or until time.monotonic() passes `until`. Returns the wall time of the whole
    thing, the exit statuses that were not 0, and when each contender started each of its runs
    (CLOCK_MONOTONIC ns, the clock of the critical section's log).

    time_limit bounds a run whose tool hangs: the remaining contenders are then not restarted.
    """
    failures = []
    launches = {contender: [] for contender in range(contenders)}
    lock = threading.Lock()
    give_up = time.monotonic() + time_limit

    def loop(contender: int) -> None:
        done = 0
        while time.monotonic() < give_up:
            if iterations and done >= iterations:
                return
            if until and time.monotonic() >= until:
                return
            argv = make_argv(contender)
            launches[contender].append(time.monotonic_ns())
            try:
                status = launcher.run(argv,
                                      timeout=max(1.0, give_up - time.monotonic())).returncode
            except subprocess.TimeoutExpired:
                status = "timeout"
            done += 1
            if status != 0:
                with lock:
                    failures.append(status)

    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in range(contenders)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"seconds": time.perf_counter() - start, "failures": failures,
            "launches": launches, "timed_out": time.monotonic() >= give_up}
