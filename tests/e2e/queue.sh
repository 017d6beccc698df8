#!/usr/bin/env bash
# The queue a user can see: who waits, in what order, for how long (--status, --list, the waiting
# message), and --supersede, with which the newest waiter ends the earlier ones that asked for it.
. "$(dirname "$0")/lib.sh"

# Starts a redlockrun that holds KEY until $WORK/release-KEY exists; waits until it holds it.
hold() {
    local key=$1
    shift
    start_bg holder "$@" -k "$key" -c "while [ ! -e '$WORK/release-$key' ]; do sleep 0.02; done"
    wait_for "$key to be held" lock_held "$key"
}

# waiting_are KEY N: --status counts N waiters of KEY.
waiting_are() {
    [ "$("$REDLOCKRUN" -k "$1" --status --json | sed -n 's/.*"waiting":\([0-9]*\).*/\1/p')" = "$2" ]
}

# A waiter that appends NAME to $WORK/order when it gets KEY, and its pid in VAR.
start_waiter() {
    local var=$1 name=$2 key=$3
    shift 3
    start_bg "$var" "$@" -k "$key" -c "echo $name >> '$WORK/order'"
}

test_status_lists_the_waiters_in_the_order_they_will_be_served() {
    hold deploy
    start_waiter first first deploy --note "deploy 41"
    wait_for "the first waiter" waiting_are deploy 1
    start_waiter second second deploy -w 10m
    wait_for "the second waiter" waiting_are deploy 2
    start_waiter third third deploy --supersede
    wait_for "the third waiter" waiting_are deploy 3
    run_rlr -k deploy --status
    expect_status 75
    local host
    host=$(hostname)
    expect_contains "$out" "; 3 waiting" "the status line counts them"
    expect_contains "$out" "
  1. $host pid $first (note: deploy 41), exclusive, waiting for " "the first, first"
    expect_contains "$out" "
  2. $host pid $second, exclusive, waiting for " "the second, second"
    expect_contains "$out" ", gives up in " "the second's -w deadline"
    expect_contains "$out" "
  3. $host pid $third, exclusive, --supersede, waiting for " "the third, third"
    run_rlr -k deploy --status --json
    expect_contains "$out" '"waiting":3,"waiters":[{"position":1,"mode":"exclusive","limit":null,"host":"'"$host"'","pid":'"$first"',' "JSON: the first"
    expect_contains "$out" '"note":"deploy 41","hold":false,"supersede":false},{"position":2,' "JSON: its note"
    expect_contains "$out" '"pid":'"$third"',' "JSON: the third"
    local deadline
    deadline=$(sed -n 's/.*"position":2[^}]*"deadline_ms":\([0-9]*\).*/\1/p' <<<"$out")
    expect_ge "$deadline" "$(($(now_ms) + 590000))" "JSON: the second's deadline, 10 minutes on"
    run_rlr --list 'dep*'
    expect_contains "$out" "deploy: held by $host pid $holder" "--list: the holder"
    expect_contains "$out" "; 3 waiting" "--list: how many wait"
    run_rlr --list 'dep*' --json
    expect_contains "$out" '"waiting":3,' "--list --json: how many wait"
    # Served in that order.
    touch "$WORK/release-deploy"
    exit_of "$first" && exit_of "$second" && exit_of "$third" || fail "a waiter failed"
    expect_eq "$(tr '\n' ' ' <"$WORK/order")" "first second third " "the order they were served"
    run_rlr -k deploy --status
    expect_not_contains "$out" "waiting" "no one waits any more"
}

test_the_waiting_message_says_the_place_in_line() {
    hold deploy
    start_waiter first first deploy
    wait_for "the first waiter" waiting_are deploy 1
    CI=true start_bg second -v -k deploy -- true
    wait_for "the second waiter" waiting_are deploy 2
    wait_for "the second's message" grep -q "waiting until it is free, 2nd in line" "$WORK/second.err"
    # The first gives up its place: the second moves up, and -v says so.
    kill -TERM "$first"
    wait_for "the second to move up" grep -q "waiting for deploy: now 1st in line" "$WORK/second.err"
    touch "$WORK/release-deploy"
    exit_of "$second" || fail "the second waiter failed: $(cat "$WORK/second.err")"
}

test_a_killed_waiter_leaves_the_line_within_its_places_time() {
    hold deploy
    start_waiter killed killed deploy
    wait_for "the waiter" waiting_are deploy 1
    kill -KILL "$killed"
    # Its place and record last 10 s after its last request: gone by 12 s, never counted after.
    local i gone=""
    for i in $(seq 1 240); do
        if waiting_are deploy 0; then
            gone=yes
            break
        fi
        sleep 0.05
    done
    expect_eq "$gone" yes "the killed waiter is gone from --status"
    expect_eq "$(rcli hlen '{deploy}:redlockrun:waiters')" 0 "its record was dropped"
    # The next waiter is served the moment the lock is free.
    start_waiter next next deploy
    wait_for "the next waiter" waiting_are deploy 1
    touch "$WORK/release-deploy"
    exit_of "$next" || fail "the next waiter failed"
    expect_eq "$(cat "$WORK/order")" next "the next waiter ran"
}

