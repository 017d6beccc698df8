#!/usr/bin/python3
"""An interactive shell at a terminal, typed into as a person would: the owner of a hold that a
person takes by hand.

    interactive_owner.py RCFILE REACTION LINE...

Starts `bash --noprofile --rcfile RCFILE --noediting -i` on a new pseudo-terminal, of which it is
the controlling process (a session of its own, as a login's shell). RCFILE must set PS1 to PROMPT:
each time the shell shows it, the next LINE is typed, REACTION seconds later (a person's: 1, say),
as a person reads the terminal before typing (the keeper of a lost hold looks for what its owner's shell runs in the
foreground every 100 ms until it finds nothing: a line typed at once, ahead of that look, would be
taken for the job it stopped, as typed-ahead input is). What the terminal shows
(the shell's echo, its messages, anything written to the terminal) is copied to stdout. Exits
with the shell's status, once the shell has exited and nothing holds the terminal any more; 128+N
if the shell was killed by signal N.

Without line editing the shell reads whole lines and shows its prompt once per command, so each
prompt is the shell asking for the next one: after a foreground job ended, whichever way.
"""
import os
import pty
import select
import sys
import time

PROMPT = b"interactive-owner> "


def main():
    rcfile, reaction = sys.argv[1], float(sys.argv[2])
    lines = [line.encode() + b"\n" for line in sys.argv[3:]]
    pid, terminal = pty.fork()
    if pid == 0:
        os.execvp("bash", ["bash", "--noprofile", "--rcfile", rcfile, "--noediting", "-i"])
    shown = sys.stdout.buffer
    unread = b""
    typing_at = None  # when the next line is typed: a prompt asked for it
    while True:
        wait = None if typing_at is None else max(0.0, typing_at - time.monotonic())
        if not select.select([terminal], [], [], wait)[0]:
            os.write(terminal, lines.pop(0))
            typing_at = None
            continue
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # EIO: the shell has exited, and nothing else has the terminal open
            break
        if not chunk:
            break
        shown.write(chunk)
        shown.flush()
        unread += chunk
        while (at := unread.find(PROMPT)) >= 0:
            unread = unread[at + len(PROMPT):]
            if lines and typing_at is None:
                typing_at = time.monotonic() + reaction
        unread = unread[-len(PROMPT):]
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status)
             else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
