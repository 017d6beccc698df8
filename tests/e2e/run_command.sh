#!/usr/bin/env bash
# Running the command: exit status passthrough, signals, 126/127, -c, environment, release.
. "$(dirname "$0")/lib.sh"

test_exit_status_passes_through() {
    local code
    for code in 0 3 42; do
        run_rlr -k job -- sh -c "exit $code"
        expect_status "$code"
        expect_eq "$err" "" "stderr for exit $code"
    done
    expect_eq "$(rcli exists job)" 0 "the lock is released"
}

test_signal_death_is_128_plus_n() {
    run_rlr -k job -- sh -c 'kill -TERM $$'
    expect_status 143
    run_rlr -k job -- sh -c 'kill -KILL $$'
    expect_status 137
    expect_eq "$(rcli exists job)" 0 "the lock is released"
}

test_a_command_not_found_is_127_before_redis_is_touched() {
    run_rlr -k job -- no-such-command-anywhere arg
    expect_status 127
    expect_eq "$err" "redlockrun: no-such-command-anywhere: command not found" "message"
    expect_eq "$(rcli dbsize)" 0 "nothing was taken"
    printf '#!/bin/sh\n' >"$WORK/plain"
    chmod 644 "$WORK/plain"
    PATH="$WORK:$PATH" run_rlr -k job -- plain
    expect_status 126
    expect_contains "$err" "cannot run plain: Permission denied" "message"
    expect_eq "$(rcli dbsize)" 0 "nothing was taken"
    # Not even a wait for a held lock comes first.
    rcli set job $(($(server_ms) + 60000)) >/dev/null
    run_rlr -w 30s -k job -- no-such-command-anywhere
    expect_status 127
    expect_lt "$elapsed_ms" 5000 "no wait before the error"
}

test_a_command_that_fails_to_exec_releases_the_lock() {
    run_rlr -k job -- "$WORK/missing/script.sh"
    expect_status 127
    expect_contains "$err" "cannot run $WORK/missing/script.sh: No such file or directory" "message"
    # The file exists: what is missing is its interpreter, which is named, as shells do. Its
    # status is 127, as bash (from 5.1), dash, env(1) and timeout(1) give.
    printf '#!/no/such/interpreter\n' >"$WORK/bad-interpreter"
    chmod 755 "$WORK/bad-interpreter"
    run_rlr -k job -- "$WORK/bad-interpreter"
    expect_status 127
    expect_eq "$err" "redlockrun: cannot run $WORK/bad-interpreter: bad interpreter /no/such/interpreter: No such file or directory" \
        "message"
    printf '#!/bin/sh\necho hi\n' >"$WORK/plain.sh"
    chmod 644 "$WORK/plain.sh"
    run_rlr -k job -- "$WORK/plain.sh"
    expect_status 126
    expect_contains "$err" "Permission denied" "message"
    run_rlr -k job -- "$WORK"
    expect_status 126
    expect_eq "$err" "redlockrun: cannot run $WORK: Permission denied" "message"
    expect_eq "$(rcli exists '{job}:redlockrun:fence')" 1 "the lock was taken"
    expect_eq "$(rcli exists job)" 0 "and released"
}

# Short of memory (ulimit -v), a run fails somewhere; wherever it fails, once it has acquired the
# lock it must release it: a lock taken for a command that never started must not stay held for its
# whole TTL. The address space is scanned from too small to start at all to large enough to run.
test_running_out_of_memory_never_leaves_the_lock_held() {
    if nm -D "$REDLOCKRUN" 2>/dev/null | grep -q __asan_init; then
        # AddressSanitizer reserves terabytes of address space: no limit leaves it room to start.
        return 0
    fi
    local limit out_of_memory_after_acquiring=0
    for limit in $(seq 4000000 20000 7000000); do
        rcli del job '{job}:redlockrun:fence' >/dev/null
        { # the shell's own notice of an abort goes to /dev/null
            prlimit --as="$limit" "$REDLOCKRUN" -k job -- true >/dev/null 2>"$WORK/err"
            status=$?
        } 2>/dev/null
        err=$(cat "$WORK/err")
        case $status in
        0 | 127) ;; # ran; or the dynamic loader could not map the C library
        134) ;;     # libstdc++ could not allocate even the exception that says so
        71)
            expect_eq "$err" "redlockrun: out of memory" "message at $limit bytes"
            if [ "$(rcli exists '{job}:redlockrun:fence')" = 1 ]; then
                out_of_memory_after_acquiring=1
            fi
            ;;
        *) fail "status $status with $limit bytes: $err" ;;
        esac
        if [ "$(rcli exists job)" != 0 ]; then
            fail "with $limit bytes, status $status left the lock held: $err"
            return
        fi
    done
    expect_eq "$out_of_memory_after_acquiring" 1 "some limit ran out of memory after acquiring"
}

