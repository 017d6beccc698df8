"""A Sentinel deployment for one run of a scenario: a master and two replicas, three sentinels
(quorum 2), all on loopback and free ports, started with the run and stopped at its teardown.
tests/faults/README.md ("Sentinel failovers") says how the scenarios use it."""
import os

import redis

from harness import Process, ScenarioFailed, free_port

MASTER = "locks"
HOST = "127.0.0.1"
# A replica ready at once: no RDB on disk, no pause before a full synchronisation.
DATA_OPTIONS = ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                "--repl-diskless-load", "disabled"]


def fields(flat):
    """A sentinel's [name, value, name, value, ...] answer as a dict."""
    return dict(zip(flat[::2], flat[1::2]))


class Group:
    """A master, two replicas and three sentinels (quorum 2), for one run; every process is the
    run's, stopped at its teardown."""

    def __init__(self, s):
        self.s = s
        self.nodes = [s.redis(name="data0", options=DATA_OPTIONS)]
        for i in (1, 2):
            self.nodes.append(s.redis(name=f"data{i}", options=self.replica_of(self.nodes[0])))
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.sentinels = [None] * 3
        for i in range(3):
            self.start_sentinel(i)
        self.url = (f"redis-sentinel://{','.join(f'{HOST}:{p}' for p in self.sentinel_ports)}"
                    f"#{MASTER}")
        self.master = self.nodes[0]
        self.settle()

    @staticmethod
    def replica_of(node):
        return DATA_OPTIONS + ["--replicaof", HOST, str(node.port)]

    # --- sentinels ------------------------------------------------------------------------------

    def start_sentinel(self, i):
        """Starts sentinel I; a restarted one reads back the configuration it rewrote. A
        sentinel pings every second and counts an instance down once it has not answered for
        down-after-milliseconds since the link was made: at 1000, a master it has just switched
        to can be declared down before its first PONG is read, and failed over again."""
        port = self.sentinel_ports[i]
        conf = os.path.join(self.s.dir, f"sentinel{i}.conf")
        if not os.path.exists(conf):
            with open(conf, "w", encoding="utf-8") as f:
                f.write(f"port {port}\nbind {HOST}\ndaemonize no\ndir {self.s.dir}\n"
                        f"logfile {os.path.join(self.s.dir, f'sentinel{i}.log')}\n"
                        f"sentinel monitor {MASTER} {HOST} {self.nodes[0].port} 2\n"
                        f"sentinel down-after-milliseconds {MASTER} 1500\n"
                        f"sentinel failover-timeout {MASTER} 4000\n"
                        f"sentinel parallel-syncs {MASTER} 2\n")
        process = Process(["redis-server", conf, "--sentinel"],
                          os.path.join(self.s.dir, f"sentinel{i}.out"))
        self.s.processes.append(process)
        self.sentinels[i] = process
        self.s.wait_for(f"sentinel {i} to answer", lambda: self.ask(i, "PING"), timeout=10)

    def kill_sentinel(self, i):
        self.sentinels[i].kill()
        self.sentinels[i] = None

    def ask(self, i, *command):
        """A sentinel's answer, None if it cannot be reached."""
        client = redis.Redis(host=HOST, port=self.sentinel_ports[i], socket_timeout=2,
                             decode_responses=True)
        try:
            return client.execute_command(*command)
        except redis.exceptions.RedisError:
            return None
        finally:
            client.close()

    def live_sentinels(self):
        return [i for i, process in enumerate(self.sentinels) if process is not None]

    def named_master(self, i):
        """The port sentinel I names for the master (None if it cannot say)."""
        answer = self.ask(i, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER)
        return int(answer[1]) if answer else None

    def failover(self, via=0):
        """SENTINEL FAILOVER through sentinel VIA; returns the master that was failed over."""
        old = self.master
        answer = self.ask(via, "SENTINEL", "FAILOVER", MASTER)
        if answer not in (True, "OK"):
            raise ScenarioFailed(f"SENTINEL FAILOVER answered {answer!r}")
        return old

    # --- data nodes -----------------------------------------------------------------------------

    def role(self, node):
        client = redis.Redis(unix_socket_path=node.sock, socket_timeout=2, decode_responses=True)
        try:
            return client.execute_command("ROLE")
        except redis.exceptions.RedisError:
            return None
        finally:
            client.close()

    def node_on(self, port):
        return next(node for node in self.nodes if node.port == port)

    def agreed_master(self, sentinels=None):
        """The node every live sentinel (or each of SENTINELS) names, None while they differ."""
        ports = {self.named_master(i) for i in (sentinels or self.live_sentinels())}
        if len(ports) != 1 or None in ports:
            return None
        return self.node_on(ports.pop())

    def wait_for_new_master(self, old, sentinels=None, timeout=30):
        """Waits until the sentinels agree on a master other than OLD; returns it."""
        def moved():
            master = self.agreed_master(sentinels)
            return master is not None and master is not old and \
                (self.role(master) or [""])[0] == "master"
        self.s.wait_for("the sentinels to agree on a new master", moved, timeout=timeout)
        self.master = self.agreed_master(sentinels)
        return self.master

    def settled(self):
        """The sentinels agree on one master, know each other and see both replicas up, no
        failover is under way, and each replica follows the master and has all it wrote."""
        master = self.agreed_master()
        if master is None:
            return False
        for i in self.live_sentinels():
            state = fields(self.ask(i, "SENTINEL", "MASTER", MASTER) or [])
            replicas = [fields(r) for r in self.ask(i, "SENTINEL", "REPLICAS", MASTER) or []]
            if state.get("flags") != "master" or \
                    int(state.get("num-other-sentinels", 0)) != len(self.sentinels) - 1:
                return False
            good = [r for r in replicas if r.get("flags") == "slave" and
                    r.get("master-link-status") == "ok" and
                    int(r.get("master-port", 0)) == master.port]
            if len(good) != len(self.nodes) - 1:
                return False
        role = self.role(master)
        if not role or role[0] != "master" or len(role[2]) != len(self.nodes) - 1:
            return False
        written = role[1]  # what the master had written: each replica must have it now
        for node in self.nodes:
            if node is not master:
                theirs = self.role(node)
                if not theirs or theirs[0] != "slave" or theirs[2] != master.port or \
                        theirs[3] != "connected" or theirs[4] < written:
                    return False
        self.master = master
        return True

    def settle(self, timeout=40):
        self.s.wait_for("the sentinels and replicas to settle", self.settled, timeout=timeout)

    def restart_as_replica(self, node):
        """A data node killed (and forgotten) restarts empty, following the current master."""
        node.restart(options=self.replica_of(self.master))
