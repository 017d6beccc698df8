#!/usr/bin/env bash
# --status in every state, and keys that hold something other than a timestamp lock.
. "$(dirname "$0")/lib.sh"

test_status_free() {
    run_rlr -k job --status
    expect_status 0
    expect_eq "$out" "job: free" "never used"
    run_rlr -k job -- true
    run_rlr -k job --status
    expect_status 0
    expect_eq "$out" "job: free (last fence $(rcli get '{job}:redlockrun:fence'))" "after a run"
}

test_status_held_by_redlockrun() {
    start_bg holder -k job -t 40s -- sleep 30
    wait_for "the holder" lock_held job
    run_rlr -k job --status
    expect_status 75
    expect_contains "$out" "job: held by $(hostname) pid $holder since " "holder"
    expect_contains "$out" "renewed every 13.3s" "renewal"
    expect_not_contains "$out" "for another" "a lease is no time left"
    expect_contains "$out" "fence $(rcli get '{job}:redlockrun:fence')" "fence"
    kill -TERM "$holder"
    wait "$holder"
    run_rlr -k job --status
    expect_status 0
}

# --status writes to standard output: a key's control characters are escaped there too.
test_status_escapes_control_characters_in_the_key() {
    run_rlr -k $'two\nlines\e]0;title\a' --status
    expect_status 0
    expect_eq "$out" 'two\nlines\x1b]0;title\x07: free' "the status line"
    rcli set $'two\nlines\e]0;title\a' 'not a timestamp' >/dev/null
    run_rlr -k $'two\nlines\e]0;title\a' --status
    expect_status 65
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line on stderr"
    expect_contains "$err" 'two\nlines\x1b]0;title\x07 holds a value' "the foreign key"
}

# Bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069) in a key or a note
# would reorder what a terminal shows of the line ("invoice<RLO>fdp.exe" shows as "invoiceexe.pdf"):
# they are escaped as control characters are, in messages, --status and --list; the JSON keeps
# them, as \uXXXX escapes.
test_bidirectional_controls_in_a_key_and_a_note_are_escaped() {
    local rlo=$'\xe2\x80\xae' lri=$'\xe2\x81\xa6'
    local key="invoice${rlo}fdp.exe"
    start_bg holder -k "$key" --note "deploy ${lri}42" -- sleep 30
    wait_for "the holder" lock_held "$key" || return
    run_rlr -k "$key" --status
    expect_status 75
    expect_contains "$out" 'invoice\xe2\x80\xaefdp.exe: held by' "--status: the key"
    expect_contains "$out" 'deploy \xe2\x81\xa642' "--status: the note"
    run_rlr -k "$key" -n -- true
    expect_status 75
    expect_contains "$err" 'invoice\xe2\x80\xaefdp.exe is held by' "the busy message: the key"
    expect_contains "$err" 'deploy \xe2\x81\xa642' "the busy message: the note"
    run_rlr --list 'invoice*'
    expect_contains "$out" 'invoice\xe2\x80\xaefdp.exe: held by' "--list"
    local text
    for text in "$out" "$err"; do
        expect_not_contains "$text" "$rlo" "no U+202E left"
        expect_not_contains "$text" "$lri" "no U+2066 left"
    done
    run_rlr -k "$key" --status --json
    expect_contains "$out" '"key":"invoice\u202efdp.exe"' "--status --json"
    expect_eq "$(/usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["key"] == "invoice\u202efdp.exe", o["holders"][0]["note"] == "deploy \u206642")' <<<"$out")" \
        "True True" "the JSON's key and note"
}

test_status_held_by_a_classic_client_in_either_unit() {
    rcli set job $(( $(server_ms) / 1000 + 60 )) >/dev/null
    run_rlr -k job --status
    expect_status 75
    expect_contains "$out" "job: held by a client of the classic algorithm, until it expires in" "seconds"
    expect_contains "$out" " s)" "unit"
    rcli set job $(( $(server_ms) + 60000 )) >/dev/null
    run_rlr -k job --status
    expect_status 75
    expect_contains "$out" " ms)" "unit"
}

