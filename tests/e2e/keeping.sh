#!/usr/bin/env bash
# Holding the lock while the command runs: renewal, lock loss (deleted, overwritten, Redis stalled,
# --no-renew), --on-lost, --kill-after, signals forwarded to the command's process group, and
# SIGKILL of redlockrun.
. "$(dirname "$0")/lib.sh"

# A command that records when it starts and when SIGTERM ends it, in ms.
recording_command() {
    local name=$1
    echo "trap 'date +%s%3N >$WORK/$name.end; exit 0' TERM; date +%s%3N >$WORK/$name.start; sleep 60 & wait"
}

test_renewal_keeps_the_lock_past_its_ttl() {
    start_bg holder -t 1s -k job -c "sleep 4; touch '$WORK/done'"
    wait_for "the holder" lock_held job
    local fence attempts=0 busy=0 seen
    fence=$(rcli hget '{job}:redlockrun:owner' fence)
    # Each check looks at the marker after the observation: a competitor that wins once the
    # holder's command has finished is in its right.
    while [ ! -e "$WORK/done" ]; do
        run_rlr -n -k job -- true
        if [ ! -e "$WORK/done" ]; then
            attempts=$((attempts + 1))
            [ "$status" = 75 ] && busy=$((busy + 1))
            [ "$status" = 0 ] && fail "a competitor got the lock while the holder's command ran"
        fi
        seen=$(rcli hget '{job}:redlockrun:owner' fence)
        [ -e "$WORK/done" ] || expect_eq "$seen" "$fence" "the fence during the run"
        sleep 0.2
    done
    exit_of "$holder" || fail "the holder failed: $(cat "$WORK/holder.err")"
    expect_ge "$attempts" 8 "competitor attempts over 4 s"
    expect_eq "$busy" "$attempts" "competitors refused"
    expect_eq "$(rcli exists job)" 0 "the lock is free right after"
}

test_a_killed_connection_is_replaced_for_the_next_renewal() {
    # A TTL of 2 s: the first renewal, due at 667 ms, finds the killed connection closed, and
    # renews on a new one without a failure (tests/e2e/idle_connections.sh has more of this).
    start_bg holder -v -t 2s -k job -c "sleep 3.5; touch '$WORK/done'"
    wait_for "the holder" lock_held job
    sleep 0.4
    rcli client kill type normal >/dev/null # every client's connection, the holder's included
    exit_of "$holder" || fail "the holder failed: $(cat "$WORK/holder.err")"
    test -e "$WORK/done" || fail "the command did not finish"
    local messages
    messages=$(cat "$WORK/holder.err")
    expect_not_contains "$messages" "cannot renew" "a failure"
    expect_contains "$messages" "renewed job in" "the renewals"
    expect_eq "$(rcli exists job)" 0 "released at the end"
}

test_a_deleted_lock_stops_the_command() {
    start_bg holder -t 1s -k job -c "$(recording_command holder)"
    wait_for "the command to set its trap" test -e "$WORK/holder.start"
    sleep 0.5
    local deleted
    deleted=$(now_ms)
    rcli del job >/dev/null
    exit_of "$holder"
    status=$?
    expect_eq "$status" 76 "exit status"
    local stopped
    read_number stopped "$WORK/holder.end" || return # SIGTERM never reached the command
    expect_lt "$((stopped - deleted))" 1500 "SIGTERM within about ttl/3 of the deletion"
    expect_contains "$(cat "$WORK/holder.err")" "lost the lock on job: the lock key was deleted" "message"
}

test_an_overwritten_lock_stops_the_command() {
    start_bg holder -t 1s --lost-exit-code 99 -k job -c "$(recording_command holder)"
    wait_for "the command to set its trap" test -e "$WORK/holder.start"
    sleep 0.3
    local overwritten stopped
    overwritten=$(now_ms)
    rcli set job $(($(server_ms) + 60000)) >/dev/null # as a classic client taking it over
    exit_of "$holder"
    expect_eq "$?" 99 "--lost-exit-code"
    # The status alone would come too after --kill-after's SIGKILL: the command must see SIGTERM.
    read_number stopped "$WORK/holder.end" || return
    expect_lt "$((stopped - overwritten))" 1500 "SIGTERM within about ttl/3 of the overwrite"
    expect_contains "$(cat "$WORK/holder.err")" "overwritten by another client" "message"
    expect_eq "$(rcli exists job)" 1 "the other client's lock is left alone"
}

test_an_owner_record_overwritten_with_another_type_stops_the_command() {
    # Someone else writes a string where the owner record was: the token is gone with it, so
    # nothing proves the lock this holder's, and the next renewal says so.
    start_bg holder -t 1s -k job -c "$(recording_command holder)"
    wait_for "the holder" lock_held job
    sleep 0.3
    rcli set '{job}:redlockrun:owner' not-a-record >/dev/null
    exit_of "$holder"
    expect_eq "$?" 76 "exit status"
    [ -e "$WORK/holder.end" ] || fail "the command was not stopped"
    expect_contains "$(cat "$WORK/holder.err")" "lost the lock on job: its owner record was overwritten by another client" "message"
    expect_not_contains "$(cat "$WORK/holder.err")" WRONGTYPE "message"
    expect_eq "$(rcli get '{job}:redlockrun:owner')" not-a-record "the other client's key is left alone"
}

