# Sourced by every end-to-end test file. Starts real redis-server processes on free ports, runs the
# redlockrun binary against them, and reports each test_* function as ok / not ok.
#
#   REDLOCKRUN             the binary under test (set by CTest)
#   REDLOCKRUN_SERVER_BIN  a folder whose redis-server, redis-cli and redis-sentinel the suite runs
#                          (tests/compat/build-servers makes them); default: those on PATH
#
# A missing redis-server is a failure, never a skip.

set -u
REDLOCKRUN=${REDLOCKRUN:?set REDLOCKRUN to the redlockrun binary}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-e2e.XXXXXX")
SERVER_PIDS=()
BACKGROUND_PIDS=()
# A CI system's $CI makes a waiting run say that it waits. The suites run without it, and again with
# it where REDLOCKRUN_TEST_CI=1 (scripts/test: the sanitizer build's run), as on the CI runners where
# redlockrun runs most; a test that needs one or the other sets it itself.
if [ "${REDLOCKRUN_TEST_CI:-}" = 1 ]; then
    export CI=true
else
    unset CI
fi

# stop_processes PID...: kills them, continuing any that were stopped (SIGSTOP tests) first.
stop_processes() {
    local pid
    for pid in "$@"; do
        kill -CONT "$pid" 2>/dev/null
        kill -KILL "$pid" 2>/dev/null
    done
}

cleanup() {
    stop_processes "${BACKGROUND_PIDS[@]}" "${SERVER_PIDS[@]}"
    exec 2>/dev/null # the shell's own notices of the jobs it just killed
    wait
    rm -rf "$WORK"
}
trap cleanup EXIT

# The server's folder goes first on PATH, so that the suites' own redis-cli calls and the commands
# they run under a lock (sh -c "redis-cli ...") use that server's tools too.
if [ -n "${REDLOCKRUN_SERVER_BIN:-}" ]; then
    if ! [ -x "$REDLOCKRUN_SERVER_BIN/redis-server" ]; then
        echo "FATAL: REDLOCKRUN_SERVER_BIN=$REDLOCKRUN_SERVER_BIN has no redis-server" >&2
        exit 1
    fi
    export PATH="$REDLOCKRUN_SERVER_BIN:$PATH"
fi

for tool in redis-server redis-cli; do
    if ! command -v "$tool" >/dev/null; then
        echo "FATAL: $tool is not installed (the README's test command installs it)" >&2
        exit 1
    fi
done

# A process that exists and is not a zombie (an orphan's zombie may linger until init reaps it).
alive() {
    local state
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ "$state" != Z* ]]
}

# start_redis PREFIX [--config FILE] [--tls] [redis-server options...]
# Starts a server on a free port with a unix socket beside it, and sets PREFIX_PORT, PREFIX_SOCK,
# PREFIX_PID. Without persistence; its log is in $WORK/PREFIX.log. With --tls the port speaks TLS
# only (the options must name the certificates), while the unix socket stays in clear for rcli.
# --config FILE: the server reads FILE first (a sentinel needs one it can rewrite).
start_redis() {
    local prefix=$1
    shift
    local config=()
    if [ "${1:-}" = --config ]; then
        config=("$2")
        shift 2
    fi
    local port_option=--port
    if [ "${1:-}" = --tls ]; then
        port_option=--tls-port
        shift
        set -- --port 0 "$@"
    fi
    local attempt port sock pid
    sock="$WORK/$prefix.sock"
    for attempt in $(seq 1 10); do
        port=$((20000 + RANDOM % 40000))
        redis-server "${config[@]}" "$port_option" "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --unixsocket "$sock" --unixsocketperm 700 --dir "$WORK" \
            --logfile "$WORK/$prefix.log" "$@" </dev/null >/dev/null 2>&1 &
        pid=$!
        local tries
        for tries in $(seq 1 100); do
            if ! alive "$pid"; then
                break # did not start: the port was taken, probably
            fi
            # Asked through the unix socket, which only this server can have made: on a port that
            # another test's server already holds, that server would answer a TCP ping while this
            # one is still on its way to failing to bind. Redis binds the TCP port before it creates
            # the socket, so an answer here also means the port is this server's.
            if redis-cli -s "$sock" ping 2>/dev/null | grep -q -e PONG -e NOAUTH; then
                SERVER_PIDS+=("$pid")
                printf -v "${prefix}_PORT" '%s' "$port"
                printf -v "${prefix}_SOCK" '%s' "$sock"
                printf -v "${prefix}_PID" '%s' "$pid"
                return 0
            fi
            sleep 0.05
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    echo "FATAL: could not start redis-server $*; the end of its log:" >&2
    tail -n 3 "$WORK/$prefix.log" >&2
    exit 1
}

