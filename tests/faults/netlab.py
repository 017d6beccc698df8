"""Network faults for the fault suite: two network namespaces joined by a veth pair, nftables rules
that partition them or drop packets at random, and the delaying, resetting and silent proxies of
netproxy.py. Needs root (CAP_NET_ADMIN); everything it makes is named after this process's pid and
removed at teardown, at exit, or by the next run if this one was killed.

    lab = Lab()                       # namespaces <prefix>-s (the server's) and <prefix>-c
    lab.partition()                   # drop both ways; heal() undoes any fault
    lab.partition(direction="replies")   # or "requests": a one-way partition
    lab.loss(5)                       # drop 5 % of packets each way, at random
    lab.dropped()                     # {"requests": N, "replies": N}: packets the faults dropped

Only private addresses (10.231.0.0/30) inside the two namespaces are used: the root namespace and
its interfaces are never touched. Run as a script, it tests itself.
"""
import atexit
import itertools
import os
import shutil
import subprocess
import sys

PREFIX = "rlrnet"
SERVER_ADDRESS = "10.231.0.1"
CLIENT_ADDRESS = "10.231.0.2"
TABLE = "redlockrun_faults"

_counter = itertools.count(1)
_live = set()


class NeedsRoot(Exception):
    """The network faults cannot be made: what is missing is in the message."""


def missing():
    """What stops this machine from making the network faults, or None."""
    if os.geteuid() != 0:
        return "the network scenarios need root (network namespaces and nftables)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"the network scenarios need {tool} (Debian: iproute2, nftables)"
    return None


