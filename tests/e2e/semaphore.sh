#!/usr/bin/env bash
# --limit N: a counting semaphore. At most N holders at once, each with its own fence, renewal and
# lost-lock handling; waiters served in arrival order; exclusion with exclusive runs and classic
# clients.
. "$(dirname "$0")/lib.sh"
CLASSIC="$(dirname "$0")/classic_client.py"

QUEUE='{jobs}:redlockrun:queue'
OWNER='{jobs}:redlockrun:owner'

holders_of() { rcli hgetall "$1" | grep -c '^holder:'; }
queued() { rcli zcard "$QUEUE"; }
queued_are() { [ "$(queued)" = "$1" ]; }
holders_are() { [ "$(holders_of "$OWNER")" = "$1" ]; }

# hold NAME LIMIT [options...]: a holder of jobs until $WORK/release-NAME exists; its pid goes to
# the variable NAME. It records "start NAME FENCE" in $WORK/order when its command starts.
hold() {
    local name=$1 limit=$2
    shift 2
    start_bg "$name" --limit "$limit" "$@" -k jobs -c \
        "echo \"start $name \$REDLOCKRUN_FENCE\" >>'$WORK/order';
         while [ ! -e '$WORK/release-$name' ]; do sleep 0.02; done"
}

started() { grep -q "^start $1 " "$WORK/order" 2>/dev/null; }

# The critical section of the contention test: takes one of LIMIT slot files with flock -n (a
# fourth concurrent holder would find none), and adds one to that slot's counter by reading,
# sleeping and writing, so that two holders in one slot would lose an increment.
SECTION="$WORK/section"
cat >"$SECTION" <<'EOF'
#!/bin/sh
work=$1 limit=$2 name=$3
start=$(date +%s%N)
for slot in $(seq 1 "$limit"); do
    exec 9>"$work/slot-$slot"
    if flock -n 9; then
        count=$(cat "$work/counter-$slot" 2>/dev/null || echo 0)
        sleep 0.15
        echo $((count + 1)) >"$work/counter-$slot"
        echo "$name $REDLOCKRUN_FENCE $start $(date +%s%N)" >>"$work/sections"
        exit 0
    fi
    exec 9>&-
done
echo "$name found no free slot" >>"$work/overflow"
exit 1
EOF
chmod +x "$SECTION"

test_limit_3_lets_three_hold_at_once_and_never_four() {
    local contender pids=() rounds=3
    for contender in $(seq 1 12); do
        (
            for round in $(seq 1 "$rounds"); do
                "$REDLOCKRUN" --limit 3 -k jobs -- "$SECTION" "$WORK" 3 "c$contender" || exit 1
            done
        ) 2>>"$WORK/errors" &
        pids+=($!)
    done
    for contender in "${pids[@]}"; do
        wait "$contender" || fail "a contender failed: $(cat "$WORK/errors")"
    done
    [ -e "$WORK/overflow" ] && fail "more than 3 holders at once: $(cat "$WORK/overflow")"
    local total=0 slot
    for slot in 1 2 3; do
        total=$((total + $(cat "$WORK/counter-$slot" 2>/dev/null || echo 0)))
    done
    expect_eq "$total" $((12 * rounds)) "increments over the three slots' counters"
    /usr/bin/python3 - "$WORK/sections" <<'EOF' || fail "the sections' history is wrong (above)"
import sys
rows = [line.split() for line in open(sys.argv[1])]
sections = [(int(start), int(end), int(fence)) for _, fence, start, end in rows]
fences = [s[2] for s in sections]
problems = []
if len(set(fences)) != len(fences):
    problems.append("fences repeat")
# A section that ended before another began was granted first: its fence is smaller.
for a in sections:
    for b in sections:
        if a[1] < b[0] and a[2] >= b[2]:
            problems.append(f"fence {a[2]} ended before fence {b[2]} began")
events = sorted([(s[0], 1) for s in sections] + [(s[1], -1) for s in sections])
level = peak = 0
for _, step in events:
    level += step
    peak = max(peak, level)
if peak > 3:
    problems.append(f"{peak} sections at once")
if peak < 3:
    problems.append(f"never 3 sections at once (at most {peak})")
for problem in problems[:5]:
    print(problem)
sys.exit(1 if problems else 0)
EOF
    expect_eq "$(rcli exists jobs)" 0 "nothing stays locked"
    expect_eq "$(rcli exists "$OWNER")" 0 "no owner record stays"
}

