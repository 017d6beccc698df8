#!/usr/bin/env bash
# --min-hold: a lock kept until at least its grant + DURATION by the server's clock, for cron
# entries installed on many hosts (once per tick across hosts).
. "$(dirname "$0")/lib.sh"
CLASSIC="$(dirname "$0")/classic_client.py"

# Sleeps until the server's clock reaches $1 (ms).
sleep_until_server_ms() {
    local left=$(($1 - $(server_ms)))
    if [ "$left" -gt 0 ]; then
        sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
    fi
}

test_a_short_command_keeps_the_lock_until_min_hold() {
    local before after
    before=$(server_ms)
    run_rlr --min-hold 3s -k report -- true
    after=$(server_ms)
    expect_status 0
    # Held until grant + 3 s, by the server's clock, after its command ended.
    local expiry
    expiry=$(expiry_ms report)
    expect_ge "$expiry" $((before + 3000)) "the key expires no earlier than grant + 3s"
    expect_lt "$expiry" $((after + 3001)) "and no later"
    expect_eq "$(rcli get report)" "$expiry" "the key holds its expiry, as a classic lock"
    expect_eq "$(rcli exists '{report}:redlockrun:wake')" 0 "no wake-up token was pushed"
    expect_ge "$(rcli hget '{report}:redlockrun:owner' ended_ms)" "$before" "the end is recorded"
    run_rlr --status -k report
    expect_status 75
    expect_contains "$out" "report: held by $(hostname) pid" "--status"
    expect_contains "$out" "whose command ended" "--status says the command ended"
    expect_contains "$out" "lets the lock go in" "--status says when it is let go"
    run_rlr --status --json -k report
    expect_status 75
    expect_eq "$(/usr/bin/python3 -c 'import json, sys; o = json.load(sys.stdin); print(o["state"], o["expires_ms"], o["holders"][0]["hold_until_ms"])' <<<"$out")" \
        "held-after-command $expiry $expiry" "--status --json"

    # Another "host" one second later: the lock is held, and its command does not run.
    sleep 1
    run_rlr -n -k report -- touch "$WORK/ran-second"
    local asked_by
    asked_by=$(server_ms)
    expect_status 75
    expect_contains "$err" "report is held by $(hostname) pid" "busy message"
    # The command ended before `after`, and at least a second before the second run asked: the
    # message says a time between those two, whatever the machine's load.
    local ended_ago
    ended_ago=$(sed -n 's/.*whose command ended \([0-9.]*\)s ago.*/\1/p' <<<"$err")
    [[ $ended_ago =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "busy message: no 'whose command ended Ns ago': $err"
    /usr/bin/python3 -c 'import sys; a, lo, hi = map(float, sys.argv[1:]); sys.exit(not lo <= a <= hi)' \
        "${ended_ago:-0}" 1 "$(((asked_by - before) / 1000 + 1))" ||
        fail "busy message: the command ended ${ended_ago}s ago, not between 1s and the $((asked_by - before)) ms since the first run began"
    expect_contains "$err" "lets the lock go in" "busy message: when it is let go"
    expect_contains "$err" "not running touch " "busy message: what did not run"
    expect_not_contains "$err" "renewed every" "busy message: a lock kept after its command"
    [ -e "$WORK/ran-second" ] && fail "a second run within --min-hold ran its command"

    sleep_until_server_ms $((expiry + 50))
    run_rlr -n -k report -- touch "$WORK/ran-third"
    expect_status 0
    [ -e "$WORK/ran-third" ] || fail "the run after --min-hold did not run its command"
}

test_min_hold_in_seconds_excludes_classic_clients() {
    local before
    before=$(server_ms)
    run_rlr --timestamp-unit s --min-hold 3s -k report -- true
    expect_status 0
    local value
    value=$(rcli get report)
    expect_ge "$((value * 1000))" $((before + 3000)) "KEY holds the min-hold expiry in seconds"
    expect_lt "$value" 100000000000 "KEY is in seconds"
    sleep 1
    /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" report s 5 try
    expect_eq "$?" 1 "a classic client finds the lock held"
    sleep_until_server_ms $((value * 1000 + 50))
    /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" report s 5 try
    expect_eq "$?" 0 "a classic client takes it once --min-hold is over"
}

test_a_waiter_acquires_when_min_hold_ends() {
    # The bounds come from the server's clock around the first run and --min-hold, not from the
    # key it wrote: the grant came after `before` and before `granted_by`.
    local before granted_by
    before=$(server_ms)
    run_rlr --min-hold 2s -k report -- true
    granted_by=$(server_ms)
    expect_status 0
    run_rlr -v -k report -c "redis-cli -p $REDIS_PORT time | tr '\n' ' '"
    expect_status 0
    local started t
    t=($out)
    started=$((t[0] * 1000 + t[1] / 1000))
    expect_ge "$started" $((before + 2000)) "the waiter started no earlier than the end of --min-hold"
    expect_lt "$started" $((granted_by + 2000 + 1500)) "and not much later"
}

test_a_waiter_queued_while_the_command_ran_starts_when_min_hold_ends() {
    # The waiter blocks while the command runs; the command ends early, which wakes no one, and
    # the TTL is far off: the waiter must still ask again at the --min-hold time.
    local before granted_by
    before=$(server_ms)
    start_bg holder --min-hold 3s -k report -c "sleep 1"
    wait_for "the lock to be held" lock_held report
    granted_by=$(server_ms)
    run_rlr -k report -c "redis-cli -p $REDIS_PORT time | tr '\n' ' '"
    expect_status 0
    local started t
    t=($out)
    started=$((t[0] * 1000 + t[1] / 1000))
    expect_ge "$started" $((before + 3000)) "the waiter started no earlier than the end of --min-hold"
    expect_lt "$started" $((granted_by + 3000 + 1500)) "and not much later"
    exit_of "$holder" || fail "the holder failed"
}

test_renewals_during_the_command_keep_the_min_hold_time() {
    # A renewal writes the TTL from now, but never a time before --min-hold's.
    local before
    before=$(server_ms)
    start_bg holder -v --ttl 1s --min-hold 5s -k report -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done"
    wait_for "two renewals" renewed_at_least 2
    expect_ge "$(expiry_ms report)" $((before + 5000)) "the key's expiry after renewals"
    touch "$WORK/go"
    exit_of "$holder" || fail "the holder failed: $(cat "$WORK/holder.err")"
    expect_ge "$(expiry_ms report)" $((before + 5000)) "the key's expiry after the release"
}

renewed_at_least() { [ "$(grep -c '^redlockrun: renewed report in ' "$WORK/holder.err")" -ge "$1" ]; }

test_min_hold_shorter_than_the_command_changes_nothing() {
    run_rlr --min-hold 0.2s -k report -- sleep 0.5
    expect_status 0
    expect_eq "$(rcli exists report)" 0 "released at once"
    expect_eq "$(rcli exists '{report}:redlockrun:owner')" 0 "owner record deleted"
    expect_eq "$(rcli llen '{report}:redlockrun:wake')" 1 "a waiter would be woken"
}

test_a_holder_killed_early_keeps_the_lock_for_min_hold() {
    # A TTL far shorter than --min-hold: even a crashed holder's lock lasts until grant + 3 s.
    local before
    before=$(server_ms)
    start_bg holder --min-hold 3s --ttl 0.5s -k report -c "sleep 30"
    wait_for "the lock to be held" lock_held report
    kill -KILL "$holder"
    exit_of "$holder"
    sleep 1.2 # well past the TTL
    run_rlr -n -k report -- touch "$WORK/ran"
    expect_status 75
    [ -e "$WORK/ran" ] && fail "ran within --min-hold of a crashed holder's grant"
    sleep_until_server_ms $((before + 3300))
    run_rlr -n -k report -- touch "$WORK/ran"
    expect_status 0
}

test_no_renew_still_ends_the_command_at_the_ttl() {
    # --min-hold keeps the key, not the command: --no-renew bounds the run by the TTL as before.
    run_rlr --no-renew --ttl 0.5s --min-hold 5s --kill-after 1s -k report -- sleep 10
    expect_status 76
    expect_lt "$elapsed_ms" 4000 "the command was stopped at the TTL"
    expect_eq "$(rcli exists report)" 1 "the key stays held for --min-hold"
}

test_five_hosts_run_the_job_once_per_tick() {
    # Five "hosts" whose cron fires 0 to 1.5 s apart, for three ticks 3 s apart: one run per tick.
    local tick host pids offsets
    offsets=(0 0.4 0.8 1.1 1.5)
    for tick in 1 2 3; do
        pids=()
        for host in 0 1 2 3 4; do
            (
                sleep "${offsets[$(((host + tick) % 5))]}"
                exec "$REDLOCKRUN" -q -n -E 0 --min-hold 2s -k report \
                    -c "echo $tick host$host >>'$WORK/runs'"
            ) &
            pids+=($!)
        done
        for host in "${pids[@]}"; do
            wait "$host" || fail "a run exited with $? in tick $tick"
        done
        sleep 2.4 # the tick is 4 s: the last host fired 1.5 s in; the lock lasts 2 s from the first
    done
    local tick_runs
    for tick in 1 2 3; do
        tick_runs=$(grep -c "^$tick " "$WORK/runs")
        expect_eq "$tick_runs" 1 "runs in tick $tick"
    done
}

test_min_hold_with_limit_keeps_the_slot() {
    run_rlr --limit 2 --min-hold 3s -k report -- true
    expect_status 0
    run_rlr --limit 2 --min-hold 3s -n -k report -- touch "$WORK/ran-2"
    expect_status 0
    [ -e "$WORK/ran-2" ] || fail "the second slot should have been free"
    # Both slots stay taken until their --min-hold times, and classic clients stay out too.
    run_rlr --limit 2 -n -k report -- touch "$WORK/ran-3"
    expect_status 75
    [ -e "$WORK/ran-3" ] && fail "a third holder ran beside two slots kept by --min-hold"
    sleep_until_server_ms $(($(expiry_ms report) + 50))
    run_rlr --limit 2 -n -k report -- touch "$WORK/ran-3"
    expect_status 0
}

test_min_hold_is_refused_with_bad_values_and_with_status() {
    local snapshot
    snapshot=$(database_snapshot)
    run_rlr --min-hold soon -k report -- true
    expect_status 64
    expect_contains "$err" "--min-hold: 'soon' is not a duration" "message"
    run_rlr --min-hold 1s --status -k report
    expect_status 64
    expect_contains "$err" "--status takes no --min-hold" "message"
    expect_eq "$(database_snapshot)" "$snapshot" "nothing changed"
}

run_tests
