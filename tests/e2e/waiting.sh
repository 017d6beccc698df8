#!/usr/bin/env bash
# Contention: -n, -w, -E, hand-off to waiters, crashed holders, signals while waiting, and mutual
# exclusion under load.
. "$(dirname "$0")/lib.sh"

# Starts a redlockrun that holds KEY until $WORK/release-KEY exists; waits until it holds it.
hold() {
    local key=$1
    shift
    start_bg holder "$@" -k "$key" -c "while [ ! -e '$WORK/release-$key' ]; do sleep 0.02; done"
    wait_for "$key to be held" lock_held "$key"
}

test_no_wait_on_a_held_lock_is_75_at_once() {
    hold job
    run_rlr -n -k job -- touch "$WORK/ran"
    expect_status 75
    expect_lt "$elapsed_ms" 5000 "-n returned without waiting"
    expect_contains "$err" "redlockrun: job is held by $(hostname) pid $holder since " "message"
    # The lock is renewed: its lease until the next renewal is no time a reader could use.
    expect_contains "$err" ", renewed every 10s" "message: renewed"
    expect_not_contains "$err" "for another" "message: no lease shown as a time left"
    # Someone reading cron mail must tell that the job did not run.
    expect_contains "$err" "; not running touch $WORK/ran" "message: the command not run"
    [ -e "$WORK/ran" ] && fail "the command ran without the lock"
    run_rlr -q -n -k job -- true
    expect_status 75
    expect_eq "$err" "" "-q silences the busy message"
    run_rlr -w 0 -k job -- true
    expect_status 75
    touch "$WORK/release-job"
    exit_of "$holder" || fail "the holder failed"
}

test_a_release_leaves_exactly_one_wake_up_token() {
    # Whatever the wake-up list held (here: tokens no waiter took), a release leaves one token, for
    # the longest-waiting waiter, and a limit on its life.
    run_rlr -k job -c "redis-cli -p $REDIS_PORT rpush '{job}:redlockrun:wake' 1 1 1 >/dev/null"
    expect_status 0
    expect_eq "$(rcli llen '{job}:redlockrun:wake')" 1 "tokens after the release"
    local ttl
    ttl=$(rcli pttl '{job}:redlockrun:wake')
    expect_ge "$ttl" 1 "the token expires"
    expect_lt "$ttl" 10001 "within 10 s"
    # The next acquisition clears it: a stale token must not wake anyone for nothing.
    run_rlr -k job -c "redis-cli -p $REDIS_PORT llen '{job}:redlockrun:wake'"
    expect_eq "$out" 0 "tokens while the next holder runs"
}

test_wait_limit_gives_up_with_75() {
    hold job
    run_rlr -w 0.5 -k job -- touch "$WORK/ran"
    expect_status 75
    expect_ge "$elapsed_ms" 500 "waited for -w 0.5"
    expect_lt "$elapsed_ms" 10000 "gave up"
    expect_contains "$err" "gave up after waiting" "message"
    expect_contains "$err" "not running touch $WORK/ran" "message: the command not run"
    [ -e "$WORK/ran" ] && fail "the command ran without the lock"
    touch "$WORK/release-job"
}

# Redis before 7.0.8 reads a BLPOP timeout of 0.001 s as 0, which blocks for ever (redis#11687). A
# wait that ends within a millisecond or two of its first try blocks that short: it must still give
# up with 75 at the end of -w on every server, not block until the reply's deadline ends it with 69.
test_a_wait_with_milliseconds_left_gives_up_with_75() {
    hold job
    local round limit
    for round in 1 2 3 4 5; do
        for limit in 1ms 2ms 3ms 5ms; do
            RUN_RLR_LIMIT=30 run_rlr --connect-timeout 1s -w "$limit" -k job -- touch "$WORK/ran"
            expect_status 75 "-w $limit, round $round"
            expect_lt "$elapsed_ms" 1000 "-w $limit, round $round: gave up at its end"
            [ "$status" = 75 ] || break 2
        done
    done
    [ -e "$WORK/ran" ] && fail "the command ran without the lock"
    touch "$WORK/release-job"
}

