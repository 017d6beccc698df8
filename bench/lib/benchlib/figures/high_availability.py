"""Figure 9: highly available Redis, measured through delay proxies as figure 2 is.

Rows, each an uncontended `redlockrun -u URL -k KEY true`:
- direct: a master's proxy; the baseline of this figure, measured in the same rounds;
- Sentinel: a sentinel's proxy, the master's name after '#'; the sentinel names the master's proxy;
- Cluster, the key's own master: the proxy of the node that serves the key;
- Cluster, another node: the proxy of another node, which answers -MOVED naming the owner's proxy;
- `--replicas 1`: the proxy of a master with one replica.

Requests: what redlockrun sends, counted by the proxies, in undelayed runs: the requests on the
connections opened during those runs, summed over the proxies the row's runs can reach. The
sentinel's own links to the master cross the master's proxy too, but were opened before (and the
count is taken again should the sentinel reopen one meanwhile).
Waited round trips: (median with every proxy delaying each direction by delay_ms − median with no
delay) ÷ (2 × delay_ms). A cluster node or a sentinel announces one address, its proxy's, so the
proxies' delay is switched between rounds rather than having a second set of proxies; each round
runs every row undelayed, then every row delayed.
"""
from ..servers import DelayProxy
from ..stats import median
from ..topologies import (MASTER_NAME, create_cluster, sentinel_links, start_cluster_nodes,
                          start_replicated, start_sentinel)

DIRECT = "direct"
SENTINEL = "Sentinel"
CLUSTER_OWN = "Cluster, the key's own master"
CLUSTER_OTHER = "Cluster, another node"
REPLICAS = "--replicas 1"
COUNTING_ATTEMPTS = 3


class _Row:
    def __init__(self, name: str, argv: list, proxies: list, url: str, form: str):
        self.name, self.argv, self.proxies, self.url = name, argv, proxies, url
        self.form = form  # the command line, with what the URL names instead of its port
        self.plain_ms, self.delayed_ms = [], []
        self.runs = self.failures = 0  # every run: warm-up, counted and timed ones

    def timed(self, launcher) -> float:
        seconds, status = launcher.timed(self.argv)
        self.runs += 1
        if status != 0:
            self.failures += 1
        return seconds * 1000


def _argv(bench, url: str, key: str, options=()) -> list:
    tool = bench.tools[0]
    return [*tool.command, "-u", url, *options, *tool.key_then_command(key, ["true"])]


def _rows(bench, sentinel, replicated, cluster, cluster_key) -> list:
    own, other = cluster.owner(cluster_key)
    cluster_proxies = [node.proxy for node in cluster.nodes]
    master = sentinel.master
    return [
        _Row(DIRECT, _argv(bench, master.url, bench.key("ha-direct")), [master.proxy], master.url,
             "-u redis://MASTER"),
        _Row(SENTINEL, _argv(bench, sentinel.url, bench.key("ha-sentinel")),
             [sentinel.sentinel.proxy, master.proxy], sentinel.url,
             f"-u redis-sentinel://SENTINEL#{MASTER_NAME}"),
        _Row(CLUSTER_OWN, _argv(bench, cluster.nodes[own].url, cluster_key), cluster_proxies,
             cluster.nodes[own].url, "-u redis://NODE (serves the key)"),
        _Row(CLUSTER_OTHER, _argv(bench, cluster.nodes[other].url, cluster_key), cluster_proxies,
             cluster.nodes[other].url, "-u redis://NODE (-MOVED to the key's)"),
        _Row(REPLICAS, _argv(bench, replicated.url, bench.key("ha-replicas"), ["--replicas", "1"]),
             [replicated.proxy], replicated.url, "--replicas 1 -u redis://MASTER (one replica)"),
    ]


def _count(bench, row: _Row, runs: int) -> dict:
    """Requests and connections per run: those of the connections opened during the runs."""
    before = [proxy.stats()["connections"] for proxy in row.proxies]
    for _ in range(runs):
        row.timed(bench.launcher)
    per_connection = []
    for proxy, opened_before in zip(row.proxies, before):
        per_connection += proxy.stats()["per_connection"][opened_before:]
    return {"requests_per_run": sum(per_connection) / runs,
            "connections_per_run": len(per_connection) / runs,
            "per_connection": per_connection}


def _count_sentinel_row(bench, row: _Row, master, runs: int) -> dict:
    """As _count, taken again if the sentinel reopened a link to the master meanwhile, whose
    requests would be counted as redlockrun's."""
    for _ in range(COUNTING_ATTEMPTS):
        links = sentinel_links(master)
        counted = _count(bench, row, runs)
        if sentinel_links(master) == links:
            return counted
    counted["note"] = "the sentinel reopened its links while the requests were counted"
    return counted


def _set_delay(proxies: list, delay_ms: float) -> None:
    for proxy in proxies:
        proxy.set_delay(delay_ms)


def run(bench) -> dict:
    settings = bench.settings
    started = []
    try:
        cluster = start_cluster_nodes(bench.workdir, started)
        sentinel = start_sentinel(bench.workdir, started)
        replicated = start_replicated(bench.workdir, started)
        cluster_key = bench.key("ha-cluster")
        create_cluster(cluster, cluster_key)
        rows = _rows(bench, sentinel, replicated, cluster, cluster_key)
        proxies = [thing for thing in started if isinstance(thing, DelayProxy)]

        counted = {}
        for row in rows:
            row.timed(bench.launcher)  # warm-up: scripts loaded, redirects known to the nodes
            if row.name == SENTINEL:
                counted[row.name] = _count_sentinel_row(bench, row, sentinel.master.server,
                                                        settings.round_trip_runs)
            else:
                counted[row.name] = _count(bench, row, settings.round_trip_runs)

        for _ in range(settings.high_availability_rounds):
            for delay_ms in (0, settings.delay_ms):
                _set_delay(proxies, delay_ms)
                for row in rows:
                    samples = row.delayed_ms if delay_ms else row.plain_ms
                    samples.append(row.timed(bench.launcher))
    finally:
        for thing in reversed(started):
            thing.stop()

    results = {}
    for row in rows:
        plain_ms, delayed_ms = median(row.plain_ms), median(row.delayed_ms)
        results[row.name] = {**counted[row.name], "url": row.url, "form": row.form,
                             "runs": row.runs, "failures": row.failures,
                             "no_delay_ms": plain_ms, "delayed_ms": delayed_ms,
                             "waited_round_trips": (delayed_ms - plain_ms) / (2 * settings.delay_ms)}
    direct = results[DIRECT]["waited_round_trips"]
    for row in results.values():
        row["beyond_direct"] = row["waited_round_trips"] - direct
    return {"rows": results, "delay_ms": settings.delay_ms,
            "rounds": settings.high_availability_rounds,
            "counted_runs": settings.round_trip_runs}
