#!/usr/bin/env bash
# Redis Sentinel (redis-sentinel://host1:port1,host2:port2...#MASTER): the master is found through
# the sentinels, asked in turn, and found again after a failover. A holder keeps its lock on the
# new master when the lock reached it, and loses it (76, its command stopped) when asynchronous
# replication dropped it; waiters carry on; no two commands ever run at once. Bad URLs are 64,
# a master or sentinels that cannot be found 69, with nothing written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sentinel_lib.sh"

start_sentinel_topology || exit 1
URL=$(sentinel_url)

# The fence counter of KEY on the master.
fence_of() { rcli get "{$1}:redlockrun:fence"; }

test_a_lock_through_the_sentinels_runs_the_command_and_is_released() {
    before_each || return
    local master
    master=$(master_node)
    run_rlr -u "$URL" -k job -- sh -c "echo \$REDLOCKRUN_FENCE; redis-cli -s '$(data_sock "$master")' exists job"
    expect_status 0
    expect_eq "$out" "$(fence_of job)
1" "the command ran with the fence, while the master held the lock"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "released on the master"
    run_rlr -u "$URL" -k job -- sh -c 'exit 3'
    expect_status 3 "the command's own status"
    # The replicas got the grants too: the sentinels' master is the one replicated.
    expect_eq "$(rcli wait 2 5000)" 2 "replicas that acknowledged the grants"
    local n
    for n in "${DATA_NODES[@]}"; do
        expect_eq "$(dcli "$n" get '{job}:redlockrun:fence' 2>&1)" "$(fence_of job)" \
            "the fence on node $n (its role: $(dcli "$n" role 2>&1 | tr '\n' ' '))"
    done
}

test_status_and_no_wait_through_the_sentinels() {
    before_each || return
    run_rlr -u "$URL" -k job --status
    expect_status 0 "--status of a free lock"
    expect_contains "$out" "job: free" "--status"
    start_bg holder -u "$URL" -k job -- sleep 30
    wait_for "the holder" lock_held job || return
    run_rlr -u "$URL" -k job --status
    expect_status 75 "--status of a held lock"
    expect_contains "$out" "job: held by $(hostname) pid $holder" "--status"
    run_rlr -u "$URL" -k job --status --json
    expect_status 75 "--status --json of a held lock"
    expect_contains "$out" '"state":"held"' "--status --json"
    expect_contains "$out" "\"pid\":$holder" "--status --json"
    run_rlr -u "$URL" -n -k job -- touch "$WORK/ran"
    expect_status 75 "-n while held"
    [ -e "$WORK/ran" ] && fail "a second holder ran its command"
    kill -TERM "$holder"
    exit_of "$holder"
    expect_eq "$?" 143 "the holder's status after SIGTERM"
    run_rlr -u "$URL" -k job --status
    expect_status 0 "--status after the release"
}