# slot_of NAME: the REDLOCKRUN_SLOT that holder NAME's command saw ("none" if it had none).
slot_of() { sed -n "s/^slot $1 //p" "$WORK/slots" 2>/dev/null; }
has_slot() { [ -n "$(slot_of "$1")" ]; }

# slot_hold NAME LIMIT: as hold(), and the command records "slot NAME SLOT" in $WORK/slots.
slot_hold() {
    local name=$1 limit=$2
    start_bg "$name" --limit "$limit" -k jobs -c \
        "echo \"slot $name \${REDLOCKRUN_SLOT-none}\" >>'$WORK/slots';
         while [ ! -e '$WORK/release-$name' ]; do sleep 0.02; done"
}

test_each_holder_has_a_slot_of_its_own_and_a_freed_one_goes_to_the_next() {
    slot_hold a 3
    wait_for "a's slot" has_slot a || return
    slot_hold b 3
    wait_for "b's slot" has_slot b || return
    slot_hold c 3
    wait_for "c's slot" has_slot c || return
    expect_eq "$(slot_of a) $(slot_of b) $(slot_of c)" "0 1 2" "the lowest free slot, each"
    run_rlr -k jobs --status
    expect_contains "$out" "in slot 1" "--status names the slots"
    run_rlr -k jobs --status --json
    [ "$(/usr/bin/python3 -c 'import json,sys; print(sorted(h["slot"] for h in json.loads(sys.argv[1])["holders"]))' "$out")" = "[0, 1, 2]" ] ||
        fail "the JSON's slots: $out"
    run_rlr --list 'jobs' --json
    expect_contains "$out" '"slot":2' "--list --json names them too"
    # b lets go: the next holder gets slot 1, the one b freed.
    touch "$WORK/release-b"
    wait_for "b's release" holders_are 2 || return
    slot_hold d 3
    wait_for "d's slot" has_slot d || return
    expect_eq "$(slot_of d)" 1 "the slot b freed"
    touch "$WORK/release-a" "$WORK/release-c" "$WORK/release-d"
    for name in a c d; do
        exit_of "${!name}" || fail "$name exited $?"
    done
    # A hold exports its slot; an exclusive run has none.
    run_rlr -k jobs --limit 2 --owner none --max-hold 1m --hold
    expect_status 0
    expect_contains "$out" "export REDLOCKRUN_SLOT=0" "the hold's slot"
    run_rlr --release "$(sed -n "s/^export REDLOCKRUN_HOLD='\(.*\)'$/\1/p" <<<"$out")"
    expect_status 0 "its release"
    run_rlr -k plain -- sh -c 'echo "${REDLOCKRUN_SLOT-none}"'
    expect_eq "$out" none "an exclusive run's slot"
}

test_waiters_are_served_in_arrival_order() {
    hold h1 2
    hold h2 2
    wait_for "two holders" holders_are 2
    local waiter
    for waiter in 1 2 3 4 5; do
        hold "w$waiter" 2
        wait_for "waiter $waiter to be queued" queued_are "$waiter"
    done
    # Longer than one BLPOP (5 s): every waiter has timed out and blocked again at least once,
    # which must not change the order.
    sleep 6
    expect_eq "$(queued)" 5 "waiters still queued"
    local expected=(w1 w2 w3 w4 w5) next=0 name
    for name in h1 h2 w1 w2 w3 w4 w5; do
        touch "$WORK/release-$name"
        if [ "$next" -lt 5 ]; then
            wait_for "${expected[$next]} to start" started "${expected[$next]}"
            next=$((next + 1))
        fi
    done
    expect_eq "$(grep -o '^start w[0-9]' "$WORK/order" | cut -c7- | tr '\n' ' ')" \
        "w1 w2 w3 w4 w5 " "the order the waiters started in"
    for name in h1 h2 w1 w2 w3 w4 w5; do
        exit_of "${!name}" || fail "$name failed"
    done
    expect_eq "$(rcli exists "$QUEUE")" 0 "the queue is empty"
}

test_a_killed_holder_frees_its_slot_after_its_ttl() {
    hold h1 2 --ttl 1s
    hold h2 2 --ttl 1s
    wait_for "two holders" holders_are 2
    hold w 2 --ttl 1s
    wait_for "the waiter to be queued" queued_are 1
    local killed_at
    kill -KILL "$h2"
    exit_of "$h2"
    killed_at=$(now_ms)
    wait_for "the waiter to take the killed holder's slot" started w
    local waited=$(($(now_ms) - killed_at))
    expect_lt "$waited" 5000 "the slot was free within the TTL (and a BLPOP's jitter)"
    alive "$h1" || fail "the other holder stopped"
    # h1 went on renewing meanwhile, and still holds its slot beside the waiter.
    expect_eq "$(holders_of "$OWNER")" 2 "holders"
    touch "$WORK/release-h1" "$WORK/release-w"
    exit_of "$h1" || fail "h1 failed"
    exit_of "$w" || fail "the waiter failed"
}