test_a_release_finds_its_owner_record_overwritten() {
    local limit
    for limit in 1 2; do
        rcli flushall >/dev/null
        run_rlr -k job --limit "$limit" -c "redis-cli -p $REDIS_PORT set '{job}:redlockrun:owner' not-a-record >/dev/null"
        expect_status 76 "--limit $limit"
        expect_contains "$err" "the lock on job was lost before the command finished: its owner record was overwritten by another client" "message, --limit $limit"
        expect_not_contains "$err" WRONGTYPE "message, --limit $limit"
        # Not provably this run's: the key is not deleted, and expires by itself.
        expect_eq "$(rcli exists job)" 1 "the lock key, --limit $limit"
        expect_eq "$(rcli get '{job}:redlockrun:owner')" not-a-record "the other client's key, --limit $limit"
    done
}

test_a_command_that_ignores_sigterm_is_killed_after_kill_after() {
    start_bg holder -t 1s --kill-after 500ms -k job -c "trap '' TERM; echo \$\$ >$WORK/sh; sleep 60; true"
    wait_for "the command" test -s "$WORK/sh"
    local command
    read_number command "$WORK/sh" || return
    rcli del job >/dev/null
    local start
    start=$(now_ms)
    exit_of "$holder"
    expect_eq "$?" 76 "exit status"
    expect_lt "$(($(now_ms) - start))" 10000 "SIGKILL came after --kill-after, not after the command"
    expect_contains "$(cat "$WORK/holder.err")" "sending SIGKILL" "message"
    if alive "$command"; then fail "the command survived"; fi
}

# The grandchild is a shell of its own, started in the background by the command's shell: only a
# signal to the whole process group reaches it. Its trap says it got SIGTERM, not only the SIGKILL
# that --kill-after would send later.
test_a_lost_lock_sends_sigterm_to_the_whole_process_group() {
    start_bg holder -t 1s --kill-after 5s -k job -c \
        "sh -c 'trap \"date +%s%3N >$WORK/grandchild.end; exit 0\" TERM; echo \$\$ >$WORK/grandchild; sleep 60 & wait' & wait"
    wait_for "the grandchild" test -s "$WORK/grandchild"
    local grandchild deleted stopped
    read_number grandchild "$WORK/grandchild" || return
    deleted=$(now_ms)
    rcli del job >/dev/null
    exit_of "$holder"
    expect_eq "$?" 76 "exit status"
    # redlockrun exits once the command (the outer shell) has; the grandchild's trap may still be
    # writing its time then.
    wait_for "the grandchild's SIGTERM" test -s "$WORK/grandchild.end" || return
    read_number stopped "$WORK/grandchild.end" || return
    expect_lt "$((stopped - deleted))" 1500 "the grandchild's SIGTERM within about ttl/3 of the loss"
    wait_for "the grandchild to exit after its trap" eval "! alive $grandchild"
}

# Without --kill-after, a command that ignores SIGTERM is killed 10 s after it, not sooner, not
# later. A process of the command's group that does not ignore it says when SIGTERM came.
test_the_default_kill_after_is_10_seconds() {
    start_bg holder -t 1s -k job -c \
        "(trap 'date +%s%3N >$WORK/term; exit 0' TERM; touch $WORK/trap-set; while :; do sleep 0.1; done) & trap '' TERM; echo \$\$ >$WORK/sh; sleep 60; true"
    wait_for "the command" test -s "$WORK/sh"
    wait_for "the recording subshell's trap" test -e "$WORK/trap-set"
    local command term killed
    read_number command "$WORK/sh" || return
    rcli del job >/dev/null
    exit_of "$holder"
    expect_eq "$?" 76 "exit status"
    killed=$(now_ms)
    read_number term "$WORK/term" || return
    expect_ge "$((killed - term))" 9500 "SIGKILL no sooner than 10 s after SIGTERM"
    expect_lt "$((killed - term))" 12000 "SIGKILL no later than about 10 s after SIGTERM"
    expect_contains "$(cat "$WORK/holder.err")" "sending SIGKILL" "message"
    if alive "$command"; then fail "the command survived"; fi
}

test_on_lost_ignore_keeps_the_command_and_its_status() {
    start_bg holder -t 1s --on-lost ignore -k job -c "sleep 2; exit 4"
    wait_for "the holder" lock_held job
    rcli del job >/dev/null
    exit_of "$holder"
    expect_eq "$?" 4 "the command's own status"
    expect_contains "$(cat "$WORK/holder.err")" "the command runs on without it (--on-lost ignore)" "warning"
}

test_no_renew_makes_the_ttl_a_hard_bound() {
    run_rlr --no-renew -t 1s -k job -- sleep 3
    expect_status 76
    expect_lt "$elapsed_ms" 2500 "stopped at the TTL"
    expect_contains "$err" "its TTL of 1s ran out (--no-renew)" "message"
    run_rlr --no-renew -t 1s -k job -- sleep 0.2
    expect_status 0
}

