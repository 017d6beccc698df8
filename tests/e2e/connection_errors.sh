#!/usr/bin/env bash
# Redis unavailable or refusing us (69), and usage errors (64): clear one-line messages, no password
# in any output, and nothing changed in Redis.
. "$(dirname "$0")/lib.sh"

start_redis SECURE --requirepass 'correct horse battery'
start_redis ACL
redis-cli -p "$ACL_PORT" acl setuser locker on '>lockerpass' '~*' '+@all' >/dev/null
redis-cli -p "$ACL_PORT" acl setuser nogetter on '>getterpass' '~*' '+@all' '-get' >/dev/null
redis-cli -p "$ACL_PORT" acl setuser default off >/dev/null
secure_cli() { redis-cli -p "$SECURE_PORT" --no-auth-warning -a 'correct horse battery' "$@"; }
secure_lock_held() { [ "$(secure_cli exists "$1")" = 1 ]; }

test_nothing_listening_is_69() {
    local port
    port=$(free_port)
    run_rlr -u "redis://127.0.0.1:$port" -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "cannot connect to Redis at 127.0.0.1:$port" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    run_rlr -u "unix://$WORK/no.sock" -k job -- true
    expect_status 69
    expect_contains "$err" "unix:$WORK/no.sock" "message"
    run_rlr -u "redis://no-such-host.invalid" -k job -- true
    expect_status 69
    expect_contains "$err" "cannot resolve" "message"
    run_rlr -u "redis://127.0.0.1:$port" -k job --status
    expect_status 69
}

# The binary links glibc in: its resolver must still read /etc/hosts (the man page says which host
# sources need nothing from the system).
test_a_host_name_from_etc_hosts_resolves() {
    grep -Eq '^[[:space:]]*(127\.0\.0\.1|::1)[[:space:]].*\blocalhost\b' /etc/hosts ||
        fail "this machine's /etc/hosts has no localhost entry to test with"
    run_rlr -u "redis://localhost:$REDIS_PORT" -k job -- sh -c 'echo "$REDLOCKRUN_FENCE"'
    expect_status 0
    expect_eq "$out" "$(rcli get '{job}:redlockrun:fence')" "the command ran under the lock's fence"
    expect_eq "$(rcli exists job)" 0 "released"
}

# An address written out is connected to without the resolver, IPv6 included; the other spellings
# getaddrinfo() accepts ("127.1") still work through it.
test_address_literals_and_other_spellings_connect() {
    start_redis DUAL --bind 127.0.0.1 ::1
    local url
    for url in "redis://127.0.0.1:$DUAL_PORT" "redis://[::1]:$DUAL_PORT" \
        "redis://[0:0:0:0:0:0:0:1]:$DUAL_PORT" "redis://127.1:$DUAL_PORT"; do
        run_rlr -u "$url" -k job -- sh -c 'echo "$REDLOCKRUN_FENCE"'
        expect_status 0 "$url"
        expect_eq "$out" "$(redis-cli -s "$DUAL_SOCK" get '{job}:redlockrun:fence')" "the fence through $url"
    done
    # To the address written, not another: nothing listens on ::1 at the first server's port.
    run_rlr -u "redis://[::1]:$REDIS_PORT" -k job -- true
    expect_status 69
    expect_contains "$err" "cannot connect to Redis at [::1]:$REDIS_PORT" "message"
}

test_a_server_that_does_not_answer_times_out_with_69() {
    kill -STOP "$REDIS_PID"
    run_rlr --connect-timeout 300ms -k job -- true
    kill -CONT "$REDIS_PID"
    expect_status 69
    expect_contains "$err" "did not answer within 300ms" "message"
    expect_lt "$elapsed_ms" 5000 "bounded by --connect-timeout"
}