test_an_exclusive_run_waits_for_every_semaphore_holder() {
    hold h1 3
    hold h2 3
    wait_for "two holders" holders_are 2
    start_bg exclusive -k jobs -c "touch '$WORK/exclusive-ran'"
    sleep 0.5
    touch "$WORK/release-h1"
    exit_of "$h1" || fail "h1 failed"
    sleep 0.5
    [ -e "$WORK/exclusive-ran" ] && fail "the exclusive run ran beside a semaphore holder"
    touch "$WORK/release-h2"
    exit_of "$h2" || fail "h2 failed"
    exit_of "$exclusive" || fail "the exclusive run failed"
    [ -e "$WORK/exclusive-ran" ] || fail "the exclusive run never ran"
}

test_a_semaphore_holder_waits_for_an_exclusive_holder() {
    start_bg exclusive -k jobs -c "while [ ! -e '$WORK/release-exclusive' ]; do sleep 0.02; done"
    wait_for "the exclusive holder" lock_held jobs
    run_rlr --limit 3 -n -k jobs -- touch "$WORK/ran"
    expect_status 75
    [ -e "$WORK/ran" ] && fail "a semaphore holder ran beside an exclusive holder"
    hold s 3
    wait_for "the semaphore run to be queued" queued_are 1
    sleep 0.3
    started s && fail "the semaphore run started beside the exclusive holder"
    local released_at
    released_at=$(now_ms)
    touch "$WORK/release-exclusive"
    wait_for "the semaphore run to start" started s
    expect_lt $(($(now_ms) - released_at)) 2000 "woken by the exclusive holder's release"
    touch "$WORK/release-s"
    exit_of "$exclusive" || fail "the exclusive holder failed"
    exit_of "$s" || fail "the semaphore run failed"
}

test_classic_clients_are_excluded_while_any_holder_runs() {
    local unit
    for unit in ms s; do
        rm -f "$WORK"/release-*
        hold "h_$unit" 3 --timestamp-unit "$unit"
        wait_for "a holder" holders_are 1
        /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" jobs "$unit" 5 try
        expect_eq "$?" 1 "a classic client ($unit) finds the semaphore held"
        touch "$WORK/release-h_$unit"
        local pid_var="h_$unit"
        exit_of "${!pid_var}" || fail "the holder failed"
        expect_eq "$(rcli exists jobs)" 0 "released"
        /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" jobs "$unit" 5 try
        expect_eq "$?" 0 "a classic client ($unit) takes it once the holder has gone"
        rcli del jobs >/dev/null
    done
    # And the other way round: a classic client's lock keeps semaphore holders out.
    /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" jobs ms 5 try
    run_rlr --limit 3 -n -k jobs -- touch "$WORK/ran"
    expect_status 75
    expect_contains "$err" "a client of the classic algorithm" "message"
}

test_another_limit_is_refused_and_changes_nothing() {
    hold h1 3 --no-renew --ttl 20s
    wait_for "a holder" holders_are 1
    hold w 3 --no-renew --ttl 20s
    hold w2 3 --no-renew --ttl 20s
    wait_for "three holders" holders_are 3
    # --status and --status --json name every holder, with the limit.
    run_rlr --status -k jobs
    expect_status 75
    expect_contains "$out" "jobs: held by 3 of 3 holders: " "--status"
    local named=0 pid
    for pid in "$h1" "$w" "$w2"; do
        if grep -q "pid $pid " <<<"$out"; then
            named=$((named + 1))
        fi
    done
    expect_eq "$named" 3 "holders --status names among those started"
    run_rlr --status --json -k jobs
    expect_status 75
    expect_eq "$(/usr/bin/python3 -c 'import json, sys; o = json.load(sys.stdin); print(o["state"], o["limit"], len(o["holders"]), len({h["fence"] for h in o["holders"]}))' <<<"$out")" \
        "held 3 3 3" "--status --json: state, limit, holders, distinct fences"
    local snapshot
    snapshot=$(database_snapshot)
    run_rlr --limit 2 -k jobs -- touch "$WORK/ran"
    expect_status 64
    expect_contains "$err" "jobs is held as a --limit 3 semaphore; a run with --limit 2" "message"
    run_rlr -k jobs -n -- touch "$WORK/ran"
    expect_status 75
    expect_contains "$err" "held by 3 holders of a --limit 3 semaphore" "an exclusive run's message"
    # --no-renew holders: when the first slot frees.
    expect_contains "$err" "; the first slot frees in " "when a slot frees"
    expect_not_contains "$err" "renewed every" "not renewed"
    expect_contains "$err" "not running touch " "the command not run"
    [ -e "$WORK/ran" ] && fail "a refused run ran its command"
    expect_eq "$(database_snapshot)" "$snapshot" "nothing changed"
}

