#!/usr/bin/env bash
# A connection that worked and then broke while redlockrun was not using it (Redis's `timeout`
# setting, a proxy's or load balancer's idle timeout): the request that finds it broken is sent
# once more, on a new connection, so that renewals and the release still happen. The release that
# was sent twice is reported as what it was. (TLS: tests/e2e/tls.sh.)
. "$(dirname "$0")/lib.sh"

# Closes a client connection after one second without a request.
start_redis IDLE --timeout 1
idle_cli() { redis-cli -s "$IDLE_SOCK" "$@"; }
PROXY="$(dirname "$0")/idle_proxy.py"

# start_proxy NAME LISTEN UPSTREAM IDLE MODE: sets NAME_ADDRESS to the port or socket path.
start_proxy() {
    local name=$1 ready="$WORK/$1.ready"
    python3 "$PROXY" "$2" "$3" "$4" "$5" "$ready" 2>"$WORK/$1.log" &
    BACKGROUND_PIDS+=("$!")
    wait_for "the proxy $name" test -s "$ready"
    printf -v "${name}_ADDRESS" '%s' "$(cat "$ready")"
}
resets_of() { cat "$WORK/$1.ready.resets" 2>/dev/null | wc -l; }

test_a_release_after_the_server_closed_an_idle_connection() {
    idle_cli flushall >/dev/null
    run_rlr -u "redis://127.0.0.1:$IDLE_PORT" -k idle -- sleep 3
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_eq "$(idle_cli pttl idle)" -2 "the lock is released, not left to expire"
    expect_eq "$(idle_cli exists '{idle}:redlockrun:owner')" 0 "the owner record is gone"
    # And so the next run gets the lock at once.
    run_rlr -u "redis://127.0.0.1:$IDLE_PORT" -k idle -w 40 -- true
    expect_status 0
    expect_lt "$elapsed_ms" 5000 "the next run did not wait out the TTL"
}

test_a_release_over_a_unix_socket_after_an_idle_close() {
    idle_cli flushall >/dev/null
    run_rlr -u "unix://$IDLE_SOCK" -k idle -- sleep 3
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_eq "$(idle_cli pttl idle)" -2 "the lock is released"
}

test_renewals_after_idle_closes_say_nothing() {
    # Renewals every 2 s on a server that closes connections idle for 1 s: each one finds its
    # connection closed.
    idle_cli flushall >/dev/null
    run_rlr -u "redis://127.0.0.1:$IDLE_PORT" -t 6s -k idle -- sleep 5
    expect_status 0
    expect_eq "$err" "" "no renewal failure reported"
    expect_eq "$(idle_cli pttl idle)" -2 "the lock is released"
}

test_status_and_a_waiter_on_a_server_with_an_idle_timeout() {
    idle_cli flushall >/dev/null
    start_bg holder -u "redis://127.0.0.1:$IDLE_PORT" -t 6s -k idle -- sleep 3
    wait_for "the holder" eval '[ "$(idle_cli exists idle)" = 1 ]'
    run_rlr -u "redis://127.0.0.1:$IDLE_PORT" -k idle --status
    expect_status 75
    expect_contains "$out" "idle: held by" "--status"
    run_rlr -u "redis://127.0.0.1:$IDLE_PORT" -w 20s -k idle -- true
    expect_status 0 "the waiter"
    exit_of "$holder" || fail "the holder failed: $(cat "$WORK/holder.err")"
    expect_eq "$(cat "$WORK/holder.err")" "" "the holder's stderr"
    expect_eq "$(idle_cli pttl idle)" -2 "the lock is released"
}

# A proxy that forgets idle connections answers the next request with a reset: nothing on the
# socket tells beforehand. The release reaches Redis only on the second try.
test_a_release_through_a_proxy_that_resets_idle_connections() {
    start_proxy DROP 0 "$REDIS_PORT" 1 drop
    run_rlr -u "redis://127.0.0.1:$DROP_ADDRESS" -k job -- sleep 2
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_eq "$(resets_of DROP)" 1 "the release met the reset"
    expect_eq "$(rcli pttl job)" -2 "the lock is released"
}

# The renewals and the release all meet resets (every request comes after 1 s or more of quiet).
test_renewals_through_a_proxy_that_resets_idle_connections() {
    start_proxy DROP 0 "$REDIS_PORT" 0.8 drop
    run_rlr -v -u "redis://127.0.0.1:$DROP_ADDRESS" -t 3s -k job -- sleep 3.5
    expect_status 0
    expect_not_contains "$err" "cannot renew" "renewal failures"
    expect_not_contains "$err" "could not release" "release failure"
    expect_contains "$err" "renewed job in" "renewals"
    expect_ge "$(resets_of DROP)" 3 "renewals and the release met resets"
    expect_eq "$(rcli pttl job)" -2 "the lock is released"
}

# Over a unix socket a dropped connection is an end of stream, not a reset.
test_a_release_through_a_unix_socket_proxy() {
    start_proxy DROP "$WORK/proxy.sock" "$REDIS_SOCK" 1 drop
    run_rlr -u "unix://$DROP_ADDRESS" -k job -- sleep 2
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_eq "$(resets_of DROP)" 1 "the release met the closed connection"
    expect_eq "$(rcli pttl job)" -2 "the lock is released"
}

# The first release ran and deleted the lock; only its answer was lost. The second finds the lock
# gone: that is the first one's doing, not a lost lock.
test_a_release_whose_answer_was_lost_counts_as_released() {
    start_proxy SWALLOW 0 "$REDIS_PORT" 1 swallow
    run_rlr -v -u "redis://127.0.0.1:$SWALLOW_ADDRESS" -k job -- sleep 2
    expect_status 0
    expect_eq "$(resets_of SWALLOW)" 1 "the release's answer was lost"
    expect_not_contains "$err" "lost" "no lost lock reported"
    expect_contains "$err" "released job after" "reported as released"
    expect_eq "$(rcli pttl job)" -2 "the lock is released"
}

# Not every "not ours" after a resend is the first release's doing: a lock deleted while the
# command ran is still reported as lost.
test_a_lock_lost_during_the_run_is_still_reported_after_a_resend() {
    start_proxy SWALLOW 0 "$REDIS_PORT" 1 swallow
    run_rlr -u "redis://127.0.0.1:$SWALLOW_ADDRESS" -k job -c \
        "redis-cli -p $REDIS_PORT set job $(($(server_ms) + 60000)) >/dev/null; sleep 2"
    expect_status 76
    expect_contains "$err" "the lock on job was lost before the command finished" "message"
    expect_eq "$(rcli exists job)" 1 "the other client's lock is left alone"
}

run_tests