# A listener that accepts connections and never answers (a hung server, a black-holing proxy):
# the first request on a connection that never worked is not retried, so --connect-timeout bounds
# the whole run.
test_a_server_that_accepts_and_never_answers_is_given_the_timeout_once() {
    python3 -c '
import socket, sys, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    held.append(listener.accept()[0])
' "$WORK/port" &
    BACKGROUND_PIDS+=("$!")
    wait_for "the listener" test -s "$WORK/port"
    local port
    port=$(cat "$WORK/port")
    run_rlr -u "redis://127.0.0.1:$port" --connect-timeout 2s -k job -- touch "$WORK/ran"
    expect_status 69
    expect_eq "$err" "redlockrun: Redis at 127.0.0.1:$port did not answer within 2s" "message"
    expect_lt "$elapsed_ms" 3500 "one --connect-timeout, not two"
    [ -e "$WORK/ran" ] && fail "the command ran"
    run_rlr -u "redis://127.0.0.1:$port" --connect-timeout 2s -k job --status
    expect_status 69 "--status"
    expect_eq "$err" "redlockrun: Redis at 127.0.0.1:$port did not answer within 2s" "--status message"
    expect_lt "$elapsed_ms" 3500 "--status: one --connect-timeout"
}

# duration_ms TEXT: milliseconds in a duration as redlockrun prints it ("597ms", "1.6s").
duration_ms() {
    case $1 in
    *ms) echo "${1%ms}" ;;
    *.*s) local t=${1%s}; echo $((${t%.*} * 1000 + ${t#*.} * 100)) ;;
    *s) echo $((${1%s} * 1000)) ;;
    *) echo "not a duration: $1" >&2; echo 999999 ;;
    esac
}

# A renewal that waits for a stopped server gives up at the lock's deadline, not after
# --connect-timeout: the messages say how long it waited, and how long is left.
test_renewal_messages_state_the_time_that_elapsed() {
    # -t 1s: the renewal is due at 333 ms and the deadline is at 930 ms, long before the 5 s of
    # the default --connect-timeout.
    start_bg holder -t 1s -k job -c "touch '$WORK/started'; sleep 5"
    wait_for "the holder's command" test -e "$WORK/started"
    kill -STOP "$REDIS_PID"
    exit_of "$holder"
    local holder_status=$?
    kill -CONT "$REDIS_PID"
    expect_eq "$holder_status" 76 "the holder's exit status"
    local messages
    messages=$(cat "$WORK/holder.err")
    expect_not_contains "$messages" "within 5s" "a wait that did not happen"
    expect_not_contains "$messages" "retrying for up to" "a retry there was no time for"
    if [[ "$messages" =~ no\ renewal\ succeeded\ for\ ([0-9.]+m?s)\ \(Redis\ at\ [0-9.:]+\ did\ not\ answer\ within\ ([0-9.]+m?s)\) ]]; then
        expect_lt "$(duration_ms "${BASH_REMATCH[1]}")" 1000 "the failing time stated"
        expect_lt "$(duration_ms "${BASH_REMATCH[2]}")" 1000 "the wait stated"
    else
        fail "message: $messages"
    fi

    # --connect-timeout 300ms, -t 3s: the renewal, due at 1 s, gives up after 300 ms; the deadline
    # is at 2.89 s, so at most 1.59 s are left for retrying.
    rcli flushall >/dev/null
    rm -f "$WORK/started"
    start_bg holder -t 3s --connect-timeout 300ms -k job -c "touch '$WORK/started'; sleep 5"
    wait_for "the holder's command" test -e "$WORK/started"
    kill -STOP "$REDIS_PID"
    exit_of "$holder"
    holder_status=$?
    kill -CONT "$REDIS_PID"
    expect_eq "$holder_status" 76 "the holder's exit status"
    messages=$(cat "$WORK/holder.err")
    if [[ "$messages" =~ cannot\ renew\ job:\ Redis\ at\ [0-9.:]+\ did\ not\ answer\ within\ 300ms\;\ retrying\ for\ up\ to\ ([0-9.]+m?s) ]]; then
        expect_lt "$(duration_ms "${BASH_REMATCH[1]}")" 1700 "the time left stated"
    else
        fail "message: $messages"
    fi
}

