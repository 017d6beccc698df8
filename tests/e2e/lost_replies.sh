#!/usr/bin/env bash
# A connection reset at the worst moment of each lock call (tests/faults/netproxy.py): after Redis
# ran the call, before its reply came back. Whatever the run then reports, it leaves no lock behind.
. "$(dirname "$0")/lib.sh"

PROXY="$(dirname "$0")/../faults/netproxy.py"

# start_reset_proxy SCRIPT WHEN: a proxy to Redis that resets the first SCRIPT call; sets
# PROXY_PORT and PROXY_READY (whose .resets file lists the resets made).
start_reset_proxy() {
    local ready="$WORK/proxy.$1.$2"
    python3 "$PROXY" "$ready" "$REDIS_PORT" reset "$1" "$2" 2>"$ready.log" &
    BACKGROUND_PIDS+=("$!")
    wait_for "the proxy" test -s "$ready"
    PROXY_PORT=$(cat "$ready")
    PROXY_READY=$ready
}

expect_no_lock_left() {
    expect_eq "$(rcli exists lost)" 0 "the lock key is gone"
    expect_eq "$(rcli exists '{lost}:redlockrun:owner')" 0 "the owner record is gone"
    expect_eq "$(cat "$PROXY_READY.resets")" "$1" "the proxy reset the connection"
}

test_a_first_acquire_whose_reply_is_lost_leaves_no_lock() {
    # The acquire ran and granted the lock; the run cannot know and ends with 69. Before the fix
    # the grant stayed until its TTL ran out, keeping every other run out.
    start_reset_proxy acquire after
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:$PROXY_PORT" -k lost -t 60s -- true
    expect_status 69
    expect_contains "$err" "redlockrun: lost the connection" "the message"
    expect_no_lock_left "acquire after"
}

# The acquire ran and found the lock held: it queued the run, which cannot know and ends with 69.
# Its place must go with it: left until it lapsed (10 s), it would keep a run with -n out of the
# free lock, and the waiters behind it waiting.
test_a_first_acquire_whose_busy_reply_is_lost_leaves_no_place() {
    start_bg holder -k lost -c "while [ ! -e '$WORK/release' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held lost
    start_reset_proxy acquire after
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:$PROXY_PORT" -k lost -w 30s -- touch "$WORK/ran"
    expect_status 69
    expect_eq "$(cat "$PROXY_READY.resets")" "acquire after" "the proxy reset the connection"
    expect_eq "$(rcli zcard '{lost}:redlockrun:queue')" 0 "no place left in the queue"
    expect_eq "$(rcli hlen '{lost}:redlockrun:waiters')" 0 "no waiter's record left"
    touch "$WORK/release"
    exit_of "$holder" || fail "the holder failed: $(cat "$WORK/holder.err")"
    run_rlr -n -k lost -- true
    expect_status 0 "a run with -n takes the free lock at once"
    if [ -e "$WORK/ran" ]; then fail "the run whose reply was lost ran its command"; fi
}

test_a_first_acquire_lost_on_the_way_leaves_no_lock() {
    start_reset_proxy acquire before
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:$PROXY_PORT" -k lost -t 60s -- true
    expect_status 69
    expect_no_lock_left "acquire before"
}

test_a_renewal_whose_reply_is_lost_is_sent_again() {
    start_reset_proxy renew after
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:$PROXY_PORT" -k lost -t 3s -- sleep 2
    expect_status 0
    expect_no_lock_left "renew after"
}

test_a_release_whose_reply_is_lost_counts_as_released() {
    start_reset_proxy release after
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:$PROXY_PORT" -k lost -t 60s -- true
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_no_lock_left "release after"
}

test_a_release_lost_on_the_way_is_sent_again() {
    start_reset_proxy release before
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:$PROXY_PORT" -k lost -t 60s -- true
    expect_status 0
    expect_no_lock_left "release before"
}

run_tests
