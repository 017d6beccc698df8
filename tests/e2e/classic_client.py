#!/usr/bin/python3
"""A client of the classic Redis timestamp lock, for tests: the textbook SETNX / GET / GETSET
algorithm, with its own clock, in seconds or milliseconds, and keys without a TTL.

    classic_client.py PORT KEY UNIT TIMEOUT try            take it once: exit 0 (held, not
                                                           released) or 1 (busy)
    classic_client.py PORT KEY UNIT TIMEOUT loop N LOG     N times: take it (polling every 10 ms),
                                                           run a read-sleep-write increment of the
                                                           key "counter", record "classic START END"
                                                           (ns) in LOG, release
    classic_client.py PORT KEY UNIT TIMEOUT run CMD...     take it (polling every 10 ms), run CMD,
                                                           release, exit with CMD's status

PORT may be HOST:PORT. UNIT is s or ms; TIMEOUT is the lock's validity in seconds.
"""
import subprocess
import sys
import time

import redis


class ClassicLock:
    def __init__(self, client, key, unit, timeout):
        self.client = client
        self.key = key
        self.scale = 1000 if unit == "ms" else 1
        self.timeout = timeout
        self.expires = None

    def now(self):
        return int(time.time() * self.scale)

    def try_acquire(self):
        expires = self.now() + (self.timeout + 1) * self.scale
        if self.client.setnx(self.key, expires):
            self.expires = expires
            return True
        current = self.client.get(self.key)
        # A value from a redlockrun in the other unit, or a decimal, is read as the textbook
        # client would: as a number in its own unit.
        if current is not None and float(current) < self.now():
            old = self.client.getset(self.key, expires)
            if old is not None and float(old) < self.now():
                self.expires = expires
                return True
        return False

    def release(self):
        # Only while our own timestamp is still valid: after that, the lock may be someone else's.
        if self.now() < self.expires:
            self.client.delete(self.key)


def main():
    port, key, unit, timeout, mode = sys.argv[1:6]
    host, _, port = port.rpartition(":")
    client = redis.Redis(host=host or "localhost", port=int(port))
    lock = ClassicLock(client, key, unit, int(timeout))
    if mode == "try":
        sys.exit(0 if lock.try_acquire() else 1)
    if mode == "run":
        while not lock.try_acquire():
            time.sleep(0.01)
        status = subprocess.call(sys.argv[6:])
        lock.release()
        sys.exit(status if status >= 0 else 128 - status)
    iterations, log = int(sys.argv[6]), sys.argv[7]
    for _ in range(iterations):
        while not lock.try_acquire():
            time.sleep(0.01)
        start = time.time_ns()
        value = int(client.get("counter") or 0)
        time.sleep(0.01)
        client.set("counter", value + 1)
        end = time.time_ns()
        with open(log, "a") as records:
            records.write(f"classic {start} {end}\n")
        lock.release()


if __name__ == "__main__":
    main()