test_wrong_password_is_69_and_never_shown() {
    secure_cli flushall >/dev/null
    local url_password=Url-Secret-4711 file_password=File-Secret-0815 env_password=Env-Secret-2342
    printf '%s\n' "$file_password" >"$WORK/password"
    local attempt
    for attempt in url file env; do
        case $attempt in
        url) run_rlr -v -u "redis://:$url_password@127.0.0.1:$SECURE_PORT" -k job -- true ;;
        file) run_rlr -v -u "redis://127.0.0.1:$SECURE_PORT" --password-file "$WORK/password" -k job -- true ;;
        env) REDISCLI_AUTH=$env_password run_rlr -v -u "redis://127.0.0.1:$SECURE_PORT" -k job -- true ;;
        esac
        expect_status 69 "$attempt"
        expect_contains "$err" "WRONGPASS" "$attempt message"
        expect_not_contains "$out$err" "Secret" "$attempt output"
    done
    expect_eq "$(secure_cli dbsize)" 0 "nothing written"
}

# No password given to a server that needs one: a run (whose pipelined request the server answers
# with a protocol error), --status and --list (NOAUTH), with requirepass and with ACL users, all say
# so and how to give one, with 69, and nothing runs.
test_missing_password_says_how_to_give_one() {
    local needs="needs a password, and none was given: give one with --password-file, \$REDISCLI_AUTH, the URL (redis://:PASSWORD@host, or redis://USER:PASSWORD@host for an ACL user) or a config file's password-file"
    local port
    for port in "$SECURE_PORT" "$ACL_PORT"; do
        run_rlr -u "redis://127.0.0.1:$port" -k needs-pw -- touch "$WORK/ran"
        expect_status 69 "a run, port $port"
        expect_eq "$err" "redlockrun: Redis at 127.0.0.1:$port $needs" "a run, port $port"
        [ -e "$WORK/ran" ] && fail "the command ran"
        run_rlr -u "redis://127.0.0.1:$port" -k needs-pw -w 5s -- true
        expect_status 69 "a waiter, port $port"
        expect_eq "$err" "redlockrun: Redis at 127.0.0.1:$port $needs" "a waiter, port $port"
        run_rlr -u "redis://127.0.0.1:$port" -k needs-pw --status
        expect_status 69 "--status, port $port"
        expect_eq "$err" "redlockrun: Redis at 127.0.0.1:$port $needs" "--status, port $port"
        run_rlr -u "redis://127.0.0.1:$port" --list
        expect_status 69 "--list, port $port"
        expect_eq "$err" "redlockrun: cannot list the locks: Redis at 127.0.0.1:$port $needs" \
            "--list, port $port"
    done
    expect_eq "$(secure_cli exists needs-pw '{needs-pw}:redlockrun:fence')" 0 "nothing written"
}

# A waiter whose server starts to need a password while it waits (a restart with a new
# configuration) reconnects to NOAUTH: it ends with 69, saying so.
test_a_waiter_told_noauth_says_the_server_needs_a_password() {
    start_redis LATE
    late_held() { [ "$(redis-cli -p "$LATE_PORT" exists job)" = 1 ]; }
    late_waiting() { redis-cli -p "$LATE_PORT" info clients | grep -q '^blocked_clients:1'; }
    local holder
    start_bg holder -u "redis://127.0.0.1:$LATE_PORT" -k job -- sleep 5
    wait_for "the holder" late_held
    (
        run_rlr -u "redis://127.0.0.1:$LATE_PORT" -k job -w 20s -- true
        echo "$status" >"$WORK/waiter-status"
        echo "$err" >"$WORK/waiter"
    ) &
    wait_for "the waiter" late_waiting
    redis-cli -p "$LATE_PORT" config set requirepass 'late secret' >/dev/null
    redis-cli -p "$LATE_PORT" --no-auth-warning -a 'late secret' client kill type normal >/dev/null
    wait "$!"
    expect_eq "$(cat "$WORK/waiter-status")" 69 "the waiter's status"
    # With $CI set, a line saying that it waits comes first.
    # Every waiter blocks on a wake-up list of its own, named after its waiter id; the first in line
    # on the shared one too.
    expect_contains "$(cat "$WORK/waiter")" "redlockrun: cannot wait on the wake-up lists {job}:redlockrun:wake:x-" "the waiter"
    expect_contains "$(cat "$WORK/waiter")" " and {job}:redlockrun:wake: Redis at" "the waiter"
    expect_contains "$(cat "$WORK/waiter")" ": Redis at 127.0.0.1:$LATE_PORT needs a password, and none was given: give one with --password-file" "the waiter: why"
    expect_not_contains "$(cat "$WORK/waiter")" "late secret" "the waiter"
}

