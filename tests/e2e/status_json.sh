#!/usr/bin/env bash
# --status --json and --list [PATTERN]: the JSON parses and says what the --status line says, in
# every state and for both layouts of the owner record; --list finds exactly the locks it should
# among unrelated keys, with SCAN.
. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3

# json_ok: the output of the last run is valid JSON, one value per line, each as json.tool reads it.
json_ok() {
    local line count=0
    while IFS= read -r line; do
        count=$((count + 1))
        if ! printf '%s\n' "$line" | "$PYTHON" -m json.tool >/dev/null 2>"$WORK/json.err"; then
            fail "not JSON (${1:-output}): $line: $(cat "$WORK/json.err")"
        fi
    done <"$WORK/out"
    [ "$count" -gt 0 ] || fail "no JSON at all (${1:-output})"
}

# json_get EXPRESSION: evaluates a Python expression on the one JSON object of the last run, as `d`;
# None prints as null, strings as they are.
json_get() {
    "$PYTHON" -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
value = eval(sys.argv[2])
print("null" if value is None else value)' "$WORK/out" "$1"
}

# status_both KEY: --status as text (out_text, status_text), then --status --json (out, status).
status_both() {
    run_rlr -k "$1" --status
    out_text=$out status_text=$status
    run_rlr -k "$1" --status --json
}

# Writes the owner record of a lock held by redlockrun as the --min-hold and --limit layouts have
# it, directly: those runs are another feature's, their layout is fixed (DESIGN.md).
owner_key_of() { echo "{$1}:redlockrun:owner"; }

# semaphore_record EXPIRY FENCE HOST PID ACQUIRED HOLD_UNTIL ENDED: a holder's record, as cjson
# writes it.
semaphore_record() {
    printf '{"expiry_ms":%s,"fence":"%s","host":"%s","pid":"%s","acquired_ms":%s,"hold_until_ms":%s,"ended_ms":%s}' "$@"
}

test_status_json_of_a_free_lock() {
    status_both job
    expect_status 0
    expect_eq "$status_text" 0 "text status"
    json_ok
    expect_eq "$(json_get 'd["key"], d["state"], d["redis_type"], d["last_fence"], d["holders"]')" \
        "('job', 'free', 'none', None, [])" "never used"
    run_rlr -k job -- true
    status_both job
    expect_status 0
    json_ok
    local fence
    fence=$(rcli get '{job}:redlockrun:fence')
    expect_eq "$(json_get 'd["state"], d["last_fence"]')" "('free', $fence)" "after a run"
    expect_eq "$out_text" "job: free (last fence $fence)" "the text says the same"
    expect_eq "$(json_get 'type(d["server_time_ms"]).__name__')" int "server time is a number"
}

test_status_json_of_a_lock_held_by_redlockrun_matches_the_text() {
    start_bg holder -k job -t 40s -- sleep 30
    wait_for "the holder" lock_held job
    status_both job
    expect_status 75
    expect_eq "$status_text" 75 "text status"
    json_ok
    local fence host
    fence=$(rcli get '{job}:redlockrun:fence')
    host=$(json_get 'd["holders"][0]["host"]')
    expect_eq "$host" "$(hostname)" "host"
    expect_eq "$(json_get 'd["state"], d["limit"], len(d["holders"])')" "('held', 1, 1)" "state"
    expect_eq "$(json_get 'd["holders"][0]["client"], d["holders"][0]["pid"], d["holders"][0]["fence"]')" \
        "('redlockrun', $holder, $fence)" "the holder"
    expect_contains "$out_text" "job: held by $host pid $holder since " "text: holder"
    expect_contains "$out_text" ", renewed every " "text: renewed"
    expect_contains "$out_text" ", fence $fence" "text: fence"
    expect_eq "$(json_get 'd["expires_ms"] == d["holders"][0]["expires_ms"] == int(d["value"])')" \
        True "expiry = the key's value"
    expect_eq "$(json_get '0 < d["remaining_ms"] <= 40000 and d["remaining_ms"] == d["expires_ms"] - d["server_time_ms"]')" \
        True "remaining"
    expect_eq "$(json_get 'd["holders"][0]["acquired_ms"] <= d["server_time_ms"]')" True "acquired"
    expect_eq "$(json_get 'd["holders"][0]["hold_until_ms"], d["holders"][0]["command_ended_ms"]')" \
        "(None, None)" "no --min-hold"
    expect_not_contains "$out$out_text" "$(rcli hget '{job}:redlockrun:owner' token)" "the token"
    kill -TERM "$holder"
    wait "$holder"
    status_both job
    expect_status 0
    expect_eq "$(json_get 'd["state"]')" free "after the release"
}

