#!/usr/bin/env bash
# --shared (-s), as flock(1)'s -s: shared holders together, an exclusive one alone; waiters served
# in the order they came, so a writer queued behind readers is not starved by readers that come
# after it, and a release lets in every shared waiter at the head of the queue at once. Shared
# holders and a semaphore's never mix; classic clients stay out while anyone holds the key.
. "$(dirname "$0")/lib.sh"
CLASSIC="$(dirname "$0")/classic_client.py"

QUEUE='{db}:redlockrun:queue'
OWNER='{db}:redlockrun:owner'

holders_of() { rcli hgetall "$OWNER" | grep -c '^holder:'; }
holders_are() { [ "$(holders_of)" = "$1" ]; }
queued_are() { [ "$(rcli zcard "$QUEUE")" = "$1" ]; }
started() { grep -q "^start $1\$" "$WORK/order" 2>/dev/null; }
ended() { grep -q "^end $1\$" "$WORK/order" 2>/dev/null; }

# take NAME MODE [options...]: a holder of db (MODE -s or -x) until $WORK/release-NAME exists; its
# pid goes to the variable NAME. It writes "start NAME" and "end NAME" to $WORK/order, and the
# times in ms to $WORK/NAME.times.
take() {
    local name=$1 mode=$2
    shift 2
    start_bg "$name" "$mode" "$@" -k db -c \
        "echo \"start $name\" >>'$WORK/order'; date +%s%3N >'$WORK/$name.times';
         while [ ! -e '$WORK/release-$name' ]; do sleep 0.02; done;
         date +%s%3N >>'$WORK/$name.times'; echo \"end $name\" >>'$WORK/order'"
}

# json_get EXPRESSION: a Python expression on the JSON object the last run_rlr printed, as `d`.
json_get() {
    /usr/bin/python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
print(eval(sys.argv[2]))' "$WORK/out" "$1"
}

# The order in which the names started, as one line.
start_order() { grep -o '^start .*' "$WORK/order" | cut -c7- | tr '\n' ' '; }

test_shared_holders_hold_together_and_an_exclusive_one_waits_for_them() {
    take r1 -s
    take r2 --shared
    wait_for "two shared holders" holders_are 2
    take w -x -w 30s
    wait_for "the writer to be queued" queued_are 1
    wait_for "the writer to block" blocked_clients_are 1
    started w && fail "the writer started beside the shared holders"
    touch "$WORK/release-r1"
    exit_of "$r1" || fail "r1 failed"
    # Woken or not by r1's release, the writer waits again: never running.
    wait_for "the writer to wait on after r1's release" blocked_clients_are 1
    started w && fail "the writer started while r2 still held the lock"
    touch "$WORK/release-r2"
    wait_for "the writer to start" started w
    ended r2 || fail "the writer started before r2 had ended"
    touch "$WORK/release-w"
    exit_of "$r2" || fail "r2 failed"
    exit_of "$w" || fail "the writer failed"
    expect_eq "$(rcli exists db "$OWNER" "$QUEUE")" 0 "nothing stays locked or queued"
}

test_a_queued_writer_is_not_starved_by_readers_that_come_after_it() {
    take r1 -s
    wait_for "the first reader" holders_are 1
    take w -x -w 30s
    wait_for "the writer to be queued" queued_are 1
    # Readers keep coming while r1 holds: each would fit beside r1, but the writer came first.
    take r2 -s -w 30s
    wait_for "r2 to be queued" queued_are 2
    take r3 -s -w 30s
    wait_for "r3 to be queued" queued_are 3
    wait_for "the writer, r2 and r3 to block" blocked_clients_are 3
    started r2 && fail "a reader that came after the queued writer went ahead of it"
    touch "$WORK/release-r1"
    wait_for "the writer to start" started w
    wait_for "r2 and r3 to wait on beside the writer" blocked_clients_are 2
    started r2 && fail "a reader started beside the writer"
    touch "$WORK/release-w"
    wait_for "r2 to start" started r2
    wait_for "r3 to start" started r3
    # r2 and r3 were let in together: either may start first.
    case $(start_order) in
    "r1 w r2 r3 " | "r1 w r3 r2 ") ;;
    *) fail "the order they started in: $(start_order)" ;;
    esac
    touch "$WORK/release-r2" "$WORK/release-r3"
    for name in r1 w r2 r3; do
        exit_of "${!name}" || fail "$name failed"
    done
}