test_right_password_works_from_every_source() {
    printf 'correct horse battery\n' >"$WORK/password"
    run_rlr -u "redis://127.0.0.1:$SECURE_PORT" --password-file "$WORK/password" -k job -- true
    expect_status 0
    REDISCLI_AUTH='correct horse battery' run_rlr -u "redis://127.0.0.1:$SECURE_PORT" -k job -- true
    expect_status 0
    REDLOCKRUN_URL="redis://:correct%20horse%20battery@127.0.0.1:$SECURE_PORT" run_rlr -k job -- true
    expect_status 0
    expect_eq "$err" "" "no warning for a URL from the environment"
    run_rlr -u "redis://:correct%20horse%20battery@127.0.0.1:$SECURE_PORT" -k job -- true
    expect_status 0
    expect_contains "$err" "a password in --url is visible" "warning for a password on the command line"
    expect_not_contains "$err" "horse" "warning"
}

test_acl_users() {
    printf 'lockerpass\n' >"$WORK/password"
    run_rlr -u "redis://locker:@127.0.0.1:$ACL_PORT" --password-file "$WORK/password" -k job -- true
    expect_status 0
    run_rlr -u "redis://locker:wrong@127.0.0.1:$ACL_PORT" -k job -- true
    expect_status 69
    expect_contains "$err" "WRONGPASS" "message"
    run_rlr -u "redis://locker:@127.0.0.1:$ACL_PORT" -k job -- true
    expect_status 64
    expect_contains "$err" "the URL names a user but no password" "message"
    expect_not_contains "$err" "locker" "message"
}

# redis-cli reads user information without a ':' as a password; so does redlockrun, and no message
# repeats it.
test_a_lone_user_information_is_a_password_and_never_shown() {
    run_rlr -u "redis://correct%20horse%20battery@127.0.0.1:$SECURE_PORT" -k job -- true
    expect_status 0
    run_rlr -v -u "redis://S3cretPW@127.0.0.1:$SECURE_PORT" -k job -- true
    expect_status 69
    expect_contains "$err" "WRONGPASS" "message"
    expect_not_contains "$out$err" "S3cretPW" "output"
    run_rlr -u "redis://S3cretPW@127.0.0.1:0" -k job -- true
    expect_status 64
    expect_not_contains "$out$err" "S3cretPW" "output"
}

# A password file that every user can read is named, with its mode.
test_a_password_file_others_can_read_gets_a_warning() {
    printf 'correct horse battery\n' >"$WORK/password"
    chmod 644 "$WORK/password"
    run_rlr -u "redis://127.0.0.1:$SECURE_PORT" --password-file "$WORK/password" -k job -- true
    expect_status 0
    expect_eq "$err" "redlockrun: --password-file: $WORK/password can be read by every user (mode 0644); make it unreadable to others with chmod o-r" "warning"
    chmod 600 "$WORK/password"
    run_rlr -u "redis://127.0.0.1:$SECURE_PORT" --password-file "$WORK/password" -k job -- true
    expect_status 0
    expect_eq "$err" "" "no warning for a private file"
}