test_status_json_of_a_lock_held_by_a_classic_client() {
    local expiry=$(($(server_ms) + 60000))
    rcli set job "$expiry" >/dev/null
    status_both job
    expect_status 75
    expect_eq "$status_text" 75 "text status"
    json_ok
    expect_contains "$out_text" "job: held by a client of the classic algorithm, until it expires in" "text"
    expect_eq "$(json_get 'd["state"], d["value"], d["expires_ms"]')" "('held', '$expiry', $expiry)" "state"
    expect_eq "$(json_get '[(h["client"], h["host"], h["pid"], h["fence"], h["expires_ms"]) for h in d["holders"]]')" \
        "[('classic', None, None, None, $expiry)]" "the holder"
    # In seconds, written over an old owner record: still the classic client's.
    rcli del job >/dev/null
    run_rlr -k job -- true
    rcli set job $(($(server_ms) / 1000 + 60)) >/dev/null
    status_both job
    expect_status 75
    expect_eq "$(json_get 'd["holders"][0]["client"]')" classic "seconds"
}

test_status_json_of_a_foreign_key_is_printed_and_65() {
    rcli rpush job a b >/dev/null
    status_both job
    expect_status 65
    expect_eq "$status_text" 65 "text status"
    expect_eq "$out_text" "" "text: nothing on stdout"
    json_ok
    expect_eq "$(json_get 'd["state"], d["redis_type"], d["value"], d["holders"]')" \
        "('foreign', 'list', None, [])" "state"
    expect_contains "$err" "job holds a list, not a timestamp lock" "the message on stderr"
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line on stderr"
    rcli del job >/dev/null
    rcli set job 'not a timestamp' >/dev/null
    run_rlr -k job --status --json
    expect_status 65
    expect_eq "$(json_get 'd["state"], d["redis_type"], d["value"]')" "('foreign', 'string', None)" \
        "a string that is not a timestamp"
}

# --min-hold's layout: the command ended, and the lock is kept until hold_until_ms.
test_status_json_of_a_lock_held_after_its_command_ended() {
    local now expiry
    now=$(server_ms)
    expiry=$((now + 60000))
    # SET and then PEXPIREAT: Redis 6.0 has no SET ... PXAT.
    rcli set job "$expiry" >/dev/null && rcli pexpireat job "$expiry" >/dev/null
    rcli hset '{job}:redlockrun:owner' token s3cret-token value "$expiry" fence 41 host web7 \
        pid 99 acquired_ms $((now - 5000)) hold_until_ms "$expiry" ended_ms $((now - 2000)) >/dev/null
    status_both job
    expect_status 75
    expect_eq "$status_text" 75 "text status"
    json_ok
    expect_eq "$(json_get 'd["state"], d["limit"]')" "('held-after-command', 1)" "state"
    expect_eq "$(json_get '[(h["host"], h["pid"], h["fence"], h["acquired_ms"], h["hold_until_ms"], h["command_ended_ms"]) for h in d["holders"]]')" \
        "[('web7', 99, 41, $((now - 5000)), $expiry, $((now - 2000)))]" "the holder"
    expect_contains "$out_text" "job: held by web7 pid 99, whose command ended 2" "text"
    expect_contains "$out_text" "lets the lock go in " "text: when it is let go"
    expect_contains "$out_text" ", fence 41" "text: fence"
    expect_not_contains "$out$out_text" s3cret-token "the token"
    # Kept until then, but the command still runs: held.
    rcli hdel '{job}:redlockrun:owner' ended_ms >/dev/null
    status_both job
    expect_eq "$(json_get 'd["state"], d["holders"][0]["hold_until_ms"], d["holders"][0]["command_ended_ms"]')" \
        "('held', $expiry, None)" "before the command ends"
}