test_the_database_in_the_url_is_used_on_the_master() {
    before_each || return
    local url=${URL/\#//3#}
    run_rlr -u "$url" -k job -c "redis-cli -s '$(data_sock "$(master_node)")' -n 3 exists job"
    expect_status 0
    expect_eq "$out" 1 "the lock was in database 3"
    expect_eq "$(rcli -n 3 exists '{job}:redlockrun:fence')" 1 "the fence in database 3"
    expect_eq "$(rcli -n 0 dbsize)" 0 "nothing in database 0"
}

test_a_sentinel_that_does_not_answer_is_passed_over() {
    before_each || return
    # Nothing listens on the first address: refused at once.
    local dead
    dead=$(free_port)
    run_rlr -u "$(sentinel_url "127.0.0.1:$dead")" --connect-timeout 2s -k job -- true
    expect_status 0 "the first sentinel's port is closed"
    [ -n "$(fence_of job)" ] || fail "no grant on the master"
    # Only the third of three answers: every one is asked.
    rcli flushall >/dev/null
    run_rlr -u "redis-sentinel://127.0.0.1:$dead,127.0.0.1:$(free_port),127.0.0.1:$SENT1_PORT#$MASTER_NAME" \
        --connect-timeout 2s -k job -- true
    expect_status 0 "the first two sentinels' ports are closed"
    [ -n "$(fence_of job)" ] || fail "no grant on the master through the third sentinel"
    # The first sentinel accepts connections but never answers: it is given up after the connect
    # timeout.
    start_stopped_sentinel STOPPED
    local url
    url=$(sentinel_url "127.0.0.1:$STOPPED_PORT")
    RUN_RLR_LIMIT=30 run_rlr -u "$url" --connect-timeout 1s -k job -- true
    expect_status 0 "the first sentinel stopped"
    expect_lt "$elapsed_ms" 8000 "the stopped sentinel was given up after the connect timeout"
    RUN_RLR_LIMIT=30 run_rlr -u "$url" --connect-timeout 1s -k job --status
    expect_status 0 "--status with the first sentinel stopped"
}

# SENTINEL FAILOVER while a holder runs with --replicas 1 and a 3 s TTL: it renews on the new master
# (asking a sentinel before every renewal: the old master goes on accepting writes until a sentinel
# demotes it) and ends with its command's status; nobody else got the lock meanwhile.
test_a_holder_keeps_its_lock_across_a_failover() {
    before_each || return
    local old_master old_node
    old_master=$(master_port)
    old_node=$(master_node)
    # A TTL of 6 s: --replicas 1 waits for one replica, and the sentinels may promote the other,
    # which then has the lock as the grant left it (or a renewal later); while the failover runs,
    # renewals on the old master wait in vain for a replica. With 3 s, on a loaded machine, the
    # grant ran out on the new master before the first renewal reached it (Redis 6.0.20 in compat):
    # a loss (76), rightly reported, where the test meant the lock to be kept.
    start_bg holder -v --replicas 1 -t 6s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" holder "$WORK/done" 7
    wait_for "the holder" lock_held job || return
    # Both replicas have the grant before the failover, whichever is promoted.
    wait_until 10 "every data node to have the lock" eval '[ "$(nodes_with_key job | wc -l)" = 3 ]' ||
        return
    keep_master_from_demotion "$old_node"
    force_failover || { reconnect_master "$old_node"; return; }
    local new_master
    new_master=$(master_port)
    # More than a TTL after the failover: only renewals on the new master keep the lock there.
    local expiry
    expiry=$(expiry_ms job)
    wait_until 10 "a renewal on the new master" expiry_moved_past job "$expiry"
    sleep 7
    expect_eq "$(master_port)" "$new_master" "no second failover happened"
    run_rlr -u "$URL" -n -k job -- bash "$SECTION" "$WORK/sections" intruder 0
    expect_status 75 "a contender 7 s after the failover"
    run_rlr -u "$URL" -k job --status
    expect_status 75 "--status on the new master"
    expect_contains "$out" "pid $holder" "--status names the holder"
    touch "$WORK/done"
    exit_of "$holder"
    expect_eq "$?" 7 "the holder's status (its command's own)"
    local holder_err
    holder_err=$(cat "$WORK/holder.err")
    expect_not_contains "$holder_err" "lost the lock" "the holder's stderr"
    # The old master never refused it anything: a sentinel's answer moved it (-v says which).
    expect_contains "$holder_err" "as master $MASTER_NAME now, no longer 127.0.0.1:$old_master" \
        "the holder's stderr"
    expect_eq "$(rcli exists job)" 0 "released on the new master"
    sections_never_overlap "$WORK/sections" 1
    expect_eq "$(master_port)" "$new_master" "the new master is still the master"
    [ "$new_master" != "$old_master" ] || fail "no failover"
    reconnect_master "$old_node"
}

expiry_moved_past() { [ "$(expiry_ms "$1")" -gt "$2" ]; }

# What data node N knows of the lock's scripts, and how often it ran EVAL and EVALSHA (INFO, as
# Redis 6.0 has it).
cached_scripts() { dcli "$1" info memory | tr -d '\r' | awk -F: '$1 == "number_of_cached_scripts" { print $2 }'; }
evals_on() { [ "$(calls_of "$1" eval)" -ge 1 ]; }
calls_of() {
    dcli "$1" info commandstats | tr -d '\r' |
        awk -F'[:=,]' -v name="cmdstat_$2" '$1 == name { calls = $3 } END { print calls + 0 }'
}

# A replica never learns the lock's scripts: redlockrun sends them in full with EVAL, whose effects
# alone reach the replicas (Redis 5 onwards), never with SCRIPT LOAD (which Redis 7.0 stopped
# replicating too). After a failover the new master answers EVALSHA with NOSCRIPT: a holder's
# renewals there, and a run after the failover, send their scripts again with EVAL and carry on.
test_a_promoted_replica_is_sent_the_scripts_again() {
    before_each || return
    local old_node n
    old_node=$(master_node)
    for n in "${DATA_NODES[@]}"; do
        # As a replica that has never been a master: a node the suite promoted before knows them.
        [ "$n" = "$old_node" ] || { dcli "$n" script flush && dcli "$n" config resetstat; } >/dev/null
    done
    # A TTL of 6 s, as for the holder kept across a failover above: with 3 s, on a loaded machine,
    # the grant ran out on the new master before the first renewal reached it (Redis 6.0.20).
    start_bg holder --replicas 1 -t 6s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" holder "$WORK/done"
    wait_for "the holder" lock_held job || return
    expect_eq "$(rcli wait 2 5000)" 2 "replicas that acknowledged the grant"
    for n in "${DATA_NODES[@]}"; do
        [ "$n" = "$old_node" ] || expect_eq "$(cached_scripts "$n")" 0 "scripts on replica $n after a grant"
    done
    force_failover || return
    local new_node
    new_node=$(master_node)
    wait_until 10 "the holder's renewal on the new master" evals_on "$new_node" || return
    touch "$WORK/done"
    exit_of "$holder"
    expect_eq "$?" 0 "the holder's status: $(cat "$WORK/holder.err")"
    local evals evalshas
    evals=$(calls_of "$new_node" eval)
    evalshas=$(calls_of "$new_node" evalsha)
    # The holder sent renew and release: acquire is still unknown there.
    run_rlr -u "$URL" -k job -- true
    expect_status 0 "a run after the failover"
    expect_eq "$(calls_of "$new_node" evalsha)" $((evalshas + 2)) "EVALSHA calls of the run"
    expect_eq "$(calls_of "$new_node" eval)" $((evals + 1)) "EVAL calls of the run (acquire, after NOSCRIPT)"
    sections_never_overlap "$WORK/sections" 1
}

# Sentinels that stop answering while a holder runs cost it nothing: each question before a renewal
# is given up within half the time the lock has left, and the renewal goes to the master it has.
# (A sentinel of the test's own, under a master name of its own, so that stopping it leaves the
# topology's sentinels alone; it never fails over.)
test_a_holder_keeps_its_lock_while_the_sentinels_do_not_answer() {
    before_each || return
    local port
    port=$(master_port)
    cat >"$WORK/solo.conf" <<EOF_CONF
sentinel monitor solo 127.0.0.1 $port 1
sentinel down-after-milliseconds solo 60000
EOF_CONF
    start_redis SOLO --config "$WORK/solo.conf" --sentinel
    start_bg holder -v -t 3s --connect-timeout 1s -u "redis-sentinel://127.0.0.1:$SOLO_PORT#solo" -k job -- \
        bash "$SECTION" "$WORK/sections" holder "$WORK/done" 5
    wait_for "the holder" lock_held job || return
    local fence
    fence=$(fence_of job)
    kill -STOP "$SOLO_PID"
    sleep 5 # more than a TTL: only renewals made without a sentinel's answer keep the lock
    run_rlr -u "redis://127.0.0.1:$port" -n -k job -- true
    expect_status 75 "a contender on the master while the sentinel is stopped"
    kill -CONT "$SOLO_PID"
    touch "$WORK/done"
    exit_of "$holder"
    expect_eq "$?" 5 "the holder's status (its command's own)"
    local holder_err
    holder_err=$(cat "$WORK/holder.err")
    expect_not_contains "$holder_err" "lost the lock" "the holder's stderr"
    expect_contains "$holder_err" "could not confirm that 127.0.0.1:$port is still the master" \
        "the holder's stderr (-v)"
    expect_eq "$(fence_of job)" "$fence" "no other grant"
    expect_eq "$(rcli exists job)" 0 "released"
}

# Replication from the master is refused (ACL), so that the replicas never receive what it writes
# from now on, and it cannot be demoted: it stays a master that accepts writes, as an old master
# does for seconds after a failover, or for as long as it is cut off from the sentinels.
isolate_master() {
    local node=$1
    dcli "$node" acl setuser default -psync -sync -replicaof -slaveof >/dev/null
    dcli "$node" client kill type replica >/dev/null
    wait_for "the replicas to be cut off" no_replicas_on "$node"
}
no_replicas_on() { dcli "$1" info replication | tr -d '\r' | grep -q '^connected_slaves:0'; }
reconnect_master() { dcli "$1" acl setuser default +@all >/dev/null; }
# The sentinels cannot demote the master: it stays one, and accepts writes, after a failover.
keep_master_from_demotion() { dcli "$1" acl setuser default -replicaof -slaveof >/dev/null; }

# A failover to a replica that never received the lock: the holder's next renewal, on the new
# master, finds it gone; the command is stopped and redlockrun exits 76. The old master would
# have renewed it for ever. The next grant's fence is larger than the lost one's.
test_a_lock_the_new_master_never_received_is_lost() {
    before_each || return
    local old_node
    old_node=$(master_node)
    isolate_master "$old_node" || return
    start_bg holder -v -t 6s --connect-timeout 1s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" lost 30
    wait_for "the holder" lock_held job || { reconnect_master "$old_node"; return; }
    local lost_fence
    lost_fence=$(fence_of job)
    expect_eq "$(nodes_with_key job)" "$(data_port "$old_node")" "only the old master has the lock"
    force_failover
    local failover_ms
    failover_ms=$(now_ms)
    exit_of "$holder"
    expect_eq "$?" 76 "the holder's status"
    expect_lt $(($(now_ms) - failover_ms)) 12000 "lost at a renewal after the failover"
    expect_eq "$(dcli "$old_node" role | head -1)" master "the old master was never demoted"
    expect_contains "$(cat "$WORK/holder.err")" "lost the lock on job" "the holder's stderr"
    expect_eq "$(grep -c '^end .* lost$' "$WORK/sections")" 1 "the command was stopped"
    run_rlr -u "$URL" -k job -- sh -c 'echo $REDLOCKRUN_FENCE'
    expect_status 0 "the next holder"
    expect_ge "$out" $((lost_fence + 1)) "the next holder's fence is larger than the lost one's"
    reconnect_master "$old_node"
}

# The fence counter reached the replicas with an earlier grant, but not with the last one, which a
# failover then lost: the next grant's fence must still be larger than the lost grant's (man page,
# REDLOCKRUN_FENCE: "larger than that of every earlier grant of the same key"), though the new
# master's counter is behind.
test_a_fence_lost_in_a_failover_is_not_granted_again() {
    before_each || return
    run_rlr -u "$URL" -k job -- true
    expect_status 0 "an earlier grant"
    expect_eq "$(rcli wait 2 5000)" 2 "replicas that acknowledged the earlier grant"
    local old_node
    old_node=$(master_node)
    isolate_master "$old_node" || return
    run_rlr -u "$URL" -k job -- sh -c 'echo $REDLOCKRUN_FENCE'
    expect_status 0 "the grant the replicas never receive"
    local lost_fence=$out
    force_failover
    run_rlr -u "$URL" -k job -- sh -c 'echo $REDLOCKRUN_FENCE'
    expect_status 0 "the grant on the new master"
    [ -n "$out" ] && [ -n "$lost_fence" ] && expect_ge "$out" $((lost_fence + 1)) \
        "the fence after the failover is larger than the lost grant's"
    reconnect_master "$old_node"
}

# The master stops (SIGSTOP) with a lock the replicas never received; the sentinels promote one of
# them. The holder's renewals time out on the stopped master, a sentinel names the new one, and
# there the lock is not: 76, well within the TTL.
test_a_stopped_master_is_replaced_and_the_lock_found_lost() {
    before_each || return
    local old_node old_port
    old_node=$(master_node)
    old_port=$(master_port)
    isolate_master "$old_node" || return
    start_bg holder -v -t 20s --connect-timeout 1s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" lost 60
    wait_for "the holder" lock_held job || { reconnect_master "$old_node"; return; }
    kill -STOP "$(data_pid "$old_node")"
    local stopped_ms
    stopped_ms=$(now_ms)
    wait_until 60 "the sentinels to promote a replica" master_moved_from "$old_port"
    exit_of "$holder"
    expect_eq "$?" 76 "the holder's status"
    expect_lt $(($(now_ms) - stopped_ms)) 18000 "lost before the TTL ran out"
    expect_eq "$(grep -c '^end .* lost$' "$WORK/sections")" 1 "the command was stopped"
    run_rlr -u "$URL" -n -k job -- true
    expect_status 0 "the lock is free on the new master"
    kill -CONT "$(data_pid "$old_node")"
    reconnect_master "$old_node"
}

# Waiters blocked on the master before a failover go on waiting on the new one and take the lock
# after the holder's release, one at a time. The old master stays a master that nobody demotes:
# only asking a sentinel before every wait cycle leads the waiters away from it. A wait that ends
# on the old master runs the acquire pipelined behind it there, which grants the lock once the
# holder's last copy on it has expired: the waiter then finds the master replaced, releases that
# grant at once and waits on the new master; its command never runs on such a grant.
test_waiters_queued_before_a_failover_acquire_after_it() {
    before_each || return
    local old_node
    old_node=$(master_node)
    # The holder lets go once the failover is over, however long it took: the waiters queue across it.
    start_bg holder -t 3s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" holder "$WORK/done"
    wait_for "the holder" lock_held job || return
    local waiters=() i var holder_fence
    holder_fence=$(fence_of job)
    for i in 1 2 3; do
        start_bg "waiter$i" -v -t 3s -w 45s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" "waiter$i" 0.3
        var="waiter$i"
        waiters+=("${!var}")
    done
    wait_for "the waiters to block" blocked_clients_are 3 || return
    keep_master_from_demotion "$old_node"
    force_failover
    touch "$WORK/done"
    exit_of "$holder"
    expect_eq "$?" 0 "the holder's status: $(cat "$WORK/holder.err")"
    for i in 1 2 3; do
        exit_of "${waiters[$((i - 1))]}"
        expect_eq "$?" 0 "waiter $i's status: $(cat "$WORK/waiter$i.err")"
        # Nothing the old master answered led it away: a sentinel's answer did (-v says which).
        expect_contains "$(cat "$WORK/waiter$i.err")" "waiting for job: " "waiter $i's stderr"
        expect_contains "$(cat "$WORK/waiter$i.err")" "as master $MASTER_NAME now, no longer 127.0.0.1:" \
            "waiter $i's stderr"
    done
    sections_never_overlap "$WORK/sections" 4
    # What the old master still holds, if anything, is the holder's last renewal there.
    local stale_pid
    stale_pid=$(dcli "$old_node" hget '{job}:redlockrun:owner' pid)
    [ -z "$stale_pid" ] || [ "$stale_pid" = "$holder" ] ||
        fail "a grant stayed on the old master (pid $stale_pid): $(cat "$WORK"/waiter*.err)"
    # Each grant's fence is the counter plus one, or the server's microseconds if larger.
    local new_fence
    new_fence=$(fence_of job)
    [ "$new_fence" -ge $((holder_fence + 3)) ] ||
        fail "three grants on the new master: the fence went from $holder_fence to $new_fence"
    expect_eq "$(rcli exists job)" 0 "released on the new master"
    reconnect_master "$old_node"
}

# The queue is kept with the lock, in the key's companions: the waiters listed through the sentinels
# are listed again after a failover, from the new master, in the same order; --supersede ends the
# older deploy's wait there; they run in that order, one at a time.
test_the_queue_and_supersede_across_a_failover() {
    before_each || return
    local old_node
    old_node=$(master_node)
    start_bg holder -t 3s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" holder "$WORK/done"
    wait_for "the holder" lock_held job || return
    start_bg older -t 3s -w 60s --supersede --note "deploy 1" -u "$URL" -k job -- touch "$WORK/older-ran"
    wait_for "the older deploy to wait" blocked_clients_are 1 || return
    start_bg patient -t 3s -w 60s -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" patient 0.2
    wait_for "the patient waiter to wait" blocked_clients_are 2 || return
    run_rlr -u "$URL" -k job --status
    local listed="  1. $(hostname) pid $older (note: deploy 1), exclusive, --supersede, waiting for"
    expect_contains "$out" "; 2 waiting" "--status before the failover"
    expect_contains "$out" "$listed" "--status before the failover"
    expect_contains "$out" "  2. $(hostname) pid $patient, exclusive, waiting for" "--status before the failover"
    keep_master_from_demotion "$old_node"
    force_failover || return
    run_rlr -u "$URL" -k job --status
    expect_contains "$out" "; 2 waiting" "--status after the failover"
    expect_contains "$out" "$listed" "--status after the failover"
    expect_contains "$out" "  2. $(hostname) pid $patient, exclusive, waiting for" "--status after the failover"
    start_bg newer -t 3s -w 60s --supersede --note "deploy 2" -u "$URL" -k job -- bash "$SECTION" "$WORK/sections" newer 0.2
    exit_of "$older"
    expect_eq "$?" 75 "the older deploy's status: $(cat "$WORK/older.err")"
    expect_contains "$(cat "$WORK/older.err")" "deploy 2" "the older deploy's message names the newer one"
    [ -e "$WORK/older-ran" ] && fail "the superseded deploy ran"
    touch "$WORK/done"
    local name
    for name in holder patient newer; do
        exit_of "${!name}"
        expect_eq "$?" 0 "$name's status: $(cat "$WORK/$name.err")"
    done
    sections_never_overlap "$WORK/sections" 3
    expect_eq "$(awk '$1 == "start" { printf "%s ", $3 }' "$WORK/sections")" "holder patient newer " "the order they ran in"
    expect_eq "$(rcli exists job '{job}:redlockrun:queue')" 0 "nothing left locked or queued on the new master"
    reconnect_master "$old_node"
}

# kill -9 of the master while a holder (--replicas 1) runs and two more wait: the sentinels promote
# a replica. The holder either keeps its lock (its command's status) or loses it (76); the waiters
# get the lock afterwards; never two commands at once. On a topology of its own: one node is gone.
# The waiters' TTL of 9 s gives each grant 3 s (a third of it) for the replica's confirmation: the
# replica that was not promoted may still be resynchronising from the new master when the first
# grants are made there (on Redis 6.0, seen to take over a second on a busy machine), and a grant
# it did not confirm in time is undone with 69, as --replicas promises.
test_kill_9_of_the_master_while_a_holder_runs() {
    start_sentinel_topology || return
    local url old_node old_port
    url=$(sentinel_url)
    old_node=$(master_node)
    old_port=$(master_port)
    start_bg holder --replicas 1 -t 9s -u "$url" -k job -- bash "$SECTION" "$WORK/sections" holder 6 5
    wait_for "the holder" lock_held job || return
    start_bg waiter1 --replicas 1 -t 9s -w 50s -u "$url" -k job -- bash "$SECTION" "$WORK/sections" waiter1 0.3
    start_bg waiter2 --replicas 1 -t 9s -w 50s -u "$url" -k job -- bash "$SECTION" "$WORK/sections" waiter2 0.3
    wait_for "the waiters to block" blocked_clients_are 2 || return
    { kill -KILL "$(data_pid "$old_node")" && wait "$(data_pid "$old_node")"; } 2>/dev/null
    wait_until 60 "the sentinels to promote a replica" master_moved_from "$old_port"
    exit_of "$holder"
    local holder_status=$?
    [ "$holder_status" = 5 ] || [ "$holder_status" = 76 ] ||
        fail "the holder's status: $holder_status, not its command's (5) or lost (76): $(cat "$WORK/holder.err")"
    exit_of "$waiter1"
    expect_eq "$?" 0 "waiter 1's status: $(cat "$WORK/waiter1.err")"
    exit_of "$waiter2"
    expect_eq "$?" 0 "waiter 2's status: $(cat "$WORK/waiter2.err")"
    sections_never_overlap "$WORK/sections" 3
    expect_eq "$(rcli exists job)" 0 "released on the new master"
}

test_malformed_sentinel_urls_are_usage_errors() {
    before_each || return
    rcli set unrelated 1 >/dev/null
    local before s1=127.0.0.1:$SENT1_PORT
    before=$(database_snapshot)
    local url
    while IFS= read -r url; do
        RUN_RLR_LIMIT=20 run_rlr -u "$url" -k job -- touch "$WORK/ran"
        expect_status 64 "$url"
        expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "one line for $url"
        [[ "$err" == "redlockrun: "* ]] || fail "the message for $url: $err"
    done <<EOF_URLS
redis-sentinel://$s1
redis-sentinel://$s1#
redis-sentinel://#locks
redis-sentinel:///0#locks
redis-sentinel://127.0.0.1:1,127.0.0.1:2,127.0.0.1:99999#locks
redis-sentinel://127.0.0.1:1,127.0.0.1:2,127.0.0.1:x#locks
redis-sentinel://$s1,,127.0.0.1:2#locks
redis-sentinel://$s1,#locks
redis-sentinel://127.0.0.1:0#locks
redis-sentinel://$s1/x#locks
redis-sentinel://$s1/-1#locks
redis-sentinel://$s1/0/1#locks
rediss-sentinel://#locks
rediss-sentinel://$s1
EOF_URLS
    # TLS files need a TLS URL.
    run_rlr -u "$URL" --tls-server-name localhost -k job -- touch "$WORK/ran"
    expect_status 64 "--tls-server-name with redis-sentinel://"
    expect_contains "$err" "--tls-server-name" "message"
    [ -e "$WORK/ran" ] && fail "a command ran"
    expect_eq "$(database_snapshot)" "$before" "the master's data"
}

# A master name no sentinel knows: 69, naming it and every sentinel asked, nothing written.
test_a_master_the_sentinels_do_not_know_gives_69() {
    before_each || return
    local before
    before=$(database_snapshot)
    local url=${URL%#*}#nosuchmaster
    RUN_RLR_LIMIT=30 run_rlr -u "$url" -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "nosuchmaster" "the message names the master"
    local n
    for n in "${SENTINELS[@]}"; do
        expect_contains "$err" "127.0.0.1:$(sentinel_port "$n")" "the message names sentinel $n"
    done
    [ -e "$WORK/ran" ] && fail "the command ran"
    RUN_RLR_LIMIT=30 run_rlr -u "$url" -k job --status
    expect_status 69 "--status"
    expect_eq "$(database_snapshot)" "$before" "the master's data"
}

# No sentinel answers: 69 naming each, soon, nothing written.
test_sentinels_that_are_all_down_give_69() {
    before_each || return
    local before first second
    before=$(database_snapshot)
    first=$(free_port)
    second=$(free_port)
    RUN_RLR_LIMIT=30 run_rlr -u "redis-sentinel://127.0.0.1:$first,127.0.0.1:$second#$MASTER_NAME" \
        --connect-timeout 2s -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "127.0.0.1:$first" "the message names the first sentinel"
    expect_contains "$err" "127.0.0.1:$second" "the message names the second"
    expect_contains "$err" "$MASTER_NAME" "the message names the master"
    expect_lt "$elapsed_ms" 10000 "refused connections are not waited for"
    # The sentinels accept connections but never answer: each is asked for no longer than the
    # connect timeout.
    start_stopped_sentinel STOPPED1
    start_stopped_sentinel STOPPED2
    RUN_RLR_LIMIT=30 run_rlr -u "redis-sentinel://127.0.0.1:$STOPPED1_PORT,127.0.0.1:$STOPPED2_PORT#$MASTER_NAME" \
        --connect-timeout 500ms -k job -- touch "$WORK/ran"
    expect_status 69 "every sentinel stopped"
    expect_contains "$err" "127.0.0.1:$STOPPED1_PORT" "the message names the first sentinel"
    expect_contains "$err" "127.0.0.1:$STOPPED2_PORT" "the message names the second"
    expect_lt "$elapsed_ms" 8000 "two connect timeouts of 500ms"
    # Without a port, a sentinel is on 26379.
    if ! (exec 3<>/dev/tcp/127.0.0.1/26379) 2>/dev/null; then
        RUN_RLR_LIMIT=30 run_rlr -u "redis-sentinel://127.0.0.1#$MASTER_NAME" -k job -- touch "$WORK/ran"
        expect_status 69 "nothing on the default port"
        expect_contains "$err" "127.0.0.1:26379" "the default sentinel port"
    fi
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(database_snapshot)" "$before" "the master's data"
}

# A sentinel that names a replica as the master (here, one that watches a replica of another
# server under the same name) is not trusted: ROLE says it is no master. The next sentinel is asked;
# with no other, 69. Nothing is written on the replica or its master.
test_a_sentinel_that_names_a_replica_is_not_trusted() {
    before_each || return
    start_redis OTHER
    start_redis REPLICA --replicaof 127.0.0.1 "$OTHER_PORT"
    wait_for "the replica's sync" sh -c "redis-cli -s '$REPLICA_SOCK' info replication | tr -d '\r' | grep -q '^master_link_status:up'" || return
    cat >"$WORK/rogue.conf" <<EOF_CONF
sentinel monitor $MASTER_NAME 127.0.0.1 $REPLICA_PORT 1
sentinel down-after-milliseconds $MASTER_NAME 600000
sentinel failover-timeout $MASTER_NAME 600000
EOF_CONF
    start_redis ROGUE --config "$WORK/rogue.conf" --sentinel
    local rogue=127.0.0.1:$ROGUE_PORT
    expect_eq "$(redis-cli -s "$ROGUE_SOCK" sentinel get-master-addr-by-name "$MASTER_NAME" | sed -n 2p)" \
        "$REPLICA_PORT" "the rogue sentinel names the replica"
    run_rlr -u "$(sentinel_url "$rogue")" -k job -- true
    expect_status 0 "the next sentinel names the master"
    [ -n "$(fence_of job)" ] || fail "no grant on the master"
    RUN_RLR_LIMIT=30 run_rlr -u "redis-sentinel://$rogue#$MASTER_NAME" -k job -- touch "$WORK/ran"
    expect_status 69 "only the rogue sentinel"
    expect_contains "$err" "127.0.0.1:$REPLICA_PORT" "the message names the address given"
    expect_contains "$err" "$rogue" "the message names the sentinel"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(redis-cli -s "$OTHER_SOCK" dbsize)" 0 "nothing written on the replica's master"
    expect_eq "$(redis-cli -s "$REPLICA_SOCK" dbsize)" 0 "nothing on the replica"
}

run_tests