# mysql(1) overwrites a password given on its command line; redlockrun does the same in its own
# argv, so that ps and /proc/PID/cmdline stop showing it once the command line is read. The words
# after it stay as they were.
test_a_url_password_is_blotted_out_of_the_command_line() {
    local form encoded=correct%20horse%20battery
    local url="redis://:$encoded@127.0.0.1:$SECURE_PORT"
    for form in separate attached short; do
        case $form in
        separate) start_bg holder -u "$url" -k "held-$form" -- sleep 30 ;;
        attached) start_bg holder "--url=$url" -k "held-$form" -- sleep 30 ;;
        short) start_bg holder -qu"$url" -k "held-$form" -- sleep 30 ;;
        esac
        wait_for "the $form holder to take its lock" secure_lock_held "held-$form" || continue
        local cmdline
        cmdline=$(tr '\0' ' ' </proc/"$holder"/cmdline)
        expect_not_contains "$cmdline" "horse" "$form: /proc/PID/cmdline"
        expect_not_contains "$cmdline" "$encoded" "$form: /proc/PID/cmdline"
        expect_contains "$cmdline" "://:*@127.0.0.1:$SECURE_PORT -k held-$form -- sleep 30" \
            "$form: the mask and the words after it"
        expect_contains "$(ps -o args= -p "$holder")" \
            "://:*@127.0.0.1:$SECURE_PORT -k held-$form -- sleep 30" "$form: ps"
        [ "$form" = short ] || expect_contains "$(cat "$WORK/holder.err")" \
            "a password in --url is visible" "$form: the warning stays"
        kill -TERM "$holder"
        exit_of "$holder"
        expect_eq "$?" 143 "$form: the holder, ended by SIGTERM"
    done
}

# The mask is one '*' whatever the password's length, and the words after it move up behind it:
# what ps and /proc/PID/cmdline show is the same for a short password and a long one (the bytes
# the kernel counts for argv cannot change: the rest is NULs at the end, which neither shows).
test_the_blotted_command_line_does_not_tell_the_password_s_length() {
    # The same password, written with more of it percent-encoded: 25 bytes, then 29.
    local encoded shown=() listed=() waiter
    start_bg holder -u "redis://:correct%20horse%20battery@127.0.0.1:$SECURE_PORT" -k length -- sleep 30
    wait_for "the holder to take its lock" secure_lock_held length || return
    for encoded in correct%20horse%20battery %63%6frrect%20horse%20battery; do
        start_bg waiter -u "redis://:$encoded@127.0.0.1:$SECURE_PORT" -k length -- true
        wait_for "the waiter to block" eval '[ "$(secure_cli info clients | tr -d "\r" | sed -n "s/^blocked_clients://p")" = 1 ]' || return
        shown+=("$(tr '\0' ' ' </proc/"$waiter"/cmdline | sed 's/ *$//')")
        listed+=("$(ps -o args= -p "$waiter")")
        kill -TERM "$waiter"
        wait "$waiter"
    done
    expect_eq "${shown[0]}" "$REDLOCKRUN -u redis://:*@127.0.0.1:$SECURE_PORT -k length -- true" \
        "/proc/PID/cmdline"
    expect_eq "${shown[1]}" "${shown[0]}" "/proc/PID/cmdline for a longer password"
    expect_eq "${listed[1]}" "${listed[0]}" "ps for a longer password"
    kill -TERM "$holder"
    exit_of "$holder"
    expect_eq "$?" 143 "the holder, ended by SIGTERM"
}

test_a_user_denied_a_command_the_scripts_run_gets_redis_error() {
    # The scripts read the lock with a GET that tolerates a key of another type; any other error,
    # such as an ACL denial, must not pass for "another type" or for a free lock.
    printf 'getterpass\n' >"$WORK/password"
    redis-cli -p "$ACL_PORT" --user locker --pass lockerpass --no-auth-warning \
        set job "$(($(date +%s) - 60))" >/dev/null
    run_rlr -u "redis://nogetter:@127.0.0.1:$ACL_PORT" --password-file "$WORK/password" -k job -- \
        touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "can't run this command" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(redis-cli -p "$ACL_PORT" --user locker --pass lockerpass --no-auth-warning \
        exists '{job}:redlockrun:owner')" 0 "the expired lock was not taken"
}

test_a_refused_login_leaves_no_lock_behind() {
    # The server has no password, so AUTH fails while the default user may still run the pipelined
    # acquire: it must be undone.
    run_rlr -u "redis://:needless-pw@127.0.0.1:$REDIS_PORT" -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "AUTH" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli exists job '{job}:redlockrun:owner')" 0 "no lock left behind"
}

test_a_database_that_does_not_exist_is_69_and_changes_nothing() {
    run_rlr -u "redis://127.0.0.1:$REDIS_PORT/99" -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "DB index is out of range" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli dbsize)" 0 "nothing written to database 0"
}

