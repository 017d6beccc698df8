"""The machine and software a report was measured on: the report's numbers mean little without it."""
import datetime
import os
import platform
import subprocess
from pathlib import Path

from .builds import label


def _output(*command: str) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (result.stdout or result.stderr).strip()


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gib() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    return "unknown"


def _distribution() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return "unknown"


def _package_version(package: str) -> str:
    return _output("dpkg-query", "-W", "-f=${Version}", package) or "not installed"


def _source_revision(redlockrun: Path, repository: Path) -> str:
    if repository not in redlockrun.parents:
        return "built outside this checkout"
    commit = _output("git", "-C", str(repository), "rev-parse", "--short", "HEAD")
    if not commit or " " in commit:
        return "unknown"
    changed = _output("git", "-C", str(repository), "status", "--porcelain", "--untracked-files=no",
                      "--", "src", "CMakeLists.txt", "cmake")
    return commit + (" (with uncommitted changes to src/ or CMake)" if changed else "")


def _binary(path: Path) -> dict:
    """Its size and the shared libraries it loads at start-up (ldd: those it needs directly, and
    theirs)."""
    libraries = [line.split()[0] for line in _output("ldd", str(path)).splitlines()
                 if "=>" in line]
    return {"size_kib": round(path.stat().st_size / 1024), "libraries": libraries}


def describe(redlockrun: Path, other_builds: dict, repository: Path) -> dict:
    binaries = {"the default build": _binary(redlockrun)}
    binaries.update({label(name): _binary(path) for name, path in other_builds.items()})
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory": _memory_gib(),
        "kernel": platform.release(),
        "distribution": _distribution(),
        "load_average": " ".join(f"{value:.2f}" for value in os.getloadavg()),
        "redis": _output("redis-server", "--version").split(" sha=")[0],
        "etcd": _package_version("etcd-server"),
        "python3_redis": _package_version("python3-redis"),
        "util_linux": _package_version("util-linux"),
        "redlockrun": _output(str(redlockrun), "--version").splitlines()[0:1],
        "redlockrun_source": _source_revision(redlockrun, repository),
        "redlockrun_binaries": binaries,
    }