# --limit's layout: a holder record per holder; one whose expiry has passed crashed and is no holder.
test_status_json_of_a_semaphore_lists_its_live_holders() {
    local now expiry owner
    now=$(server_ms)
    expiry=$((now + 30000))
    owner=$(owner_key_of sem)
    rcli set sem "$expiry" >/dev/null && rcli pexpireat sem "$expiry" >/dev/null
    rcli hset "$owner" limit 3 value "$expiry" \
        holder:tok-second "$(semaphore_record "$expiry" 12 web2 202 $((now - 1000)) 0 0)" \
        holder:tok-first "$(semaphore_record $((now + 20000)) 11 web1 101 $((now - 4000)) $((now + 20000)) $((now - 500)))" \
        holder:tok-crashed "$(semaphore_record $((now - 1000)) 9 web9 909 $((now - 90000)) 0 0)" >/dev/null
    status_both sem
    expect_status 75
    expect_eq "$status_text" 75 "text status"
    json_ok
    expect_eq "$(json_get 'd["state"], d["limit"], d["expires_ms"]')" "('held', 3, $expiry)" "state"
    expect_eq "$(json_get '[(h["host"], h["pid"], h["fence"], h["expires_ms"], h["hold_until_ms"], h["command_ended_ms"]) for h in d["holders"]]')" \
        "[('web1', 101, 11, $((now + 20000)), $((now + 20000)), $((now - 500))), ('web2', 202, 12, $expiry, None, None)]" \
        "the live holders, earliest first"
    expect_contains "$out_text" "sem: held by 2 of 3 holders: web1 pid 101, whose command ended " "text"
    expect_contains "$out_text" "; web2 pid 202 since " "text: second holder"
    expect_not_contains "$out$out_text" web9 "the crashed holder"
    expect_not_contains "$out$out_text" tok- "the tokens"
    # Every command ended: held after the command.
    rcli hset "$owner" holder:tok-second \
        "$(semaphore_record "$expiry" 12 web2 202 $((now - 1000)) "$expiry" $((now - 100)))" >/dev/null
    status_both sem
    expect_status 75
    expect_eq "$(json_get 'd["state"]')" held-after-command "every command ended"
}

# A fence that is no whole number a JSON reader holds exactly (written by another program: Lua
# reads 1e400 as infinity) is not shown as a number: null in JSON, the text itself in the line.
test_status_of_a_record_whose_fence_is_not_a_number_in_range() {
    local now expiry owner fence
    now=$(server_ms)
    expiry=$((now + 30000))
    owner=$(owner_key_of sem)
    rcli set sem "$expiry" >/dev/null && rcli pexpireat sem "$expiry" >/dev/null
    for fence in 1e400 -1e400 18446744073709551616 9007199254740993 1.5 -3; do
        rcli hset "$owner" limit 3 value "$expiry" holder:tok-odd \
            "{\"expiry_ms\":$expiry,\"fence\":$fence,\"host\":\"web1\",\"pid\":101,\"acquired_ms\":$((now - 1000)),\"hold_until_ms\":0,\"ended_ms\":0}" >/dev/null
        status_both sem
        expect_status 75
        json_ok
        expect_eq "$(json_get '[(h["host"], h["pid"], h["fence"]) for h in d["holders"]]')" \
            "[('web1', 101, None)]" "JSON, fence $fence"
        expect_contains "$out_text" "sem: held by 1 of 3 holders: web1 pid 101 since " "text"
        expect_contains "$out_text" ", fence $fence (not a fence number)" "text, fence $fence"
        expect_not_contains "$out_text" "-9223372036854775808" "text, fence $fence"
    done
    # The exclusive layout holds the fence as text.
    rcli del "$owner" >/dev/null
    rcli set job "$expiry" >/dev/null && rcli pexpireat job "$expiry" >/dev/null
    for fence in 1e400 99999999999999999999 ''; do
        rcli hset "$(owner_key_of job)" token s3cret-token value "$expiry" fence "$fence" host web7 \
            pid 99 acquired_ms $((now - 5000)) >/dev/null
        status_both job
        expect_status 75
        json_ok
        expect_eq "$(json_get 'd["holders"][0]["fence"]')" null "JSON, fence '$fence'"
        if [ -n "$fence" ]; then
            expect_contains "$out_text" "job: held by web7 pid 99 since " "text"
            expect_contains "$out_text" ", fence $fence (not a fence number)" "text, fence $fence"
        else
            expect_not_contains "$out_text" "fence" "text, no fence"
        fi
    done
}

test_status_json_escapes_any_bytes_losslessly() {
    local key=$'two\nlines "quoted" \\ \e[31m \xff\xfe caf\xc3\xa9'
    run_rlr -k "$key" --status --json
    expect_status 0
    expect_eq "$(wc -l <"$WORK/out")" 1 "one line"
    json_ok
    local same
    same=$("$PYTHON" -c '
import json, os, sys
key = json.loads(open(sys.argv[1]).read())["key"]
print(key.encode("utf-8", "surrogateescape") == os.fsencode(sys.argv[2]))' "$WORK/out" "$key")
    expect_eq "$same" True "the key's bytes come back"
    expect_not_contains "$out" $'\e' "a raw escape character"
}

test_json_goes_with_status_or_list_only() {
    local options
    for options in "-k job --json -- true" "--json" "-k job --json -c true" "--json -k job"; do
        # shellcheck disable=SC2086 # the words of each case
        run_rlr $options
        expect_status 64 "$options"
        expect_eq "$(wc -l <"$WORK/err")" 1 "one line for $options"
        expect_contains "$err" "--json goes with --status, --list or --hold" "message for $options"
    done
    expect_eq "$(rcli dbsize)" 0 "nothing written"
}

# The keys of the locks --list printed, in order (text: the part before ": ").
listed_keys() {
    if [ "${1:-}" = json ]; then
        "$PYTHON" -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["key"])' "$WORK/out" | tr '\n' ' '
    else
        sed 's/: .*//' "$WORK/out" | tr '\n' ' '
    fi
}

