"""Figure 2: round trips of an uncontended run.

- Requests: the Redis commands a run sends, counted by bench/lib/delay_proxy.py as it forwards
  them (client requests only; a Lua script's own commands never cross the wire).
- Waited round trips: the same runs through the proxy with no delay and with `delay_ms` each way.
  A run that waits for N round trips is N x 2 x delay_ms slower, so the difference of the medians
  divided by 2 x delay_ms is the number of round trips it really waits for, whatever it sends.
  This also works for etcd, whose gRPC requests the proxy does not parse.

A section of a script locked with `redlockrun --hold` and `--release` (peers/redlockrun-hold) is
counted and timed the same way: its keeper takes over the connection that took the lock, and
releases through it when `--release` asks, so every request of the hold crosses the proxy.
"""
from ..servers import DelayProxy
from ..spawn import Launcher
from ..stats import median


def _through(bench, proxy_port_redis, proxy_port_etcd) -> Launcher:
    """The tools' environment, with the servers' addresses those of the proxies."""
    environment = dict(bench.launcher.environment)
    environment["REDIS_URL"] = f"redis://127.0.0.1:{proxy_port_redis}"
    environment["ETCDCTL_ENDPOINTS"] = f"127.0.0.1:{proxy_port_etcd}" if proxy_port_etcd else ""
    return Launcher(environment, bench.launcher.error_log)


def _proxies(bench, delay_ms: float):
    redis = DelayProxy(bench.redis.port, delay_ms, count_resp=True)
    etcd = DelayProxy(bench.etcd.port, delay_ms, count_resp=False) if bench.etcd else None
    return redis, etcd


def _timed_runs(launcher, argv, runs) -> list:
    launcher.timed(argv)  # warm-up: the scripts are known, the page cache is warm
    return [launcher.timed(argv)[0] * 1000 for _ in range(runs)]


def run(bench) -> dict:
    settings = bench.settings
    tools = bench.available(("redis", "etcd")) + bench.available_sections(("redis",))
    rows = {}
    plain, plain_etcd = _proxies(bench, 0)
    delayed, delayed_etcd = _proxies(bench, settings.delay_ms)
    try:
        direct = _through(bench, plain.port, plain_etcd.port if plain_etcd else 0)
        slow = _through(bench, delayed.port, delayed_etcd.port if delayed_etcd else 0)
        for tool in tools:
            argv = tool.argv(bench.key("round-trips"), ["true"])
            row = {}
            if tool.server == "redis":
                direct.timed(argv)  # warm-up, not counted
                before = plain.stats()
                for _ in range(settings.round_trip_runs):
                    direct.timed(argv)
                after = plain.stats()
                runs = settings.round_trip_runs
                row["requests_per_run"] = (after["commands"] - before["commands"]) / runs
                row["connections_per_run"] = (after["connections"] - before["connections"]) / runs
                row["per_connection"] = after["per_connection"][before["connections"]:]
            plain_ms = median(_timed_runs(direct, argv, settings.round_trip_runs))
            delayed_ms = median(_timed_runs(slow, argv, settings.round_trip_runs))
            row.update({"no_delay_ms": plain_ms, "delayed_ms": delayed_ms,
                        "waited_round_trips": (delayed_ms - plain_ms) / (2 * settings.delay_ms)})
            rows[tool.name] = row
    finally:
        for proxy in (plain, plain_etcd, delayed, delayed_etcd):
            if proxy:
                proxy.stop()
    return {"rows": rows, "delay_ms": settings.delay_ms}