# A writer that waits for a writer is queued, as every waiter is: it came before the reader that
# queues after it, and goes first when the lock is released.
test_a_writer_that_waited_before_the_readers_came_goes_first() {
    take w1 -x
    wait_for "the first writer" lock_held db
    take w2 -x -w 30s
    wait_for "the second writer to block" blocked_clients_are 1
    wait_for "the second writer to be queued" queued_are 1
    take r -s -w 30s
    wait_for "the reader to be queued" queued_are 2
    wait_for "the reader to block" blocked_clients_are 2
    touch "$WORK/release-w1"
    wait_for "the second writer to start" started w2
    wait_for "the reader to wait on" blocked_clients_are 1
    started r && fail "the reader started beside the second writer"
    touch "$WORK/release-w2"
    wait_for "the reader to start" started r
    expect_eq "$(start_order)" "w1 w2 r " "the order they started in"
    touch "$WORK/release-r"
    for name in w1 w2 r; do
        exit_of "${!name}" || fail "$name failed"
    done
    expect_eq "$(rcli exists db "$OWNER" "$QUEUE")" 0 "nothing stays locked or queued"
}

# A queued waiter killed with SIGKILL cannot give up its place. The release that wakes it leaves it
# a second to come; the writer behind it, second in line, takes the shared wake-up list's token
# (Redis passes over the killed one's closed connection), asks, and takes the lock once that second
# is over: not at its own next request (within 5 s), nor when the dead one's place would have
# lapsed (10 s after its last request).
test_a_queued_writer_killed_while_waiting_is_passed_over_after_its_wake_up() {
    take r -s
    wait_for "the reader" holders_are 1
    take w1 -x -w 60s
    wait_for "the first writer to be queued" queued_are 1
    take w2 -x -w 60s
    wait_for "the second writer to be queued" queued_are 2
    wait_for "both writers to block" blocked_clients_are 2
    kill -KILL "$w1"
    wait_for "the killed writer's connection to close" blocked_clients_are 1
    local released
    released=$(now_ms)
    touch "$WORK/release-r"
    wait_for "the second writer to start" started w2
    local after=$(( $(head -1 "$WORK/w2.times") - released ))
    expect_lt "$after" 3000 "ms from the release to the second writer's start"
    touch "$WORK/release-w2"
    exit_of "$r" || fail "the reader failed"
    exit_of "$w2" || fail "the second writer failed"
    expect_eq "$(rcli exists db "$OWNER" "$QUEUE")" 0 "nothing stays locked or queued"
}

# A server of its own, which DEBUG SLEEP can stall, becomes the test's server (REDIS_PORT for rcli,
# REDLOCKRUN_URL for the runs): Redis 7 and Valkey refuse DEBUG unless enable-debug-command allows
# it, an option Redis 6 does not know, and no server lets it be changed while it runs.
use_a_server_that_can_stall() {
    local options=()
    if [ -n "$(rcli config get enable-debug-command)" ]; then
        options=(--enable-debug-command local)
    fi
    start_redis STALL "${options[@]}"
    REDIS_PORT=$STALL_PORT
    export REDLOCKRUN_URL="redis://127.0.0.1:$STALL_PORT"
}

# Whether the server is in the middle of a stall: a PING goes unanswered for half a second.
server_stalls() { ! timeout 0.5 redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; }

# The server stalls (DEBUG SLEEP 2.5) while a writer waits behind a reader, all with a TTL of 2 s:
# the reader's renewals go unanswered until it is too late (76), and the writer's request runs only
# after the stall, so its grant, counted from the time the writer sent it, comes back already spent
# on the writer's clock. The server granted it after the stall, for the whole TTL: the writer
# renews it and runs. It keeps the place it queued for; the readers that came during the stall
# go after it.
test_a_queued_writer_keeps_its_place_when_the_server_stalls() {
    use_a_server_that_can_stall
    take r1 -s -t 2s
    wait_for "the first reader" holders_are 1
    take w -x -t 2s -w 30s
    wait_for "the writer to be queued" queued_are 1
    wait_for "the writer to block" blocked_clients_are 1
    rcli debug sleep 2.5 >/dev/null &
    local sleeper=$!
    wait_for "the server to stall" server_stalls || return
    take r2 -s -t 2s -w 30s
    take r3 -s -t 2s -w 30s
    alive "$sleeper" || fail "the stall ended before the late readers were started"
    wait "$sleeper"
    wait_for "the writer or a late reader to start" eval "started w || started r2 || started r3"
    started r2 && fail "a reader that came during the stall went ahead of the writer queued before it"
    started r3 && fail "a reader that came during the stall went ahead of the writer queued before it"
    touch "$WORK/release-w"
    wait_for "the writer to start" started w
    wait_for "r2 to start" started r2
    wait_for "r3 to start" started r3
    case $(start_order) in
    "r1 w r2 r3 " | "r1 w r3 r2 ") ;;
    *) fail "the order they started in: $(start_order)" ;;
    esac
    touch "$WORK/release-r2" "$WORK/release-r3"
    exit_of "$r1"
    expect_eq "$?" 76 "the first reader's exit status (its renewals went unanswered in the stall): $(cat "$WORK/r1.err")"
    for name in w r2 r3; do
        exit_of "${!name}" || fail "$name failed: $(cat "$WORK/$name.err")"
    done
    expect_eq "$(rcli exists db "$OWNER" "$QUEUE")" 0 "nothing stays locked or queued"
}

