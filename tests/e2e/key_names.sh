#!/usr/bin/env bash
# The companion keys are named from the whole lock key: locks that share a hash tag, or foo and
# {foo}, are independent; a key that could be one of redlockrun's own is refused.
. "$(dirname "$0")/lib.sh"

# Starts a redlockrun that holds KEY (TTL 1s, so that it renews several times) until
# $WORK/release exists; its command marks $WORK/running-NAME. Sets the pid in NAME.
hold_until_released() {
    local name=$1 key=$2
    start_bg "$name" -t 1s -k "$key" -c "touch '$WORK/running-$name'; while [ ! -e '$WORK/release' ]; do sleep 0.02; done"
}

owner_pid() { rcli hget "$1" pid; }

# Two locks held at once, renewed side by side for a few TTLs: neither loses the other's renewals,
# each is reported as its own, and both are released.
check_independent() {
    local key1=$1 owner1=$2 key2=$3 owner2=$4
    hold_until_released first "$key1"
    wait_for "the first lock" test -e "$WORK/running-first"
    hold_until_released second "$key2"
    wait_for "the second lock while the first is held" test -e "$WORK/running-second"
    alive "$first" || fail "the first holder ended when the second took its lock"
    expect_eq "$(owner_pid "$owner1")" "$first" "owner of $key1"
    expect_eq "$(owner_pid "$owner2")" "$second" "owner of $key2"
    run_rlr -k "$key1" --status
    expect_contains "$out" "$key1: held by $(hostname) pid $first since" "--status of $key1"
    run_rlr -k "$key2" --status
    expect_contains "$out" "$key2: held by $(hostname) pid $second since" "--status of $key2"
    sleep 2 # both renew several times
    touch "$WORK/release"
    exit_of "$first" || fail "$key1: exit $? ($(cat "$WORK/first.err"))"
    exit_of "$second" || fail "$key2: exit $? ($(cat "$WORK/second.err"))"
    expect_eq "$(rcli exists "$key1" "$key2" "$owner1" "$owner2")" 0 "both released"
}

test_locks_that_share_a_hash_tag_are_independent() {
    check_independent 'backup:{tenant1}' '{tenant1}:backup:{tenant1}:redlockrun:owner' \
        'report:{tenant1}' '{tenant1}:report:{tenant1}:redlockrun:owner'
}

test_foo_and_braced_foo_are_independent() {
    check_independent foo '{foo}:redlockrun:owner' '{foo}' '{foo}:{foo}:redlockrun:owner'
}

test_a_tagged_key_s_companions_share_its_tag() {
    run_rlr -k 'jobs:{deploy}:prod' -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    expect_eq "$out" "$(rcli get '{deploy}:jobs:{deploy}:prod:redlockrun:fence')" "the fence counter"
    expect_eq "$(rcli keys '*' | sort | tr '\n' ' ')" '{deploy}:jobs:{deploy}:prod:redlockrun:durations {deploy}:jobs:{deploy}:prod:redlockrun:fence {deploy}:jobs:{deploy}:prod:redlockrun:wake ' "what is left"
}

test_a_key_that_names_redlockrun_s_own_keys_is_64_and_changes_nothing() {
    start_bg holder -t 60s -k job -- sleep 60
    wait_for "the holder" lock_held job
    local before key
    before=$(database_snapshot)
    for key in '{job}:redlockrun:owner' '{job}:redlockrun:wake' 'x:redlockrun:y' ':redlockrun:'; do
        run_rlr -k "$key" -- touch "$WORK/ran"
        expect_status 64 "run on $key"
        expect_eq "$err" "redlockrun: the key $key contains \":redlockrun:\", which names redlockrun's own keys; choose another key" "message"
        run_rlr -k "$key" --status
        expect_status 64 "--status of $key"
        expect_eq "$out" "" "--status printed nothing"
    done
    [ -e "$WORK/ran" ] && fail "a command ran"
    expect_eq "$(database_snapshot)" "$before" "the database"
    alive "$holder" || fail "the holder ended"
}

test_a_key_that_would_share_a_tagged_key_s_companions_is_64_and_changes_nothing() {
    # a}:{a has no hash tag; {a}:{a}, its companions' prefix, is also {a}'s.
    start_bg holder -t 60s -k '{a}' -- sleep 60
    wait_for "the holder" lock_held '{a}'
    local before key
    before=$(database_snapshot)
    for key in 'a}:{a' 'x{}:{x{'; do
        run_rlr -k "$key" -- touch "$WORK/ran"
        expect_status 64 "run on $key"
        expect_contains "$err" "redlockrun: the key $key has no hash tag, and its other keys" "message"
        expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "a one-line message"
        run_rlr -k "$key" --status
        expect_status 64 "--status of $key"
        expect_eq "$out" "" "--status printed nothing"
    done
    expect_eq "$err" "redlockrun: the key x{}:{x{ has no hash tag, and its other keys ({x{}:{x{}:redlockrun:*) would be those of the key {x{}; put a hash tag in it, or leave out its braces" "the whole message"
    [ -e "$WORK/ran" ] && fail "a command ran"
    expect_eq "$(database_snapshot)" "$before" "the database"
    alive "$holder" || fail "the holder of {a} ended: $(cat "$WORK/holder.err")"
    run_rlr --list
    expect_status 75 "--list"
    expect_eq "$(printf '%s\n' "$out" | cut -d' ' -f1-6)" "{a}: held by $(hostname) pid $holder" "--list"
    # Keys with braces that no other key's companions can be are locks as before.
    for key in 'a}:{b' '}:{a' 'a}b'; do
        run_rlr -k "$key" -c 'echo "$REDLOCKRUN_FENCE"'
        expect_status 0 "$key"
        expect_eq "$out" "$(rcli get "{$key}:redlockrun:fence")" "the fence of $key"
    done
}

run_tests