# A waiter woken for a slot it may not take (it asks with another --limit) passes the wake-up on:
# the waiter queued behind it starts as the slot frees, not when its own BLPOP times out (up to
# 5 s later). Measured loosely: the test fails on a wake-up lost, not on a slow machine.
test_a_waiter_refused_for_another_limit_passes_its_wake_up_on() {
    start_bg holder -k jobs -c "while [ ! -e '$WORK/release-holder' ]; do sleep 0.02; done"
    wait_for "the exclusive holder" lock_held jobs
    hold w1 2 -w 30s
    wait_for "the first waiter to be queued" queued_are 1
    start_bg other --limit 3 -w 30s -k jobs -- touch "$WORK/other-ran"
    wait_for "the waiter with another limit to be queued" queued_are 2
    hold w3 2 -w 30s
    wait_for "the third waiter to be queued" queued_are 3
    local released_at
    released_at=$(now_ms)
    touch "$WORK/release-holder"
    wait_for "the first waiter to start" started w1
    exit_of "$other"
    expect_eq "$?" 64 "the run with another --limit"
    expect_contains "$(cat "$WORK/other.err")" "held as a --limit 2 semaphore" "its message"
    wait_for "the third waiter to start" started w3
    expect_lt $(($(now_ms) - released_at)) 2500 "the third waiter started soon after the release"
    [ -e "$WORK/other-ran" ] && fail "the run with another limit ran"
    touch "$WORK/release-w1" "$WORK/release-w3"
    exit_of "$holder" || fail "the holder failed"
    exit_of "$w1" || fail "w1 failed"
    exit_of "$w3" || fail "w3 failed"
    expect_eq "$(rcli exists "$QUEUE")" 0 "the queue is empty"
}

# The same refusal met by a plain acquire, not one pipelined behind a BLPOP: the waiter with another
# limit, stopped, loses its connection while queued; the slot frees and it is sent the wake-up
# meanwhile; continued, it reconnects and is refused. It must leave the queue on its way out, and
# pass the wake-up on, rather than hold up the waiter behind it until its place lapses (10 s).
test_a_waiter_refused_after_reconnecting_leaves_the_queue() {
    start_bg holder -k jobs -c "while [ ! -e '$WORK/release-holder' ]; do sleep 0.02; done"
    wait_for "the exclusive holder" lock_held jobs
    hold w1 2 -w 30s
    wait_for "the first waiter to be queued" queued_are 1
    start_bg other --limit 3 -w 30s -k jobs -- touch "$WORK/other-ran"
    wait_for "the waiter with another limit to be queued" queued_are 2
    wait_for "two blocked waiters" blocked_clients_are 2
    # The connection that blocked last is the second waiter's.
    local connection
    connection=$(rcli client list | grep 'cmd=blpop' | sed 's/^id=\([0-9]*\) .*/\1/' | sort -n | tail -1)
    kill -STOP "$other"
    rcli client kill id "$connection" >/dev/null
    hold w3 2 -w 30s
    wait_for "the third waiter to be queued" queued_are 3
    touch "$WORK/release-holder"
    wait_for "the first waiter to start" started w1
    local continued_at
    continued_at=$(now_ms)
    kill -CONT "$other"
    exit_of "$other"
    expect_eq "$?" 64 "the run with another --limit"
    wait_for "the third waiter to start" started w3
    expect_lt $(($(now_ms) - continued_at)) 3000 \
        "the third waiter started soon after the refused one left"
    [ -e "$WORK/other-ran" ] && fail "the run with another limit ran"
    touch "$WORK/release-w1" "$WORK/release-w3"
    exit_of "$holder" || fail "the holder failed"
    exit_of "$w1" || fail "w1 failed"
    exit_of "$w3" || fail "w3 failed"
    expect_eq "$(rcli exists "$QUEUE")" 0 "the queue is empty"
}

