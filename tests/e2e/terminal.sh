#!/usr/bin/env bash
# Interactive use: in a terminal the command can read it, Ctrl-C reaches the command (redlockrun
# waits, releases and exits 130), and Ctrl-Z stops both and hands the terminal back.
. "$(dirname "$0")/lib.sh"

PTY_SESSION="$(dirname "$0")/pty_session.py"
READER='echo ready; while read -r line; do echo "got $line"; done'

# Plays SCENARIO (see pty_session.py) with a command that echoes what it reads from the terminal;
# redlockrun must end with 130 after the final Ctrl-C, and release the lock.
play() {
    out=$(/usr/bin/python3 "$PTY_SESSION" "$1" "$REDLOCKRUN" -k job -c "$READER" 2>"$WORK/transcript")
    expect_eq "$?" 0 "the session: $(cat "$WORK/transcript")"
    expect_eq "$out" "exit=130" "redlockrun's exit status"
    expect_eq "$(rcli exists job)" 0 "the lock is released"
}

test_the_command_reads_the_terminal_and_ctrl_c_reaches_it() {
    play interrupt
}

test_ctrl_z_stops_both_and_fg_resumes() {
    play suspend
}

# In a terminal, a run that has to wait says so once, for whom, and when it got the lock.
test_a_wait_in_a_terminal_is_announced() {
    start_bg holder -k job -t 1s -c 'sleep 2'
    wait_for "the holder" lock_held job
    out=$(/usr/bin/python3 "$PTY_SESSION" interrupt "$REDLOCKRUN" -w 30s -k job -c "$READER" \
        2>"$WORK/transcript")
    expect_eq "$?" 0 "the session: $(cat "$WORK/transcript")"
    expect_eq "$out" "exit=130" "redlockrun's exit status"
    local transcript
    transcript=$(cat "$WORK/transcript")
    expect_contains "$transcript" "redlockrun: job is held by $(hostname) pid $holder" "for whom"
    expect_contains "$transcript" "waiting up to 30s" "that it waits"
    expect_eq "$(grep -c "waiting up to" <<<"$transcript")" 1 "said once"
    expect_contains "$transcript" "redlockrun: got job" "that it got the lock"
    exit_of "$holder" || fail "the holder failed"
}

run_tests