test_a_holder_that_does_not_renew_is_shown_with_its_expiry() {
    hold job --no-renew -t 40s
    run_rlr -n -k job -- true
    expect_status 75
    expect_contains "$err" "job is held by $(hostname) pid $holder since " "message"
    expect_contains "$err" "until it expires in " "message: when it expires"
    expect_not_contains "$err" "renewed every" "message: not renewed"
    touch "$WORK/release-job"
}

test_the_command_not_run_is_quoted_escaped_and_shortened() {
    hold job
    run_rlr -n -k job -- printf '%s\n' 'two words' $'a\nb'
    expect_status 75
    expect_contains "$err" "not running printf '%s\\n' 'two words' 'a\\nb'" "quoted, escaped"
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line"
    run_rlr -n -k job -c "echo $(printf 'x%.0s' $(seq 1 300))"
    expect_status 75
    expect_contains "$err" "not running sh -c 'echo xxxx" "-c"
    expect_contains "$err" "..." "shortened"
    expect_lt "$(wc -c <"$WORK/err")" 400 "a long command is shortened"
    touch "$WORK/release-job"
}

# A waiter where someone watches it ($CI set, or a terminal: terminal.sh) says once that it waits,
# for whom and how long, and when it got the lock; cron (neither) and -q stay quiet.
waiter_behind_a_short_holder() {
    # A TTL of 1s makes the waiter ask again every second or so: "once" is more than one answer.
    hold job -t 1s
    start_bg waiter "$@" -w 30s -k job -- true
    sleep 2.5
    touch "$WORK/release-job"
    exit_of "$waiter" || fail "the waiter failed: $(cat "$WORK/waiter.err")"
    exit_of "$holder" || fail "the holder failed"
    rm -f "$WORK/release-job"
}

test_a_waiter_under_ci_says_once_that_it_waits_and_when_it_got_the_lock() {
    export CI=true
    waiter_behind_a_short_holder
    unset CI
    local err
    err=$(cat "$WORK/waiter.err")
    expect_contains "$err" "redlockrun: job is held by $(hostname) pid $holder" "whom it waits for"
    expect_contains "$err" "waiting up to 30s" "that it waits, and how long"
    expect_eq "$(grep -c "waiting up to" <<<"$err")" 1 "said once"
    expect_contains "$err" "redlockrun: got job" "that it got the lock"
    expect_contains "$err" "after waiting 2" "after how long"
    expect_eq "$(wc -l <<<"$err")" 2 "two lines in all"
}

test_a_waiter_under_cron_or_with_q_says_nothing() {
    unset CI # cron's case
    waiter_behind_a_short_holder
    expect_eq "$(cat "$WORK/waiter.err")" "" "neither a terminal nor CI"
    export CI=
    waiter_behind_a_short_holder
    unset CI
    expect_eq "$(cat "$WORK/waiter.err")" "" "an empty \$CI"
    export CI=true
    waiter_behind_a_short_holder -q
    unset CI
    expect_eq "$(cat "$WORK/waiter.err")" "" "-q"
}

test_conflict_exit_code() {
    hold job
    run_rlr -E 0 -n -k job -- touch "$WORK/ran"
    expect_status 0
    [ -e "$WORK/ran" ] && fail "the command ran without the lock"
    run_rlr -E 9 -w 100ms -k job -- true
    expect_status 9
    touch "$WORK/release-job"
    exit_of "$holder" || fail "the holder failed"
    # The command's own status is still passed through when the lock is free.
    run_rlr -E 0 -k job -- sh -c 'exit 75'
    expect_status 75
}

