"""The bench's yardsticks. Figure 1's: the protocol floor (bench/helpers/protocol_floor.c):
redlockrun's two requests, sent by a minimal C client and nothing else; what redlockrun costs beyond
it is redlockrun's own work, what it costs beyond flock(1) is the protocol's. The library floor
(bench/helpers/library_floor.cpp): a program that does nothing, linked as the .deb's build is; what
the .deb's build costs beyond it is redlockrun's work and the protocol's. Figure 3's: the release
floor (bench/helpers/release_floor.c), which ends a hold by asking its keeper and does nothing else;
what `redlockrun --release` costs beyond it is its own work. The metrics floor
(bench/helpers/metrics_floor.c): the file work of keeping a metrics file safely (lock, read, write,
fsync, rename) and nothing else; what a run with --metrics-file costs beyond a plain run and it is
redlockrun's own work."""
import hashlib
from pathlib import Path

from .build import compile_helper

BENCH = Path(__file__).resolve().parent.parent.parent
SOURCE = BENCH / "helpers" / "protocol_floor.c"
LIBRARY_SOURCE = BENCH / "helpers" / "library_floor.cpp"
RELEASE_SOURCE = BENCH / "helpers" / "release_floor.c"
METRICS_SOURCE = BENCH / "helpers" / "metrics_floor.c"
SCRIPTS = BENCH.parent / "src" / "lock" / "scripts"
NAME = "protocol floor"
LIBRARY_NAME = "library floor"
METRICS_NAME = "metrics floor"
HARDENED = ("-fPIE -pie -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Wl,-z,relro,-z,now "
            "-Wl,--as-needed")


def prepare(workdir: Path, redis) -> list:
    """Builds the client and loads redlockrun's acquire and release scripts into the bench's Redis,
    as redlockrun embeds them (prelude, then script). Returns the command line before KEY."""
    # Built as redlockrun is (CMakeLists.txt): a hardened PIE, with the shared C library. What
    # redlockrun then costs beyond it is its own work and its other libraries.
    binary = compile_helper(SOURCE, workdir / "protocol-floor", "cc", [HARDENED])
    # The prelude as CMakeLists.txt embeds it: common.lua, holders.lua, then waiters.lua.
    prelude = "".join((SCRIPTS / part).read_text()
                      for part in ("common.lua", "holders.lua", "waiters.lua"))
    shas = []
    for name in ("acquire", "release"):
        text = prelude + (SCRIPTS / f"{name}.lua").read_text()
        sha = hashlib.sha1(text.encode()).hexdigest()
        loaded = redis.command("SCRIPT", "LOAD", text)
        if loaded != sha:
            raise RuntimeError(f"SCRIPT LOAD of {name}.lua answered {loaded!r}, not {sha}")
        shas.append(sha)
    return [str(binary), *shas]


def prepare_release(workdir: Path) -> Path:
    """Builds the release floor as redlockrun is built (a hardened PIE with the shared C library),
    for peers/release-floor-hold; it must build, as figure 3's mixed rows judge `--release` by it."""
    return compile_helper(RELEASE_SOURCE, workdir / "release-floor", "cc", [HARDENED])


def prepare_metrics(workdir: Path) -> list:
    """Builds the metrics floor as redlockrun is built (a hardened PIE with the shared C library).
    Returns its command line before FILE."""
    return [str(compile_helper(METRICS_SOURCE, workdir / "metrics-floor", "cc", [HARDENED]))]


def prepare_libraries(workdir: Path) -> list:
    """Builds the library floor: hardened as redlockrun is, against the shared libraries the .deb's
    build loads (Debian's libstdc++, fmt and hiredis), named in the same order (libstdc++ first,
    CMakeLists.txt). Returns its command line before KEY; it ignores its arguments."""
    binary = compile_helper(LIBRARY_SOURCE, workdir / "library-floor", "c++",
                            [HARDENED + " -std=c++20"],
                            libraries=("-lstdc++", "-lfmt", "-lhiredis"))
    return [str(binary)]