def run(*argv, check=True):
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")
    return result


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale():
    """Deletes the namespaces of earlier runs whose process is gone (killed before its teardown)."""
    listing = run("ip", "netns", "list", check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        if len(parts) == 4 and parts[0] == PREFIX and parts[1].isdigit():
            if not alive(int(parts[1])):
                run("ip", "netns", "del", name, check=False)


class Lab:
    """Two namespaces: the server's (SERVER_ADDRESS) and the client's (CLIENT_ADDRESS), joined by a
    veth pair. Faults are nftables rules in the client's namespace, on traffic to and from the
    server's: a client in the server's namespace (prefix_server) reaches it untouched."""

    def __init__(self):
        problem = missing()
        if problem:
            raise NeedsRoot(problem)
        remove_stale()
        base = f"{PREFIX}-{os.getpid()}-{next(_counter)}"
        self.dropped_before = {"requests": 0, "replies": 0}  # by rules that heal() removed
        self.server_ns, self.client_ns = f"{base}-s", f"{base}-c"
        _live.add(self)
        try:
            for ns in (self.server_ns, self.client_ns):
                run("ip", "netns", "add", ns)
                run("ip", "-n", ns, "link", "set", "lo", "up")
            # Created in the namespaces directly: no interface ever appears in the root namespace.
            run("ip", "link", "add", "veth0", "netns", self.server_ns, "type", "veth", "peer",
                "name", "veth0", "netns", self.client_ns)
            for ns, address in ((self.server_ns, SERVER_ADDRESS), (self.client_ns, CLIENT_ADDRESS)):
                run("ip", "-n", ns, "addr", "add", f"{address}/30", "dev", "veth0")
                run("ip", "-n", ns, "link", "set", "veth0", "up")
            self.nft(f"add table inet {TABLE}")
            self.nft(f"add chain inet {TABLE} input {{ type filter hook input priority 0; }}")
            self.nft(f"add chain inet {TABLE} output {{ type filter hook output priority 0; }}")
        except BaseException:
            self.kill()
            raise

    @property
    def prefix_server(self):
        return ["ip", "netns", "exec", self.server_ns]

    @property
    def prefix_client(self):
        return ["ip", "netns", "exec", self.client_ns]

    def nft(self, rule):
        run("ip", "netns", "exec", self.client_ns, "nft", rule)

    def heal(self):
        """Removes every fault: packets flow both ways again."""
        self.dropped_before = self.dropped()
        for chain in ("input", "output"):
            self.nft(f"flush chain inet {TABLE} {chain}")

    def dropped(self):
        """How many packets the faults have dropped so far, each way: the client's "requests"
        (output chain) and the server's "replies" (input chain), from the rules' counters."""
        counts = dict(self.dropped_before)
        chain = None
        for line in self.rules().splitlines():
            words = line.split()
            if words[:1] == ["chain"]:
                chain = words[1]
            elif "counter" in words and words[-1] == "drop":
                packets = int(words[words.index("packets") + 1])
                counts["requests" if chain == "output" else "replies"] += packets
        return counts

    def partition(self, direction="both"):
        """Drops the server's packets: "both" ways, only its "replies" (the client's requests still
        arrive), or only the client's "requests" (nothing arrives, so nothing is answered)."""
        self.heal()
        if direction in ("both", "requests"):
            self.nft(f"add rule inet {TABLE} output ip daddr {SERVER_ADDRESS} counter drop")
        if direction in ("both", "replies"):
            self.nft(f"add rule inet {TABLE} input ip saddr {SERVER_ADDRESS} counter drop")

    def loss(self, percent):
        """Drops PERCENT % of the packets each way, each packet on its own chance."""
        if percent >= 100:
            return self.partition()
        self.heal()
        if percent <= 0:
            return None
        self.nft(f"add rule inet {TABLE} output ip daddr {SERVER_ADDRESS} "
                 f"numgen random mod 100 < {int(percent)} counter drop")
        self.nft(f"add rule inet {TABLE} input ip saddr {SERVER_ADDRESS} "
                 f"numgen random mod 100 < {int(percent)} counter drop")

    def rules(self):
        return run("ip", "netns", "exec", self.client_ns, "nft", "list", "table", "inet",
                   TABLE).stdout

    def kill(self):
        """Deletes both namespaces (and with them the veth pair and the rules). Called by the
        scenario's teardown after every process in them was killed; safe to call twice."""
        for ns in (self.client_ns, self.server_ns):
            run("ip", "netns", "del", ns, check=False)
        _live.discard(self)


@atexit.register
def _remove_all():
    for lab in list(_live):
        lab.kill()


def self_test():
    """Makes a lab, checks each fault, and removes it; exits non-zero on any failure. A connection
    to a closed port of the server's address is refused if packets pass both ways, and times out
    if either way is dropped."""
    probe = ("import socket, sys\n"
             "try: socket.create_connection((sys.argv[1], 9), timeout=1)\n"
             "except ConnectionRefusedError: sys.exit(0)\n"
             "except OSError: sys.exit(1)\n")

    def reaches():
        return run(*lab.prefix_client, sys.executable, "-c", probe, SERVER_ADDRESS,
                   check=False).returncode == 0

    lab = Lab()
    try:
        checks = [("connected", reaches(), True)]
        lab.partition()
        checks.append(("partitioned", reaches(), False))
        checks.append(("requests dropped, counted", lab.dropped()["requests"] > 0, True))
        lab.heal()
        checks.append(("healed", reaches(), True))
        counted = lab.dropped()
        checks.append(("counted across a heal", reaches() and lab.dropped() == counted, True))
        lab.partition(direction="replies")
        checks.append(("replies dropped", reaches(), False))
        checks.append(("replies dropped, counted", lab.dropped()["replies"] > counted["replies"],
                       True))
        lab.partition(direction="requests")
        checks.append(("requests dropped", reaches(), False))
        lab.loss(100)
        checks.append(("all lost", reaches(), False))
        lab.loss(0)
        checks.append(("none lost", reaches(), True))
        lab.loss(5)
        checks.append(("5 % lost", lab.rules().count("numgen random mod 100 < 5 counter"), 2))
    finally:
        lab.kill()
    gone = all(ns not in run("ip", "netns", "list").stdout for ns in (lab.server_ns, lab.client_ns))
    checks.append(("removed", gone, True))
    failed = [name for name, got, want in checks if got != want]
    for name, got, want in checks:
        print(f"{'ok ' if got == want else 'BAD'} {name}")
    return not failed


if __name__ == "__main__":
    problem = missing()
    if problem:
        print(f"netlab: {problem}", file=sys.stderr)
        sys.exit(1)
    sys.exit(0 if self_test() else 1)
