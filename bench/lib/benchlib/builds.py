"""The builds of redlockrun that figure 1 times side by side: the default build (what scripts/build
makes, or --redlockrun) as "redlockrun", and the .deb's (packaging/build-deb), whose binary is
unpacked from the package; and any other named with --compare. Each has its own start-up cost: the
libraries it loads and how it was compiled. The other figures measure the protocol, which the
builds share, so they run the default build only."""
import subprocess
from pathlib import Path

DEB = "redlockrun (.deb)"  # its row in figure 1
LABELS = {DEB: "the .deb's build"}  # what the report's machine section calls it


def rebuild(repository: Path, log) -> Path:
    """Runs scripts/build and packaging/build-deb, as a user would; returns the .deb."""
    log("building: scripts/build")
    subprocess.run([str(repository / "scripts" / "build")], check=True, stdout=subprocess.DEVNULL)
    log("building: packaging/build-deb")
    result = subprocess.run([str(repository / "packaging" / "build-deb")], check=True,
                            stdout=subprocess.PIPE, text=True)
    return Path(result.stdout.strip().splitlines()[-1])


def label(row: str) -> str:
    """What the report's machine section calls the build of a figure-1 row."""
    return LABELS.get(row) or row.removeprefix("redlockrun (").removesuffix(")")


def compared(arguments: list) -> dict:
    """--compare NAME=BINARY arguments as figure-1 rows, "redlockrun (NAME)" -> binary."""
    rows = {}
    for argument in arguments:
        name, _, binary = argument.partition("=")
        if not name or not Path(binary).is_file():
            raise RuntimeError(f"--compare {argument}: give NAME=BINARY, an existing binary")
        rows[f"redlockrun ({name})"] = Path(binary).resolve()
    return rows


def find_deb(given: str, repository: Path):
    """The .deb named, else the newest one packaging/build-deb left in build-deb/, else None."""
    if given:
        return Path(given)
    found = sorted((repository / "build-deb").glob("redlockrun_*.deb"),
                   key=lambda path: path.stat().st_mtime)
    return found[-1] if found else None


def unpack(deb: Path, workdir: Path) -> Path:
    """The binary from the package, unpacked into the work directory (nothing is installed)."""
    root = workdir / "deb-root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    binary = root / "usr" / "bin" / "redlockrun"
    if not binary.is_file():
        raise RuntimeError(f"{deb} has no usr/bin/redlockrun")
    return binary