# A process limit that leaves no room for the command: clone() fails (EAGAIN), which is the
# operating system's trouble (71), and the lock taken for it is released. The limit binds no
# process of root, so as root the run is made by nobody (with a config file nobody can read: the
# test's own folder is closed to it).
test_no_room_for_another_process_is_71() {
    local as_user=() binary=$REDLOCKRUN
    if [ "$(id -u)" = 0 ]; then
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        # nobody may not reach the build's binary (a checkout under /root, mode 700): it runs a
        # copy in a folder of its own that it can reach, wherever the checkout lies.
        local reachable
        reachable=$(mktemp -d /tmp/redlockrun-nobody.XXXXXX)
        chmod 755 "$reachable"
        cp "$REDLOCKRUN" "$reachable/redlockrun"
        chmod 755 "$reachable/redlockrun"
        binary="$reachable/redlockrun"
    fi
    # The command would write a key: it must not run. In the sanitizer build, LeakSanitizer's
    # check at exit needs a thread of its own, which the limit refuses too: it is left out here.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        "${as_user[@]}" prlimit --nproc=1 "$binary" --config /dev/null -k job \
            -c "redis-cli -p $REDIS_PORT set ran yes" >"$WORK/out" 2>"$WORK/err"
    status=$?
    err=$(cat "$WORK/err")
    expect_status 71
    expect_eq "$err" "redlockrun: cannot start the command: Resource temporarily unavailable" "message"
    expect_eq "$(rcli exists ran)" 0 "the command did not run"
    expect_eq "$(rcli exists '{job}:redlockrun:fence')" 1 "the lock was taken"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "and released"
    [ -n "${reachable:-}" ] && rm -rf "$reachable"
}

# Standard input, output and error and one more descriptor leave no room for the signal pipe's two
# ends: 71, before anything is taken.
test_no_room_for_the_signal_pipe_is_71() {
    python3 "$(dirname "$0")/open_files_limit.py" 4 "$REDLOCKRUN" -k job \
        -c "redis-cli -p $REDIS_PORT set ran yes" >"$WORK/out" 2>"$WORK/err"
    status=$?
    err=$(cat "$WORK/err")
    expect_status 71
    expect_eq "$err" "redlockrun: cannot create the signal pipe: Too many open files" "message"
    expect_eq "$(rcli dbsize)" 0 "nothing was taken, and the command did not run"
}

test_a_bad_interpreter_is_named() {
    # A #! line written on Windows ends in a carriage return, which becomes part of the name.
    printf '#!/bin/sh\r\necho hi\r\n' >"$WORK/crlf.sh"
    chmod 755 "$WORK/crlf.sh"
    run_rlr -k job -- "$WORK/crlf.sh"
    expect_status 127
    expect_eq "$err" "redlockrun: cannot run $WORK/crlf.sh: bad interpreter /bin/sh\\r: No such file or directory (the #! line ends in a carriage return: the file has DOS line endings)" "CRLF"
    # With an argument, and with spaces before the name.
    printf '#!  /no/such/interpreter -x\n' >"$WORK/with-argument"
    chmod 755 "$WORK/with-argument"
    run_rlr -k job -- "$WORK/with-argument"
    expect_status 127
    expect_eq "$err" "redlockrun: cannot run $WORK/with-argument: bad interpreter /no/such/interpreter: No such file or directory" "an interpreter with an argument"
    # An interpreter that exists but may not be run.
    printf '#!/bin/sh\n' >"$WORK/not-executable"
    chmod 644 "$WORK/not-executable"
    printf '#!%s\n' "$WORK/not-executable" >"$WORK/uses-not-executable"
    chmod 755 "$WORK/uses-not-executable"
    run_rlr -k job -- "$WORK/uses-not-executable"
    expect_status 126
    expect_eq "$err" "redlockrun: cannot run $WORK/uses-not-executable: bad interpreter $WORK/not-executable: Permission denied" "an interpreter that may not be run"
    # Control characters in the name are shown escaped.
    printf '#!/no/such\tinterp\033[31m\n' >"$WORK/escape"
    chmod 755 "$WORK/escape"
    run_rlr -k job -- "$WORK/escape"
    expect_status 127
    expect_eq "$err" "redlockrun: cannot run $WORK/escape: bad interpreter /no/such: No such file or directory" "a tab ends the name"
    printf '#!/no/such\033[31m\n' >"$WORK/escape"
    run_rlr -k job -- "$WORK/escape"
    expect_eq "$err" "redlockrun: cannot run $WORK/escape: bad interpreter /no/such\\x1b[31m: No such file or directory" "escaped"
    expect_eq "$(rcli exists job)" 0 "released"
}

test_script_without_shebang_runs_with_sh() {
    printf 'echo "no shebang $1"\n' >"$WORK/bare.sh"
    chmod 755 "$WORK/bare.sh"
    run_rlr -k job -- "$WORK/bare.sh" ok
    expect_status 0
    expect_eq "$out" "no shebang ok" "output"
}

