#!/usr/bin/python3
"""The fenced resource: the one place every critical section writes to, on one clock.

    recorder.py SOCKET LOG

Listens on a unix-domain socket (reachable from any network namespace) and appends every event,
timestamped with its own monotonic clock, to LOG as one JSON object per line. Like a storage system
that honours fencing tokens, it refuses a request whose fence is smaller than the largest it has
accepted, or equal to it but from another holder: a write, and a read too, since a holder that
read before a stale holder's last write would write back a lost update. A section of the classic algorithm carries no
fence and is never refused (the resource cannot tell). A connection that closes without END (its
command was killed) ends its section at the time of the close.

A section of a semaphore (a redlockrun run with --limit N, N > 1) shares the resource with up to
N-1 others, so it cannot be held to the largest fence. The resource has N places for them instead:
a semaphore section takes a place at its first request and keeps it until it ends. A section that
asks for a place while N sections hold one means that one of those N + 1 is stale; fences cannot
say which (they order grants, not slots), so the resource displaces the smallest fence, the
oldest grant, and refuses every later request of the displaced section. It also refuses a
semaphore section whose fence is not larger than the largest an exclusive section had accepted,
or equal to the fence of a section holding a place. Semaphore sections do not share the counter
(N read-sleep-writes at once would lose increments by design): each reads and writes a counter of
its own, which starts at 0; its events say so with "own".

A shared section (redlockrun -s) may run beside any number of other shared sections, and never
beside an exclusive one. It reads the counter and writes back the value it read, unchanged: many
readers at once leave the counter as it was, but a write that came between a reader's read and its
write-back is undone by it (a lost increment, which the checker sees), and the checker requires a
reader's reads to see one value. Its fence is held to the exclusive sections' only: it is refused
if it is not larger than the largest fence accepted from an exclusive section (a writer granted
after it: it is stale), or if another shared section that has had a request accepted uses the same
fence; readers with different fences are all served at once. An exclusive section is refused if
its fence is not larger than every fence accepted before, readers' included: a reader granted
after a writer makes that writer stale.

The protocol is one line per request, one line per answer:

    BEGIN KIND HOLDER HOST FENCE WALL_NS [MODE [SLOT]]
                                           -> OK     KIND is redlockrun or classic; FENCE
                                                      is - if none; MODE is 1 (exclusive, the
                                                      default), N (--limit N) or shared (-s);
                                                      SLOT is $REDLOCKRUN_SLOT, - if none
    READ                                   -> VALUE N | REFUSED   the counter
    WRITE N                                -> ACCEPTED | REFUSED
    CHECK                                  -> OK     a hold's section is about to run --check
    CHECKED STATUS                         -> OK     it returned STATUS: logged as one "check"
                                                      event, "started" at the CHECK, "t" now
    END                                    -> OK

A check's two timestamps enclose the moment its --check asked Redis: the CHECK is stamped before
the section starts the call (it waits for the OK), the CHECKED after the call returned.
"""
import itertools
import json
import os
import signal
import socket
import sys
import threading
import time


