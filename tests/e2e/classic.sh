#!/usr/bin/env bash
# Sharing a key with clients of the classic SETNX/GETSET timestamp lock (tests/e2e/classic_client.py),
# in seconds and in milliseconds.
. "$(dirname "$0")/lib.sh"

CLASSIC="$(dirname "$0")/classic_client.py"
classic() { # UNIT TIMEOUT MODE [ARGS...]
    /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" job "$@"
}

test_a_classic_client_s_lock_is_respected() {
    local unit
    for unit in s ms; do
        rcli del job >/dev/null
        classic "$unit" 30 try || fail "the classic client ($unit) could not take a free lock"
        run_rlr -n -k job -- touch "$WORK/ran"
        expect_status 75 "behind a classic lock in $unit"
        expect_contains "$err" "job is held by a client of the classic algorithm, until it expires in" "message"
        run_rlr -k job --status
        expect_contains "$out" "held by a client of the classic algorithm" "--status in $unit"
        expect_contains "$out" " $unit)" "--status shows the unit"
        [ -e "$WORK/ran" ] && fail "the command ran"
        expect_eq "$(rcli ttl job)" -1 "the classic lock keeps having no TTL"
    done
}

test_redlockrun_s_lock_is_respected_by_classic_clients() {
    start_bg holder -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    classic ms 30 try && fail "a classic client in ms took redlockrun's lock"
    touch "$WORK/go"
    exit_of "$holder" || fail "the holder failed"

    rm -f "$WORK/go"
    start_bg holder --timestamp-unit s -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    classic s 30 try && fail "a classic client in s took redlockrun's lock"
    touch "$WORK/go"
    exit_of "$holder" || fail "the holder failed"
    classic s 30 try || fail "the classic client could not take the released lock"
}

test_a_stale_classic_lock_is_taken_over() {
    local value
    for value in $(($(server_ms) / 1000 - 5)) $(($(server_ms) - 5000)) "$(($(server_ms) / 1000 - 5)).5"; do
        rcli set job "$value" >/dev/null # expired, and without a TTL: a classic holder that crashed
        run_rlr -n -k job -- sh -c "redis-cli -p $REDIS_PORT get job"
        expect_status 0 "taking over $value"
        [ "$out" != "$value" ] || fail "the stale value $value was not replaced"
        expect_eq "$(rcli exists job)" 0 "released after taking over $value"
    done
}

test_a_waiter_notices_a_classic_release_promptly() {
    classic ms 30 try || fail "the classic client could not take a free lock"
    start_bg waiter -k job -c "date +%s%3N >'$WORK/waiter-start'"
    sleep 1
    [ -e "$WORK/waiter-start" ] && fail "the waiter ran while the classic lock was held"
    local released
    released=$(now_ms)
    rcli del job >/dev/null # the classic release: a plain DEL, which pushes no wake-up token
    exit_of "$waiter" || fail "the waiter failed"
    local started
    read_number started "$WORK/waiter-start" || return
    expect_lt "$((started - released))" 2500 "noticed the DEL well before the 5 s BLPOP cap"
}

test_timestamp_unit_s_writes_whole_seconds_rounded_up() {
    run_rlr --timestamp-unit s -t 1500ms -k job -- sh -c "redis-cli -p $REDIS_PORT get job; redis-cli -p $REDIS_PORT --eval '$EXPIRY_SCRIPT' job"
    expect_status 0
    local value expiretime now
    { read -r value; read -r expiretime; } <<<"$out"
    now=$(server_ms)
    [[ "$value" =~ ^[0-9]{10}$ ]] || fail "'$value' is not a Unix time in seconds"
    expect_ge "$((value * 1000))" "$((now + 1500 - 1000))" "rounded up, not down (now $now)"
    expect_lt "$((value * 1000))" "$((now + 1500 + 1000))" "about the TTL ahead"
    expect_eq "$expiretime" "$((value * 1000))" "the key expires when its timestamp does"
}

test_a_classic_takeover_while_redlockrun_is_suspended_is_reported() {
    # redlockrun stops renewing (SIGSTOP), its lock expires on the server, and a classic client takes
    # the key. When redlockrun continues it must see the loss and stop its command.
    start_bg holder -t 1s -k job -- sleep 30
    wait_for "the holder" lock_held job
    kill -STOP "$holder"
    wait_for "the lock to expire" eval '! lock_held job'
    classic ms 30 try || fail "the classic client could not take the expired lock"
    local classic_value
    classic_value=$(rcli get job)
    kill -CONT "$holder"
    exit_of "$holder"
    expect_eq "$?" 76 "exit status"
    expect_contains "$(cat "$WORK/holder.err")" "lost the lock on job" "message"
    expect_eq "$(rcli get job)" "$classic_value" "the classic client's lock is left alone"
}

# Checks that no two critical sections recorded in LOG ("who start end", ns) overlap.
expect_no_overlap() {
    local overlaps
    overlaps=$(sort -k2,2n "$1" | awk '
        NR > 1 && $2 < end { printf "%s started %d us before %s ended; ", $1, (end - $2) / 1000, who }
        { end = $3; who = $1 }')
    [ -z "$overlaps" ] || fail "overlapping critical sections: $overlaps"
}

mixed_contention() { # UNIT [redlockrun options...]
    local unit=$1
    shift
    local iterations=12 pids=() i
    rcli set counter 0 >/dev/null
    for i in 1 2 3 4; do
        classic "$unit" 10 loop "$iterations" "$WORK/records" &
        pids+=("$!")
        (
            for _ in $(seq "$iterations"); do
                "$REDLOCKRUN" "$@" -k job -c "start=\$(date +%s%N); v=\$(redis-cli -p $REDIS_PORT get counter); sleep 0.01; redis-cli -p $REDIS_PORT set counter \$((v + 1)) >/dev/null; echo \"redlockrun \$start \$(date +%s%N)\" >>'$WORK/records'" ||
                    echo "redlockrun failed: $?" >>"$WORK/failures"
            done
        ) &
        pids+=("$!")
    done
    for i in "${pids[@]}"; do
        wait "$i" || fail "a contender failed"
    done
    [ -s "$WORK/failures" ] && fail "$(cat "$WORK/failures")"
    expect_eq "$(rcli get counter)" $((8 * iterations)) "final count"
    expect_eq "$(grep -c ^classic "$WORK/records")" $((4 * iterations)) "classic critical sections"
    expect_eq "$(grep -c ^redlockrun "$WORK/records")" $((4 * iterations)) "redlockrun critical sections"
    expect_no_overlap "$WORK/records"
}

test_mixed_contention_in_milliseconds() {
    mixed_contention ms
}

test_mixed_contention_in_seconds() {
    mixed_contention s --timestamp-unit s
}

run_tests
