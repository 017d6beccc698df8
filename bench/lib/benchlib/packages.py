"""The Debian packages the benchmark's peers and servers come from. A full run installs what is
missing; a smoke run installs nothing (it must not need the network) and skips what is missing."""
import os
import subprocess

PACKAGES = {
    "redis-server": "the Redis server every Redis tool talks to",
    "redis-tools": "redis-cli: the SETNX script, and the benchmark's own Redis calls",
    "etcd-server": "etcd, for `etcdctl lock`",
    "etcd-client": "etcdctl",
    "python3-redis": "redis-py, for its Lock",
    "util-linux": "flock(1)",
    "g++": "compiles the critical-section helper",
}


def missing() -> list:
    absent = []
    for package in PACKAGES:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                capture_output=True, text=True).stdout
        if "install ok installed" not in status:
            absent.append(package)
    return absent


def install_missing(log) -> None:
    absent = missing()
    if not absent:
        return
    log(f"installing Debian packages: {' '.join(absent)}")
    prefix = [] if os.geteuid() == 0 else ["sudo"]
    environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run([*prefix, "apt-get", "update", "-qq"], check=True, env=environment)
    subprocess.run([*prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends",
                    *absent], check=True, env=environment, stdout=subprocess.DEVNULL)
    still = missing()
    if still:
        raise RuntimeError(f"could not install: {' '.join(still)}")
