#!/usr/bin/env bash
# What redlockrun sends to Redis, as MONITOR sees it: one script call to acquire and one to release,
# by SHA1 once the server knows the scripts, with AUTH and SELECT sent ahead of the first call.
. "$(dirname "$0")/lib.sh"

start_redis SECURE --requirepass pw

# monitored PORT COMMAND...: runs COMMAND (in this shell) while MONITOR records; sets `sent` to the
# commands that clients (not scripts) sent, without their arguments. An ECHO sent after COMMAND marks
# the end: once MONITOR has shown it, it has shown everything before it, however slow the machine
# (a fixed pause missed a whole run under load); the marking client's own lines are left out.
monitored() {
    local port=$1
    shift
    redis-cli -p "$port" monitor >"$WORK/monitor" &
    local monitor=$!
    wait_for "MONITOR" grep -q OK "$WORK/monitor"
    "$@"
    redis-cli -p "$port" echo end-of-monitored >/dev/null
    wait_for "the end of MONITOR's record" grep -q '"end-of-monitored"' "$WORK/monitor"
    kill "$monitor"
    wait "$monitor" 2>/dev/null
    # Lines look like: 1700000000.123456 [3 127.0.0.1:5000] "EVALSHA" "..."; scripts' show [3 lua].
    local marker
    marker=$(grep '"end-of-monitored"' "$WORK/monitor" | sed -E 's/^[0-9.]+ (\[[^]]*\]).*/\1/')
    sent=$(grep -v ' lua\] ' "$WORK/monitor" | grep -vF "$marker" | grep -v '^OK$' |
        sed -E 's/^[0-9.]+ \[[^]]*\] "([A-Za-z]+)".*/\1/' | tr '\n' ' ')
}

test_an_uncontended_run_is_two_script_calls() {
    run_rlr -k job -- true # the server learns the scripts
    monitored "$REDIS_PORT" run_rlr -k job -- true
    expect_status 0
    expect_eq "$sent" "EVALSHA EVALSHA " "requests of a run"
}

hold_and_release() {
    local assignments
    assignments=$("$REDLOCKRUN" -k held --owner none --max-hold 1m --hold) || {
        fail "--hold failed: $assignments"
        return 1
    }
    eval "$assignments"
    "$REDLOCKRUN" --release
    status=$?
}

test_a_short_hold_is_two_script_calls() {
    export XDG_RUNTIME_DIR="$WORK/runtime"
    mkdir -m 700 "$XDG_RUNTIME_DIR"
    run_rlr -k held -- true # the server learns the scripts
    monitored "$REDIS_PORT" hold_and_release
    expect_eq "$status" 0 "--release"
    expect_eq "$sent" "EVALSHA EVALSHA " "requests of a hold and its release"
}

test_auth_and_select_come_first() {
    local url="redis://127.0.0.1:$SECURE_PORT/5"
    export REDISCLI_AUTH=pw
    run_rlr -u "$url" -k job -- true
    # Redis 6.0's MONITOR leaves AUTH out (6.2 shows it, redacted). There the run's success on a
    # server that wants a password shows that AUTH came first: SELECT would have met NOAUTH.
    local auth="AUTH "
    monitored "$SECURE_PORT" redis-cli -p "$SECURE_PORT" --no-auth-warning -a pw ping
    [[ "$sent" == AUTH* ]] || auth=""
    monitored "$SECURE_PORT" run_rlr -u "$url" -k job -- true
    expect_status 0
    expect_eq "$sent" "${auth}SELECT EVALSHA EVALSHA " "requests of a run"
}

test_unknown_scripts_are_sent_once_in_full() {
    rcli script flush >/dev/null
    monitored "$REDIS_PORT" run_rlr -k job -- true
    expect_status 0
    expect_eq "$sent" "EVALSHA EVAL EVALSHA EVAL " "after SCRIPT FLUSH"
    monitored "$REDIS_PORT" run_rlr -k job -- true
    expect_eq "$sent" "EVALSHA EVALSHA " "once the server knows them"
}

# The server's name and version as its `redis-server --version` tells them ("Redis server v=7.0.15",
# "Valkey server v=8.0.1"; Valkey 7.2's says only "Server v=7.2.7"), as -v must name them.
server_named_by_its_binary() {
    local line version
    line=$(redis-server --version)
    version=$(sed -E 's/.* v=([^ ]+) .*/\1/' <<<"$line")
    case "$line" in
        "Redis server v="*) echo "Redis $version" ;;
        "Valkey server v="* | "Server v="*) echo "Valkey $version" ;;
        *) echo "an unknown server: $line" ;;
    esac
}

test_verbose_names_the_server_with_the_first_request() {
    local server
    server=$(server_named_by_its_binary)
    run_rlr -k job -- true # the server learns the scripts
    monitored "$REDIS_PORT" run_rlr -v -k job -- true
    expect_status 0
    expect_contains "$err" "redlockrun: connected to 127.0.0.1:$REDIS_PORT ($server)" "-v's line"
    # INFO goes out with the first request, not on a round trip of its own; without -v it is not
    # sent at all (the tests above).
    expect_eq "$sent" "INFO EVALSHA EVALSHA " "requests of a run with -v"

    export REDISCLI_AUTH=pw
    run_rlr -v -u "redis://127.0.0.1:$SECURE_PORT/5" -k job -- true
    expect_status 0
    expect_contains "$err" "redlockrun: connected to 127.0.0.1:$SECURE_PORT ($server, db 5)" \
        "-v's line with a password and a database"
    unset REDISCLI_AUTH
}

test_verbose_runs_for_a_user_without_info() {
    # Nothing but -v wants INFO's answer: a user the server refuses it still runs, and -v says why
    # it cannot name the server.
    rcli acl setuser no-info on '>secret' allkeys allcommands -info >/dev/null
    echo secret >"$WORK/no-info.password"
    run_rlr -v -u "redis://no-info:@127.0.0.1:$REDIS_PORT" --password-file "$WORK/no-info.password" \
        -k job -- true
    expect_status 0
    expect_contains "$err" "redlockrun: connected to 127.0.0.1:$REDIS_PORT (INFO refused: NOPERM" \
        "-v's line when INFO is refused"
    expect_contains "$err" "released job" "the run"
    rcli acl deluser no-info >/dev/null
}

test_a_waiter_blocks_instead_of_polling() {
    run_rlr -k warm-up -- true # the server learns the scripts
    start_bg holder -k job -c "while [ ! -e '$WORK/go' ]; do sleep 0.02; done"
    wait_for "the holder" lock_held job
    waiter_run() {
        start_bg waiter -k job -- true
        sleep 1.5
        touch "$WORK/go"
        exit_of "$waiter" || fail "the waiter failed"
        exit_of "$holder" || fail "the holder failed"
    }
    monitored "$REDIS_PORT" waiter_run
    # The waiter: acquire (busy), BLPOP until the release wakes it, acquire, release. The holder:
    # release. Nothing else, however long the wait.
    expect_eq "$sent" "EVALSHA BLPOP EVALSHA EVALSHA EVALSHA " "requests while waiting"
}

run_tests