# A free slot kept for a queued waiter: the waiter, stopped and cut off, was sent the wake-up and
# keeps its place (10 s). A -n run is refused, and told why: not for how long the slot is "held",
# but that it is kept for a waiter queued before it.
test_no_wait_says_a_free_slot_is_kept_for_a_queued_waiter() {
    hold h1 2
    hold h2 2
    wait_for "two holders" holders_are 2
    hold w 2
    wait_for "the waiter to be queued" queued_are 1
    wait_for "the waiter to block" blocked_clients_are 1
    local connection
    connection=$(rcli client list | grep 'cmd=blpop' | sed 's/^id=\([0-9]*\) .*/\1/')
    kill -STOP "$w"
    rcli client kill id "$connection" >/dev/null
    touch "$WORK/release-h2"
    exit_of "$h2" || fail "h2 failed"
    run_rlr --limit 2 -n -k jobs -- touch "$WORK/ran"
    expect_status 75
    expect_contains "$err" "jobs is held by 1 holder of a --limit 2 semaphore, and its free slot is kept for a waiter queued before this run" "message"
    expect_not_contains "$err" "for another" "message"
    [ -e "$WORK/ran" ] && fail "the -n run took the slot kept for the waiter"
    kill -CONT "$w"
    wait_for "the waiter to start" started w
    touch "$WORK/release-h1" "$WORK/release-w"
    exit_of "$h1" || fail "h1 failed"
    exit_of "$w" || fail "the waiter failed"
}

test_no_wait_is_not_queued_and_a_waiter_that_gives_up_leaves_the_queue() {
    hold h2 2
    wait_for "a holder" holders_are 1
    hold h3 2
    wait_for "two holders" holders_are 2
    run_rlr --limit 2 -n -k jobs -- true
    expect_status 75
    expect_eq "$(rcli exists "$QUEUE")" 0 "-n leaves no place in the queue"
    run_rlr --limit 2 -w 0.5 -k jobs -- true
    expect_status 75
    expect_eq "$(rcli zcard "$QUEUE")" 0 "a waiter that gave up leaves the queue"
    # A waiter that gave up must not hold up the next one: it starts as soon as a slot frees.
    hold w 2
    wait_for "the waiter to be queued" queued_are 1
    touch "$WORK/release-h2"
    wait_for "the waiter to start" started w
    touch "$WORK/release-h3" "$WORK/release-w"
    exit_of "$h2" || fail "h2 failed"
    exit_of "$h3" || fail "h3 failed"
    exit_of "$w" || fail "the waiter failed"
}

# A queued waiter that ends on an error Redis answers its acquire with (here the server refuses the
# write that keeps its place) leaves the queue on its way out, whether that acquire was pipelined
# behind its BLPOP or sent alone, in full, after the server lost its scripts: its place would
# otherwise hold up the waiters behind it until it lapsed (10 s).
test_a_waiter_ending_on_a_redis_error_leaves_the_queue() {
    rcli acl setuser noqueue on '>noqueuepass' '~*' '+@all' >/dev/null
    local how released
    for how in pipelined alone; do
        rcli flushall >/dev/null
        rcli acl setuser noqueue +zadd >/dev/null
        rm -f "$WORK"/release-* "$WORK/order"
        hold h1 2
        hold h2 2
        wait_for "two holders ($how)" holders_are 2
        REDLOCKRUN_URL="redis://noqueue:noqueuepass@127.0.0.1:$REDIS_PORT" hold w1 2 -w 30s
        wait_for "the first waiter to be queued ($how)" queued_are 1
        hold w2 2 -w 30s
        wait_for "the second waiter to be queued ($how)" queued_are 2
        wait_for "both waiters to block ($how)" blocked_clients_are 2
        [ "$how" = alone ] && rcli script flush >/dev/null
        rcli acl setuser noqueue -zadd >/dev/null
        exit_of "$w1" # when its BLPOP times out, and its next acquire is refused
        expect_eq "$?" 69 "the first waiter's exit status ($how)"
        expect_contains "$(cat "$WORK/w1.err")" "answered with an error" "its message ($how)"
        expect_eq "$(queued)" 1 "the first waiter left the queue on its way out ($how)"
        released=$(now_ms)
        touch "$WORK/release-h1"
        wait_for "the second waiter to start ($how)" started w2
        expect_lt $(($(now_ms) - released)) 2500 "the second waiter started soon after the slot freed ($how)"
        touch "$WORK/release-h2" "$WORK/release-w2"
        exit_of "$h1" || fail "h1 failed ($how)"
        exit_of "$h2" || fail "h2 failed ($how)"
        exit_of "$w2" || fail "w2 failed ($how)"
    done
    rcli acl deluser noqueue >/dev/null
}

