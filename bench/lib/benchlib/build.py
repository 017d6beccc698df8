"""Compiling the bench's helper programs."""
import subprocess
from pathlib import Path


def build_static(source: Path, binary: Path, compiler: str, static_flags: list) -> Path:
    """Compiles a helper with the first of static_flags (each one or more flags, separated by
    spaces) that the toolchain accepts, or else dynamic."""
    for flags in [flag.split() for flag in static_flags] + [[]]:
        result = subprocess.run([compiler, "-O2", *flags, "-o", str(binary), str(source)],
                                capture_output=True, text=True)
        if result.returncode == 0:
            return binary
    raise RuntimeError(f"cannot compile {source}: {result.stderr}")