test_a_read_only_replica_is_named() {
    start_redis REPLICA --replicaof 127.0.0.1 "$REDIS_PORT"
    run_rlr -u "redis://127.0.0.1:$REPLICA_PORT" -k job -- true
    expect_status 69
    expect_contains "$err" "READONLY" "message"
    expect_contains "$err" "primary" "advice"
}

test_usage_errors_are_64() {
    local args
    while IFS= read -r args; do
        eval "run_rlr $args"
        expect_status 64 "$args"
        expect_eq "$(wc -l <<<"$err")" 1 "one line for: $args"
        expect_contains "$err" "redlockrun: " "prefix for: $args"
    done <<'EOF_ARGS'
-- true
-k job
-k
-k job --no-such-option true
-k job -w forever true
-k job -t 1x true
-k job -t 10ms true
-k job -E 300 true
-k job --timestamp-unit minutes true
-k job -u http://example.com true
-k job -u redis://:Pw-In-Bad-Url@h:99999 true
-k job -u unix://relative true
-k job -u rediss://127.0.0.1 --tls-ca-file /nonexistent/ca.pem true
-k job --tls-server-name localhost true
-k job --password-file /nonexistent/file true
-k job -n -w 1 true
-k job -c true false
--status -k job true
EOF_ARGS
    expect_eq "$(rcli dbsize)" 0 "nothing written"
    run_rlr -k job -u 'redis://:Pw-In-Bad-Url@h:99999' true
    expect_not_contains "$err" "Pw-In-Bad-Url" "a bad URL's password"
}

# A file option that is not a regular file could block redlockrun for ever (a FIFO nobody writes
# to) or never end (a device): refused with 64, naming the option, before anything connects.
test_a_password_file_that_is_not_a_regular_file_is_refused() {
    mkfifo "$WORK/fifo"
    local file expected
    while IFS='|' read -r file expected; do
        run_rlr_bounded --password-file "$file" -k job -- touch "$WORK/ran"
        expect_status 64 "$file"
        expect_eq "$err" "redlockrun: --password-file: $expected" "message for $file"
    done <<EOF_CASES
$WORK/fifo|$WORK/fifo is a FIFO, not a regular file
/dev/zero|/dev/zero is a character device, not a regular file
$WORK|cannot read $WORK: Is a directory
EOF_CASES
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli dbsize)" 0 "nothing written"
}

# run_rlr, bounded well below the suite's timeout: for what must not hang.
run_rlr_bounded() { RUN_RLR_LIMIT=10 run_rlr "$@"; }

# with_open_files N ARGS...: runs redlockrun with at most N descriptors open (and none but 0-2
# inherited: a test runner may pass on some); sets status and err.
with_open_files() {
    python3 "$(dirname "$0")/open_files_limit.py" "$1" "$REDLOCKRUN" "${@:2}" \
        >"$WORK/out" 2>"$WORK/err"
    status=$?
    out=$(cat "$WORK/out")
    err=$(cat "$WORK/err")
}

# An exhausted descriptor table is the operating system's trouble (71), not Redis being down (69).
test_running_out_of_file_descriptors_is_71() {
    # Standard input, output and error, and the signal pipe's two ends: no room for the socket.
    with_open_files 5 -k job -- touch "$WORK/ran"
    expect_status 71 "connecting"
    expect_eq "$err" "redlockrun: cannot connect to Redis at 127.0.0.1:$REDIS_PORT (the URL from \$REDLOCKRUN_URL): Too many open files" "message"
    with_open_files 5 -u "unix://$REDIS_SOCK" -k job -- touch "$WORK/ran"
    expect_status 71 "connecting to a unix socket"
    # The resolver cannot open /etc/hosts either, and calls the name unknown.
    with_open_files 5 -u "redis://localhost:$REDIS_PORT" -k job -- touch "$WORK/ran"
    expect_status 71 "resolving a host name"
    expect_eq "$err" "redlockrun: cannot connect to Redis at localhost:$REDIS_PORT (the URL from --url): Too many open files" "message"
    # --status and the file options cannot be reached with no descriptor free: the dynamic loader
    # needs one to start the binary. The unit tests (settings, status_report) cover them in-process.
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli dbsize)" 0 "nothing written"
    with_open_files 6 -k job -- touch "$WORK/ran"
    expect_status 0 "with room for the socket"
}