test_a_waiter_gets_the_lock_as_soon_as_it_is_released() {
    # The holder's TTL is long: a waiter that only woke on its BLPOP timeout (capped at 5 s) or on
    # the TTL would start seconds after the release, not milliseconds.
    start_bg holder -t 60s -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done; date +%s%3N >'$WORK/holder-end'"
    wait_for "the holder" lock_held job
    start_bg waiter -k job -c "date +%s%3N >'$WORK/waiter-start'"
    wait_for "the waiter blocks" blocked_clients_are 1
    [ -e "$WORK/waiter-start" ] && fail "the waiter ran while the lock was held"
    touch "$WORK/go"
    exit_of "$holder" || fail "holder"
    exit_of "$waiter" || fail "waiter: $(cat "$WORK/waiter.err")"
    local started ended
    read_number started "$WORK/waiter-start" || return
    read_number ended "$WORK/holder-end" || return
    local gap=$((started - ended))
    expect_ge "$gap" 0 "the waiter started after the holder ended"
    expect_lt "$gap" 2500 "hand-off gap in ms"
}

test_waiters_are_woken_one_per_release() {
    start_bg holder -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    local pids=() i
    for i in 1 2 3; do
        "$REDLOCKRUN" -k job -c "echo start >>'$WORK/log'; sleep 0.2; echo end >>'$WORK/log'" &
        pids+=("$!")
    done
    wait_for "the three waiters block" blocked_clients_are 3
    touch "$WORK/go"
    for i in "${pids[@]}"; do
        wait "$i" || fail "waiter $i failed"
    done
    expect_eq "$(tr '\n' ' ' <"$WORK/log")" "start end start end start end " "runs never overlap"
}

test_a_crashed_holder_s_lock_is_taken_after_it_expires() {
    start_bg holder -t 1500ms -k job -- sleep 60
    wait_for "the holder" lock_held job
    kill -KILL "$holder"
    wait "$holder" 2>/dev/null
    lock_held job || fail "the crashed holder's lock should still be there"
    run_rlr -k job -- true
    expect_status 0
    expect_ge "$elapsed_ms" 300 "waited for the expiry"
    expect_lt "$elapsed_ms" 10000 "took the expired lock over"
}

test_a_stale_timestamp_without_ttl_is_taken_over() {
    rcli set job $(( $(server_ms) + 1200 )) >/dev/null
    run_rlr -k job -- true
    expect_status 0
    expect_ge "$elapsed_ms" 500 "waited for the timestamp to pass"
    expect_lt "$elapsed_ms" 10000 "then took it"
    rcli set job 1700000000 >/dev/null # long past, in seconds
    run_rlr -n -k job -- true
    expect_status 0
}

test_signals_while_waiting_end_at_once_and_leave_nothing() {
    hold job
    local signal expected
    for signal in INT TERM HUP ALRM XCPU RTMIN+3; do
        start_bg waiter -k job -- touch "$WORK/ran-$signal"
        wait_for "the waiter blocks (SIG$signal)" blocked_clients_are 1
        local start=$(now_ms)
        kill -s "$signal" "$waiter"
        exit_of "$waiter"
        status=$?
        expected=$((128 + $(kill -l "$signal")))
        expect_eq "$status" "$expected" "exit status after SIG$signal"
        expect_lt "$(($(now_ms) - start))" 3000 "SIG$signal ended the wait promptly"
        expect_contains "$(cat "$WORK/waiter.err")" "SIG$signal while waiting for job" "message"
        [ -e "$WORK/ran-$signal" ] && fail "the command ran"
    done
    expect_eq "$(rcli hget '{job}:redlockrun:owner' pid)" "$holder" "the holder still holds it"
    # The interrupted waiters took no wake-up token with them: the next waiter is woken at once.
    start_bg waiter -t 60s -k job -c "date +%s%3N >'$WORK/waiter-start'"
    wait_for "the last waiter blocks" blocked_clients_are 1
    local released=$(now_ms)
    touch "$WORK/release-job"
    exit_of "$waiter" || fail "the last waiter failed"
    local started
    read_number started "$WORK/waiter-start" || return
    expect_lt "$((started - released))" 2500 "hand-off after interrupted waiters"
}

test_a_signal_racing_the_release_leaves_no_lock() {
    # The waiter's acquire is pipelined behind its BLPOP, so a release can grant it the lock in the
    # very moment a signal ends the wait. Whichever way each round goes, once both are gone no lock
    # may be left.
    local round
    for round in $(seq 1 15); do
        rm -f "$WORK/go"
        start_bg holder -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.01; done"
        wait_for "the holder" lock_held job
        start_bg waiter -k job -- sleep 0.2
        wait_for "the waiter blocks in round $round" blocked_clients_are 1
        touch "$WORK/go"
        sleep "0.0$((RANDOM % 4))"
        kill -TERM "$waiter"
        wait "$holder" "$waiter" 2>/dev/null
        expect_eq "$(rcli exists job)" 0 "a lock left behind in round $round"
    done
}

