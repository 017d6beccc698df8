"""The highly available set-ups figure 9 measures, each reached by clients only through delay proxies
(bench/lib/delay_proxy.py), so that every address a client is sent to is a delayed one too:

- a master watched by one sentinel, which knows the master by its proxy's address (and so names
  that address to clients), itself reached through a proxy of its own;
- a master with one replica (replication direct, not through the proxy), for `--replicas 1`;
- a Redis Cluster of three masters, each announcing its proxy's port, so that a -MOVED names a
  proxy; the cluster bus is not proxied.

Everything started is appended to `started` as soon as it runs, so that the caller stops it all,
whatever fails later.
"""
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .servers import DelayProxy, RedisServer, SentinelServer, free_port, wait_until

MASTER_NAME = "bench"
CLUSTER_NODES = 3


@dataclass
class Proxied:
    server: RedisServer
    proxy: DelayProxy

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.proxy.port}"


def _proxied(server: RedisServer, started: list) -> Proxied:
    started.append(server.start())
    proxy = DelayProxy(server.port, 0, count_resp=True)
    started.append(proxy)
    return Proxied(server, proxy)


def sentinel_links(master: RedisServer) -> set:
    """Client ids of the sentinel's connections to the master (Sentinel names them sentinel-...)."""
    return {fields["id"] for fields in _clients(master) if fields.get("name", "").startswith("sentinel-")}


def _clients(server: RedisServer) -> list:
    return [dict(field.split("=", 1) for field in line.split() if "=" in field)
            for line in server.command("CLIENT", "LIST").splitlines()]


@dataclass
class SentinelSetUp:
    master: Proxied
    sentinel: Proxied

    @property
    def url(self) -> str:
        return f"redis-sentinel://127.0.0.1:{self.sentinel.proxy.port}#{MASTER_NAME}"


def start_sentinel(workdir: Path, started: list) -> SentinelSetUp:
    master = _proxied(RedisServer(workdir), started)
    sentinel = _proxied(SentinelServer(workdir, MASTER_NAME, master.proxy.port), started)
    named = sentinel.server.command("SENTINEL", "get-master-addr-by-name", MASTER_NAME).split()
    if named != ["127.0.0.1", str(master.proxy.port)]:
        raise RuntimeError(f"the sentinel names the master as {named}, not its proxy's address")
    # The sentinel's command and pub/sub links cross the master's proxy too; once both are open,
    # connections opened later are the clients'.
    if not wait_until(lambda: len(sentinel_links(master.server)) >= 2, 10, 0.05):
        raise RuntimeError("the sentinel did not connect to the master within 10 s")
    return SentinelSetUp(master, sentinel)


def start_replicated(workdir: Path, started: list) -> Proxied:
    """A master with one replica in sync. The master starts a replica's sync at once (Redis 7.0
    waits 5 s by default before a diskless one)."""
    master = _proxied(RedisServer(workdir, lambda port: ["--repl-diskless-sync-delay", "0"]),
                      started)
    started.append(RedisServer(workdir, lambda port: ["--replicaof", "127.0.0.1",
                                                      str(master.server.port)]).start())
    if not wait_until(lambda: "state=online" in master.server.info_field("replication", "slave0"),
                      20, 0.05):
        raise RuntimeError("the replica did not come in sync with its master within 20 s")
    return master


@dataclass
class ClusterSetUp:
    nodes: list  # of Proxied, in the order redis-cli gave them their slots

    def owner(self, key: str) -> tuple:
        """(index of the node that serves `key`, index of another node). Every other node must
        answer a -MOVED naming the owner's proxy, which is what sends a client there delayed."""
        replies = [node.server.command("GET", key) for node in self.nodes]
        owners = [index for index, reply in enumerate(replies) if not reply.startswith("MOVED")]
        if len(owners) != 1:
            raise RuntimeError(f"no single node serves {key}: {replies}")
        owner = owners[0]
        expected = f"127.0.0.1:{self.nodes[owner].proxy.port}"
        for reply in replies:
            if reply.startswith("MOVED") and reply.split()[-1] != expected:
                raise RuntimeError(f"-MOVED names {reply.split()[-1]}, not the proxy {expected}")
        return owner, (owner + 1) % len(self.nodes)

    def agreed(self, key: str) -> bool:
        try:
            self.owner(key)
            return True
        except RuntimeError:
            return False


def _cluster_node(workdir: Path) -> RedisServer:
    return RedisServer(workdir, lambda port: [
        "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
        "--cluster-port", str(free_port())])  # the bus port, chosen so that it is free


def start_cluster_nodes(workdir: Path, started: list) -> ClusterSetUp:
    """Three masters with no slots yet. Started before the other set-ups: a cluster master turns
    writable only 2 s after it started, which then passes meanwhile."""
    return ClusterSetUp([_proxied(_cluster_node(workdir), started) for _ in range(CLUSTER_NODES)])


def create_cluster(cluster: ClusterSetUp, key: str) -> None:
    """Makes the nodes a cluster with redis-cli, as operators do; returns once every node agrees
    who serves `key` and names that node by its proxy."""
    for node in cluster.nodes:
        bus_port = node.server.command("CONFIG", "GET", "cluster-port").split()[-1]
        for name, value in (("cluster-announce-ip", "127.0.0.1"),
                            ("cluster-announce-port", str(node.proxy.port)),
                            ("cluster-announce-bus-port", bus_port)):
            node.server.command("CONFIG", "SET", name, value)
    addresses = [f"127.0.0.1:{node.server.port}" for node in cluster.nodes]
    created = subprocess.run(["redis-cli", "--cluster", "create", *addresses, "--cluster-yes"],
                             capture_output=True, text=True, timeout=60)
    if created.returncode != 0:
        output = re.sub(r"\x1b\[[0-9;]*m", "", created.stdout + created.stderr).strip()
        raise RuntimeError(f"redis-cli --cluster create failed: {output[-500:]}")
    if not wait_until(lambda: all("cluster_state:ok" in node.server.command("CLUSTER", "INFO")
                                  for node in cluster.nodes) and cluster.agreed(key), 30, 0.1):
        cluster.owner(key)  # says what is wrong, if it is the redirects
        raise RuntimeError("the cluster did not reach cluster_state:ok within 30 s")
