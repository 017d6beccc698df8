#!/usr/bin/env bash
# A waiter that is paused (SIGSTOP here; a stalled VM or swapping alike) while its grant's reply
# waits unread must never start its command on a grant that may have expired: validity counts from
# the time the request was sent, the grant is renewed before the start when little of it is left,
# and released and waited for again when none is.
. "$(dirname "$0")/lib.sh"

# holding NAME SECONDS: a command that appends "NAME start NS" and, when it ends (or SIGTERM ends
# it), "NAME end NS" to $WORK/records.
holding() {
    local name=$1 seconds=$2 records="$WORK/records"
    echo "echo $name start \$(date +%s%N) >>'$records'; trap 'echo $name end \$(date +%s%N) >>$records; exit 143' TERM; sleep $seconds & wait; echo $name end \$(date +%s%N) >>'$records'"
}

# Fails unless every holder in $WORK/records ended, and no two of them ran at the same time.
expect_no_overlap() {
    local verdict
    verdict=$(awk '
        $2 == "start" { start[$1] = $3 }
        $2 == "end" { end_[$1] = $3 }
        END {
            for (a in start) {
                if (!(a in end_)) { print a " never ended"; exit }
                for (b in start) {
                    if (a < b && (b in end_) && start[a] < end_[b] && start[b] < end_[a]) {
                        print a " and " b " held the lock at the same time"; exit
                    }
                }
            }
        }' "$WORK/records")
    [ -z "$verdict" ] || fail "$verdict: $(tr '\n' ' ' <"$WORK/records")"
}

# The time of NAME's EVENT in the records, in nanoseconds.
record() {
    [ -e "$WORK/records" ] || return 0
    awk -v name="$1" -v event="$2" '$1 == name && $2 == event { print $3; exit }' "$WORK/records"
}
recorded() { [ -n "$(record "$1" "$2")" ]; }

owner_is() { [ "$(rcli hget '{job}:redlockrun:owner' pid)" = "$1" ]; }

# A holds the lock; B waits for it and is stopped while blocked; A's release grants B the lock,
# whose reply B cannot read. Sets a and b.
grant_to_a_stopped_waiter() { # B_OPTIONS [B_SECONDS]
    local b_options=$1
    start_bg a -t 3s -k job -c "while [ ! -e '$WORK/release-a' ]; do sleep 0.02; done"
    wait_for "A to hold the lock" lock_held job
    # shellcheck disable=SC2086 # the options are words
    start_bg b $b_options -t 3s -k job -c "$(holding B "${2:-1}")"
    wait_for "B to block" blocked_clients_are 1
    kill -STOP "$b"
    touch "$WORK/release-a"
    wait_for "A's release to grant B the lock" owner_is "$b"
}

test_a_waiter_continued_after_its_grant_expired_waits_for_the_next_holder() {
    local b_options
    for b_options in "" "--no-renew"; do
        rcli flushall >/dev/null
        rm -f "$WORK/records" "$WORK/release-a"
        grant_to_a_stopped_waiter "$b_options"
        exit_of "$a" || fail "A failed: $(cat "$WORK/a.err")"
        # B's grant expires on the server 3 s after A's release; C, waiting meanwhile, takes over.
        start_bg c -t 3s -k job -c "$(holding C 1.5)"
        wait_for "C to take over B's expired grant" owner_is "$c"
        wait_for "C's command" recorded C start
        kill -CONT "$b"
        exit_of "$c" || fail "C failed ($b_options): $(cat "$WORK/c.err")"
        exit_of "$b"
        expect_eq "$?" 0 "B's exit status ($b_options): $(cat "$WORK/b.err")"
        expect_no_overlap
        expect_ge "$(record B start)" "$(record C end)" "B ran after C ($b_options)"
        expect_eq "$(rcli exists job)" 0 "nothing left locked ($b_options)"
    done
}

test_a_waiter_continued_with_little_of_its_grant_left_renews_it_first() {
    # With --no-renew nothing else would renew it: B's command would run on after the server let
    # its key expire, while C took the lock.
    grant_to_a_stopped_waiter "--no-renew" 2
    exit_of "$a" || fail "A failed: $(cat "$WORK/a.err")"
    sleep 1.2 # more than a third of B's TTL is gone, and less than its command needs is left
    start_bg c -t 3s -k job -c "$(holding C 0.5)"
    wait_for "C to block" blocked_clients_are 1
    kill -CONT "$b"
    exit_of "$b"
    expect_eq "$?" 0 "B's exit status: $(cat "$WORK/b.err")"
    exit_of "$c" || fail "C failed: $(cat "$WORK/c.err")"
    expect_no_overlap
}

test_a_waiter_whose_wait_ran_out_while_paused_gives_up_with_75() {
    grant_to_a_stopped_waiter "-w 2s"
    exit_of "$a" || fail "A failed: $(cat "$WORK/a.err")"
    start_bg c -t 3s -k job -c "$(holding C 1)"
    wait_for "C to take over B's expired grant" owner_is "$c"
    kill -CONT "$b"
    exit_of "$b"
    expect_eq "$?" 75 "B's exit status"
    expect_contains "$(cat "$WORK/b.err")" "redlockrun: job was granted, but could not be used before its validity ran out on this machine's clock (was redlockrun suspended?); gave up after waiting" "message"
    recorded B start && fail "B's command ran"
    exit_of "$c" || fail "C failed: $(cat "$WORK/c.err")"
    expect_eq "$(rcli exists job)" 0 "nothing left locked"
}

# A signal that ends a wait once the replies to its BLPOP and the acquire behind it have arrived,
# unread (the waiter was stopped): when that acquire did not take the lock, because the key had
# become foreign or because it never ran (the server had lost its scripts), the wake-up token the
# BLPOP took is passed on, so that the waiter behind learns at once, not at its BLPOP's timeout.
test_a_waiter_ended_by_a_signal_after_taking_a_wake_up_passes_it_on() {
    local spoiler
    for spoiler in foreign noscript; do
        rcli flushall >/dev/null
        rm -f "$WORK/release-a" "$WORK/w2-start"
        start_bg a -k job -c "while [ ! -e '$WORK/release-a' ]; do sleep 0.02; done"
        wait_for "A to hold the lock ($spoiler)" lock_held job
        start_bg w1 -w 30s -k job -- touch "$WORK/w1-ran"
        wait_for "the first waiter to block ($spoiler)" blocked_clients_are 1
        start_bg w2 -w 30s -k job -c "date +%s%3N >'$WORK/w2-start'"
        wait_for "the second waiter to block ($spoiler)" blocked_clients_are 2
        kill -STOP "$w1"
        if [ "$spoiler" = foreign ]; then
            # A wake-up on the first waiter's own list (it is first in the queue), and a key that
            # no redlockrun may take, in one step.
            local first
            first=$(rcli zrange '{job}:redlockrun:queue' 0 0 | sed 's/^[0-9]*://')
            rcli eval "redis.call('SET', KEYS[1], 'not-a-timestamp')
                       redis.call('RPUSH', KEYS[2], '1')" 2 job "{job}:redlockrun:wake:$first" >/dev/null
        else
            rcli script flush >/dev/null
            touch "$WORK/release-a"
            exit_of "$a" || fail "A failed: $(cat "$WORK/a.err")"
        fi
        wait_for "the first waiter's BLPOP to take the token ($spoiler)" blocked_clients_are 1
        kill -TERM "$w1"
        local signalled
        signalled=$(now_ms)
        kill -CONT "$w1"
        exit_of "$w1"
        expect_eq "$?" 143 "the first waiter's exit status ($spoiler): $(cat "$WORK/w1.err")"
        [ -e "$WORK/w1-ran" ] && fail "the first waiter's command ran ($spoiler)"
        if [ "$spoiler" = foreign ]; then
            exit_of "$w2"
            expect_eq "$?" 65 "the second waiter's exit status: $(cat "$WORK/w2.err")"
            expect_lt $(($(now_ms) - signalled)) 2500 "the second waiter found the key foreign soon after the signal"
            stop_processes "$a"
            wait "$a" 2>/dev/null
        else
            exit_of "$w2" || fail "the second waiter failed: $(cat "$WORK/w2.err")"
            expect_lt $(($(cat "$WORK/w2-start") - signalled)) 2500 "the second waiter started soon after the signal"
            expect_eq "$(rcli exists job)" 0 "nothing left locked"
        fi
    done
}

run_tests