test_supersede_ends_the_earlier_waiters_that_asked_for_it() {
    hold deploy
    start_waiter older older deploy --supersede --note "deploy 41"
    wait_for "the older waiter" waiting_are deploy 1
    start_waiter patient patient deploy
    wait_for "the patient waiter" waiting_are deploy 2
    start_waiter newer newer deploy --supersede --note "deploy 42"
    local host
    host=$(hostname)
    exit_of "$older"
    expect_eq "$?" 75 "the older waiter's status"
    expect_contains "$(cat "$WORK/older.err")" "gave up waiting for deploy after " "its message"
    expect_contains "$(cat "$WORK/older.err")" ": superseded by a newer waiter, $host pid $newer (note: deploy 42); not running " "its message names the newer one"
    wait_for "the two left" waiting_are deploy 2
    run_rlr -k deploy --status
    expect_contains "$out" "held by $host pid $holder" "the holder is never touched"
    expect_contains "$out" "  1. $host pid $patient, exclusive" "the waiter without --supersede keeps its place"
    expect_contains "$out" "  2. $host pid $newer (note: deploy 42), exclusive, --supersede" "the newer one waits"
    touch "$WORK/release-deploy"
    exit_of "$patient" && exit_of "$newer" || fail "a waiter failed"
    expect_eq "$(tr '\n' ' ' <"$WORK/order")" "patient newer " "who ran, in order"
}

test_supersede_ends_only_waiters_of_its_own_mode() {
    # Behind an exclusive holder: a shared waiter and a --limit 2 waiter with --supersede are not
    # ended by an exclusive one, nor by each other; -E gives the superseded one's status.
    hold mixed
    start_waiter shared shared mixed -s --supersede
    wait_for "the shared waiter" waiting_are mixed 1
    start_waiter exclusive exclusive mixed --supersede -E 9
    wait_for "the exclusive waiter" waiting_are mixed 2
    start_bg newer --supersede -k mixed -- true
    exit_of "$exclusive"
    expect_eq "$?" 9 "-E's status for the superseded exclusive waiter"
    wait_for "two left" waiting_are mixed 2
    run_rlr -k mixed --status
    expect_contains "$out" "pid $shared, shared, --supersede" "the shared waiter keeps its place"
    touch "$WORK/release-mixed"
    exit_of "$shared" && exit_of "$newer" || fail "a waiter failed"
    expect_eq "$(cat "$WORK/order")" shared "the shared waiter ran"
}

# older_is_woken: the first waiter of the queue of "deploy" has a wake-up on its list.
older_is_woken() {
    local id
    id=$(rcli zrange '{deploy}:redlockrun:queue' 0 0 | cut -d: -f2-)
    [ -n "$id" ] && [ "$(rcli llen "{deploy}:redlockrun:wake:$id")" = 1 ]
}

test_a_superseded_waiter_never_takes_the_lock_it_was_woken_for() {
    hold deploy
    start_waiter older older deploy --supersede
    wait_for "the older waiter" waiting_are deploy 1
    # Stopped, and no longer blocked (its BLPOP ran out, 5 s at most), the older waiter is woken by
    # the release, but cannot ask.
    kill -STOP "$older"
    wait_for "the older waiter's BLPOP to end" blocked_clients_are 0
    touch "$WORK/release-deploy"
    exit_of "$holder" || fail "the holder failed"
    wait_for "the older waiter to be woken" older_is_woken
    # A newer one supersedes it, takes the free lock, runs and lets it go.
    run_rlr -k deploy --supersede -- sh -c "echo newer >> '$WORK/order'"
    expect_status 0 "the newer waiter"
    # The lock is free, and the older waiter holds a wake-up: it still must not take it.
    kill -CONT "$older"
    exit_of "$older"
    expect_eq "$?" 75 "the older waiter, superseded"
    expect_contains "$(cat "$WORK/older.err")" "superseded by a newer waiter" "its message"
    expect_eq "$(cat "$WORK/order")" newer "only the newer one ran"
    run_rlr -k deploy --status
    expect_eq "$out" "deploy: free (last fence $(rcli get '{deploy}:redlockrun:fence'))" "nothing left"
}

test_a_hold_with_supersede_prints_the_exit_when_superseded() {
    hold deploy
    (
        h=$(RLR="$REDLOCKRUN" "$REDLOCKRUN" -k deploy --supersede --owner none --max-hold 1m \
            --hold 2>"$WORK/hold.err")
        echo "status=$? printed=$h" >"$WORK/hold.out"
    ) &
    local hold_script=$!
    BACKGROUND_PIDS+=("$hold_script")
    wait_for "the hold to wait" waiting_are deploy 1
    run_rlr -k deploy --supersede -w 1s -- true
    expect_status 75 "the newer run gives up after -w"
    wait "$hold_script"
    expect_eq "$(cat "$WORK/hold.out")" "status=75 printed=(exit 75)" "the superseded hold"
    expect_contains "$(cat "$WORK/hold.err")" "superseded by a newer waiter" "its message"
}

test_supersede_is_refused_where_it_cannot_wait_or_does_not_apply() {
    local args
    for args in "-n" "-w 0"; do
        # shellcheck disable=SC2086 # two words
        run_rlr -k deploy --supersede $args -- true
        expect_status 64 "--supersede $args"
        expect_contains "$err" "--supersede and ${args% *}" "--supersede $args: the message"
    done
    run_rlr -k deploy --supersede --status
    expect_status 64 "--supersede --status"
    run_rlr --list '*' --supersede
    expect_status 64 "--supersede --list"
    run_rlr -k deploy --supersede --break
    expect_status 64 "--supersede --break"
    expect_eq "$(rcli dbsize)" 0 "nothing written by a refusal"
}

run_tests
