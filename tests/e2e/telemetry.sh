#!/usr/bin/env bash
# Telemetry a fleet collects (issue 40): --log-format json, --metrics-file (read back with the
# Prometheus client's own parser), --syslog (against a syslog socket this suite starts, mounted at
# /dev/log in a mount namespace of the run's own).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3

# json_lines FILE: every line of FILE is one JSON object with exactly the documented fields; prints
# "event level status waited held fence key" per line, or fails.
json_lines() {
    "$PY" - "$1" <<'EOF_PY'
import json, sys
fields = ["time", "level", "event", "key", "fence", "waited_ms", "held_ms", "status", "note",
          "pid", "message"]
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    record = json.loads(line)
    if list(record) != fields:
        sys.exit(f"fields {list(record)}")
    print(record["event"], record["level"], record["status"], record["waited_ms"],
          record["held_ms"], record["fence"], record["key"], record["note"])
EOF_PY
}

test_json_logs_are_one_object_per_message_with_every_field() {
    run_rlr -v --log-format json -k json-job --note "deploy 7" -- sh -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    local lines fence
    lines=$(json_lines "$WORK/err") || {
        fail "not JSON with the documented fields: $err"
        return
    }
    fence=$out
    grep -Eq "^acquired info None [0-9]+ None $fence json-job deploy 7$" <<<"$lines" ||
        fail "the grant, with its wait and the run's fence and note: $lines"
    expect_contains "$lines" "command_ended info 0 None None $fence json-job" "the command's end"
    expect_contains "$lines" "released info None None " "the release"
    expect_not_contains "$err" "redlockrun: " "no text line beside the JSON"
    [ "$(wc -l <"$WORK/err")" -ge 4 ] || fail "expected at least 4 lines: $err"
}

test_json_logs_say_busy_with_the_status_and_a_loss_as_an_error() {
    start_bg holder -k json-busy -- sleep 30
    wait_for "the holder's lock" lock_held json-busy || return
    run_rlr --log-format json -n -E 3 -k json-busy -- true
    expect_status 3
    local lines
    lines=$(json_lines "$WORK/err") || {
        fail "not JSON: $err"
        return
    }
    expect_eq "$(wc -l <<<"$lines")" 1 "one message"
    grep -Eq "^busy notice 3 [0-9]+ None None json-busy None$" <<<"$lines" ||
        fail "busy, with -E's status and no fence: $lines"
    # -q keeps the busy message off stderr, JSON or not.
    run_rlr --log-format json -q -n -k json-busy -- true
    expect_status 75
    expect_eq "$err" "" "-q"
    stop_processes "$holder"
    # A loss: the TTL runs out under --no-renew.
    run_rlr --log-format json --ttl 300ms --no-renew -k json-lost -- sleep 2
    expect_status 76
    lines=$(json_lines "$WORK/err") || {
        fail "not JSON: $err"
        return
    }
    expect_contains "$lines" "lost error" "the loss, at level error"
}

test_a_usage_error_is_text_before_the_options_are_read() {
    run_rlr --log-format json --bogus -k j true
    expect_status 64
    expect_contains "$err" "redlockrun: unknown option --bogus" "a text line"
    run_rlr --log-format yaml -k j true
    expect_status 64
    expect_contains "$err" "--log-format: 'yaml' is neither text nor json" "the value refused"
}

# metrics FILE: the samples of FILE as "name labels value" lines, read by prometheus_client.
metrics() {
    "$PY" - "$1" <<'EOF_PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    for sample in family.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
        print(sample.name, labels, sample.value)
EOF_PY
}

