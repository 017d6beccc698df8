"""The protocol floor (bench/helpers/protocol_floor.c): redlockrun's two requests, sent by a minimal
C client and nothing else. Figure 1 runs it beside the tools: what redlockrun costs beyond it is
redlockrun's own work; what it costs beyond flock(1) is the protocol's."""
import hashlib
from pathlib import Path

from .build import compile_helper

BENCH = Path(__file__).resolve().parent.parent.parent
SOURCE = BENCH / "helpers" / "protocol_floor.c"
SCRIPTS = BENCH.parent / "src" / "lock" / "scripts"
NAME = "protocol floor"
HARDENED = ("-fPIE -pie -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Wl,-z,relro,-z,now "
            "-Wl,--as-needed")


def prepare(workdir: Path, redis) -> list:
    """Builds the client and loads redlockrun's acquire and release scripts into the bench's Redis,
    as redlockrun embeds them (prelude, then script). Returns the command line before KEY."""
    # Built as redlockrun is (CMakeLists.txt): a hardened PIE, with the shared C library. What
    # redlockrun then costs beyond it is its own work and its other libraries.
    binary = compile_helper(SOURCE, workdir / "protocol-floor", "cc", [HARDENED])
    prelude = (SCRIPTS / "common.lua").read_text()
    shas = []
    for name in ("acquire", "release"):
        text = prelude + (SCRIPTS / f"{name}.lua").read_text()
        sha = hashlib.sha1(text.encode()).hexdigest()
        loaded = redis.command("SCRIPT", "LOAD", text)
        if loaded != sha:
            raise RuntimeError(f"SCRIPT LOAD of {name}.lua answered {loaded!r}, not {sha}")
        shas.append(sha)
    return [str(binary), *shas]