test_status_of_an_expired_timestamp_is_free() {
    rcli set job 1700000000.5 >/dev/null
    run_rlr -k job --status
    expect_status 0
    expect_contains "$out" "job: free (the timestamp 1700000000.5 s expired " "stale value"
}

test_status_of_a_foreign_key_is_65() {
    rcli rpush job a b >/dev/null
    run_rlr -k job --status
    expect_status 65
    expect_eq "$out" "" "stdout"
    expect_contains "$err" "job holds a list, not a timestamp lock" "message"
    # A read changes nothing in any case: it does not say so as a refusal does.
    expect_not_contains "$err" "nothing was changed" "the message of a read"
}

# A key that is not a timestamp lock is refused with 65, and neither it nor anything else changes.
check_untouched() {
    local setup=$1
    rcli flushall >/dev/null
    eval "$setup" >/dev/null
    local before
    before=$(rcli --no-raw dump job; expiry_ms job; rcli dbsize)
    run_rlr -k job -- touch "$WORK/ran"
    expect_status 65 "$setup"
    expect_contains "$err" "nothing was changed" "message for $setup"
    [ -e "$WORK/ran" ] && fail "the command ran for $setup"
    expect_eq "$(rcli --no-raw dump job; expiry_ms job; rcli dbsize)" "$before" "key and database after $setup"
    run_rlr -k job -w 1 -- true
    expect_status 65 "$setup with -w"
}

test_foreign_values_are_refused_and_left_alone() {
    check_untouched "rcli set job hello"
    check_untouched "rcli set job 1"
    check_untouched "rcli set job '' "
    check_untouched "rcli set job 1e12"
    check_untouched "rcli set job 1763812345abc"
    check_untouched "rcli set job 99999999999999999999"
    check_untouched "rcli set job x EX 100"
    check_untouched "rcli hset job a 1"
    check_untouched "rcli rpush job a"
    check_untouched "rcli sadd job a"
    check_untouched "rcli zadd job 1 a"
}

test_a_live_lock_whose_owner_record_is_of_another_type_is_waited_out() {
    # KEY holds a live timestamp, but a string stands where its owner record should be: no holder
    # can be named, so the lock is held as a classic client's would be, until KEY expires and a
    # grant replaces the record.
    rcli set job $(($(server_ms) + 1500)) >/dev/null
    rcli set '{job}:redlockrun:owner' not-a-record >/dev/null
    run_rlr -n -k job -- true
    expect_status 75 "-n"
    expect_contains "$err" "job is held by a client of the classic algorithm" "message"
    expect_not_contains "$err" WRONGTYPE "message"
    run_rlr -k job -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0 "waiting it out"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "released, the record replaced and then deleted"
}

test_script_and_status_agree_on_every_value() {
    # --status interprets values in C++; acquire decides in Lua. They must agree.
    local now value expected_status expected_acquire
    now=$(server_ms)
    while read -r value expected_status expected_acquire; do
        rcli flushall >/dev/null
        rcli set job "$value" >/dev/null
        run_rlr -k job --status
        expect_status "$expected_status" "--status of $value"
        run_rlr -n -k job -- true
        expect_status "$expected_acquire" "acquire of $value"
    done <<EOF_VALUES
$((now + 60000)) 75 75
$((now - 1000)) 0 0
$((now / 1000 + 60)) 75 75
$((now / 1000 - 2)) 0 0
$((now / 1000 + 60)).25 75 75
$((now / 1000 - 2)).999 0 0
$((now + 60000)).7 75 75
0$((now / 1000 + 60)) 75 75
999999999 65 65
1000000000 0 0
99999999999999 75 75
100000000000000 65 65
$((now / 1000)). 65 65
.5 65 65
-$((now + 60000)) 65 65
EOF_VALUES
}

run_tests