# restart_redis PREFIX [redis-server options...]
# Kills PREFIX's server with SIGKILL, as a crash would (it keeps no data), and starts a new one on
# the same port and unix socket, with the options given here; sets PREFIX_PID. Clients that were
# connected find their connections broken.
restart_redis() {
    local prefix=$1
    shift
    local pid_var="${prefix}_PID" port_var="${prefix}_PORT" sock_var="${prefix}_SOCK"
    local old_pid=${!pid_var} port=${!port_var} sock=${!sock_var}
    kill -KILL "$old_pid" 2>/dev/null
    wait "$old_pid" 2>/dev/null
    while alive "$old_pid"; do
        sleep 0.01
    done
    local attempt pid tries
    for attempt in $(seq 1 20); do
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --unixsocket "$sock" --unixsocketperm 700 --dir "$WORK" \
            --logfile "$WORK/$prefix.log" "$@" </dev/null >/dev/null 2>&1 &
        pid=$!
        for tries in $(seq 1 100); do
            if ! alive "$pid"; then
                break
            fi
            if redis-cli -s "$sock" ping 2>/dev/null | grep -q -e PONG -e NOAUTH; then
                SERVER_PIDS+=("$pid")
                printf -v "$pid_var" '%s' "$pid"
                return 0
            fi
            sleep 0.02
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        sleep 0.1
    done
    echo "FATAL: could not restart redis-server on port $port; the end of its log:" >&2
    tail -n 3 "$WORK/$prefix.log" >&2
    exit 1
}

# A loopback port nothing listens on.
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}

# The default server every test file uses.
start_redis REDIS
export REDLOCKRUN_URL="redis://127.0.0.1:$REDIS_PORT"
unset REDIS_URL REDISCLI_AUTH
# The user running the tests may have a config file of their own: it must not change what is tested.
export XDG_CONFIG_HOME="$WORK/no-config"

rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# Every key with its value and expiry, for checking that a refused run changed nothing.
database_snapshot() {
    rcli dbsize
    local key
    rcli --raw keys '*' | sort | while read -r key; do
        if [ "$(rcli type "$key")" = hash ]; then
            # DUMP of a hash in a hash table follows the table's order, which a mere read can
            # change while the table is rehashed: compare the fields in order instead.
            echo "$key hash $(rcli --no-raw hgetall "$key" | sed "s/^ *[0-9]*) //" | paste - - | sort | tr '\n' ' ')" \
                "$(expiry_ms "$key")"
        else
            echo "$key $(rcli --no-raw dump "$key") $(expiry_ms "$key")"
        fi
    done
}

# expiry_ms KEY: the server time (ms) at which KEY expires, -1 if it has none, -2 if it is missing:
# PEXPIRETIME's answer. Redis before 7.0 has no PEXPIRETIME; there the script reads TIME, PTTL and
# TIME again, and answers only from a try whose two TIMEs fall in the same millisecond: PTTL counted
# from that millisecond, so the answer is as exact as PEXPIRETIME's (a snapshot compares it).
# $EXPIRY_SCRIPT also serves a command run under a lock: redis-cli --eval "$EXPIRY_SCRIPT" KEY.
EXPIRY_SCRIPT="$WORK/expiry.lua"
cat >"$EXPIRY_SCRIPT" <<'EOF_LUA'
local exact = redis.pcall('PEXPIRETIME', KEYS[1])
if type(exact) == 'number' then
    return exact
end
for _ = 1, 100 do
    local before = redis.call('TIME')
    local ttl = redis.call('PTTL', KEYS[1])
    local after = redis.call('TIME')
    if ttl < 0 then
        return ttl
    end
    local ms = before[1] * 1000 + math.floor(before[2] / 1000)
    if ms == after[1] * 1000 + math.floor(after[2] / 1000) then
        return ms + ttl
    end
end
return redis.error_reply('no try read PTTL within one millisecond')
EOF_LUA
expiry_ms() { rcli --eval "$EXPIRY_SCRIPT" "$1"; }

# Server time in ms, the clock the lock is judged by.
server_ms() {
    local t
    t=($(rcli time))
    echo $((t[0] * 1000 + t[1] / 1000))
}

now_ms() { date +%s%3N; }

