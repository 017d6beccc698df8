#!/usr/bin/env bash
# Waiting across a Redis outage: a waiter reconnects, with jittered backoff, for as long as its wait
# allows; a wait that runs out while Redis is unreachable is 69 and says so. Each test has a server
# of its own, which it kills and restarts.
. "$(dirname "$0")/lib.sh"

# Points rcli, the helpers and redlockrun at a server of this test's own.
use_own_server() {
    start_redis OWN
    REDIS_PORT=$OWN_PORT
    export REDLOCKRUN_URL="redis://127.0.0.1:$OWN_PORT"
}

# Kills this test's server at once, as a crash would.
crash_redis() {
    kill -KILL "$OWN_PID"
    wait "$OWN_PID" 2>/dev/null
}

# holding NAME: a command that records its start and end in $WORK/records, as "NAME start|end MS",
# and holds the lock for a moment.
holding() {
    echo "echo $1 start \$(date +%s%3N) >>'$WORK/records'; sleep 0.3; echo $1 end \$(date +%s%3N) >>'$WORK/records'"
}

test_waiters_survive_a_restarted_server() {
    unset CI # as under cron: nobody watches the wait, and the messages counted are the outage's
    use_own_server
    start_bg holder -t 3s -k job -- sleep 60
    wait_for "the holder" lock_held job
    start_bg quiet -w 30s -k job -c "$(holding quiet)"
    start_bg verbose -v -w 30s -k job -c "$(holding verbose)"
    wait_for "both waiters to block" blocked_clients_are 2
    restart_redis OWN
    # The restarted server has forgotten the lock: the waiters take it in turn, and the holder finds
    # it lost at its next renewal.
    exit_of "$quiet"
    expect_eq "$?" 0 "the first waiter's exit status ($(cat "$WORK/quiet.err"))"
    exit_of "$verbose"
    expect_eq "$?" 0 "the second waiter's exit status ($(cat "$WORK/verbose.err"))"
    exit_of "$holder"
    expect_eq "$?" 76 "the holder's exit status ($(cat "$WORK/holder.err"))"
    expect_eq "$(grep -c start "$WORK/records")" 2 "both waiters ran"
    local order
    order=$(sort -k3n "$WORK/records" | awk '{print $2}' | tr '\n' ' ')
    expect_eq "$order" "start end start end " "the waiters took turns"
    expect_eq "$(cat "$WORK/quiet.err")" "" "a waiter says nothing without -v"
    local messages
    messages=$(cat "$WORK/verbose.err")
    # How the loss shows depends on when the server died: an orderly close, a reset, or (when the
    # request was sent again on a new connection) a refused connection.
    grep -Eq "^redlockrun: (Redis at 127.0.0.1:$OWN_PORT closed the connection|lost the connection to Redis at 127.0.0.1:$OWN_PORT: .*|cannot connect to Redis at 127.0.0.1:$OWN_PORT \(the URL from \\\$REDLOCKRUN_URL\): .*); reconnecting, to keep waiting for job$" <<<"$messages" ||
        fail "-v says so: no 'reconnecting' line naming the server in: $messages"
    expect_eq "$(grep -c 'reconnecting' <<<"$messages")" 1 "-v says so once"
    expect_contains "$messages" "redlockrun: reached Redis again after" "-v says when it is back"
}

