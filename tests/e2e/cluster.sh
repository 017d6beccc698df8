#!/usr/bin/env bash
# Redis Cluster: a URL may name any node. -MOVED (to the node that serves the key's slot) and -ASK
# (a slot being migrated) are followed, -TRYAGAIN and -CLUSTERDOWN retried; waiters, holders and
# releases carry on through a slot migration and a failover. 3 masters and 3 replicas, created with
# redis-cli --cluster create, as operators do.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/cluster_lib.sh"
start_cluster 6 1

# The port of the master that serves KEY's slot.
master_of() {
    local slot line
    slot=$(ncli "$(node_port 1)" cluster keyslot "$1")
    ncli "$(node_port 1)" cluster nodes | while read -r line; do
        set -- $line
        [[ $3 == *master* ]] || continue
        local range
        for range in "${@:9}"; do
            local low=${range%-*} high=${range#*-}
            if [ "$slot" -ge "$low" ] && [ "$slot" -le "$high" ]; then
                local address=${2%@*}
                echo "${address##*:}"
                return
            fi
        done
    done
}

# The port of a replica of the master at PORT.
replica_of() {
    local id line
    id=$(ncli "$1" cluster myid)
    ncli "$1" cluster nodes | while read -r line; do
        set -- $line
        if [[ $3 == *slave* ]] && [ "$4" = "$id" ]; then
            local address=${2%@*}
            echo "${address##*:}"
            return
        fi
    done
}

masters() {
    ncli "$(node_port 1)" cluster nodes | awk '$3 ~ /master/ && $3 !~ /fail/ {split($2, a, "@"); n = split(a[1], b, ":"); print b[n]}'
}

# A key (jobN) whose slot lives on the master at PORT.
key_on() {
    local i
    for i in $(seq 1 500); do
        if [ "$(master_of "job$i")" = "$1" ]; then
            echo "job$i"
            return
        fi
    done
}

blocked_on() { [ "$(ncli "$1" info clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" = "$2" ]; }
served_by() { [ "$(master_of "$1")" = "$2" ]; }
held_on() { [ "$(ncli "$1" exists "$2")" = 1 ]; }

# Every test starts with empty masters (lib.sh's run_tests flushes only the default server).
flush_cluster() {
    local port
    for port in $(masters); do
        ncli "$port" flushall >/dev/null
    done
}

test_a_key_on_each_master_through_every_node() {
    flush_cluster
    local master key node port
    for master in $(masters); do
        key=$(key_on "$master")
        [ -n "$key" ] || { fail "no key found for master $master"; continue; }
        for node in "${NODES[@]}"; do
            port=$(node_port "$node")
            run_rlr -u "redis://127.0.0.1:$port" -k "$key" -c "redis-cli -p $master exists $key"
            expect_status 0 "$key through node $node"
            expect_eq "$out" 1 "$key was locked on its master ($master), through node $node"
            expect_eq "$(ncli "$master" exists "$key")" 0 "$key released through node $node"
        done
        run_rlr -u "redis://127.0.0.1:$(node_port 1)" -k "$key" --status
        expect_status 0 "--status through a node that does not serve $key"
        expect_contains "$out" "$key: free" "--status"
    done
}

test_contenders_spread_over_the_nodes_keep_a_counter_exact() {
    flush_cluster
    echo 0 >"$WORK/counter"
    local contender pids=() port
    for contender in 1 2 3 4 5 6 7 8; do
        port=$(node_port $(((contender - 1) % 6 + 1)))
        (
            for round in 1 2 3 4; do
                "$REDLOCKRUN" -u "redis://127.0.0.1:$port" -k counted -c \
                    "n=\$(cat '$WORK/counter'); sleep 0.02; echo \$((n + 1)) >'$WORK/counter'" ||
                    exit 1
            done
        ) 2>>"$WORK/errors" &
        pids+=($!)
    done
    for contender in "${pids[@]}"; do
        wait "$contender" || fail "a contender failed: $(cat "$WORK/errors")"
    done
    expect_eq "$(cat "$WORK/counter")" 32 "the counter"
}

test_a_cross_slot_key_is_refused_clearly_and_changes_nothing() {
    flush_cluster
    # "a}b" has a '}' but no hash tag: its companions are in another slot.
    run_rlr -u "redis://127.0.0.1:$(node_port 1)" -k 'a}b' -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "CROSSSLOT" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    local port
    for port in $(masters); do
        expect_eq "$(ncli "$port" dbsize)" 0 "nothing written on $port"
    done
}

# Moves KEY's slot from its master to another master, as redis-cli --cluster reshard does, with
# pauses so that renewals and waiters meet every stage: MIGRATING/IMPORTING, the keys moved one at
# a time, then the slot assigned.
migrate_slot_of() {
    local key=$1 source target slot source_id target_id port
    source=$(master_of "$key")
    target=$(masters | grep -v "^$source\$" | head -1)
    slot=$(ncli "$source" cluster keyslot "$key")
    source_id=$(ncli "$source" cluster myid)
    target_id=$(ncli "$target" cluster myid)
    ncli "$target" cluster setslot "$slot" importing "$source_id" >/dev/null
    ncli "$source" cluster setslot "$slot" migrating "$target_id" >/dev/null
    sleep 0.5
    # The keys move together, as redis-cli --cluster reshard moves them (in batches): a lock's
    # script needs all of them on one side.
    local keys
    keys=$(ncli "$source" cluster getkeysinslot "$slot" 100)
    if [ -n "$keys" ]; then
        ncli "$source" migrate 127.0.0.1 "$target" "" 0 5000 keys $keys >/dev/null
    fi
    sleep 0.5
    for port in $(masters); do
        ncli "$port" cluster setslot "$slot" node "$target_id" >/dev/null
    done
    echo "$target"
}

test_a_slot_migrated_while_a_holder_runs_and_waiters_wait() {
    flush_cluster
    local key=migrating
    start_bg holder -u "redis://127.0.0.1:$(node_port 1)" -t 3s -k "$key" -c \
        "echo holder start \$(date +%s%N) >>'$WORK/records'; sleep 4;
         echo holder end \$(date +%s%N) >>'$WORK/records'"
    wait_for "the holder" grep -q "holder start" "$WORK/records"
    local waiter pids=()
    for waiter in 1 2; do
        start_bg "w$waiter" -u "redis://127.0.0.1:$(node_port $((waiter + 1)))" -t 3s -k "$key" -c \
            "echo w$waiter start \$(date +%s%N) >>'$WORK/records'; sleep 0.3;
             echo w$waiter end \$(date +%s%N) >>'$WORK/records'"
        local name="w$waiter"
        pids+=("${!name}")
    done
    sleep 0.5
    local target
    target=$(migrate_slot_of "$key")
    exit_of "$holder" || fail "the holder exited with $? across the migration: $(cat "$WORK/holder.err")"
    for waiter in "${pids[@]}"; do
        exit_of "$waiter" || fail "a waiter exited with $?"
    done
    expect_eq "$(master_of "$key")" "$target" "the slot moved"
    check_no_overlap
}

# Starts moving KEY's slot to another master and tells only the source that it is done, as a
# script walking the nodes in port order may: from then on the source sends the slot's requests
# to the target with -MOVED, and the target, still importing, sends them back, until it is told
# too (tell_the_rest). Sets source, target and slot.
#
# The target imports the slot "from" the third master, not from the source. Valkey 8.0 ends a
# migration by itself when the node it imports from stops claiming the slot: within a gossip
# round (half a second here), the target takes the slot, and the disagreement these tests need
# would be gone before they look. Redis up to 7.2 and Valkey 7.2 would keep it either way; named
# wrongly, every server keeps it, so the tests see the same disagreement on each. MIGRATE and the
# redirects are the same: the target accepts the keys for any slot it imports.
tell_the_source_first() {
    local key=$1 target_id keys third_id
    source=$(master_of "$key")
    target=$(masters | grep -v "^$source\$" | head -1)
    third_id=$(ncli "$(masters | grep -v "^$source\$" | grep -v "^$target\$" | head -1)" cluster myid)
    slot=$(ncli "$source" cluster keyslot "$key")
    target_id=$(ncli "$target" cluster myid)
    ncli "$target" cluster setslot "$slot" importing "$third_id" >/dev/null
    ncli "$source" cluster setslot "$slot" migrating "$target_id" >/dev/null
    keys=$(ncli "$source" cluster getkeysinslot "$slot" 100)
    if [ -n "$keys" ]; then
        ncli "$source" migrate 127.0.0.1 "$target" "" 0 5000 keys $keys >/dev/null
    fi
    ncli "$source" cluster setslot "$slot" node "$target_id" >/dev/null
}

tell_the_rest() {
    local port target_id
    target_id=$(ncli "$target" cluster myid)
    for port in $(masters | grep -v "^$source\$"); do
        ncli "$port" cluster setslot "$slot" node "$target_id" >/dev/null
    done
}

# For the two seconds the nodes disagree, waiters and the holder's release must ride out the
# redirects, not spend them in milliseconds and give up (69, and a release that fails and leaves
# the lock until its TTL).
test_a_migration_told_to_the_source_first_bounces_requests_for_two_seconds() {
    flush_cluster
    local key=csem1 source target slot
    local url="redis://127.0.0.1:$(master_of "$key")"
    start_bg holder -u "$url" -t 5s -k "$key" -c \
        "echo holder start \$(date +%s%N) >>'$WORK/records'; sleep 1.5;
         echo holder end \$(date +%s%N) >>'$WORK/records'"
    wait_for "the holder" grep -q "holder start" "$WORK/records"
    start_bg exclusive -u "$url" -w 20s -t 5s -k "$key" -c \
        "echo exclusive start \$(date +%s%N) >>'$WORK/records'; sleep 0.2;
         echo exclusive end \$(date +%s%N) >>'$WORK/records'"
    start_bg counted -u "$url" -w 20s -t 5s --limit 2 -k "$key" -c \
        "echo counted start \$(date +%s%N) >>'$WORK/records'; sleep 0.2;
         echo counted end \$(date +%s%N) >>'$WORK/records'"
    wait_for "both waiters to block" blocked_on "$(master_of "$key")" 2
    tell_the_source_first "$key"
    sleep 2 # the holder's release falls in here
    tell_the_rest
    local name
    for name in holder exclusive counted; do
        exit_of "${!name}" || fail "$name exited with $?: $(cat "$WORK/$name.err")"
        expect_not_contains "$(cat "$WORK/$name.err")" "could not release" "$name's release"
    done
    check_no_overlap
    expect_eq "$(ncli "$target" exists "$key")" 0 "$key released on $target"
    expect_eq "$(master_of "$key")" "$target" "the slot moved"
}

# The nodes disagree for longer than a request's own time (--connect-timeout 1s): a waiter keeps
# waiting for as long as its -w allows, and the release goes on for as long as the lock is valid.
test_nodes_that_disagree_longer_than_a_request_may_take() {
    flush_cluster
    local key=csem1 source target slot
    local url="redis://127.0.0.1:$(master_of "$key")"
    start_bg holder -u "$url" --connect-timeout 1s -t 10s -k "$key" -c \
        "echo holder start \$(date +%s%N) >>'$WORK/records'; sleep 1;
         echo holder end \$(date +%s%N) >>'$WORK/records'"
    wait_for "the holder" grep -q "holder start" "$WORK/records"
    start_bg waiter -u "$url" --connect-timeout 1s -w 20s -k "$key" -c \
        "echo waiter start \$(date +%s%N) >>'$WORK/records'; sleep 0.2;
         echo waiter end \$(date +%s%N) >>'$WORK/records'"
    wait_for "the waiter to block" blocked_on "$(master_of "$key")" 1
    tell_the_source_first "$key"
    sleep 3.5
    tell_the_rest
    exit_of "$holder" || fail "the holder exited with $?: $(cat "$WORK/holder.err")"
    expect_not_contains "$(cat "$WORK/holder.err")" "could not release" "the holder's release"
    exit_of "$waiter" || fail "the waiter exited with $?: $(cat "$WORK/waiter.err")"
    check_no_overlap
    expect_eq "$(ncli "$target" exists "$key")" 0 "$key released on $target"
}

# ended_at NAME ARGS...: redlockrun in the background; "STATUS MS" in $WORK/NAME.end when it exits,
# its stderr in $WORK/NAME.err.
ended_at() {
    local name=$1
    shift
    ("$REDLOCKRUN" "$@" 2>"$WORK/$name.err"; echo "$? $(now_ms)" >"$WORK/$name.end") &
    BACKGROUND_PIDS+=("$!")
}

# A cluster whose nodes never agree (the target is never told) must not keep anyone forever, nor
# let a renewal answer after the holder's deadline: every request ends with its own time, a wait
# with its -w, and the holder finds its lock lost within its TTL.
test_nodes_that_never_agree_end_every_request_in_time() {
    flush_cluster
    local key=csem1 source target slot
    local url="redis://127.0.0.1:$(master_of "$key")"
    ended_at holder -u "$url" --connect-timeout 1s -t 3s -k "$key" -c \
        "echo holder start >>'$WORK/records'; sleep 10; echo holder end >>'$WORK/records'"
    wait_for "the holder" grep -q "holder start" "$WORK/records"
    ended_at waiter -u "$url" --connect-timeout 1s -w 4s -k "$key" -- true
    wait_for "the waiter to block" blocked_on "$(master_of "$key")" 1
    local began
    began=$(now_ms)
    tell_the_source_first "$key"
    RUN_RLR_LIMIT=20 run_rlr -u "$url" --connect-timeout 1s -n -k "$key" -- true
    expect_status 69 "a run while the nodes disagree"
    expect_contains "$err" "did not serve the request within" "its message"
    expect_contains "$err" "MOVED $slot" "its message"
    expect_lt "$elapsed_ms" 2500 "its time, with --connect-timeout 1s"
    RUN_RLR_LIMIT=20 run_rlr -u "$url" -k "$key" --status
    expect_status 69 "--status while the nodes disagree"
    expect_ge "$elapsed_ms" 4500 "its time, with the default --connect-timeout of 5s"
    expect_lt "$elapsed_ms" 7000 "its time, with the default --connect-timeout of 5s"
    wait_for "the holder and the waiter to end" test -s "$WORK/holder.end" -a -s "$WORK/waiter.end"
    local end_status end_ms
    read -r end_status end_ms <"$WORK/holder.end"
    expect_eq "$end_status" 76 "the holder, whose renewals cannot get through"
    # Lost at its deadline (under 3s), then one release that ends with --connect-timeout.
    expect_lt "$((end_ms - began))" 4800 "the holder's end, with -t 3s"
    read -r end_status end_ms <"$WORK/waiter.end"
    expect_eq "$end_status" 69 "the waiter, at the end of its -w"
    expect_contains "$(cat "$WORK/waiter.err")" "gave up waiting for $key" "the waiter's message"
    expect_lt "$((end_ms - began))" 5500 "the waiter's end, with -w 4s"
    expect_eq "$(grep -c "holder end" "$WORK/records")" 0 "the holder's command was stopped"
    tell_the_rest
}

# The records "NAME start|end NS" of $WORK/records: no two sections overlap.
# The queue's records are companions in the key's slot: the waiters of a key served by one master,
# each through another node, are listed in order by --status through a third, and --supersede ends
# the older deploy's wait there as on one server.
test_the_queue_and_supersede_through_nodes_that_do_not_serve_the_key() {
    flush_cluster
    local master key
    master=$(masters | head -1)
    key=$(key_on "$master")
    local others=()
    local node
    for node in "${NODES[@]}"; do
        [ "$(node_port "$node")" = "$master" ] || others+=("$node")
    done
    start_bg holder -u "$(node_url "${others[0]}")" -k "$key" -c "while [ ! -e '$WORK/release' ]; do sleep 0.02; done"
    wait_for "the holder" held_on "$master" "$key"
    start_bg older -u "$(node_url "${others[1]}")" -k "$key" -w 60s --supersede --note "deploy 1" -- touch "$WORK/older-ran"
    wait_for "the older deploy to wait" blocked_on "$master" 1
    start_bg patient -u "$(node_url "${others[2]}")" -k "$key" -w 60s -c "echo patient >>'$WORK/order'"
    wait_for "the patient waiter to wait" blocked_on "$master" 2
    run_rlr -u "$(node_url "${others[3]}")" -k "$key" --status
    expect_status 75 "--status of a held key"
    expect_contains "$out" "; 2 waiting" "--status's line"
    expect_contains "$out" "  1. $(hostname) pid $older (note: deploy 1), exclusive, --supersede, waiting for" "the first in line"
    expect_contains "$out" "  2. $(hostname) pid $patient, exclusive, waiting for" "the second in line"
    # Theirs, and the older deploy's as the newest with --supersede.
    expect_eq "$(ncli "$master" hlen "{$key}:redlockrun:waiters")" 3 "the waiters' records, on the key's master"
    start_bg newer -u "$(node_url "${others[3]}")" -k "$key" -w 60s --supersede --note "deploy 2" -c "echo newer >>'$WORK/order'"
    exit_of "$older"
    expect_eq "$?" 75 "the older deploy's status"
    expect_contains "$(cat "$WORK/older.err")" "deploy 2" "the older deploy's message names the newer one"
    [ -e "$WORK/older-ran" ] && fail "the superseded deploy ran"
    wait_for "the newer deploy to wait" blocked_on "$master" 2
    touch "$WORK/release"
    for node in holder patient newer; do
        exit_of "${!node}" || fail "$node failed: $(cat "$WORK/$node.err")"
    done
    expect_eq "$(tr '\n' ' ' <"$WORK/order")" "patient newer " "the order they ran in"
    expect_eq "$(ncli "$master" exists "$key" "{$key}:redlockrun:queue")" 0 "nothing left locked or queued"
    # What is left is the newest deploy's name, kept for a superseded one that comes back late.
    expect_eq "$(ncli "$master" hkeys "{$key}:redlockrun:waiters")" "superseding:1" "the waiters' records"
}

check_no_overlap() {
    /usr/bin/python3 - "$WORK/records" <<'EOF' || fail "sections overlapped (above)"
import sys
starts, sections = {}, []
for name, what, ns in (line.split() for line in open(sys.argv[1])):
    if what == "start":
        starts[name] = int(ns)
    else:
        sections.append((starts.pop(name), int(ns), name))
if starts:
    print("sections that never ended:", sorted(starts))
    sys.exit(1)
sections.sort()
bad = [(a[2], b[2]) for a, b in zip(sections, sections[1:]) if b[0] < a[1]]
for a, b in bad:
    print(f"{a} and {b} overlapped")
sys.exit(1 if bad else 0)
EOF
}

test_a_cluster_failover_while_a_holder_runs() {
    flush_cluster
    local key=failing master replica
    master=$(master_of "$key")
    replica=$(replica_of "$master")
    [ -n "$replica" ] || { fail "no replica of $master"; return; }
    start_bg holder -u "redis://127.0.0.1:$master" -t 2s -k "$key" -c \
        "echo holder start \$(date +%s%N) >>'$WORK/records'; sleep 4;
         echo holder end \$(date +%s%N) >>'$WORK/records'"
    wait_for "the holder" grep -q "holder start" "$WORK/records"
    start_bg waiter -u "redis://127.0.0.1:$master" -t 2s -k "$key" -c \
        "echo waiter start \$(date +%s%N) >>'$WORK/records'; sleep 0.2;
         echo waiter end \$(date +%s%N) >>'$WORK/records'"
    wait_for "the waiter to block" blocked_on "$master" 1
    ncli "$replica" cluster failover >/dev/null
    wait_for "the replica to become master" served_by "$key" "$replica"
    exit_of "$holder" || fail "the holder exited with $? across the failover: $(cat "$WORK/holder.err")"
    exit_of "$waiter" || fail "the waiter exited with $?: $(cat "$WORK/waiter.err")"
    check_no_overlap
    # Let the old master rejoin as a replica before the next test looks for masters.
    wait_for "the cluster to settle" cluster_ok 3 3
}

run_tests