test_a_release_lets_in_every_shared_waiter_at_the_head_at_once() {
    take w -x
    wait_for "the writer" lock_held db
    local reader
    for reader in 1 2 3 4; do
        take "r$reader" -s -w 30s
        wait_for "reader $reader to be queued" queued_are "$reader"
    done
    # A second writer behind the readers waits for all four.
    take w2 -x -w 30s
    wait_for "the second writer to be queued" queued_are 5
    touch "$WORK/release-w"
    for reader in 1 2 3 4; do
        wait_for "reader $reader to start" started "r$reader"
    done
    wait_for "four shared holders at once" holders_are 4
    # One release woke them all: they started within a moment of each other, not one per release
    # nor one per BLPOP timeout.
    local first last
    first=$(for reader in 1 2 3 4; do head -1 "$WORK/r$reader.times"; done | sort -n | head -1)
    last=$(for reader in 1 2 3 4; do head -1 "$WORK/r$reader.times"; done | sort -n | tail -1)
    expect_lt $((last - first)) 1000 "the four readers started together"
    started w2 && fail "the second writer started beside the readers"
    touch "$WORK/release-r1" "$WORK/release-r2" "$WORK/release-r3"
    wait_for "r4 to be the last shared holder" holders_are 1
    wait_for "the second writer to wait on" blocked_clients_are 1
    started w2 && fail "the second writer started while r4 still held the lock"
    touch "$WORK/release-r4"
    wait_for "the second writer to start" started w2
    touch "$WORK/release-w2"
    for name in w r1 r2 r3 r4 w2; do
        exit_of "${!name}" || fail "$name failed"
    done
    expect_eq "$(rcli exists db "$OWNER" "$QUEUE")" 0 "nothing stays locked or queued"
}

test_each_shared_holder_has_its_own_fence_and_the_status_shows_the_mode() {
    take r1 -s --note "report 1"
    take r2 -s
    wait_for "two shared holders" holders_are 2
    run_rlr -k db --status
    expect_status 75
    expect_contains "$out" "db: held by 2 shared holders: " "the status line"
    expect_contains "$out" "(note: report 1)" "the note"
    run_rlr -k db --status --json
    expect_status 75
    expect_eq "$(json_get 'd["mode"]')" shared "the JSON's mode"
    expect_eq "$(json_get '[h["mode"] for h in d["holders"]]')" "['shared', 'shared']" "each holder's mode"
    local fences
    fences=$(json_get 'len(set(h["fence"] for h in d["holders"]))')
    expect_eq "$fences" 2 "two different fences"
    run_rlr -n -k db -- true
    expect_status 75 "an exclusive run with -n"
    expect_contains "$err" "db is held by 2 shared holders" "its message"
    touch "$WORK/release-r1" "$WORK/release-r2"
    exit_of "$r1" || fail "r1 failed"
    exit_of "$r2" || fail "r2 failed"
    take w -x
    wait_for "the writer" lock_held db
    run_rlr -k db --status --json
    expect_eq "$(json_get 'd["mode"], d["holders"][0]["mode"]')" "('exclusive', 'exclusive')" "an exclusive holder's mode"
    touch "$WORK/release-w"
    exit_of "$w" || fail "the writer failed"
}

