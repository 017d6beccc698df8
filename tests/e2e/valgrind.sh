#!/usr/bin/env bash
# Memcheck over a sample of real runs: uncontended, busy with -n, a wait that gets the hand-off, a
# lost lock, TLS, --status (also as JSON), --list, a usage error and a config file. Every run must end with its usual
# status and valgrind must report no error and no definite or indirect leak. The command itself is
# not traced (--trace-children=no): only redlockrun is under test, and the command must run and exit
# as it would without valgrind. An exec that fails in the child is one valgrind cannot survive (it
# ends the child with its own status), so the exec errors (126/127) are left to the other suites.
. "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || {
    echo "FATAL: valgrind is not installed (the README's test command installs it)" >&2
    exit 1
}
unset SSL_CERT_FILE SSL_CERT_DIR

# The binary under valgrind, for run_rlr and start_bg; each process's report in its own file.
REAL_REDLOCKRUN=$REDLOCKRUN
VALGRIND_STATUS=99 # a status no run below expects
VALGRIND_LOGS="$WORK/valgrind-logs"
mkdir "$VALGRIND_LOGS"
REDLOCKRUN="$WORK/redlockrun-under-valgrind"
cat >"$REDLOCKRUN" <<EOF_WRAPPER
#!/bin/sh
exec valgrind --tool=memcheck --quiet --trace-children=no --child-silent-after-fork=yes \\
    --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \\
    --error-exitcode=$VALGRIND_STATUS --track-fds=yes --log-file="$VALGRIND_LOGS/%p" \\
    "$REAL_REDLOCKRUN" "\$@"
EOF_WRAPPER
chmod +x "$REDLOCKRUN"
# Valgrind runs the binary tens of times slower: every bound below is generous.
export RUN_RLR_LIMIT=120

# What valgrind reported for one process, less what is not redlockrun's doing: the descriptors it
# inherited (the test harness's, valgrind's own log) and the count of open descriptors. Each
# report is a run of paragraphs ("==PID== " lines between them).
findings() {
    awk '
        /FILE DESCRIPTORS: [0-9]+ open/ { next }
        /^==[0-9]+== *$/ { if (block !~ /inherited from parent/) printf "%s", block; block = ""; next }
        { block = block $0 "\n" }
        END { if (block !~ /inherited from parent/) printf "%s", block }
    ' "$1"
}

# Fails the test for every report in which valgrind found something: an error, a definite or
# indirect leak, or a descriptor redlockrun opened and left open at exit. The reports are then
# cleared for the next test.
expect_clean_reports() {
    local report found count=0
    for report in "$VALGRIND_LOGS"/*; do
        [ -e "$report" ] || continue
        count=$((count + 1))
        found=$(findings "$report")
        if [ -n "$found" ]; then
            fail "valgrind reported ($1):
$found"
        fi
        rm -f "$report"
    done
    [ "$count" -gt 0 ] || fail "no valgrind report ($1): valgrind did not run"
}

# Holds KEY until $WORK/release-KEY exists: a redlockrun under valgrind too, checked with the rest.
hold() {
    start_bg holder -k "$1" -c "while [ ! -e '$WORK/release-$1' ]; do sleep 0.02; done"
    wait_for "$1 to be held" lock_held "$1"
}

test_an_uncontended_run() {
    run_rlr -k job -- touch "$WORK/ran"
    expect_status 0
    [ -e "$WORK/ran" ] || fail "the command did not run"
    expect_eq "$(rcli exists job)" 0 "released"
    run_rlr -k job -c 'exit 3'
    expect_status 3 "the command's own status"
    expect_clean_reports "uncontended runs"
}

test_busy_with_no_wait_then_a_wait_that_gets_the_hand_off() {
    hold job
    run_rlr -n -k job -- touch "$WORK/ran"
    expect_status 75
    expect_contains "$err" "is held by" "the busy message"
    [ -e "$WORK/ran" ] && fail "the command ran without the lock"
    start_bg waiter -w 100s -k job -- touch "$WORK/waited"
    wait_for "the waiter to block" blocked_clients_are 1
    touch "$WORK/release-job"
    exit_of "$holder" || fail "the holder failed"
    exit_of "$waiter" || fail "the waiter failed: $(cat "$WORK/waiter.err")"
    [ -e "$WORK/waited" ] || fail "the waiter's command did not run"
    expect_clean_reports "busy, waiting and the hand-off"
}

test_a_lost_lock_stops_the_command() {
    start_bg keeper -t 3s -k job -- sleep 100
    wait_for "job to be held" lock_held job
    rcli del job >/dev/null
    exit_of "$keeper"
    status=$?
    err=$(cat "$WORK/keeper.err")
    expect_status 76
    expect_contains "$err" "the lock key was deleted" "the message"
    expect_clean_reports "a lost lock"
}

test_tls() {
    local pki="$WORK/pki"
    mkdir "$pki"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$pki/server.key" -out "$pki/server.crt" 2>/dev/null
    [ -s "$pki/server.crt" ] || { fail "openssl did not make a certificate"; return; }
    start_redis TLS --tls --tls-cert-file "$pki/server.crt" --tls-key-file "$pki/server.key" \
        --tls-ca-cert-file "$pki/server.crt" --tls-auth-clients no
    run_rlr -u "rediss://127.0.0.1:$TLS_PORT" --tls-ca-file "$pki/server.crt" -k job -- true
    expect_status 0 "over TLS"
    run_rlr -u "rediss://127.0.0.1:$TLS_PORT" -k job -- true
    expect_status 69 "a certificate from an unknown CA"
    expect_clean_reports "TLS"
}

test_status_free_and_held() {
    run_rlr -k job --status
    expect_status 0 "free"
    hold job
    run_rlr -k job --status
    expect_status 75 "held"
    expect_contains "$out" "held by" "the report"
    run_rlr -k job --status --json
    expect_status 75 "held, as JSON"
    expect_contains "$out" '"state":"held"' "the JSON"
    run_rlr -k other -- true
    run_rlr --list --json
    expect_status 75 "--list"
    expect_eq "$(wc -l <"$WORK/out")" 2 "--list: both locks"
    touch "$WORK/release-job"
    exit_of "$holder" || fail "the holder failed"
    expect_clean_reports "--status"
}

test_usage_errors() {
    run_rlr -k job --ttl soon -- true
    expect_status 64 "a bad duration"
    run_rlr -k job
    expect_status 64 "no command"
    run_rlr -u 'redis://:secret@127.0.0.1:99999' -k job -- true
    expect_status 64 "a bad URL"
    expect_not_contains "$err" secret "the password"
    expect_eq "$(rcli dbsize)" 0 "nothing written"
    expect_clean_reports "usage errors"
}

test_a_config_file() {
    printf 'url = redis://127.0.0.1:%s/3\nttl = 10s\nconflict-exit-code = 9\n' "$REDIS_PORT" \
        >"$WORK/config"
    run_rlr --config "$WORK/config" -k job -c "redis-cli -p $REDIS_PORT -n 3 pttl job"
    expect_status 0
    expect_lt "$out" 10001 "the TTL from the file"
    printf 'ttl = 10s\nkey = job\n' >"$WORK/bad-config"
    run_rlr --config "$WORK/bad-config" -k job -- true
    expect_status 64 "an entry for the command line only"
    expect_clean_reports "config files"
}

run_tests