test_a_signal_ignored_at_start_stays_ignored() {
    # As under nohup: whoever started redlockrun chose to ignore SIGHUP (and here SIGALRM and a
    # real-time signal too), for it and its command.
    hold job
    local signal ignored=(HUP ALRM RTMIN+3)
    (
        trap '' "${ignored[@]}"
        exec "$REDLOCKRUN" -k job -c "grep SigIgn /proc/\$\$/status >'$WORK/ignored'"
    ) 2>"$WORK/waiter.err" &
    local waiter=$!
    wait_for "the waiter blocks" blocked_clients_are 1
    for signal in "${ignored[@]}"; do
        kill -s "$signal" "$waiter"
    done
    sleep 0.5
    alive "$waiter" || fail "a signal ended a redlockrun that was started ignoring it"
    touch "$WORK/release-job"
    wait "$waiter" || fail "the waiter failed: $(cat "$WORK/waiter.err")"
    local mask
    mask=$(awk '{print $2}' "$WORK/ignored")
    for signal in "${ignored[@]}"; do
        expect_eq "$(( (0x${mask:-0} >> ($(kill -l "$signal") - 1)) & 1 ))" 1 \
            "the command inherits the ignored SIG$signal (SigIgn $mask)"
    done
}


test_a_grant_behind_a_failed_blpop_is_used_not_dropped() {
    # The acquire pipelined behind a BLPOP runs whatever the BLPOP answers. Here the BLPOP fails
    # (its wake-up key holds a string) in the very moment the lock is free: the acquire grants it,
    # and that grant must be used (or released), never left held by a redlockrun that exited.
    rcli set job $(( $(server_ms) + 60000 )) >/dev/null # a classic holder: rechecked every ~100 ms
    start_bg waiter -w 30s -k job -- touch "$WORK/ran"
    wait_for "the waiter to block" blocked_clients_are 1
    kill -STOP "$waiter"
    # Its BLPOP times out and the "busy" answer waits unread; meanwhile the lock becomes free and
    # the wake-up key unusable, so the waiter's next BLPOP fails at once and its acquire wins.
    wait_for "the waiter's BLPOP to time out" blocked_clients_are 0
    rcli del job >/dev/null
    rcli set '{job}:redlockrun:wake' not-a-list >/dev/null
    kill -CONT "$waiter"
    exit_of "$waiter"
    expect_eq "$?" 0 "the waiter's exit status ($(cat "$WORK/waiter.err"))"
    [ -e "$WORK/ran" ] || fail "the waiter's command did not run"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "no lock left behind"
}

job_queue_is() { [ "$(rcli zcard '{job}:redlockrun:queue')" = "$1" ]; }

# A classic client holds the lock (rechecked every 100 ms); a waiter is queued, and blocks on a
# list of its own, named after the id it is queued under, which something else then overwrites.
# LISTS=WHAT blpop_error_is_69_naming_its_list OPTION...: the waiter runs with these options, and
# its message names WHAT ($list stands for its own list).
blpop_error_is_69_naming_its_list() {
    rcli set job $(( $(server_ms) + 60000 )) >/dev/null
    start_bg waiter "$@" -w 30s -k job -- touch "$WORK/ran"
    # The queue's size is read at each try: a $(...) among wait_for's words is read once, before the
    # waiter may have queued, and then waits in vain.
    wait_for "the waiter to be queued" job_queue_is 1
    local id list
    id=$(rcli zrange '{job}:redlockrun:queue' 0 -1 | sed 's/^[0-9]*://')
    list="{job}:redlockrun:wake:$id"
    rcli set "$list" not-a-list >/dev/null
    LISTS=${LISTS//\$list/$list}
    exit_of "$waiter"
    expect_eq "$?" 69 "the waiter's exit status"
    expect_contains "$(cat "$WORK/waiter.err")" "redlockrun: cannot wait on the wake-up $LISTS: Redis at 127.0.0.1:$REDIS_PORT answered with an error: WRONGTYPE" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli exists '{job}:redlockrun:queue')" 0 "the waiter left the queue"
    expect_eq "$(rcli hlen '{job}:redlockrun:waiters')" 0 "the waiter's record is gone"
}