class Resource:
    def __init__(self, log):
        self.lock = threading.Lock()
        self.log = log
        self.counter = 0
        self.largest = None  # (fence, holder) of the last write accepted with the largest fence
        self.largest_exclusive = None  # the largest fence accepted from an exclusive section
        self.places = {}  # connection number -> fence, for the semaphore sections holding a place
        self.displaced = set()  # connection numbers of semaphore sections displaced from a place
        self.own = {}  # connection number -> a semaphore section's own counter
        self.readers = {}  # connection number -> fence, for the shared sections admitted so far
        self.open = {}  # connection number -> holder, for sections still running at shutdown
        self.checking = {}  # connection number -> when its section's --check started

    def record(self, **event):
        """Writes the event under the lock, so that the log's order is the clock's order."""
        event["t"] = time.monotonic_ns()
        self.log.write(json.dumps(event) + "\n")
        self.log.flush()

    def admits(self, section, number=None):
        if section["kind"] != "redlockrun":
            return True
        fence = section["fence"]
        if fence is None:
            return False
        if section.get("limit", 1) > 1:
            return self.admits_to_a_place(section, number)
        if section.get("shared"):
            return self.admits_a_reader(section, number)
        if self.largest is None or fence > self.largest[0]:
            self.largest = (fence, section["holder"])
            self.largest_exclusive = fence
            return True
        if self.largest == (fence, section["holder"]):
            self.largest_exclusive = fence
            return True
        return False

    def admits_to_a_place(self, section, number):
        """A semaphore section: one of at most LIMIT places; see the module's docstring."""
        fence = section["fence"]
        if number in self.displaced:
            return False
        if self.largest_exclusive is not None and fence <= self.largest_exclusive:
            return False
        if number not in self.places:
            if fence in self.places.values():
                return False
            self.places[number] = fence
            if len(self.places) > section["limit"]:
                oldest = min(self.places, key=self.places.get)
                del self.places[oldest]
                self.displaced.add(oldest)
                self.record(ev="displaced", conn=oldest, by=number)
                if oldest == number:
                    return False
        if self.largest is None or fence > self.largest[0]:
            self.largest = (fence, section["holder"])
        return True

    def admits_a_reader(self, section, number):
        """A shared section: beside any other with another fence, never after a newer writer."""
        fence = section["fence"]
        if self.largest_exclusive is not None and fence <= self.largest_exclusive:
            return False
        if any(other == fence for conn, other in self.readers.items() if conn != number):
            return False
        self.readers[number] = fence
        if self.largest is None or fence > self.largest[0]:
            self.largest = (fence, section["holder"])
        return True

    def leave(self, number):
        """A section ended: a semaphore section's place is free again."""
        self.places.pop(number, None)
        self.readers.pop(number, None)
        self.displaced.discard(number)
        self.own.pop(number, None)
        self.open.pop(number, None)
        self.checking.pop(number, None)

    def serve(self, conn, number):
        section = None
        ended = False
        with conn, conn.makefile("rb") as lines:
            for line in self.lines_until_closed(lines):
                words = line.decode(errors="replace").split()
                if not words:
                    continue
                with self.lock:
                    answer = self.handle(number, words, section)
                    if words[0] == "BEGIN" and answer == "OK":
                        section = self.open[number]
                    if words[0] == "END" and section is not None:
                        ended = True
                try:
                    conn.sendall(answer.encode() + b"\n")
                except OSError:
                    break
                if ended:
                    break
        with self.lock:
            if section is not None and not ended:
                self.record(ev="end", conn=number, abrupt=True)
            self.leave(number)

    @staticmethod
    def lines_until_closed(lines):
        """The connection's lines until it closes. A command killed with an answer still unread
        resets its connection rather than closing it: that too ends its section."""
        try:
            yield from lines
        except OSError:
            return

    def handle(self, number, words, section):
        verb = words[0]
        if verb == "BEGIN" and section is None and len(words) in (6, 7, 8):
            kind, holder, host, fence, wall_ns = words[1:6]
            fence = int(fence) if fence.isdigit() else None
            mode = words[6] if len(words) >= 7 else "1"
            slot = int(words[7]) if len(words) == 8 and words[7].isdigit() else None
            limit = int(mode) if mode.isdigit() else 1
            shared = mode == "shared"
            self.open[number] = {"kind": kind, "holder": holder, "fence": fence, "limit": limit,
                                 "shared": shared}
            self.record(ev="begin", conn=number, kind=kind, holder=holder, host=host, fence=fence,
                        wall_ns=int(wall_ns), limit=limit, shared=shared, slot=slot)
            return "OK"
        if section is None:
            return "ERR begin first"
        own = section["kind"] == "redlockrun" and section["limit"] > 1
        extra = {"own": True} if own else {}
        if verb == "READ":
            accepted = self.admits(section, number)
            value = self.own.get(number, 0) if own else self.counter
            self.record(ev="read", conn=number, value=value, accepted=accepted, **extra)
            return f"VALUE {value}" if accepted else "REFUSED"
        if verb == "WRITE" and len(words) == 2 and words[1].isdigit():
            accepted = self.admits(section, number)
            if accepted and own:
                self.own[number] = int(words[1])
            elif accepted:
                self.counter = int(words[1])
            self.record(ev="write", conn=number, value=int(words[1]), accepted=accepted, **extra)
            return "ACCEPTED" if accepted else "REFUSED"
        if verb == "CHECK" and len(words) == 1:
            self.checking[number] = time.monotonic_ns()
            return "OK"
        if verb == "CHECKED" and len(words) == 2 and words[1].isdigit() \
                and number in self.checking:
            self.record(ev="check", conn=number, holder=section["holder"], fence=section["fence"],
                        status=int(words[1]), started=self.checking.pop(number))
            return "OK"
        if verb == "END":
            self.record(ev="end", conn=number, abrupt=False)
            self.places.pop(number, None)  # now: the next request may be another's
            self.readers.pop(number, None)
            return "OK"
        return "ERR unknown request"


def main():
    path, log_path = sys.argv[1:3]
    with open(log_path, "a", encoding="utf-8") as log:
        resource = Resource(log)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o777)  # contenders may run as another user inside a namespace
        server.listen(256)
        # Ends on SIGTERM: sections still open are left without an end, which the checker reports.
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        for number in itertools.count(1):
            conn, _ = server.accept()
            threading.Thread(target=resource.serve, args=(conn, number), daemon=True).start()


if __name__ == "__main__":
    main()