# A queued waiter whose -w runs out while Redis does not answer (stalled; stopped here) tries to
# leave the queue on its way out, but gives that a moment only, not its --connect-timeout again: the
# request goes out, and a server that comes back runs it, so the waiters behind are not held up
# until the place lapses (10 s).
test_a_waiter_whose_wait_runs_out_while_redis_stalls_leaves_the_queue() {
    hold h1 2
    hold h2 2
    wait_for "two holders" holders_are 2
    local started_at
    started_at=$(now_ms)
    hold w1 2 -w 2s --connect-timeout 4s
    wait_for "the first waiter to be queued" queued_are 1
    hold w2 2 -w 30s
    wait_for "the second waiter to be queued" queued_are 2
    wait_for "both waiters to block" blocked_clients_are 2
    kill -STOP "$REDIS_PID"
    # Its BLPOP (2 s) gets no answer within the connect timeout after it (4 s).
    exit_of "$w1"
    expect_eq "$?" 69 "the first waiter's exit status"
    local ended_at
    ended_at=$(now_ms)
    kill -CONT "$REDIS_PID"
    expect_contains "$(cat "$WORK/w1.err")" "gave up waiting for jobs after" "its message"
    expect_contains "$(cat "$WORK/w1.err")" "Redis was unreachable" "its message"
    expect_lt $((ended_at - started_at)) 8000 "the first waiter ended within its wait, a BLPOP's connect timeout and a moment"
    local tries
    for tries in $(seq 1 40); do
        queued_are 1 && break
        sleep 0.05
    done
    expect_eq "$(queued)" 1 "the first waiter left the queue once the server came back"
    local released
    released=$(now_ms)
    touch "$WORK/release-h1"
    wait_for "the second waiter to start" started w2
    expect_lt $(($(now_ms) - released)) 2500 "the second waiter started soon after the slot freed"
    touch "$WORK/release-h2" "$WORK/release-w2"
    exit_of "$h1" || fail "h1 failed"
    exit_of "$h2" || fail "h2 failed"
    exit_of "$w2" || fail "w2 failed"
}

test_a_lost_slot_ends_the_command_with_76() {
    # The holder's record deleted, the key deleted, Redis restarted: each is found at the next
    # renewal, and the command is stopped.
    local how
    # A server of this test's own, which it restarts.
    start_redis OWN
    REDIS_PORT=$OWN_PORT
    export REDLOCKRUN_URL="redis://127.0.0.1:$OWN_PORT"
    for how in record key restart; do
        rm -f "$WORK"/release-*
        hold h1 2 --ttl 1s
        hold h2 2 --ttl 1s
        wait_for "two holders" holders_are 2
        case $how in
        record) rcli hdel "$OWNER" "$(rcli hkeys "$OWNER" | grep '^holder:' | head -1)" >/dev/null ;;
        key) rcli del jobs >/dev/null ;;
        restart) restart_redis OWN ;;
        esac
        sleep 1.5 # several renewals (every ttl/3)
        touch "$WORK/release-h1" "$WORK/release-h2"
        local lost=0 name
        for name in h1 h2; do
            exit_of "${!name}"
            case $? in
            76) lost=$((lost + 1)) ;;
            *) ;;
            esac
        done
        if [ "$how" = record ]; then
            expect_eq "$lost" 1 "holders that lost their slot ($how)"
        else
            expect_eq "$lost" 2 "holders that lost their slot ($how)"
        fi
        rcli flushall >/dev/null
    done
}

test_limit_is_refused_when_out_of_range() {
    local snapshot value
    snapshot=$(database_snapshot)
    for value in 0 101 -1 x 2.5 ''; do
        run_rlr --limit "$value" -k jobs -- touch "$WORK/ran"
        expect_status 64 "--limit '$value'"
        expect_contains "$err" "--limit: '$value' is not a number of holders from 1 to 100" "message"
    done
    run_rlr --limit 2 --status -k jobs
    expect_status 64
    [ -e "$WORK/ran" ] && fail "a refused run ran its command"
    expect_eq "$(database_snapshot)" "$snapshot" "nothing changed"
}

run_tests
