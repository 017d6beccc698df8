#!/usr/bin/env bash
# Lock keys and --list on Redis Cluster: every lock's other keys are in its own slot, a key whose
# other keys would be another key's is refused, and --list shows the locks of every master,
# whichever node the URL names. 3 masters, created with redis-cli --cluster create.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/cluster_lib.sh"
start_cluster 3 0

# The port of the node that serves KEY's slot: the one that does not answer MOVED.
master_of() {
    local node port
    for node in "${NODES[@]}"; do
        port=$(node_port "$node")
        if ! ncli "$port" exists "$1" | grep -q MOVED; then
            echo "$port"
            return
        fi
    done
}

# A key with PREFIX (PREFIX1, PREFIX2...) whose slot is on the master at PORT.
key_on() {
    local prefix=$1 port=$2 i
    for i in $(seq 1 500); do
        if [ "$(master_of "$prefix$i")" = "$port" ]; then
            echo "$prefix$i"
            return
        fi
    done
}

# Every key of every master, with its type, sorted: what a test compares before and after.
cluster_snapshot() {
    local node port key
    for node in "${NODES[@]}"; do
        port=$(node_port "$node")
        ncli "$port" --raw keys '*' | sort | while read -r key; do
            echo "$port $key $(ncli "$port" type "$key") $(ncli "$port" get "$key" 2>/dev/null)"
        done
    done
}

flush_cluster() {
    local node
    for node in "${NODES[@]}"; do
        ncli "$(node_port "$node")" flushall >/dev/null
    done
}

lock_held_on_cluster() { [ "$(ncli "$(master_of "$1")" exists "$1")" = 1 ]; }

test_a_key_s_other_keys_are_on_its_master() {
    flush_cluster
    local key master name
    for key in '{a}' 'x{a}' 'a' 'jobs:{deploy}:prod' 'a{b' '{{a}' 'a}:{b}'; do
        master=$(master_of "$key")
        run_rlr -u "$(node_url 1)" -k "$key" -c 'echo "$REDLOCKRUN_FENCE"'
        expect_status 0 "$key"
        for name in $(ncli "$master" --raw keys '*redlockrun:fence'); do
            if [ "$(ncli "$master" get "$name")" = "$out" ]; then
                expect_eq "$(master_of "$name")" "$master" "the master of $name, the fence of $key"
                continue 2
            fi
        done
        fail "the fence counter of $key is not on its master ($master)"
    done
}

test_a_key_that_would_share_a_tagged_key_s_other_keys_is_64_and_changes_nothing() {
    flush_cluster
    start_bg holder -u "$(node_url 2)" -t 60s -k '{a}' -- sleep 60
    wait_for "the holder" lock_held_on_cluster '{a}'
    local before node
    before=$(cluster_snapshot)
    for node in "${NODES[@]}"; do
        run_rlr -u "$(node_url "$node")" -k 'a}:{a' -- touch "$WORK/ran"
        expect_status 64 "a}:{a through node $node"
        expect_eq "$err" "redlockrun: the key a}:{a has no hash tag, and its other keys ({a}:{a}:redlockrun:*) would be those of the key {a}; put a hash tag in it, or leave out its braces" "message"
        run_rlr -u "$(node_url "$node")" -k 'a}:{a' --status
        expect_status 64 "--status of a}:{a through node $node"
    done
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(cluster_snapshot)" "$before" "the keys of every master"
    alive "$holder" || fail "the holder of {a} ended: $(cat "$WORK/holder.err")"
    run_rlr -u "$(node_url 3)" -k '{a}' --status
    expect_status 75 "--status of {a}"
    expect_contains "$out" "{a}: held by $(hostname) pid $holder" "--status of {a}"
}

# The keys of the locks --list printed, in order (text: the part before ": ").
listed_keys() {
    if [ "${1:-}" = json ]; then
        /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["key"])' "$WORK/out" | tr '\n' ' '
    else
        sed 's/: .*//' "$WORK/out" | tr '\n' ' '
    fi
}

test_list_shows_the_locks_of_every_master_through_any_node() {
    flush_cluster
    local masters=() node key keys=() expected
    for node in "${NODES[@]}"; do
        masters+=("$(node_port "$node")")
    done
    # Two locks on each master (job... and other...), one of them held.
    for port in "${masters[@]}"; do
        for prefix in job other; do
            key=$(key_on "$prefix" "$port")
            [ -n "$key" ] || { fail "no key found for the master at $port"; return; }
            keys+=("$key")
            run_rlr -u "$(node_url 1)" -k "$key" -- true
            expect_status 0 "taking $key"
        done
    done
    local held=${keys[2]} # on the second master
    start_bg holder -u "$(node_url 3)" -t 60s -k "$held" -- sleep 60
    wait_for "the holder" lock_held_on_cluster "$held"
    expected=$(printf '%s\n' "${keys[@]}" | LC_ALL=C sort | tr '\n' ' ')
    local jobs
    jobs=$(printf '%s\n' "${keys[@]}" | grep '^job' | LC_ALL=C sort | tr '\n' ' ')
    for node in "${NODES[@]}"; do
        run_rlr -u "$(node_url "$node")" --list
        expect_status 75 "--list through node $node: one lock is held"
        expect_eq "$(listed_keys)" "$expected" "--list through node $node"
        expect_eq "$(grep "^$held: " "$WORK/out" | cut -d' ' -f1-6)" \
            "$held: held by $(hostname) pid $holder" "the held lock through node $node"

        run_rlr -u "$(node_url "$node")" --list 'job*'
        expect_eq "$(listed_keys)" "$jobs" "--list 'job*' through node $node"

        run_rlr -u "$(node_url "$node")" --list --json 'job*'
        expect_eq "$(listed_keys json)" "$jobs" "--list --json 'job*' through node $node"

        run_rlr -u "$(node_url "$node")" --json --list
        expect_status 75 "--json --list through node $node"
        expect_eq "$(listed_keys json)" "$expected" "--json --list through node $node"
    done
    # Each line is the one --status prints (the held lock's up to its times).
    run_rlr -u "$(node_url 2)" --list
    cp "$WORK/out" "$WORK/list"
    for key in "${keys[@]}"; do
        run_rlr -u "$(node_url 1)" -k "$key" --status
        expect_eq "$(grep -F "$key: " "$WORK/list" | cut -d' ' -f1-6)" "$(cut -d' ' -f1-6 <<<"$out")" \
            "the line of $key"
    done
    run_rlr -u "$(node_url 1)" --list 'other*'
    expect_status 0 "no held lock among other*"
    run_rlr -u "$(node_url 1)" --list 'nothing*'
    expect_status 0 "no lock"
    expect_eq "$out" "" "nothing listed"
}

test_list_fails_whole_when_a_master_cannot_be_reached() {
    flush_cluster
    local key
    key=$(key_on job "$(node_port 2)")
    run_rlr -u "$(node_url 1)" -k "$key" -- true
    kill -STOP "$NODE3_PID"
    run_rlr -u "$(node_url 1)" --connect-timeout 1s --list
    kill -CONT "$NODE3_PID"
    expect_status 69 "a master does not answer"
    expect_eq "$out" "" "nothing printed"
    expect_contains "$err" "127.0.0.1:$(node_port 3)" "the message names the master"
    wait_for "the cluster to settle" cluster_ok 3 0
}

run_tests