test_shell_command_with_c() {
    run_rlr -k job -c 'echo "$((6 * 7))"; exit 5'
    expect_status 5
    expect_eq "$out" "42" "output of -c"
}

test_environment_reaches_the_command() {
    run_rlr -k env-job -- sh -c 'echo "$REDLOCKRUN_KEY $REDLOCKRUN_FENCE $INHERITED"'
    expect_status 0
    local key fence inherited
    read -r key fence inherited <<<"$out"
    expect_eq "$key" "env-job" "REDLOCKRUN_KEY"
    expect_eq "$fence" "$(rcli get '{env-job}:redlockrun:fence')" "REDLOCKRUN_FENCE"
    # And the rest of the environment is inherited, with REDLOCKRUN_* replaced, not duplicated.
    INHERITED=yes REDLOCKRUN_KEY=stale run_rlr -k env-job -- sh -c 'echo "$INHERITED $REDLOCKRUN_KEY"; env | grep -c ^REDLOCKRUN_KEY='
    expect_eq "$out" "yes env-job
1" "inherited environment"
}

test_fence_strictly_increases_and_survives_losing_the_counter() {
    local previous=0 fence i
    for i in 1 2 3; do
        run_rlr -k job -- sh -c 'echo $REDLOCKRUN_FENCE'
        fence=$out
        expect_eq "$(( fence > previous ))" 1 "fence $fence after $previous"
        previous=$fence
    done
    rcli del '{job}:redlockrun:fence' >/dev/null
    run_rlr -k job -- sh -c 'echo $REDLOCKRUN_FENCE'
    expect_eq "$(( out > previous ))" 1 "fence $out after the counter was deleted (was $previous)"
}

test_stdin_and_stdout_are_the_command_s() {
    out=$(printf 'line one\nline two\n' | "$REDLOCKRUN" -k job -- sort -r)
    expect_eq "$out" "line two
line one" "piped through the command"
}

test_unix_socket_url() {
    run_rlr -u "unix://$REDIS_SOCK" -k sock-job -- sh -c 'echo $REDLOCKRUN_FENCE'
    expect_status 0
    expect_eq "$out" "$(rcli get '{sock-job}:redlockrun:fence')" "fence via the unix socket"
}

test_database_from_the_url() {
    run_rlr -u "redis://127.0.0.1:$REDIS_PORT/3" -k db-job -- sh -c 'redis-cli -p '"$REDIS_PORT"' -n 3 exists db-job'
    expect_status 0
    expect_eq "$out" "1" "the lock lives in database 3 while held"
    expect_eq "$(rcli -n 0 exists '{db-job}:redlockrun:fence')" 0 "nothing in database 0"
    expect_eq "$(rcli -n 3 exists '{db-job}:redlockrun:fence')" 1 "fence in database 3"
}

test_lock_holds_a_millisecond_timestamp_while_the_command_runs() {
    run_rlr -k job -t 20s -- sh -c "redis-cli -p $REDIS_PORT get job; redis-cli -p $REDIS_PORT pttl job; redis-cli -p $REDIS_PORT hget '{job}:redlockrun:owner' pid"
    local value pttl pid
    { read -r value; read -r pttl; read -r pid; } <<<"$out"
    local now
    now=$(server_ms)
    expect_eq "$(( value > now && value <= now + 20000 ))" 1 "value $value is an expiry in ms (now $now)"
    expect_eq "$(( pttl > 15000 && pttl <= 20000 ))" 1 "PTTL $pttl follows the TTL"
    expect_eq "$(( pid > 0 ))" 1 "owner pid recorded"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "key and owner deleted on release"
}

test_verbose_reports_with_timings() {
    run_rlr -v -k job -- true
    expect_status 0
    expect_contains "$err" "redlockrun: acquired job (fence " "acquire"
    expect_contains "$err" "without waiting, in " "acquire: the time it took to ask"
    expect_contains "$err" "the command exited with status 0 after running for " "command"
    expect_contains "$err" "redlockrun: released job after holding it for " "release"
}

test_a_lock_lost_between_renewals_is_found_at_release() {
    # The command deletes the lock and ends long before the next renewal would notice.
    run_rlr -t 30s -k job -c "redis-cli -p $REDIS_PORT del job >/dev/null"
    expect_status 76
    expect_contains "$err" "the lock on job was lost before the command finished: the lock key was deleted" "message"
    run_rlr -t 30s --on-lost ignore -k job -c "redis-cli -p $REDIS_PORT del job >/dev/null; exit 3"
    expect_status 3
    expect_contains "$err" "was lost before the command finished" "message under --on-lost ignore"
}

test_a_lapsed_lock_is_reported_once() {
    run_rlr --no-renew --on-lost ignore -t 300ms -k job -- sleep 1
    expect_status 0
    expect_eq "$err" "redlockrun: lost the lock on job: its TTL of 300ms ran out (--no-renew); the command runs on without it (--on-lost ignore)" "the only message"
}

run_tests
