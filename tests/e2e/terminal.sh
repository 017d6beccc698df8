#!/usr/bin/env bash
# Interactive use: in a terminal the command can read it, Ctrl-C reaches the command (redlockrun
# waits, releases and exits 130), and Ctrl-Z stops both and hands the terminal back.
. "$(dirname "$0")/lib.sh"

PTY_SESSION="$(dirname "$0")/pty_session.py"
READER='echo ready; while read -r line; do echo "got $line"; done'

test_the_command_reads_the_terminal_and_ctrl_c_reaches_it() {
    out=$(/usr/bin/python3 "$PTY_SESSION" interrupt "$REDLOCKRUN" -k job -c "$READER" 2>"$WORK/transcript")
    status=$?
    expect_eq "$status" 0 "the session: $(cat "$WORK/transcript")"
    expect_eq "$out" "exit=130" "redlockrun's exit status after Ctrl-C"
    expect_eq "$(rcli exists job)" 0 "the lock is released"
}

test_ctrl_z_stops_both_and_fg_resumes() {
    out=$(/usr/bin/python3 "$PTY_SESSION" suspend "$REDLOCKRUN" -k job -c "$READER" 2>"$WORK/transcript")
    status=$?
    expect_eq "$status" 0 "the session: $(cat "$WORK/transcript")"
    expect_eq "$out" "exit=130" "redlockrun's exit status after Ctrl-Z, fg, Ctrl-C"
    expect_eq "$(rcli exists job)" 0 "the lock is released"
}

run_tests