# A value cannot break a message into lines, or send the terminal an escape sequence: control
# characters are echoed escaped, wherever the value comes from.
test_control_characters_in_a_value_are_escaped() {
    local esc=$'\e'
    run_rlr -k job -t $'1\nfoo' true
    expect_status 64
    expect_eq "$err" "redlockrun: --ttl: '1\\nfoo' is not a duration (examples: 1.5, 500ms, 30s, 2m, 1h) (see redlockrun --help)" "the message"
    run_rlr -k job $'--bogus\r\e[2J' true
    expect_status 64
    expect_eq "$err" "redlockrun: unknown option --bogus\\r\\x1b[2J (see redlockrun --help)" "an option name"
    run_rlr -k job --password-file $'/nonexistent/a\nb' true
    expect_status 64
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line for a file name"
    expect_contains "$err" "/nonexistent/a\\nb" "a file name"
    # Keys: a busy message, and a lock lost on the way.
    start_bg holder -k $'job\n'"$esc"'[31m' -- sleep 30
    wait_for "the holder" lock_held $'job\n'"$esc"'[31m'
    run_rlr -n -k $'job\n'"$esc"'[31m' -- true
    expect_status 75
    expect_eq "$(wc -l <"$WORK/err")" 1 "one line for a busy key"
    expect_contains "$err" "redlockrun: job\\n\\x1b[31m is held by " "a busy key"
    expect_not_contains "$err" "$esc" "no escape character"
    kill -TERM "$holder"
    exit_of "$holder"
    expect_eq "$?" 143 "the holder, ended by SIGTERM"
}

test_help_and_version() {
    run_rlr --help
    expect_status 0
    expect_contains "$out" "Usage:" "help"
    expect_eq "$err" "" "stderr of --help"
    run_rlr -V
    expect_status 0
    expect_contains "$out" "redlockrun " "version"
    run_rlr -h
    expect_status 0
    expect_contains "$out" "Usage:" "-h alone"
}

# A habit from redis-cli, or a typo, is a usage error that says what to write, and runs nothing:
# a CI step or a cron job must never go green on it.
test_redis_cli_habits_and_typos_run_nothing_and_say_what_to_write() {
    local ran="$WORK/ran"
    printf 'wait = 15 m\n' >"$WORK/spaced.conf"
    local -a lines=(
        "-h 127.0.0.1 -p $REDIS_PORT -k habit -- touch $ran|write -u redis://127.0.0.1:$REDIS_PORT"
        "-V -k habit -- touch $ran|--version takes nothing else"
        "-k habit --help -- touch $ran|--help takes nothing else"
        "-p $REDIS_PORT -k habit -- touch $ran|-u redis://HOST:PORT"
        "-a sekrit -k habit -- touch $ran|--password-file FILE or \$REDISCLI_AUTH"
        "-n 2 -k habit -- touch $ran|choose the database in the URL, -u redis://HOST:PORT/2"
        "--timout 5 -k habit -- touch $ran|did you mean --timeout?"
        "--nonblocking -k habit -- touch $ran|did you mean --nonblock?"
        "-u localhost:$REDIS_PORT -k habit -- touch $ran|write redis://localhost:$REDIS_PORT"
        "--config $WORK/spaced.conf -k habit -- touch $ran|wait: '15 m' is not a duration: write 15m"
    )
    local line args said
    for line in "${lines[@]}"; do
        args=${line%%|*}
        said=${line#*|}
        # shellcheck disable=SC2086 # the words of ARGS, as a user types them
        run_rlr $args
        expect_status 64 "$args"
        expect_contains "$err" "$said" "$args"
        expect_eq "$out" "" "stdout of $args"
        expect_not_contains "$err" "sekrit" "the password is never repeated ($args)"
        [ -e "$ran" ] && fail "$args ran the command"
        rm -f "$ran"
    done
    expect_eq "$(rcli exists habit)" 0 "nothing was locked"
}

run_tests