# From a MONITOR log: the largest expiry the first grant's holder wrote, i.e. the last SET of the lock
# key before the second grant (a grant SETs the fence counter; a renewal does not).
first_holder_expiry() {
    awk '
        / lua\] "SET" "\{job\}:redlockrun:fence"/ { grants++ }
        / lua\] "SET" "job" / && grants == 1 { gsub(/"/, "", $NF); value = $NF }
        END { print value }
    ' "$1"
}

test_a_stalled_redis_stops_the_command_before_the_key_expires() {
    redis-cli -p "$REDIS_PORT" monitor >"$WORK/monitor" &
    local monitor=$!
    BACKGROUND_PIDS+=("$monitor")
    wait_for "MONITOR" grep -q OK "$WORK/monitor"
    start_bg holder -t 1s --connect-timeout 500ms -k job -c "$(recording_command holder)"
    wait_for "the holder's command" test -e "$WORK/holder.start"
    start_bg waiter -k job -c "$(recording_command waiter | sed 's/sleep 60 & wait/true/')"
    sleep 0.5
    kill -STOP "$REDIS_PID"
    sleep 2.5 # well past the TTL
    test -e "$WORK/holder.end" || fail "the holder's command still ran with Redis stopped past the TTL"
    kill -CONT "$REDIS_PID"
    exit_of "$holder"
    expect_eq "$?" 76 "the holder's exit status"
    exit_of "$waiter" || fail "the waiter failed: $(cat "$WORK/waiter.err")"
    kill "$monitor"
    local expiry holder_end waiter_start
    expiry=$(first_holder_expiry "$WORK/monitor")
    read_number holder_end "$WORK/holder.end" || return
    read_number waiter_start "$WORK/waiter.start" || return
    [ -n "$expiry" ] || fail "no expiry found in the MONITOR log"
    expect_lt "$holder_end" "${expiry:-0}" "the holder's command ended before the key's expiry"
    expect_lt "$holder_end" "$waiter_start" "the two commands never overlapped"
    expect_contains "$(cat "$WORK/holder.err")" "no renewal succeeded for" "message"
}

test_signals_are_forwarded_to_the_whole_group() {
    local signal
    for signal in TERM HUP INT; do
        rm -f "$WORK/sh"
        start_bg holder -k job -c "echo \$\$ >$WORK/sh; sleep 60; true"
        wait_for "the command" test -s "$WORK/sh"
        local grandchild=""
        wait_for "the grandchild" pgrep -P "$(cat "$WORK/sh")" sleep
        grandchild=$(pgrep -P "$(cat "$WORK/sh")" sleep)
        kill -s "$signal" "$holder"
        exit_of "$holder"
        expect_eq "$?" $((128 + $(kill -l "$signal"))) "exit status after SIG$signal"
        sleep 0.1
        alive "$grandchild" && fail "SIG$signal did not reach the grandchild $grandchild"
        expect_eq "$(rcli exists job)" 0 "released after SIG$signal"
    done
}

test_a_command_that_handles_the_signal_keeps_its_status() {
    start_bg holder -k job -c "trap 'exit 7' USR1; echo ready >$WORK/ready; while :; do sleep 0.05; done"
    wait_for "the command" test -e "$WORK/ready"
    kill -USR1 "$holder"
    exit_of "$holder"
    expect_eq "$?" 7 "the command's own status"
    expect_eq "$(rcli exists job)" 0 "released"
}

# Every signal that would end redlockrun by default reaches the command instead: SIGALRM
# (timeout -s ALRM), SIGXCPU, a real-time signal. Killed by it, redlockrun would leave the command
# to PR_SET_PDEATHSIG, and exit with the signal's status, not the command's.
test_signals_that_would_end_redlockrun_are_forwarded_to_the_command() {
    local signal number
    for signal in ALRM XCPU RTMIN+3; do
        number=$(kill -l "$signal")
        rm -f "$WORK/ready"
        start_bg holder -k job -c "trap 'exit 7' $number; echo ready >$WORK/ready; while :; do sleep 0.05; done"
        wait_for "the command" test -e "$WORK/ready" || return
        kill -s "$signal" "$holder"
        exit_of "$holder"
        expect_eq "$?" 7 "SIG$signal: the command's own status"
        expect_eq "$(rcli exists job)" 0 "SIG$signal: released"
    done
}

test_sigkill_of_redlockrun_takes_the_command_down() {
    start_bg holder -t 1s -k job -- sleep 60
    wait_for "the holder" lock_held job
    local command
    command=$(pgrep -P "$holder" sleep)
    [ -n "$command" ] || fail "no command found"
    kill -KILL "$holder"
    wait "$holder" 2>/dev/null
    wait_for "the command to die with redlockrun" eval "! alive ${command:-0}"
    run_rlr -k job -- true
    expect_status 0
    expect_lt "$elapsed_ms" 5000 "a waiter got the lock once the TTL ran out"
}

run_tests