# About 1,000 keys that are no lock's, some of them much like one's.
make_unrelated_keys() {
    {
        local i
        for i in $(seq 1 960); do
            echo "SET unrelated:$i value"
        done
        for i in $(seq 1 10); do
            echo "SET redlockrun:$i x"                       # the word, without the colons
            echo "SET job$i:redlockrun x"                    # no colon after it
            echo "SET {job$i}:redlockrunx:owner x"           # almost the infix
            echo "HSET {job$i}:redlockrun:other a 1"         # the infix, but no companion
            echo "SET {a}:b$i:redlockrun:owner x"            # a tag that is not b's
        done
        echo "SET :redlockrun:owner x"
        echo "SET {}:redlockrun:fence 1"
        echo "RPUSH foreign-list a b"                        # a foreign key with no companion
        echo "SET classic-only $(($(server_ms) + 600000))"   # a classic lock: no companion
    } | rcli --pipe >/dev/null
}

test_list_finds_exactly_the_locks_among_unrelated_keys() {
    make_unrelated_keys
    start_bg holder -k pat-held -t 40s -- sleep 30
    wait_for "the holder" lock_held pat-held
    local key
    for key in pat-free 'backup:{tenant1}' 'report:{tenant1}' '{a}' 'zz top'; do
        run_rlr -k "$key" -- true
        expect_status 0 "taking $key"
    done
    # A lock key that holds a list now, whose fence counter remains.
    rcli del 'zz top' >/dev/null
    rcli rpush 'zz top' x >/dev/null
    expect_ge "$(rcli dbsize)" 1000 "keys in the database"

    run_rlr --list
    expect_status 75 "one lock is held"
    expect_eq "$(listed_keys)" "backup:{tenant1} pat-free pat-held report:{tenant1} zz top {a} " "--list"
    expect_eq "$(wc -l <"$WORK/out")" 6 "one line per lock"
    expect_eq "$(grep '^pat-held: ' "$WORK/out" | cut -d' ' -f1-6)" \
        "pat-held: held by $(hostname) pid $holder" "the held lock's line"
    expect_contains "$(grep '^zz top: ' "$WORK/out")" "not a lock (a list)" "the foreign one"
    # Each line is the one --status prints.
    cp "$WORK/out" "$WORK/list"
    for key in pat-free 'backup:{tenant1}' 'report:{tenant1}' '{a}'; do
        local line
        line=$(grep -F "$key: " "$WORK/list")
        run_rlr -k "$key" --status
        expect_eq "$line" "$out" "the line of $key"
    done

    run_rlr --list 'pat*'
    expect_status 75 "pat* holds the held one"
    expect_eq "$(listed_keys)" "pat-free pat-held " "--list 'pat*'"
    run_rlr --list='*{tenant1}'
    expect_status 0 "nothing held"
    expect_eq "$(listed_keys)" "backup:{tenant1} report:{tenant1} " "--list='*{tenant1}'"
    run_rlr --list 'pat-[f]ree'
    expect_eq "$(listed_keys)" "pat-free " "a class"
    run_rlr --list 'nothing*'
    expect_status 0 "an empty list"
    expect_eq "$out" "" "an empty list prints nothing"

    run_rlr --list --json
    expect_status 75 "--json"
    json_ok "--list --json"
    expect_eq "$(listed_keys json)" "backup:{tenant1} pat-free pat-held report:{tenant1} zz top {a} " \
        "--list --json"
    local states
    states=$("$PYTHON" -c '
import json, sys
print(" ".join(json.loads(line)["state"] for line in open(sys.argv[1])))' "$WORK/out")
    expect_eq "$states" "free free held free foreign free" "states"
    grep -F '"key":"pat-held"' "$WORK/out" >"$WORK/held.json"
    cp "$WORK/held.json" "$WORK/out"
    expect_eq "$(json_get 'd["holders"][0]["pid"], d["holders"][0]["host"]')" \
        "($holder, '$(hostname)')" "the held lock's object"
    # The pattern may come after --json too, on either side of --list.
    local order
    for order in "--list 'pat*' --json" "--list --json 'pat*'" "--json --list 'pat*'" \
        "--list -q --json 'pat*'"; do
        eval "run_rlr $order"
        expect_status 75 "$order"
        json_ok "$order"
        expect_eq "$(listed_keys json)" "pat-free pat-held " "$order"
    done
    # --held: the held ones only (the free and the foreign left out), in either form.
    run_rlr --list --held
    expect_status 75 "--held"
    expect_eq "$(listed_keys)" "pat-held " "--list --held"
    run_rlr --held --list 'pat*' --json
    expect_status 75 "--held --json"
    json_ok "--held --json"
    expect_eq "$(listed_keys json)" "pat-held " "--list --held --json"
    run_rlr --list --held '*{tenant1}'
    expect_status 0 "--held, none held"
    expect_eq "$out" "" "--held, none held: nothing listed"
    local without
    for without in "-k pat-held --status --held" "-k pat-held --held -- true" \
        "-k held-elsewhere --hold --held" "-k pat-held --break --held" "--release --held x"; do
        # shellcheck disable=SC2086 # the words of each case
        run_rlr $without
        expect_status 64 "$without"
        expect_contains "$err" "--held goes with --list only" "$without"
    done
    expect_eq "$(rcli exists held-elsewhere)" 0 "a refused --hold --held took nothing"
    lock_held pat-held || fail "a refused --break --held broke the lock"

    run_rlr --list --json 'pat*' 'backup*'
    expect_status 64 "two patterns"
    expect_eq "$err" "redlockrun: --list takes no command (see redlockrun --help)" "two patterns"
    expect_eq "$out" "" "two patterns: nothing listed"
}

test_list_sends_scan_and_never_keys() {
    make_unrelated_keys
    run_rlr -k job -- true
    local monitor
    redis-cli -p "$REDIS_PORT" monitor >"$WORK/monitor" 2>&1 &
    monitor=$!
    BACKGROUND_PIDS+=("$monitor")
    wait_for "MONITOR" grep -q OK "$WORK/monitor"
    run_rlr --list
    expect_status 0
    expect_eq "$out" "job: free (last fence $(rcli get '{job}:redlockrun:fence'))" "--list"
    rcli ping >/dev/null
    wait_for "the end of --list in MONITOR" grep -q '"ping"' "$WORK/monitor"
    kill "$monitor"
    grep -qi '"scan" "0" "MATCH" "\*:redlockrun:\*"' "$WORK/monitor" || fail "no SCAN seen: $(head -c 500 "$WORK/monitor")"
    if grep -qi '"keys"' "$WORK/monitor"; then
        fail "KEYS was sent: $(grep -i '"keys"' "$WORK/monitor")"
    fi
}

held_in_database_two() { [ "$(rcli -n 2 exists held-in-two)" = 1 ]; }

test_list_reads_the_database_of_the_url() {
    run_rlr -u "redis://127.0.0.1:$REDIS_PORT/0" -k in-zero -- true
    run_rlr -u "redis://127.0.0.1:$REDIS_PORT/2" -k in-two -- true
    start_bg holder -u "redis://127.0.0.1:$REDIS_PORT/2" -k held-in-two -t 40s -- sleep 30
    wait_for "the holder" held_in_database_two
    run_rlr -u "redis://127.0.0.1:$REDIS_PORT/2" --list
    expect_status 75
    expect_eq "$(listed_keys)" "held-in-two in-two " "database 2"
    run_rlr --list
    expect_status 0
    expect_eq "$(listed_keys)" "in-zero " "database 0"
}

test_list_after_the_server_forgot_its_scripts() {
    run_rlr -k one -- true
    run_rlr -k two -- true
    rcli script flush >/dev/null
    run_rlr --list --json
    expect_status 0
    json_ok
    expect_eq "$(listed_keys json)" "one two " "after SCRIPT FLUSH"
}

test_list_of_many_locks() {
    # More locks than one pipelined batch holds.
    {
        local i
        for i in $(seq 1 250); do
            printf 'SET {lock%03d}:redlockrun:fence %d\n' "$i" "$i"
        done
    } | rcli --pipe >/dev/null
    run_rlr --list --json
    expect_status 0
    expect_eq "$(wc -l <"$WORK/out")" 250 "every lock"
    expect_eq "$(sed -n '250p' "$WORK/out" | cut -c1-40)" '{"key":"lock250","state":"free","redis_t' "the last one"
    expect_contains "$(sed -n '7p' "$WORK/out")" '"last_fence":7,' "the 7th lock's fence"
}

test_list_failures_and_usage_errors() {
    RUN_RLR_LIMIT=20 run_rlr -u redis://127.0.0.1:1 --list
    expect_status 69 "an unreachable server"
    expect_eq "$out" "" "nothing on stdout"
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line on stderr"
    RUN_RLR_LIMIT=20 run_rlr -u redis://127.0.0.1:1 --list --json
    expect_status 69 "an unreachable server, --json"
    local options
    for options in "--list -k job" "-k job --list" "--list --status" "--list pat true" \
        "--list -- true" "--list -c true" "--list="; do
        # shellcheck disable=SC2086 # the words of each case
        run_rlr $options
        expect_status 64 "$options"
        expect_eq "$(wc -l <"$WORK/err")" 1 "one line for $options"
        expect_contains "$err" "--list" "message for $options"
    done
}

test_list_tells_a_user_who_may_not_ask_for_the_cluster_s_masters() {
    run_rlr -k job -- true
    rcli acl setuser lister on '>listerpass' '~*' '+@all' '-cluster' >/dev/null
    echo listerpass >"$WORK/password"
    chmod 600 "$WORK/password"
    run_rlr -u "redis://lister:@127.0.0.1:$REDIS_PORT" --password-file "$WORK/password" --list
    expect_status 69
    expect_eq "$out" "" "nothing listed"
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line"
    expect_contains "$err" "redlockrun: cannot list the locks: Redis at 127.0.0.1:$REDIS_PORT answered CLUSTER NODES, which --list asks to find every master of a Redis Cluster, with NOPERM" "message"
    expect_contains "$err" "; allow the user +cluster|nodes" "message"
    rcli acl setuser lister '+cluster|nodes' >/dev/null
    run_rlr -u "redis://lister:@127.0.0.1:$REDIS_PORT" --password-file "$WORK/password" --list
    expect_status 0 "with +cluster|nodes"
    expect_eq "$out" "job: free (last fence $(rcli get '{job}:redlockrun:fence'))" "--list"
    rcli acl deluser lister >/dev/null
}

test_list_ends_on_a_server_whose_scan_never_ends() {
    # Not Redis: a server that answers every SCAN with the same cursor, which would otherwise keep
    # --list scanning for ever (and CLUSTER NODES as a server outside a cluster does).
    /usr/bin/python3 - "$WORK/port" <<'EOF' &
import socket, sys
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
open(sys.argv[1], "w").write(str(server.getsockname()[1]))
connection, _ = server.accept()
connection.settimeout(30)
answer = b"*2\r\n$1\r\n7\r\n*0\r\n"
no_cluster = b"-ERR This instance has cluster support disabled\r\n"
try:
    while data := connection.recv(65536):
        connection.sendall(no_cluster * data.count(b"CLUSTER") + answer * data.count(b"SCAN"))
except OSError:
    pass
EOF
    BACKGROUND_PIDS+=($!)
    wait_for "the fake server" test -s "$WORK/port"
    RUN_RLR_LIMIT=20 run_rlr -u "redis://127.0.0.1:$(cat "$WORK/port")" --list
    expect_status 69
    expect_contains "$err" "answered SCAN with the cursor 7 a second time" "message"
}

# --note: why a holder holds the lock, shown wherever the holder is.
test_a_holder_s_note_is_shown_to_a_busy_run_and_by_status_and_list() {
    local note='deploy 42 https://ci.example/jobs/7'
    start_bg holder -k job -t 40s -v --note "$note" -- sleep 30
    wait_for "the holder" lock_held job
    wait_for "its acquired line" grep -q "acquired job" "$WORK/holder.err"
    local fence
    fence=$(rcli get '{job}:redlockrun:fence')
    expect_contains "$(cat "$WORK/holder.err")" "acquired job (fence $fence, note: $note) without waiting" "-v"
    expect_eq "$(rcli hget '{job}:redlockrun:owner' note)" "$note" "kept in the owner record"
    run_rlr -k job -n -- true
    expect_status 75
    expect_contains "$err" "job is held by $(hostname) pid $holder (note: $note) since " "busy message"
    run_rlr -k job -w 200ms -v -- true
    expect_status 75
    expect_contains "$err" "job is held by $(hostname) pid $holder (fence $fence, note: $note) since " "waiting message"
    status_both job
    expect_status 75
    expect_contains "$out_text" "job: held by $(hostname) pid $holder (note: $note) since " "--status"
    json_ok
    expect_eq "$(json_get 'd["holders"][0]["note"]')" "$note" "--status --json"
    run_rlr --list
    expect_status 75
    expect_contains "$out" "job: held by $(hostname) pid $holder (note: $note) since " "--list"
    run_rlr --list --json
    json_ok
    expect_eq "$(json_get 'd["holders"][0]["note"]')" "$note" "--list --json"
    # The next holder has no note, and shows none of the last one's.
    kill -TERM "$holder"
    wait "$holder"
    start_bg next -k job -t 40s -- sleep 30
    wait_for "the next holder" lock_held job
    run_rlr -k job -n -- true
    expect_status 75
    expect_contains "$err" "job is held by $(hostname) pid $next since " "busy message after"
    status_both job
    expect_not_contains "$err$out_text" "note" "the earlier holder's note"
    expect_not_contains "$out" "deploy 42" "the earlier holder's note in JSON"
    expect_eq "$(json_get 'd["holders"][0]["pid"], d["holders"][0]["note"]')" "($next, None)" "JSON after"
    expect_eq "$(rcli hexists '{job}:redlockrun:owner' note)" 0 "the record after"
}

test_a_note_s_control_characters_and_bytes_are_escaped_wherever_it_is_shown() {
    local note=$'two\nlines\e]0;title\a \xff caf\xc3\xa9'
    local escaped='two\nlines\x1b]0;title\x07 \xff caf'$'\xc3\xa9'
    start_bg holder -k job -t 40s --note "$note" -- sleep 30
    wait_for "the holder" lock_held job
    run_rlr -k job -n -- true
    expect_status 75
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line on stderr"
    expect_contains "$err" "(note: $escaped) since " "busy message"
    status_both job
    expect_eq "$(printf '%s\n' "$out_text" | wc -l)" 1 "one status line"
    expect_contains "$out_text" "(note: $escaped) since " "--status"
    json_ok
    local same
    same=$("$PYTHON" -c '
import json, os, sys
note = json.loads(open(sys.argv[1]).read())["holders"][0]["note"]
print(note.encode("utf-8", "surrogateescape") == os.fsencode(sys.argv[2]))' "$WORK/out" "$note")
    expect_eq "$same" True "the note's bytes come back from the JSON"
    run_rlr --list
    expect_contains "$out" "(note: $escaped) since " "--list"
    run_rlr --list --json
    json_ok
    expect_not_contains "$out$out_text$err" $'\e' "a raw escape character"
}

test_a_note_longer_than_256_bytes_is_refused_and_nothing_is_written() {
    local longest too_long
    longest=$(printf 'x%.0s' $(seq 1 256))
    too_long="${longest}y"
    run_rlr -k job --note "$too_long" -- touch "$WORK/ran"
    expect_status 64
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line"
    expect_contains "$err" "--note is 257 bytes long; a note may be at most 256 bytes" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli dbsize)" 0 "nothing written"
    run_rlr -k job --note "$(printf '\xc3\xa9%.0s' $(seq 1 129))" -- true
    expect_status 64 "258 bytes in 129 characters"
    expect_eq "$(rcli dbsize)" 0 "nothing written for 258 bytes"
    run_rlr -k job --note "$longest" -- sh -c 'redis-cli -p "$1" hget "{job}:redlockrun:owner" note' sh "$REDIS_PORT"
    expect_status 0 "256 bytes"
    expect_eq "$out" "$longest" "256 bytes kept whole"
    printf 'note = x\n' >"$WORK/config"
    run_rlr --config "$WORK/config" -k job -- true
    expect_status 64 "in a config file"
    expect_contains "$err" "note can be given on the command line only" "config file"
}

test_each_semaphore_holder_has_its_own_note() {
    start_bg first -k sem --limit 2 -t 40s --note "first's" -- sleep 30
    wait_for "the first holder" lock_held sem
    start_bg second -k sem --limit 2 -t 40s --note "second's" -- sleep 30
    wait_for "the second holder" holders_are sem 2
    run_rlr -k sem --limit 2 -n -- true
    expect_status 75
    expect_contains "$err" "sem is held by 2 holders of a --limit 2 semaphore (the note of $(hostname) pid " "busy message"
    expect_contains "$err" ", whose slot frees first: " "busy message: whose"
    status_both sem
    json_ok
    expect_eq "$(json_get 'sorted((h["pid"], h["note"]) for h in d["holders"])')" \
        "$(sorted_pairs "$first" "first's" "$second" "second's")" "--status --json"
    expect_contains "$out_text" "pid $first in slot 0 (note: first's) since " "--status: the first"
    expect_contains "$out_text" "pid $second in slot 1 (note: second's) since " "--status: the second"
    # A holder that takes the first one's slot has no note, and shows none of the first one's.
    kill -TERM "$first"
    wait "$first"
    start_bg third -k sem --limit 2 -t 40s -- sleep 30
    wait_for "the third holder" holders_are sem 2
    status_both sem
    expect_eq "$(json_get 'sorted((h["pid"], h["note"]) for h in d["holders"])')" \
        "$(sorted_pairs "$second" "second's" "$third" None)" "after the first left"
    expect_not_contains "$out$out_text" "first's" "the first one's note"
    # A record written before notes has none.
    local now owner
    now=$(server_ms)
    owner=$(owner_key_of old)
    rcli set old $((now + 30000)) >/dev/null && rcli pexpireat old $((now + 30000)) >/dev/null
    rcli hset "$owner" limit 2 value $((now + 30000)) \
        holder:tok-old "$(semaphore_record $((now + 30000)) 7 web1 101 $((now - 1000)) 0 0)" >/dev/null
    status_both old
    expect_eq "$(json_get 'd["holders"][0]["note"]')" null "an old record"
    expect_not_contains "$out_text" "note" "an old record's line"
}

# A holder's pid and note pairs in the order Python sorts them, as json_get prints them.
sorted_pairs() {
    "$PYTHON" -c '
import sys
a = sys.argv[1:]
print(sorted((int(a[i]), None if a[i + 1] == "None" else a[i + 1]) for i in range(0, len(a), 2)))' "$@"
}

# holders_are KEY N: --status --json of KEY lists N holders.
holders_are() {
    "$REDLOCKRUN" -k "$1" --status --json 2>/dev/null |
        "$PYTHON" -c 'import json, sys; sys.exit(len(json.load(sys.stdin)["holders"]) != int(sys.argv[1]))' "$2"
}

test_a_classic_client_s_lock_shows_no_note() {
    local expiry=$(($(server_ms) + 60000))
    rcli set job "$expiry" >/dev/null
    # An owner record an earlier redlockrun left, whose value the classic client replaced.
    rcli hset '{job}:redlockrun:owner' token t value 1 fence 3 host web1 pid 1 note stale >/dev/null
    run_rlr -k job -n -- true
    expect_status 75
    expect_contains "$err" "job is held by a client of the classic algorithm" "busy message"
    status_both job
    json_ok
    expect_eq "$(json_get 'd["holders"][0]["client"], d["holders"][0]["note"]')" "('classic', None)" "JSON"
    expect_not_contains "$err$out$out_text" "stale" "the old record's note"
}

# DESIGN §14: each release records how long the lock was held; --status, its JSON and the waiting
# message give the median and the longest of the last 20.
test_status_and_waiting_say_how_long_the_last_holds_took() {
    run_rlr -k timed --status --json
    expect_contains "$out" '"hold_durations":null' "none before the first release"
    local ms
    for ms in 0.3 0.5 0.7; do
        run_rlr -k timed -- sleep "$ms"
        expect_status 0 "a run of ${ms}s"
    done
    # The line says it of a held lock, where it tells how long the hold may go on.
    start_bg holder -k timed -- sh -c "while [ ! -e '$WORK/done' ]; do sleep 0.02; done"
    wait_for "the holder's lock" lock_held timed || return
    run_rlr -k timed --status
    expect_status 75
    [[ "$out" =~ holds\ took\ ([0-9]+)ms\ \(median\ of\ the\ last\ 3\),\ the\ longest\ ([0-9]+)ms ]] ||
        fail "the status line: $out"
    # Each duration runs from the grant to the release: the command's time and a little more.
    local median=${BASH_REMATCH[1]:-0} longest=${BASH_REMATCH[2]:-0}
    [ "$median" -ge 500 ] && [ "$median" -lt 2500 ] || fail "the median: $median ms"
    [ "$longest" -ge 700 ] && [ "$longest" -lt 2700 ] || fail "the longest: $longest ms"
    touch "$WORK/done"
    exit_of "$holder" || fail "the holder exited $?"
    # Four holds now, and the free lock's JSON has them.
    run_rlr -k timed --status --json
    /usr/bin/python3 -c '
import json, sys
took = json.loads(sys.argv[1])["hold_durations"]
assert took["count"] == 4 and took["median_ms"] <= took["longest_ms"] and 700 <= took["longest_ms"] < 60000, took
' "$out" || fail "the JSON: $out"
    # Only the last 20 count.
    for ms in $(seq 1 20); do
        run_rlr -k timed -- true
    done
    run_rlr -k timed --status --json
    /usr/bin/python3 -c '
import json, sys
took = json.loads(sys.argv[1])["hold_durations"]
assert took["count"] == 20 and took["longest_ms"] < 500, took
' "$out" || fail "the last 20 only: $out"
    # A waiter says it, in its waiting message (CI makes it say that it waits).
    start_bg holder -k timed -- sleep 30
    wait_for "the holder's lock" lock_held timed || return
    CI=true RUN_RLR_LIMIT=30 run_rlr -w 1s -k timed -- true
    expect_status 75
    expect_contains "$err" "holds of timed took " "the waiting message"
    expect_contains "$err" "(median of the last 20)" "over the last 20"
}

run_tests