# The first in line blocks on the shared wake-up list too (holders.lua).
test_an_exclusive_waiter_s_blpop_error_is_69_naming_its_lists() {
    LISTS='lists $list and {job}:redlockrun:wake' blpop_error_is_69_naming_its_list
}

test_a_shared_waiter_s_blpop_error_is_69_naming_its_list() {
    LISTS='list $list' blpop_error_is_69_naming_its_list -s
}

# The server loses its scripts (SCRIPT FLUSH, or a restart that kept the data) while waiters block:
# the acquire pipelined behind the first waiter's BLPOP answers NOSCRIPT, and the waiter sends it
# again in full. When that answer is no use to it (the key has become foreign, or the server
# refuses the write), the wake-up token its BLPOP took is passed on: the waiter behind it learns at
# once, not when its own BLPOP times out (5 s later).
test_a_waiter_whose_scripts_were_flushed_passes_on_a_wake_up_it_cannot_use() {
    rcli acl setuser nosetter on '>nosetterpass' '~*' '+@all' >/dev/null
    local spoiler w1_url
    for spoiler in foreign refused; do
        rcli flushall >/dev/null
        rcli acl setuser nosetter +set >/dev/null
        rm -f "$WORK/release-job" "$WORK/w2-start"
        hold job
        w1_url=$REDLOCKRUN_URL
        [ "$spoiler" = refused ] && w1_url="redis://nosetter:nosetterpass@127.0.0.1:$REDIS_PORT"
        REDLOCKRUN_URL=$w1_url start_bg w1 -w 30s -k job -- touch "$WORK/w1-ran"
        wait_for "the first waiter to block ($spoiler)" blocked_clients_are 1
        start_bg w2 -w 30s -k job -c "date +%s%3N >'$WORK/w2-start'"
        wait_for "the second waiter to block ($spoiler)" blocked_clients_are 2
        rcli script flush >/dev/null
        # Stopped, the first waiter reads the NOSCRIPT only once the key is spoilt.
        kill -STOP "$w1"
        touch "$WORK/release-job"
        exit_of "$holder" || fail "the holder failed ($spoiler)"
        wait_for "the first waiter's BLPOP to take the token ($spoiler)" blocked_clients_are 1
        case $spoiler in
        foreign) rcli set job not-a-timestamp >/dev/null ;;
        refused) rcli acl setuser nosetter -set >/dev/null ;;
        esac
        kill -CONT "$w1"
        exit_of "$w1"
        status=$?
        local w1_ended
        w1_ended=$(now_ms)
        [ -e "$WORK/w1-ran" ] && fail "the first waiter's command ran ($spoiler)"
        if [ "$spoiler" = foreign ]; then
            expect_eq "$status" 65 "the first waiter's exit status ($(cat "$WORK/w1.err"))"
            exit_of "$w2"
            expect_eq "$?" 65 "the second waiter's exit status ($(cat "$WORK/w2.err"))"
            expect_lt $(($(now_ms) - w1_ended)) 2500 "the second waiter found the key foreign soon after the first"
        else
            expect_eq "$status" 69 "the first waiter's exit status ($(cat "$WORK/w1.err"))"
            expect_contains "$(cat "$WORK/w1.err")" "answered with an error" "the first waiter's message"
            exit_of "$w2" || fail "the second waiter failed: $(cat "$WORK/w2.err")"
            expect_lt $(($(cat "$WORK/w2-start") - w1_ended)) 2500 "the second waiter started soon after the first ended"
            expect_eq "$(rcli exists job)" 0 "nothing left locked"
        fi
    done
    rcli acl deluser nosetter >/dev/null
}

