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

The protocol is one line per request, one line per answer:

    BEGIN KIND HOLDER HOST FENCE WALL_NS   -> OK        KIND is redlockrun or classic; FENCE is - if none
    READ                                   -> VALUE N | REFUSED   the counter
    WRITE N                                -> ACCEPTED | REFUSED
    END                                    -> OK
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
        self.open = {}  # connection number -> holder, for sections still running at shutdown

    def record(self, **event):
        """Writes the event under the lock, so that the log's order is the clock's order."""
        event["t"] = time.monotonic_ns()
        self.log.write(json.dumps(event) + "\n")
        self.log.flush()

    def admits(self, section):
        if section["kind"] != "redlockrun":
            return True
        fence = section["fence"]
        if fence is None:
            return False
        if self.largest is None or fence > self.largest[0]:
            self.largest = (fence, section["holder"])
            return True
        return self.largest == (fence, section["holder"])

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
            self.open.pop(number, None)

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
        if verb == "BEGIN" and section is None and len(words) == 6:
            kind, holder, host, fence, wall_ns = words[1:]
            fence = int(fence) if fence.isdigit() else None
            self.open[number] = {"kind": kind, "holder": holder, "fence": fence}
            self.record(ev="begin", conn=number, kind=kind, holder=holder, host=host, fence=fence,
                        wall_ns=int(wall_ns))
            return "OK"
        if section is None:
            return "ERR begin first"
        if verb == "READ":
            accepted = self.admits(section)
            self.record(ev="read", conn=number, value=self.counter, accepted=accepted)
            return f"VALUE {self.counter}" if accepted else "REFUSED"
        if verb == "WRITE" and len(words) == 2 and words[1].isdigit():
            accepted = self.admits(section)
            if accepted:
                self.counter = int(words[1])
            self.record(ev="write", conn=number, value=int(words[1]), accepted=accepted)
            return "ACCEPTED" if accepted else "REFUSED"
        if verb == "END":
            self.record(ev="end", conn=number, abrupt=False)
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