test_a_wait_that_runs_out_while_redis_is_down_is_69() {
    unset CI # as under cron: nobody watches the wait, and the messages counted are the outage's
    use_own_server
    start_bg holder -t 30s -k job -- sleep 60
    wait_for "the holder" lock_held job
    local started
    started=$(now_ms)
    start_bg waiter -w 3s -k job -- touch "$WORK/ran"
    wait_for "the waiter to block" blocked_clients_are 1
    crash_redis
    exit_of "$waiter"
    expect_eq "$?" 69 "the waiter's exit status"
    expect_ge "$(($(now_ms) - started))" 3000 "the waiter used its whole wait"
    local message
    message=$(cat "$WORK/waiter.err")
    expect_contains "$message" "redlockrun: gave up waiting for job after 3" "message"
    expect_contains "$message" ": Redis was unreachable for the last " "message"
    expect_contains "$message" "(cannot connect to Redis at 127.0.0.1:$OWN_PORT (the URL from \$REDLOCKRUN_URL): Connection refused)" "message"
    expect_eq "$(wc -l <"$WORK/waiter.err")" 1 "one line"
    if [ -e "$WORK/ran" ]; then fail "the command ran"; fi
}

test_a_long_outage_gets_a_notice_and_waiting_forever_outlasts_it() {
    unset CI # as under cron: nobody watches the wait, and the messages counted are the outage's
    use_own_server
    start_bg holder -t 2s -k job -- sleep 60
    wait_for "the holder" lock_held job
    start_bg waiter -k job -- touch "$WORK/ran"
    wait_for "the waiter to block" blocked_clients_are 1
    crash_redis
    kill -KILL "$holder" # its command dies with it; the restarted server knows nothing of it
    wait "$holder" 2>/dev/null
    local seconds
    for seconds in $(seq 1 20); do # the notice is due after 10 s
        grep -q "has been unreachable for" "$WORK/waiter.err" && break
        sleep 1
    done
    [ -e "$WORK/ran" ] && fail "the command ran while Redis was down"
    restart_redis OWN
    exit_of "$waiter"
    expect_eq "$?" 0 "the waiter's exit status ($(cat "$WORK/waiter.err"))"
    [ -e "$WORK/ran" ] || fail "the command did not run"
    local messages
    messages=$(cat "$WORK/waiter.err")
    expect_contains "$messages" "redlockrun: Redis has been unreachable for 1" "the notice"
    expect_contains "$messages" " while waiting for job (cannot connect to Redis at 127.0.0.1:$OWN_PORT (the URL from \$REDLOCKRUN_URL): Connection refused); still trying" "the notice"
    expect_contains "$messages" "redlockrun: reached Redis again after 1" "the recovery"
    expect_eq "$(wc -l <"$WORK/waiter.err")" 2 "two lines"
}

test_a_signal_ends_a_wait_while_redis_is_down() {
    use_own_server
    start_bg holder -t 30s -k job -- sleep 60
    wait_for "the holder" lock_held job
    start_bg waiter -k job -- touch "$WORK/ran"
    wait_for "the waiter to block" blocked_clients_are 1
    crash_redis
    sleep 1 # reconnecting, with backoff
    local start
    start=$(now_ms)
    kill -TERM "$waiter"
    exit_of "$waiter"
    expect_eq "$?" 143 "the waiter's exit status"
    expect_lt "$(($(now_ms) - start))" 3000 "SIGTERM ended the wait promptly"
    if [ -e "$WORK/ran" ]; then fail "the command ran"; fi
}

# A run with -w whose Redis is restarting, or not started yet (a CI step's), waits for it, as it
# would across a restart in the middle of its wait.
test_with_w_a_server_that_starts_is_waited_for() {
    start_redis OWN
    local port=$OWN_PORT
    crash_redis
    export REDLOCKRUN_URL="redis://127.0.0.1:$port"
    start_bg runner -v -w 10s -k job -- touch "$WORK/ran"
    sleep 2
    [ -e "$WORK/ran" ] && fail "the command ran while nothing listened"
    restart_redis OWN
    REDIS_PORT=$port
    exit_of "$runner"
    expect_eq "$?" 0 "the run's exit status ($(cat "$WORK/runner.err"))"
    [ -e "$WORK/ran" ] || fail "the command did not run"
    local messages
    messages=$(cat "$WORK/runner.err")
    expect_contains "$messages" "cannot connect to Redis at 127.0.0.1:$port (the URL from \$REDLOCKRUN_URL): Connection refused; trying again until -w's 10s are up, as Redis may be restarting" "-v says it retries, and why"
    expect_contains "$messages" "redlockrun: reached Redis again after" "-v says when it is there"
    expect_eq "$(rcli exists job)" 0 "released"
}

