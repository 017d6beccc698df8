#!/usr/bin/python3
"""Runs a command in a pseudo-terminal and plays a user at its keyboard.

    pty_session.py SCENARIO COMMAND [ARG...]

The command must print "ready", then read lines from the terminal and echo each as "got LINE".
Scenarios:
  interrupt  type a line, then Ctrl-C
  suspend    type a line, Ctrl-Z (the command and redlockrun must stop, and the terminal must be
             redlockrun's again), continue as a shell's `fg` would, type another line, Ctrl-C
Prints the transcript to stderr and "exit=N" on stdout; exits non-zero if a step did not happen.
"""
import os
import pty
import select
import signal
import sys
import time

TIMEOUT = 10.0


class Session:
    def __init__(self, command):
        self.pid, self.master = pty.fork()
        if self.pid == 0:
            os.execvp(command[0], command)
        self.transcript = b""

    def expect(self, text):
        deadline = time.monotonic() + TIMEOUT
        while text.encode() not in self.transcript:
            left = deadline - time.monotonic()
            if left <= 0:
                fail(f"timed out waiting for {text!r}", self)
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the other side has closed
                    fail(f"the terminal closed before {text!r}", self)
                self.transcript += chunk

    def type(self, text):
        os.write(self.master, text.encode())

    def wait(self, flags=0):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, flags | os.WNOHANG)
            if pid == self.pid:
                return status
            time.sleep(0.02)
        fail("timed out waiting for redlockrun", self)


def fail(message, session):
    sys.stderr.write(session.transcript.decode(errors="replace"))
    sys.stderr.write(f"\nFAIL: {message}\n")
    os.kill(session.pid, signal.SIGKILL)
    sys.exit(1)


def main():
    scenario, command = sys.argv[1], sys.argv[2:]
    session = Session(command)
    session.expect("ready")
    session.type("hello\n")
    session.expect("got hello")
    if scenario == "suspend":
        session.type("\x1a")  # Ctrl-Z
        status = session.wait(os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            fail("redlockrun did not stop with its command", session)
        if os.tcgetpgrp(session.master) != session.pid:
            fail("the terminal was not given back to redlockrun's process group", session)
        os.kill(session.pid, signal.SIGCONT)  # what `fg` sends once the terminal is the job's
        session.type("again\n")
        session.expect("got again")
    session.type("\x03")  # Ctrl-C
    status = session.wait()
    sys.stderr.write(session.transcript.decode(errors="replace"))
    print(f"exit={os.waitstatus_to_exitcode(status)}")


if __name__ == "__main__":
    main()