test_a_release_replaces_a_wake_up_key_of_another_type() {
    # Someone wrote a string to the wake-up key while the lock was held. The release still releases,
    # says so, and wakes the waiter at once.
    start_bg holder -v -t 60s -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done; redis-cli -p $REDIS_PORT set '{job}:redlockrun:wake' x >/dev/null; date +%s%3N >'$WORK/holder-end'"
    wait_for "the holder" lock_held job
    start_bg waiter -k job -c "date +%s%3N >'$WORK/waiter-start'"
    wait_for "the waiter to block" blocked_clients_are 1
    touch "$WORK/go"
    exit_of "$holder"
    expect_eq "$?" 0 "the holder's exit status"
    local messages
    messages=$(cat "$WORK/holder.err")
    expect_contains "$messages" "redlockrun: released job after" "the release is reported"
    expect_not_contains "$messages" "could not release" "the release is reported"
    exit_of "$waiter" || fail "the waiter failed: $(cat "$WORK/waiter.err")"
    local started ended
    read_number started "$WORK/waiter-start" || return
    read_number ended "$WORK/holder-end" || return
    local gap=$((started - ended))
    expect_lt "$gap" 2500 "the waiter was woken by the release (gap in ms)"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "released"
}

test_a_release_deletes_a_queue_key_of_another_type() {
    # The waiters' queue key, written by someone else: an exclusive release, which looks there for
    # the waiter to wake, still releases, and deletes the key, which holds no waiter.
    rcli set '{job}:redlockrun:queue' not-a-queue >/dev/null
    run_rlr -k job -- true
    expect_status 0
    expect_not_contains "$err" "could not release" "the release"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner' '{job}:redlockrun:queue')" 0 "released, and the foreign queue key deleted"
}

# A waiter killed with SIGKILL while it waits (cron's timeout, a cancelled CI job) leaves no one to
# pass its turn on: the release wakes it, and the next waiter must still get the lock at once,
# not when the dead one's place in the queue lapses (10 s after its last request).
test_a_waiter_killed_while_waiting_does_not_hold_up_the_next() {
    start_bg holder -k job -c "while [ ! -e '$WORK/release' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    start_bg killed -w 30s -k job -- touch "$WORK/killed-ran"
    wait_for "the first waiter to block" blocked_clients_are 1
    start_bg next -w 30s -k job -c "date +%s%3N >'$WORK/next-start'"
    wait_for "the second waiter to block" blocked_clients_are 2
    kill -KILL "$killed"
    wait_for "the killed waiter's connection to close" blocked_clients_are 1
    local released_at
    released_at=$(now_ms)
    touch "$WORK/release"
    exit_of "$holder" || fail "the holder failed"
    exit_of "$next" || fail "the next waiter failed: $(cat "$WORK/next.err")"
    # The next one, second in line, takes the shared list's token, which Redis passes the killed
    # one's closed connection over for, and asks; it takes the lock when the killed one's woken
    # second is over (holders.lua): not at its BLPOP's timeout (5 s), nor when that place would
    # have lapsed (10 s).
    expect_lt $(($(cat "$WORK/next-start") - released_at)) 3000 "ms from the release to the next waiter's start"
    if [ -e "$WORK/killed-ran" ]; then fail "the killed waiter's command ran"; fi
}

test_mutual_exclusion_under_contention() {
    # 8 processes x 25 runs of a read-sleep-write increment: any overlap loses an increment.
    rcli set counter 0 >/dev/null
    local worker pids=()
    for worker in $(seq 1 8); do
        (
            for run in $(seq 1 25); do
                "$REDLOCKRUN" -k mutex -c "v=\$(redis-cli -p $REDIS_PORT get counter); sleep 0.01; redis-cli -p $REDIS_PORT set counter \$((v + 1)) >/dev/null" ||
                    echo "run failed: $?" >>"$WORK/failures"
            done
        ) &
        pids+=("$!")
    done
    for worker in "${pids[@]}"; do
        wait "$worker"
    done
    [ -s "$WORK/failures" ] && fail "$(cat "$WORK/failures")"
    expect_eq "$(rcli get counter)" 200 "final count"
}

run_tests