# A server that accepts connections but does not answer (stopped, or busy starting) is waited for
# too: each attempt is given --connect-timeout.
test_with_w_a_silent_server_is_waited_for() {
    use_own_server
    kill -STOP "$OWN_PID"
    start_bg runner -v --connect-timeout 300ms -w 10s -k job -- touch "$WORK/ran"
    sleep 1.5
    [ -e "$WORK/ran" ] && fail "the command ran while the server did not answer"
    kill -CONT "$OWN_PID"
    exit_of "$runner"
    expect_eq "$?" 0 "the run's exit status ($(cat "$WORK/runner.err"))"
    [ -e "$WORK/ran" ] || fail "the command did not run"
    expect_contains "$(cat "$WORK/runner.err")" "did not answer within 300ms; trying again until -w's 10s are up" "-v says it retries, and why"
}

# Nothing listens for the whole wait: 69 once -w is up (the lock was never seen busy, so not 75),
# saying for how long Redis was unreachable.
test_with_w_no_server_is_69_after_the_wait() {
    start_redis OWN
    crash_redis
    export REDLOCKRUN_URL="redis://127.0.0.1:$OWN_PORT"
    run_rlr -w 2s -k job -- touch "$WORK/ran"
    expect_status 69
    expect_ge "$elapsed_ms" 2000 "it waited for -w"
    expect_lt "$elapsed_ms" 4000 "no longer than -w and a moment"
    expect_contains "$err" "redlockrun: gave up waiting for job after 2" "message"
    expect_contains "$err" "Redis was unreachable for the last " "message"
    expect_contains "$err" "cannot connect to Redis at 127.0.0.1:$OWN_PORT (the URL from \$REDLOCKRUN_URL): Connection refused" "message"
    if [ -e "$WORK/ran" ]; then fail "the command ran"; fi
}

# Without -w, and with -n, the first connection fails at once, as before; so do a name that does
# not resolve and a refused login, with -w: no wait mends them.
test_what_a_wait_does_not_mend_fails_at_once() {
    start_redis OWN
    crash_redis
    export REDLOCKRUN_URL="redis://127.0.0.1:$OWN_PORT"
    run_rlr -k job -- touch "$WORK/ran"
    expect_status 69 "without -w"
    expect_lt "$elapsed_ms" 1500 "without -w, at once"
    run_rlr -n -k job -- touch "$WORK/ran"
    expect_status 69 "-n"
    expect_lt "$elapsed_ms" 1500 "-n, at once"
    run_rlr -w 10s -u "redis://no-such-host.invalid" -k job -- touch "$WORK/ran"
    expect_status 69 "a name that does not resolve"
    expect_lt "$elapsed_ms" 5000 "a name that does not resolve, at once"
    expect_contains "$err" "cannot resolve host name" "a name that does not resolve"
    start_redis LOCKED --requirepass 'correct horse battery'
    REDISCLI_AUTH=wrong run_rlr -w 10s -u "redis://127.0.0.1:$LOCKED_PORT" -k job -- touch "$WORK/ran"
    expect_status 69 "a wrong password"
    expect_lt "$elapsed_ms" 1500 "a wrong password, at once"
    expect_contains "$err" "WRONGPASS" "a wrong password"
    run_rlr -w 10s -u "redis://127.0.0.1:$LOCKED_PORT" -k job -- touch "$WORK/ran"
    expect_status 69 "no password"
    expect_lt "$elapsed_ms" 1500 "no password, at once"
    expect_contains "$err" "needs a password" "no password"
    if [ -e "$WORK/ran" ]; then fail "the command ran"; fi
}

run_tests
