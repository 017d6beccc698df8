#!/usr/bin/python3
"""A critical section: the command a contender runs while it holds the lock.

    critical.py SOCKET KIND HOLDER HOST STEPS STEP_MS MODE [UNTIL_FILE] [--checks FILE REDLOCKRUN]

Connects to the recorder (recorder.py) on SOCKET, begins a section as HOLDER on HOST with the fence
from $REDLOCKRUN_FENCE (KIND redlockrun) or none (KIND classic), and a semaphore's slot from
$REDLOCKRUN_SLOT, then does STEPS read-sleep-write
increments of the recorder's counter, each holding its read for STEP_MS: two sections that overlap
lose an increment unless the recorder refuses the stale holder. A stale holder whose read is refused
writes 0 all the same, as a writer that does not check would: a recorder that accepted it would
break the counter. With UNTIL_FILE it goes on until that file exists instead (at most 120 s).
MODE is the holder's --limit, 1 for an exclusive lock: a semaphore's section (MODE N > 1) takes one
of the recorder's N places and increments a counter of its own. MODE shared is a shared lock's
section (redlockrun -s), a reader: each step reads the counter and, STEP_MS later, writes back the
value it read, unchanged (0 after a refused read, as a stale writer would), so that readers at once
leave the counter alone while a write that came between a reader's read and its write-back is
undone, an increment lost. It ends the section with END;
killed, it ends it by closing the connection. Refused writes are the resource's business: the
section goes on.

With --checks, a hold's section asks whether its hold is intact when the scenario wants it to: FILE
holds how many checks the scenario asked for so far, and after each step the section runs
`REDLOCKRUN --check` until it has run that many. Each is told to the recorder around the call:
CHECK before it starts, CHECKED STATUS once it has returned, so that the recorder's two timestamps
enclose the moment Redis was asked.
"""
import os
import select
import socket
import subprocess
import sys
import time


def checks_wanted(path):
    """How many checks the scenario has asked for (it replaces FILE whole); 0 before the first."""
    try:
        with open(path, encoding="utf-8") as wanted:
            return int(wanted.read() or 0)
    except (OSError, ValueError):
        return 0


def main():
    args = sys.argv[1:]
    checks = None
    if "--checks" in args:
        at = args.index("--checks")
        checks, args = args[at + 1:at + 3], args[:at] + args[at + 3:]
    path, kind, holder, host, steps, step_ms, mode = args[:7]
    increment = 0 if mode == "shared" else 1
    until = args[7] if len(args) > 7 else None
    fence = os.environ.get("REDLOCKRUN_FENCE", "-") if kind == "redlockrun" else "-"
    slot = os.environ.get("REDLOCKRUN_SLOT", "-") if kind == "redlockrun" else "-"
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    answers = conn.makefile("rb")

    def ask(request):
        conn.sendall(request.encode() + b"\n")
        return answers.readline().decode().split()

    def check(redlockrun):
        ask("CHECK")  # the recorder's timestamp comes before the call starts
        code = subprocess.run([redlockrun, "--check"], stdin=subprocess.DEVNULL).returncode
        ask(f"CHECKED {code if code >= 0 else 128 - code}")  # and this one after it returned

    ask(f"BEGIN {kind} {holder} {host} {fence} {time.time_ns()} {mode} {slot or '-'}")
    give_up = time.monotonic() + 120
    done = 0
    checked = 0
    while True:
        answer = ask("READ")
        value = int(answer[1]) if answer[0] == "VALUE" else -1
        # Not time.sleep: under an inherited libfaketime its absolute monotonic deadline fails
        # with EINVAL; a relative timeout does not.
        select.select([], [], [], int(step_ms) / 1000)
        ask(f"WRITE {max(value + increment, 0)}")
        done += 1
        if checks is not None:
            while checked < checks_wanted(checks[0]):
                check(checks[1])
                checked += 1
        if until is not None:
            if os.path.exists(until) or time.monotonic() > give_up:
                break
        elif done >= int(steps):
            break
    ask("END")


if __name__ == "__main__":
    main()
