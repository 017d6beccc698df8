#!/usr/bin/env bash
# --replicas N: every grant and renewal is followed, in the same write, by WAIT N. Too few
# acknowledgements undo a grant (69, nothing left locked) and fail a renewal (retried until the
# lock's deadline, then lost: 76).
. "$(dirname "$0")/lib.sh"

# A replica of the default server, in sync with it; sets REPLICA_PID.
start_replica() {
    # A new replica's sync must not wait for more replicas to come along (Redis 7 waits 5 s).
    rcli config set repl-diskless-sync-delay 0 >/dev/null
    start_redis REPLICA --replicaof 127.0.0.1 "$REDIS_PORT"
    wait_for "the replica to be in sync" replica_in_sync
}

replica_in_sync() {
    redis-cli -p "$REPLICA_PORT" info replication | tr -d '\r' | grep -q '^master_link_status:up' &&
        rcli info replication | tr -d '\r' | grep -q "^slave0:.*port=$REPLICA_PORT,state=online"
}

test_a_replica_confirms_grants_and_renewals() {
    start_replica
    # WAIT may take up to a third of the TTL: 1 s here, ample on a loaded machine.
    run_rlr --replicas 1 -v -t 3s -k job -- sleep 1.3
    expect_status 0
    expect_contains "$err" "renewed job" "a renewal was made and confirmed"
    expect_not_contains "$err" "cannot renew" "no renewal failed"
    # The lock reached the replica while it was held.
    run_rlr --replicas 1 -k job -c "redis-cli -p $REPLICA_PORT get job"
    expect_status 0
    expect_ge "$out" 1000000000000 "the replica had the lock's timestamp"
}

test_a_grant_without_enough_replicas_is_undone() {
    start_replica
    kill -STOP "$REPLICA_PID"
    run_rlr --replicas 1 --connect-timeout 1s -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "only 0 of 1 replicas confirmed the grant of job within 1s" "message"
    expect_contains "$err" "nothing is left locked" "message"
    [ -e "$WORK/ran" ] && fail "the command ran on an unconfirmed grant"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "nothing left locked"
    # Two replicas asked for, one there: the same.
    kill -CONT "$REPLICA_PID"
    wait_for "the replica to be in sync again" replica_in_sync
    run_rlr --replicas 2 --connect-timeout 3s -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "only 1 of 2 replicas confirmed" "message"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "nothing left locked"
}

test_a_waiter_s_unconfirmed_grant_is_undone() {
    start_replica
    start_bg holder -k job -c "while [ ! -e '$WORK/release' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    start_bg waiter --replicas 1 --connect-timeout 1s -k job -- touch "$WORK/ran"
    wait_for "the waiter to block" blocked_clients_are 1
    kill -STOP "$REPLICA_PID"
    touch "$WORK/release"
    exit_of "$holder" || fail "the holder failed"
    exit_of "$waiter"
    expect_eq "$?" 69 "the waiter's status"
    expect_contains "$(cat "$WORK/waiter.err")" "only 0 of 1 replicas confirmed the grant" "message"
    [ -e "$WORK/ran" ] && fail "the command ran on an unconfirmed grant"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "nothing left locked"
}

test_renewals_without_enough_replicas_lose_the_lock() {
    start_replica
    start_bg holder --replicas 1 -v -t 4.5s -k job -- sleep 60
    wait_for "the holder's confirmed grant" grep -q "acquired job" "$WORK/holder.err"
    kill -STOP "$REPLICA_PID"
    local stopped_at
    stopped_at=$(now_ms)
    exit_of "$holder"
    expect_eq "$?" 76 "the holder's status"
    expect_lt $(($(now_ms) - stopped_at)) 12000 "lost within the TTL (and the kill)"
    local err_text
    err_text=$(cat "$WORK/holder.err")
    expect_contains "$err_text" "cannot renew job: only 0 of 1 replicas confirmed the renewal" \
        "the first failure"
    expect_contains "$err_text" "lost the lock on job: no renewal succeeded" "the loss"
}

test_replicas_is_refused_when_out_of_range() {
    local value
    for value in -1 101 x ''; do
        run_rlr --replicas "$value" -k job -- touch "$WORK/ran"
        expect_status 64 "--replicas '$value'"
        expect_contains "$err" "--replicas: '$value' is not a number of replicas from 0 to 100" \
            "message"
    done
    [ -e "$WORK/ran" ] && fail "a refused run ran its command"
    # 0 waits for nothing, even without a replica.
    run_rlr --replicas 0 -k job -- true
    expect_status 0
}

run_tests
