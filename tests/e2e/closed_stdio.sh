#!/usr/bin/env bash
# Started with standard input, output or error closed (as some cron and init setups do), redlockrun
# must not hand those numbers to its own descriptors: a message written to "stderr" would otherwise
# land in the signal pipe (and be forwarded to the command as signals) or in the Redis connection
# (and be sent to Redis as commands).
. "$(dirname "$0")/lib.sh"

CLOSED_SETS=("<&-" ">&-" "2>&-" ">&- 2>&-" "<&- >&- 2>&-")

# closed_run REDIRECTIONS ARGS...: runs redlockrun with those descriptors closed; sets status.
closed_run() {
    local redirections=$1
    shift
    # The closing redirections come last, and win over the others.
    eval 'timeout -k 5 60 "$REDLOCKRUN" "$@" </dev/null >"$WORK/out" 2>"$WORK/err" '"$redirections"
    status=$?
}

# The error replies Redis gave, but for NOSCRIPT (a script's first use on this server): none when
# nothing but the lock's requests reached it.
error_replies() {
    rcli info errorstats | tr -d '\r' | grep '^errorstat_' | grep -v '^errorstat_NOSCRIPT:' |
        sed -E 's/.*count=([0-9]+).*/\1/' | awk '{ sum += $1 } END { print sum + 0 }'
}

# The commands clients sent while MONITOR ran, by name, but for those the tests' own redis-cli
# sends (CLIENT, DEL) and EVAL (sent once, should the server not know a script yet).
monitor_commands() {
    grep -v ' lua\] ' "$WORK/monitor" | grep -v '^OK$' |
        sed -E 's/^[0-9.]+ \[[^]]*\] "([A-Za-z]+)".*/\1/' |
        grep -vix -e CLIENT -e DEL -e EVAL | sort -u | tr '\n' ' '
}

start_monitor() {
    rm -f "$WORK/monitor"
    redis-cli -p "$REDIS_PORT" monitor >"$WORK/monitor" &
    monitor=$!
    BACKGROUND_PIDS+=("$monitor")
    wait_for "MONITOR" grep -q OK "$WORK/monitor"
}

stop_monitor() {
    sleep 0.2
    kill "$monitor"
    wait "$monitor" 2>/dev/null
}

check_run() { # WHAT [COMMANDS REDIS SAW, sorted]
    expect_eq "$status" 3 "$1: the command's status, no signal forwarded to it"
    expect_eq "$(error_replies)" 0 "$1: Redis got no request it refused"
    expect_eq "$(monitor_commands)" "${2:-EVALSHA }" "$1: commands Redis saw"
    expect_eq "$(rcli exists job)" 0 "$1: released"
}

# A renewal that fails while Redis is paused, then succeeds: a notice, then another.
test_a_renewal_notice_with_standard_descriptors_closed() {
    local closed
    for closed in "${CLOSED_SETS[@]}"; do
        rcli config resetstat >/dev/null
        rm -f "$WORK/started"
        start_monitor
        (
            wait_for "the command" test -e "$WORK/started"
            rcli client pause 1500 ALL >/dev/null
        ) &
        local pauser=$!
        closed_run "$closed" -t 3s --connect-timeout 200ms -k job -c \
            "touch '$WORK/started'; sleep 3.5; redis-cli -p $REDIS_PORT del nothing >/dev/null; exit 3"
        wait "$pauser"
        stop_monitor
        check_run "renewal notice, $closed"
    done
}

test_verbose_with_standard_descriptors_closed() {
    local closed
    for closed in "${CLOSED_SETS[@]}"; do
        rcli config resetstat >/dev/null
        start_monitor
        closed_run "$closed" -v -t 3s -k job -c \
            "sleep 1.2; redis-cli -p $REDIS_PORT del nothing >/dev/null; exit 3"
        stop_monitor
        check_run "-v, $closed" "EVALSHA INFO " # -v asks the server's name and version
    done
}

test_on_lost_ignore_with_standard_descriptors_closed() {
    local closed
    for closed in "${CLOSED_SETS[@]}"; do
        rcli config resetstat >/dev/null
        start_monitor
        closed_run "$closed" -t 1s --on-lost ignore -k job -c \
            "redis-cli -p $REDIS_PORT del job >/dev/null; sleep 1; exit 3"
        stop_monitor
        expect_eq "$status" 3 "--on-lost ignore, $closed: the command's status"
        expect_eq "$(error_replies)" 0 "--on-lost ignore, $closed: Redis got no request it refused"
        expect_eq "$(monitor_commands)" "EVALSHA " "--on-lost ignore, $closed: commands"
    done
}

# What the command inherits in place of a closed descriptor: /dev/null, which it can use.
test_the_command_gets_dev_null_for_a_closed_descriptor() {
    closed_run "<&- >&- 2>&-" -k job -- python3 -c '
import os, sys
with open(sys.argv[1], "w") as out:
    for fd in range(3):
        try:
            out.write(os.readlink(f"/proc/self/fd/{fd}") + "\n")
        except OSError as error:
            out.write(f"{fd}: {error.strerror}\n")
sys.exit(3)' "$WORK/fds"
    expect_eq "$status" 3 "the command's status"
    expect_eq "$(cat "$WORK/fds")" "/dev/null
/dev/null
/dev/null" "the command's descriptors 0-2"
}

run_tests