test_shared_and_semaphore_holders_never_mix_and_nothing_is_changed() {
    local before
    run_rlr -s --limit 2 -k db -- true
    expect_status 64 "-s with --limit"
    expect_contains "$err" "--shared and --limit exclude each other" "its message"
    run_rlr -s -x -k db -- true
    expect_status 64 "-s with -x"
    run_rlr -x --limit 2 -k db -- true
    expect_status 64 "-x with --limit"
    expect_eq "$(rcli dbsize)" 0 "nothing was written"

    take r1 -s
    wait_for "a shared holder" holders_are 1
    before=$(rcli --no-raw dump "$OWNER"; rcli get db; rcli zcard "$QUEUE")
    run_rlr --limit 2 -w 5s -k db -- touch "$WORK/ran"
    expect_status 64 "a semaphore's run on a shared lock"
    expect_contains "$err" "db is held by shared holders (--shared); a run with --limit 2 cannot share it" "its message"
    expect_contains "$err" "nothing was changed" "its message"
    [ -e "$WORK/ran" ] && fail "the semaphore's command ran"
    expect_eq "$(rcli --no-raw dump "$OWNER"; rcli get db; rcli zcard "$QUEUE")" "$before" "the lock, untouched"
    touch "$WORK/release-r1"
    exit_of "$r1" || fail "r1 failed"

    start_bg sem --limit 2 -k db -c "while [ ! -e '$WORK/release-sem' ]; do sleep 0.02; done"
    wait_for "a semaphore's holder" holders_are 1
    run_rlr -s -w 5s -k db -- touch "$WORK/ran"
    expect_status 64 "a shared run on a semaphore"
    expect_contains "$err" "db is held as a --limit 2 semaphore; a --shared run cannot share it (shared holders and a semaphore's never mix on one key)" "its message"
    [ -e "$WORK/ran" ] && fail "the shared command ran"
    touch "$WORK/release-sem"
    exit_of "$sem" || fail "the semaphore's holder failed"
}

# A queued writer refused (the key has become something else) leaves the queue at once, not when
# its place lapses.
test_a_queued_writer_refused_leaves_the_queue() {
    take r -s
    wait_for "the reader" holders_are 1
    take w -x -w 30s
    wait_for "the writer to be queued" queued_are 1
    wait_for "the writer to block" blocked_clients_are 1
    # It finds out at its next request (within 5 s), without a wake-up to pass on.
    rcli del db >/dev/null
    rcli rpush db not-a-lock >/dev/null
    exit_of "$w"
    expect_eq "$?" 65 "the writer's exit status"
    expect_eq "$(rcli exists "$QUEUE")" 0 "the writer left the queue"
    touch "$WORK/release-r"
    exit_of "$r"
    expect_eq "$?" 76 "the reader's exit status (its lock was deleted)"
}

test_classic_clients_and_shared_holders_exclude_each_other() {
    take r1 -s -t 3s
    take r2 -s -t 3s
    wait_for "two shared holders" holders_are 2
    # The key holds the latest expiry among the holders: a classic client waits for all of them.
    /usr/bin/python3 "$CLASSIC" "127.0.0.1:$REDIS_PORT" db ms 10 run sh -c "date +%s%3N >'$WORK/classic'" \
        >"$WORK/classic.out" 2>&1 &
    local classic=$!
    sleep 0.5
    [ -e "$WORK/classic" ] && fail "the classic client took the lock beside the shared holders"
    touch "$WORK/release-r1"
    exit_of "$r1" || fail "r1 failed"
    sleep 0.5
    [ -e "$WORK/classic" ] && fail "the classic client took the lock while r2 held it"
    touch "$WORK/release-r2"
    exit_of "$r2" || fail "r2 failed"
    wait "$classic" || fail "the classic client failed: $(cat "$WORK/classic.out")"
    [ -e "$WORK/classic" ] || fail "the classic client never ran"

    # And a classic client's lock keeps shared runs out until it is released.
    rcli set db $(($(server_ms) + 1500)) >/dev/null
    run_rlr -s -n -k db -- true
    expect_status 75 "a shared run beside a classic client"
    expect_contains "$err" "held by a client of the classic algorithm" "its message"
}

test_shared_holds_hold_together() {
    local h1 h2
    h1=$("$REDLOCKRUN" -k db -s --hold --owner none --max-hold 1m) || fail "the first hold: $h1"
    h2=$("$REDLOCKRUN" -k db -s --hold --owner none --max-hold 1m) || fail "the second hold: $h2"
    expect_eq "$(holders_of)" 2 "two shared holds at once"
    run_rlr -n -k db -- true
    expect_status 75 "an exclusive run beside them"
    local handle
    for handle in "$h1" "$h2"; do
        eval "$handle"
        "$REDLOCKRUN" --release || fail "a release failed"
    done
    expect_eq "$(rcli exists db "$OWNER")" 0 "released"
}

run_tests
