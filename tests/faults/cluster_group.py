"""A Redis Cluster for one run of a scenario: three masters on loopback and free ports, each
serving a third of the slots, started with the run and stopped at its teardown; and the slot
migrations the cluster scenarios make. tests/faults/README.md ("Cluster migrations") says how the
scenarios use it."""
import socket

import redis

from harness import ScenarioFailed, free_port

HOST = "127.0.0.1"
SLOTS = 16384
BUS_OFFSET = 10000  # a cluster node also listens on its port + 10000, for the other nodes


def port_with_bus():
    """A free port whose cluster bus port (10000 above it) is free too, and exists."""
    for _ in range(100):
        port = free_port()
        if port + BUS_OFFSET > 65535:
            continue
        with socket.socket() as probe:
            try:
                probe.bind((HOST, port + BUS_OFFSET))
            except OSError:
                continue
        return port
    raise ScenarioFailed("no free port with a free cluster bus port above it")


class Group:
    """Three masters, no replicas, that met one another and agree on who serves each slot."""

    def __init__(self, s, masters=3):
        self.s = s
        self.nodes = [s.redis(name=f"node{i}", port=port_with_bus(), options=[
            "--cluster-enabled", "yes", "--cluster-config-file", f"node{i}-cluster.conf",
            "--cluster-node-timeout", "2000"]) for i in range(masters)]
        share = SLOTS // masters
        for i, node in enumerate(self.nodes):
            # Distinct epochs from the start: no collision for the cluster to resolve first.
            node.call("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
            last = SLOTS - 1 if i == masters - 1 else (i + 1) * share - 1
            # ADDSLOTS, not ADDSLOTSRANGE: Redis 6 has only the former.
            node.call("CLUSTER", "ADDSLOTS", *range(i * share, last + 1))
        for node in self.nodes[1:]:
            self.nodes[0].call("CLUSTER", "MEET", HOST, node.port)
        self.ids = {node.port: self.node_id(node) for node in self.nodes}
        s.wait_for("the cluster to form", self.formed, timeout=30)

    @staticmethod
    def node_id(node):
        answer = node.call("CLUSTER", "MYID")
        return answer.decode() if isinstance(answer, bytes) else answer

    def info(self, node):
        text = node.call("CLUSTER", "INFO")
        text = text.decode() if isinstance(text, bytes) else text
        return dict(line.split(":", 1) for line in text.split() if ":" in line)

    def formed(self):
        return all(self.info(node).get("cluster_state") == "ok" and
                   self.info(node).get("cluster_known_nodes") == str(len(self.nodes))
                   for node in self.nodes)

    def slot_of(self, key):
        return self.nodes[0].call("CLUSTER", "KEYSLOT", key)

    def owner_seen_by(self, node, slot):
        """The port of the master NODE says serves SLOT, None if it names none."""
        for low, high, master, *_ in node.call("CLUSTER", "SLOTS"):
            if low <= slot <= high:
                return master[1]
        return None

    def owner(self, key):
        """The master every node agrees serves KEY's slot; None while they disagree."""
        slot = self.slot_of(key)
        ports = {self.owner_seen_by(node, slot) for node in self.nodes}
        if len(ports) != 1 or None in ports:
            return None
        port = ports.pop()
        return next(node for node in self.nodes if node.port == port)

    def url(self, i):
        return self.nodes[i].url

    def migrate(self, key, source_first=False, told_apart=1.5, meanwhile=None):
        """Moves KEY's slot from the master that serves it to the next one, as redis-cli --cluster
        reshard does: IMPORTING on the target, MIGRATING on the source, the slot's keys moved
        (again while any are left: contenders may create one meanwhile), then the new owner told
        to every node. In the order operators use, the target first; with SOURCE_FIRST, the
        source first and the target TOLD_APART seconds later: until then each sends the slot's
        requests to the other with -MOVED. MEANWHILE, if given, is called once the first node
        has been told. Returns the new owner once every node agrees."""
        source = self.owner(key)
        if source is None:
            raise ScenarioFailed(f"the nodes do not agree who serves {key}")
        target = self.nodes[(self.nodes.index(source) + 1) % len(self.nodes)]
        slot = self.slot_of(key)
        target.call("CLUSTER", "SETSLOT", slot, "IMPORTING", self.ids[source.port])
        source.call("CLUSTER", "SETSLOT", slot, "MIGRATING", self.ids[target.port])
        for _ in range(50):
            keys = source.call("CLUSTER", "GETKEYSINSLOT", slot, 100)
            if not keys:
                break
            try:
                source.call("MIGRATE", HOST, target.port, "", 0, 5000, "KEYS", *keys)
            except redis.exceptions.ResponseError as error:
                if "NOKEY" not in str(error):  # they expired or were deleted meanwhile
                    raise ScenarioFailed(f"MIGRATE of {keys!r} failed: {error}") from error
        else:
            raise ScenarioFailed(f"keys of slot {slot} kept appearing on the source")
        others = [node for node in self.nodes if node not in (source, target)]
        order = [source, target] if source_first else [target, source]
        for node in order + others:
            if source_first and node is target:
                self.s.sleep(told_apart)
            node.call("CLUSTER", "SETSLOT", slot, "NODE", self.ids[target.port])
            if node is order[0] and meanwhile is not None:
                meanwhile()
        self.s.wait_for("every node to name the new owner", lambda: self.owner(key) is target,
                        timeout=20)
        return target

    def redirects_answered(self):
        """How many -MOVED and -ASK answers the nodes have given so far (INFO errorstats)."""
        total = 0
        for node in self.nodes:
            stats = self.s.commandstats(node)
            total += sum(stats.get(f"errorstat_{word}", {}).get("count", 0)
                         for word in ("MOVED", "ASK"))
        return total

    def expect_free(self, key):
        """Fails the run if KEY is still locked on the master that serves it."""
        owner = self.owner(key)
        if owner is None or owner.call("EXISTS", key):
            raise ScenarioFailed(f"{key} is still locked (or the nodes disagree who serves it)")