# read_number VAR FILE: sets VAR to the number (a time in ms, a pid) that a command wrote to FILE.
# A missing or empty FILE fails the test (status 1, so a caller can `|| return`): shell arithmetic
# reads nothing as 0, and a time computed from it would pass any "within N ms" check.
read_number() {
    local number_read # not `value`: a caller's VAR of that name would be this local
    number_read=$(cat "$2" 2>/dev/null)
    printf -v "$1" '%s' "$number_read"
    if ! [[ "$number_read" =~ ^[0-9]+$ ]]; then
        fail "no number in ${2##*/}: the command that should have written it did not"
        return 1
    fi
}

# run_rlr ARGS...: runs redlockrun; sets status, out, err, and elapsed_ms. It is killed after
# $RUN_RLR_LIMIT seconds (default 120): set it lower for what must not hang.
run_rlr() {
    local start
    start=$(now_ms)
    timeout -k 5 "${RUN_RLR_LIMIT:-120}" "$REDLOCKRUN" "$@" >"$WORK/out" 2>"$WORK/err"
    status=$?
    elapsed_ms=$(($(now_ms) - start))
    out=$(cat "$WORK/out")
    err=$(cat "$WORK/err")
}

# start_bg VAR ARGS...: runs redlockrun in the background; its pid goes to VAR, its stderr to
# $WORK/VAR.err. A non-interactive shell starts background jobs with SIGINT and SIGQUIT ignored;
# they are restored here, as for a command started from a terminal or a service manager.
start_bg() {
    local var=$1
    shift
    (
        trap - INT QUIT
        exec "$REDLOCKRUN" "$@"
    ) 2>"$WORK/$var.err" &
    printf -v "$var" '%s' "$!"
    BACKGROUND_PIDS+=("$!")
}

# wait_for DESCRIPTION COMMAND...: polls (up to 10 s) until COMMAND succeeds.
wait_for() {
    local what=$1
    shift
    local i
    for i in $(seq 1 200); do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.05
    done
    fail "timed out waiting for: $what"
    return 1
}

# The exit status of a background process (it must be a child of this shell).
exit_of() {
    wait "$1"
}

lock_held() { [ "$(rcli exists "$1")" = 1 ]; }

# blocked_clients_are N: Redis holds exactly N clients blocked (in BLPOP).
blocked_clients_are() {
    [ "$(rcli info clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" = "$1" ]
}

fail() {
    echo "    FAIL: $*" >&2
    TEST_FAILED=1
}

expect_status() {
    if [ "$status" != "$1" ]; then
        fail "expected exit status $1, got $status${2:+ ($2)}; stderr: $err"
    fi
}

expect_eq() { # ACTUAL EXPECTED WHAT
    if [ "$1" != "$2" ]; then
        fail "$3: expected '$2', got '$1'"
    fi
}

expect_contains() { # HAYSTACK NEEDLE WHAT
    if [[ "$1" != *"$2"* ]]; then
        fail "$3: '$2' not found in: $1"
    fi
}

expect_not_contains() { # HAYSTACK NEEDLE WHAT
    if [[ "$1" == *"$2"* ]]; then
        fail "$3: '$2' must not appear in: $1"
    fi
}

expect_lt() { # A B WHAT
    if ! [ "$1" -lt "$2" ]; then
        fail "$3: expected $1 < $2"
    fi
}

expect_ge() { # A B WHAT
    if ! [ "$1" -ge "$2" ]; then
        fail "$3: expected $1 >= $2"
    fi
}

# Runs every test_* function of the sourcing file, each in a subshell against a flushed server.
run_tests() {
    local failures=0 count=0 name
    for name in $(declare -F | awk '{print $3}' | grep '^test_'); do
        if [ -n "${ONLY:-}" ] && [ "$name" != "$ONLY" ]; then
            continue
        fi
        count=$((count + 1))
        rcli flushall >/dev/null
        if (
            TEST_FAILED=0
            BACKGROUND_PIDS=()
            WORK="$WORK/$name" # marker files never leak from one test into the next
            mkdir "$WORK"
            servers_before=${#SERVER_PIDS[@]}
            "$name"
            returned=$?
            stop_processes "${BACKGROUND_PIDS[@]}" "${SERVER_PIDS[@]:$servers_before}"
            # A test that stopped early (`... || return`) without saying why skipped its checks:
            # a failure, never an "ok".
            if [ "$returned" != 0 ] && [ "$TEST_FAILED" = 0 ]; then
                fail "$name returned $returned before its end without a failure saying why"
            fi
            exit "$TEST_FAILED"
        ); then
            echo "ok - $name"
        else
            echo "not ok - $name"
            failures=$((failures + 1))
        fi
    done
    if [ "$count" = 0 ]; then
        echo "no tests ran" >&2
        exit 1
    fi
    echo "$((count - failures))/$count passed"
    [ "$failures" = 0 ]
}
