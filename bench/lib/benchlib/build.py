"""Compiling the bench's helper programs."""
import subprocess
from pathlib import Path


def compile_helper(source: Path, binary: Path, compiler: str, flag_choices: list,
                   libraries: tuple = ()) -> Path:
    """Compiles a helper with the first of flag_choices (each one or more flags, separated by
    spaces) that the toolchain accepts, or else with none; libraries ("-lfmt"...) come after the
    source, where --as-needed looks for them."""
    for flags in [choice.split() for choice in flag_choices] + [[]]:
        result = subprocess.run([compiler, "-O2", *flags, "-o", str(binary), str(source),
                                 *libraries], capture_output=True, text=True)
        if result.returncode == 0:
            return binary
    raise RuntimeError(f"cannot compile {source}: {result.stderr}")
