#!/usr/bin/env bash
# Fencing tokens: strictly increasing per key, up to the largest the scripts count exactly (2^53-1);
# beyond that, or with a counter that holds no number, the lock is refused (69) and nothing is
# written. The counter expires 7 days after the last grant; fences go on growing from the clock.
. "$(dirname "$0")/lib.sh"

FENCE='{job}:redlockrun:fence'

test_fences_grow_by_one_up_to_2_pow_53_minus_1() {
    rcli set "$FENCE" 9007199254740989 >/dev/null
    run_rlr -k job -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    expect_eq "$out" 9007199254740990 "the fence after 9007199254740989"
    run_rlr -k job -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    expect_eq "$out" 9007199254740991 "the largest fence"
    expect_eq "$(rcli get "$FENCE")" 9007199254740991 "the counter"
}

test_a_counter_at_or_beyond_2_pow_53_minus_1_refuses_the_lock() {
    local value before
    # 2^53-1; 2^53, whose successor a double cannot tell from it; 2^63-2, whose successor came out
    # negative; 2^63-1, INCR's own limit; and beyond any integer Redis counts.
    for value in 9007199254740991 9007199254740992 9223372036854775806 9223372036854775807 \
        99999999999999999999; do
        rcli flushall >/dev/null
        rcli set "$FENCE" "$value" >/dev/null
        before=$(database_snapshot)
        rm -f "$WORK/ran"
        run_rlr -k job -- touch "$WORK/ran"
        expect_status 69 "counter at $value"
        expect_contains "$err" "redlockrun: job is free, but not granted: its fence counter $FENCE holds $value" "message for $value"
        expect_contains "$err" "nothing was changed" "message for $value"
        [ -e "$WORK/ran" ] && fail "the command ran with the counter at $value"
        expect_eq "$(database_snapshot)" "$before" "the database with the counter at $value"
    done
}

test_a_counter_that_holds_no_number_refuses_the_lock() {
    local kind limit before
    # A string that is not a number, NaN (which Lua's tonumber reads), and keys of other types, for
    # an exclusive lock and for a semaphore, whose grant counts its fence in another place.
    for kind in text nan hash list; do
        for limit in 1 2; do
            rcli flushall >/dev/null
            case $kind in
            text) rcli set "$FENCE" twelve >/dev/null ;;
            nan) rcli set "$FENCE" nan >/dev/null ;;
            hash) rcli hset "$FENCE" last 12 >/dev/null ;;
            list) rcli rpush "$FENCE" 12 >/dev/null ;;
            esac
            before=$(database_snapshot)
            rm -f "$WORK/ran"
            run_rlr -k job --limit "$limit" -- touch "$WORK/ran"
            expect_status 69 "a $kind counter, --limit $limit"
            case $kind in
            text | nan) expect_contains "$err" "redlockrun: job is free, but not granted: its fence counter $FENCE holds a value that is not a number" "message for a $kind counter" ;;
            *) expect_contains "$err" "redlockrun: job is free, but not granted: its fence counter $FENCE holds a $kind" "message for a $kind counter" ;;
            esac
            expect_contains "$err" "nothing was changed" "message for a $kind counter"
            [ -e "$WORK/ran" ] && fail "the command ran with a $kind counter, --limit $limit"
            expect_eq "$(database_snapshot)" "$before" "the database with a $kind counter, --limit $limit"
        done
    done
    # Deleted, the counter starts again from the server's clock, as the message says.
    rcli del "$FENCE" >/dev/null
    run_rlr -k job -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0 "after the counter was deleted"
    local server_us
    server_us=$(rcli time | paste -sd' ' | awk '{ printf "%d%06d", $1, $2 }')
    [ "$out" -gt 1000000000000000 ] && [ "$out" -le "$server_us" ] ||
        fail "the fence after deleting the counter is $out, not the server's time in microseconds (now $server_us)"
}

SEVEN_DAYS_MS=$((7 * 24 * 3600 * 1000))

# The counter's expiry in ms from now: within the minute before 7 days (the test's own time).
expect_counter_kept_for_7_days() { # WHAT
    local pttl
    pttl=$(rcli pttl "$FENCE")
    expect_ge "$pttl" $((SEVEN_DAYS_MS - 60000)) "$1: the counter's PTTL"
    expect_ge "$SEVEN_DAYS_MS" "$pttl" "$1: the counter's PTTL, at most 7 days"
}

test_the_counter_expires_7_days_after_the_last_grant() {
    local limit
    # Every way a fence is counted: a run's grant, a semaphore slot's, and --break's move past them.
    for limit in 1 2; do
        rcli flushall >/dev/null
        run_rlr -k job --limit "$limit" -c 'echo "$REDLOCKRUN_FENCE"'
        expect_status 0 "--limit $limit"
        expect_counter_kept_for_7_days "after a grant, --limit $limit"
        # An older grant's expiry is pushed back by the next one: it counts from the last grant.
        rcli pexpire "$FENCE" 5000 >/dev/null
        run_rlr -k job --limit "$limit" -- true
        expect_status 0 "--limit $limit, again"
        expect_counter_kept_for_7_days "after a second grant, --limit $limit"
    done
    start_bg holder -t 3s -k job -- sleep 30
    wait_for "the holder" lock_held job
    rcli pexpire "$FENCE" 5000 >/dev/null
    run_rlr -k job --break
    expect_status 0 "--break"
    expect_counter_kept_for_7_days "after --break"
    exit_of "$holder"
    expect_eq "$?" 76 "the broken holder's exit status"
}

test_fences_grow_past_an_expired_counter() {
    local first second
    run_rlr -k job -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    first=$out
    # What 7 days without a grant leave: no counter.
    rcli del "$FENCE" >/dev/null
    run_rlr -k job -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    second=$out
    /usr/bin/python3 -c "import sys; sys.exit(0 if int(sys.argv[2]) > int(sys.argv[1]) else 1)" \
        "$first" "$second" || fail "the fence after the counter expired, $second, is not larger than $first"
    expect_counter_kept_for_7_days "the new counter"
}

test_a_waiter_refused_for_its_fence_leaves_nothing_behind() {
    # The grant behind a BLPOP is refused just the same, and the waiter takes no lock with it.
    start_bg holder -t 60s -k job -c "while [ ! -e '$WORK/release' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    start_bg waiter -k job -- touch "$WORK/ran"
    wait_for "the waiter to block" blocked_clients_are 1
    rcli set "$FENCE" 9007199254740991 >/dev/null
    touch "$WORK/release"
    exit_of "$holder" || fail "the holder failed: $(cat "$WORK/holder.err")"
    exit_of "$waiter"
    expect_eq "$?" 69 "the waiter's exit status"
    expect_contains "$(cat "$WORK/waiter.err")" "its fence counter $FENCE holds 9007199254740991" "message"
    [ -e "$WORK/ran" ] && fail "the waiter's command ran"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "no lock left"
    expect_eq "$(rcli get "$FENCE")" 9007199254740991 "the counter"
}

run_tests