test_metrics_count_runs_and_holds_by_outcome() {
    local file="$WORK/redlockrun.prom" parsed
    run_rlr --metrics-file "$file" -k m-job -- true
    expect_status 0
    run_rlr --metrics-file "$file" -k m-job -- sh -c 'exit 3'
    expect_status 3
    start_bg holder -k m-job -- sleep 30
    wait_for "the holder's lock" lock_held m-job || return
    run_rlr --metrics-file "$file" -n -k m-job -- true
    expect_status 75
    stop_processes "$holder"
    run_rlr --metrics-file "$file" --ttl 300ms --no-renew -k m-job -- sleep 1.5
    expect_status 76
    run_rlr --metrics-file "$file" -u "redis://127.0.0.1:1" --connect-timeout 1s -k m-job -- true
    expect_status 69
    RLR="$REDLOCKRUN" FILE="$file" timeout -k 5 60 sh -c '
        h=$("$RLR" --metrics-file "$FILE" -k m-hold --hold) || exit
        eval "$h"
        sleep 0.2 # the section: the hold is counted by how long it held
        "$RLR" --release' >"$WORK/hold.out" 2>&1
    status=$?
    expect_status 0 "the hold: $(cat "$WORK/hold.out")"
    wait_for "the keeper's count" grep -q 'key="m-hold".*outcome="ran"} 1' "$file" || return
    parsed=$(metrics "$file") || {
        fail "prometheus_client cannot read it: $(cat "$file")"
        return
    }
    expect_contains "$parsed" "redlockrun_runs_total key=m-job,kind=run,outcome=ran 2.0" "ran"
    expect_contains "$parsed" "redlockrun_runs_total key=m-job,kind=run,outcome=busy 1.0" "busy"
    expect_contains "$parsed" "redlockrun_runs_total key=m-job,kind=run,outcome=lost 1.0" "lost"
    expect_contains "$parsed" "redlockrun_runs_total key=m-job,kind=run,outcome=error 1.0" "error"
    expect_contains "$parsed" "redlockrun_last_exit_status key=m-job,kind=run 69.0" "last status"
    expect_contains "$parsed" "redlockrun_runs_total key=m-hold,kind=hold,outcome=ran 1.0" "hold"
    local held
    held=$(sed -n 's/^redlockrun_last_hold_seconds key=m-hold,kind=hold //p' <<<"$parsed")
    "$PY" -c "import sys; sys.exit(0 if 0.2 <= float('$held') < 10 else 1)" ||
        fail "the hold's seconds: '$held'"
}

test_fifty_runs_ending_at_once_lose_no_update() {
    local file="$WORK/redlockrun.prom" i pids=()
    for i in $(seq 1 50); do
        "$REDLOCKRUN" --metrics-file "$file" -k "m-$((i % 5))" -- true 2>>"$WORK/errs" &
        pids+=("$!")
    done
    for i in "${pids[@]}"; do
        wait "$i" || fail "a run failed: $(cat "$WORK/errs")"
    done
    local parsed total
    parsed=$(metrics "$file") || {
        fail "prometheus_client cannot read it"
        return
    }
    total=$(awk '$1 == "redlockrun_runs_total" { sum += $3 } END { print sum }' <<<"$parsed")
    expect_eq "$total" "50" "every run counted once"
    for i in 0 1 2 3 4; do
        expect_contains "$parsed" "redlockrun_runs_total key=m-$i,kind=run,outcome=ran 10.0" "m-$i"
    done
    expect_eq "$(ls "$WORK" | grep -c '\.tmp$')" 0 "no temporary file left"
}

test_a_metrics_file_that_cannot_be_written_is_a_warning_not_a_failure() {
    run_rlr --metrics-file "$WORK/missing/m.prom" -k m-warn -- sh -c 'exit 4'
    expect_status 4
    expect_contains "$err" "redlockrun: --metrics-file: cannot open $WORK/missing/m.prom.lock" \
        "the warning"
    # Its lock held by another for longer than a run waits: the run goes on, uncounted.
    local file="$WORK/m.prom"
    "$PY" -c "
import fcntl, sys, time
f = open('$file.lock', 'w'); fcntl.flock(f, fcntl.LOCK_EX)
open('$WORK/locked', 'w').close(); time.sleep(30)" &
    BACKGROUND_PIDS+=("$!")
    wait_for "the lock file taken" test -e "$WORK/locked" || return
    run_rlr --metrics-file "$file" -k m-warn -- true
    expect_status 0
    expect_contains "$err" "stayed locked" "the warning"
    [ ! -e "$file" ] || fail "a file was written without its lock"
}

