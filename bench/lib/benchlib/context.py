"""What every figure needs: the counts it runs with, the servers, the tools, and where to write."""
import itertools
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Settings:
    smoke: bool
    uncontended_rounds: int  # figure 1: runs of each tool, interleaved
    round_trip_runs: int  # figures 2 and 9: runs per tool and proxy delay (figure 9: counted runs)
    delay_ms: float  # figures 2 and 9: the proxy's delay, each way
    handoff: dict  # figure 3: contenders -> loop iterations of each
    handoff_repeats: int  # figure 3: runs of each (tool, contenders), for the medians
    hold_us: int  # the critical section's length
    idle_waiters: int  # figure 4
    idle_window_s: float  # figure 4: how long the idle waiters are watched
    idle_settle_s: float  # figure 4: time for the waiters to start before the window opens
    fairness_contenders: int  # figure 5
    fairness_seconds: float  # figure 5
    scale_waiters: tuple  # figure 6
    memory_runs: int  # figure 7
    memory_hold_s: float  # figure 7: how long the command holds the lock before it reads the peak
    memory_ttl: str  # figure 7: redlockrun's --ttl there, short enough to renew in that time
    semaphore_limit: int  # figure 8: redlockrun --limit N
    semaphore_contenders: int  # figure 8: contenders looping over the critical section
    semaphore_iterations: int  # figure 8: loop iterations of each
    semaphore_waiters: tuple  # figure 8: bursts of waiters behind the semaphore's N holders
    shared_readers: int  # figure 10: contenders looping with redlockrun -s
    shared_writers: int  # figure 10: contenders looping with plain (exclusive) redlockrun, beside
    shared_iterations: int  # figure 10: loop iterations of each
    shared_batch: int  # figure 10: shared waiters one writer's release lets in, for their spread
    shared_batch_repeats: int  # figure 10: such releases, for the median spread
    shared_waiters: tuple  # figure 10: bursts of shared waiters behind a writer, counted
    high_availability_rounds: int  # figure 9: rounds, each running every row undelayed and delayed
    run_time_limit_s: float  # bound on one contention run, should a tool hang

    @staticmethod
    def full() -> "Settings":
        return Settings(smoke=False, uncontended_rounds=300, round_trip_runs=10, delay_ms=20,
                        handoff={2: 40, 8: 12, 64: 3}, handoff_repeats=3, hold_us=1000,
                        idle_waiters=4, idle_window_s=10, idle_settle_s=1.0,
                        fairness_contenders=8, fairness_seconds=8,
                        scale_waiters=(8, 32, 100, 200), memory_runs=5, memory_hold_s=1.5,
                        memory_ttl="1s",
                        semaphore_limit=2, semaphore_contenders=8, semaphore_iterations=12,
                        semaphore_waiters=(200,), shared_readers=6, shared_writers=2,
                        shared_iterations=12, shared_batch=8, shared_batch_repeats=15,
                        shared_waiters=(200,), high_availability_rounds=15,
                        run_time_limit_s=180)

    @staticmethod
    def smoke_test() -> "Settings":
        """Every figure, with counts that only show each one produces numbers."""
        return Settings(smoke=True, uncontended_rounds=3, round_trip_runs=1, delay_ms=20,
                        handoff={2: 2, 3: 4}, handoff_repeats=1, hold_us=1000,
                        idle_waiters=2, idle_window_s=0.5, idle_settle_s=0.2,
                        fairness_contenders=3, fairness_seconds=0.8,
                        scale_waiters=(3, 6), memory_runs=1, memory_hold_s=0.5,
                        memory_ttl="300ms",
                        semaphore_limit=2, semaphore_contenders=6, semaphore_iterations=2,
                        semaphore_waiters=(4,), shared_readers=4, shared_writers=2,
                        shared_iterations=2, shared_batch=4, shared_batch_repeats=2,
                        shared_waiters=(6,), high_availability_rounds=1,
                        run_time_limit_s=20)


@dataclass
class Bench:
    settings: Settings
    workdir: Path
    tools: list  # peers.Tool; tools[0] is redlockrun, tools[1] flock(1)
    redis: object  # servers.RedisServer
    etcd: object  # servers.EtcdServer, or None when etcd is skipped
    helper: Path  # the critical-section binary
    launcher: object  # spawn.Launcher with the direct servers' environment
    log: callable = print
    floor: list = field(default_factory=list)  # floor.prepare()'s command line, if it built
    library_floor: list = field(default_factory=list)  # floor.prepare_libraries()'s, likewise
    metrics_floor: list = field(default_factory=list)  # floor.prepare_metrics()'s, likewise
    builds: dict = field(default_factory=dict)  # figure 1's other builds: row name -> binary
    # peers.section_tools(): a section of a script locked by --hold or by flock(1), in figures 1-3
    sections: list = field(default_factory=list)
    # other_servers.start_all()'s rows: redlockrun against another server than `redis` (Redis 6.2,
    # Valkey 8.0), in figure 1 and at figure 3's counted N only; never counted, never a target's
    server_rows: list = field(default_factory=list)
    _keys: itertools.count = field(default_factory=itertools.count)

    def key(self, what: str) -> str:
        """A key no earlier scenario used: a lease or a lock left by one run never blocks the next."""
        return f"bench-{what}-{next(self._keys)}".replace(" ", "-").replace("(", "").replace(")", "")

    def available(self, servers=("redis", "etcd", "local")) -> list:
        return [tool for tool in self.tools if tool.available and tool.server in servers]

    def available_sections(self, servers=("redis", "local"), in_mixes=False) -> list:
        """The sections that can run here; those that run only in figure 3's mixed rows
        (peers.HOLD_FLOOR) with `in_mixes`."""
        return [tool for tool in self.sections if tool.available and tool.server in servers and
                (in_mixes or not tool.mix_only)]

    @property
    def reference(self):
        return self.tools[1]