test_a_config_files_metrics_file_is_beside_it() {
    mkdir -p "$WORK/etc"
    printf 'metrics-file = m.prom\nlog-format = json\n' >"$WORK/etc/redlockrun.conf"
    run_rlr --config "$WORK/etc/redlockrun.conf" -k m-conf -- true
    expect_status 0
    grep -q 'key="m-conf",kind="run",outcome="ran"} 1' "$WORK/etc/m.prom" ||
        fail "not counted beside the config file"
    run_rlr --config "$WORK/etc/redlockrun.conf" -v -k m-conf -- true
    json_lines "$WORK/err" >/dev/null || fail "log-format = json from the file: $err"
}

# start_syslog LISTENER_OUT: a datagram socket at $WORK/dev/log, read by a listener of this suite
# that writes each message as a line of LISTENER_OUT.
start_syslog() {
    local received=$1
    local dev="$WORK/dev"
    mkdir -p "$dev"
    "$PY" - "$dev/log" "$received" <<'EOF_PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2] + ".ready", "w").close()
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536).rstrip(b"\n") + b"\n")
EOF_PY
    BACKGROUND_PIDS+=("$!")
    wait_for "the syslog listener" test -e "$received.ready"
}

# syslog_run ARGS...: runs redlockrun in a mount namespace of its own whose /dev is $WORK/dev (the
# listener's socket as /dev/log, and /dev/null).
syslog_run() {
    local dev="$WORK/dev"
    touch "$dev/null"
    timeout -k 5 60 unshare --mount --propagation private sh -c '
        mount --bind /dev/null "$1/null" && mount --bind "$1" /dev && shift && exec "$@"' \
        sh "$dev" "$REDLOCKRUN" "$@" >"$WORK/out" 2>"$WORK/err"
    status=$?
    err=$(cat "$WORK/err")
}

test_syslog_gets_notices_and_errors_with_their_priority_even_with_q() {
    start_syslog "$WORK/syslog" || return
    start_bg holder -k sys-job -- sleep 30
    wait_for "the holder's lock" lock_held sys-job || return
    syslog_run --syslog -q -n -k sys-job -- true
    expect_status 75
    expect_eq "$err" "" "-q keeps stderr quiet"
    wait_for "the busy message" grep -q "sys-job is held" "$WORK/syslog" || return
    # user.notice is <13>; the ident and pid as syslog(3) writes them.
    grep -Eq '^<13>.* redlockrun\[[0-9]+\]: sys-job is held by ' "$WORK/syslog" ||
        fail "a notice of facility user: $(cat "$WORK/syslog")"
    stop_processes "$holder"
    : >"$WORK/syslog"
    syslog_run --syslog --syslog-facility local3 --ttl 300ms --no-renew \
        -k sys-lost -- sleep 1.5
    expect_status 76
    expect_contains "$err" "redlockrun: lost the lock on sys-lost" "stderr unchanged"
    wait_for "the loss" grep -q "lost the lock on sys-lost" "$WORK/syslog" || return
    # local3.err: 19 * 8 + 3 = 155.
    grep -Eq '^<155>.* redlockrun\[[0-9]+\]: lost the lock on sys-lost' "$WORK/syslog" ||
        fail "an error of facility local3: $(cat "$WORK/syslog")"
    # Without --syslog, nothing goes there.
    : >"$WORK/syslog"
    syslog_run -v -k sys-none -- true
    expect_status 0
    # A socket's datagrams come in the order sent: once a marker sent after the run is read, any
    # message of the run would have been read before it.
    logger -u "$WORK/dev/log" syslog-marker
    wait_for "the marker" grep -q syslog-marker "$WORK/syslog" || return
    expect_eq "$(grep -c redlockrun "$WORK/syslog")" 0 "no message without --syslog"
}

run_tests
