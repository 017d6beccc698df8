# Sourced by the Sentinel suites after lib.sh: one master and two replicas watched by three
# sentinels, all on free loopback ports, with helpers to ask them who the master is, to force
# failovers and to check that the commands run under a lock never overlapped.
#
# A suite may set these before it calls start_sentinel_topology:
#   TOPOLOGY_TLS=1          every port speaks TLS only (TOPOLOGY_TLS_OPTIONS names the files);
#                           replication and the sentinels' own links use TLS too
#   DATA_OPTIONS=(...)      more redis-server options for the master and the replicas
#   SENTINEL_OPTIONS=(...)  more redis-server options for the sentinels
#   SENTINEL_CONFIG=TEXT    more lines for every sentinel's config file (auth-user, sentinel-pass...)
#   DATA_CLI=(...)          what redis-cli needs to be let in by a data node (--user, --pass)
#   SENTINEL_CLI=(...)      the same for a sentinel
# redis-cli always goes through the unix sockets, which stay in clear.

command -v redis-server >/dev/null || exit 1 # lib.sh has said why

MASTER_NAME=lockmaster
TOPOLOGY_TLS=${TOPOLOGY_TLS:-0}
SENTINEL_CONFIG=${SENTINEL_CONFIG:-}
for setting in TOPOLOGY_TLS_OPTIONS DATA_OPTIONS SENTINEL_OPTIONS DATA_CLI SENTINEL_CLI; do
    [ -v "$setting" ] || declare -a "$setting=()"
done
DATA_NODES=(1 2 3)
SENTINELS=(1 2 3)

# dcli N ARGS...: redis-cli on data node N. scli N ARGS...: on sentinel N, bounded in time (a
# test may have stopped it).
dcli() {
    local sock="DATA${1}_SOCK"
    shift
    timeout -k 1 5 redis-cli -s "${!sock}" --no-auth-warning "${DATA_CLI[@]}" "$@"
}
scli() {
    local sock="SENT${1}_SOCK"
    shift
    timeout -k 1 3 redis-cli -s "${!sock}" --no-auth-warning "${SENTINEL_CLI[@]}" "$@"
}
data_port() { local var="DATA${1}_PORT"; echo "${!var}"; }
data_pid() { local var="DATA${1}_PID"; echo "${!var}"; }
data_sock() { local var="DATA${1}_SOCK"; echo "${!var}"; }
sentinel_port() { local var="SENT${1}_PORT"; echo "${!var}"; }
sentinel_pid() { local var="SENT${1}_PID"; echo "${!var}"; }

# The port of the master as sentinel N (default: the first that answers) names it.
master_port() {
    local n port
    for n in "${@:-${SENTINELS[@]}}"; do
        port=$(scli "$n" sentinel get-master-addr-by-name "$MASTER_NAME" 2>/dev/null | sed -n 2p)
        if [ -n "$port" ]; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# The data node (1, 2 or 3) that listens on PORT.
node_of_port() {
    local n
    for n in "${DATA_NODES[@]}"; do
        if [ "$(data_port "$n")" = "$1" ]; then
            echo "$n"
            return 0
        fi
    done
    return 1
}

master_node() { node_of_port "$(master_port)"; }

# lib.sh's helpers (run_tests' flushall, lock_held, blocked_clients_are, database_snapshot...)
# talk to whichever node the sentinels name as the master.
rcli() {
    local node
    node=$(master_node) || { echo "no sentinel names a master" >&2; return 1; }
    dcli "$node" "$@"
}

# sentinel_url [HOST:PORT...]: the URL of the three sentinels, after the addresses given.
sentinel_url() {
    local scheme=redis-sentinel hosts=("$@") n
    [ "$TOPOLOGY_TLS" = 1 ] && scheme=rediss-sentinel
    for n in "${SENTINELS[@]}"; do
        hosts+=("127.0.0.1:$(sentinel_port "$n")")
    done
    local IFS=,
    echo "$scheme://${SENTINEL_URL_CREDENTIALS:-}${hosts[*]}#$MASTER_NAME"
}


# start_stopped_sentinel PREFIX: a sentinel of no master, stopped (SIGSTOP): it accepts connections
# and never answers. (Stopping one of the topology's sentinels for more than 2 s would put it in
# TILT mode, where it does nothing for 30 s, failovers included.)
start_stopped_sentinel() {
    : >"$WORK/$1.conf"
    start_redis "$1" --config "$WORK/$1.conf" --sentinel
    local pid="${1}_PID"
    kill -STOP "${!pid}"
}

# wait_until SECONDS DESCRIPTION COMMAND...: as wait_for, for what takes a failover's time.
wait_until() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    "$@" >/dev/null 2>&1 && return 0
    fail "timed out after ${seconds}s waiting for: $what"
    return 1
}

# field NAME: the value of NAME in redis-cli's listing of a map (name and value on lines of their own).
field() { paste - - | awk -F'\t' -v name="$1" '$1 == name { print $2 }'; }

# Every sentinel names the same master, sees no trouble and no failover, knows both replicas and
# the other two sentinels, and has seen each replica report itself a replica of that master, linked
# (a sentinel that last saw an old master still a master demotes it, and that ends every client's
# connection to it, a test's redis-cli included: it must have done so before a test begins); the
# master answers to its role and both replicas have acknowledged everything it wrote.
topology_settled() {
    local port n master
    port=$(master_port 1) || return 1
    for n in "${SENTINELS[@]}"; do
        [ "$(master_port "$n")" = "$port" ] || return 1
        local state
        state=$(scli "$n" sentinel master "$MASTER_NAME") || return 1
        [ "$(field flags <<<"$state")" = master ] || return 1
        [ "$(field num-other-sentinels <<<"$state")" = 2 ] || return 1
        [ "$(scli "$n" sentinel replicas "$MASTER_NAME" | paste - - | awk -F'\t' -v port="$port" '
            ($1 == "flags" && $2 == "slave") || ($1 == "role-reported" && $2 == "slave") ||
            ($1 == "master-port" && $2 == port) || ($1 == "master-link-status" && $2 == "ok")' |
            wc -l)" = 8 ] || return 1
    done
    master=$(node_of_port "$port") || return 1
    [ "$(dcli "$master" role | head -1)" = master ] || return 1
    [ "$(dcli "$master" info replication | tr -d '\r' | grep -c '^slave[0-9]*:.*state=online')" = 2 ] ||
        return 1
    [ "$(dcli "$master" wait 2 1000)" = 2 ]
}

# Starts the three data nodes and the three sentinels and waits until they have settled.
start_sentinel_topology() {
    local tls=() replication=()
    if [ "$TOPOLOGY_TLS" = 1 ]; then
        tls=(--tls "${TOPOLOGY_TLS_OPTIONS[@]}")
        replication=(--tls-replication yes)
    fi
    # A replica's sync must not wait for more replicas to come along.
    start_redis DATA1 "${tls[@]}" "${replication[@]}" --repl-diskless-sync-delay 0 "${DATA_OPTIONS[@]}"
    local n
    for n in 2 3; do
        start_redis "DATA$n" "${tls[@]}" "${replication[@]}" --repl-diskless-sync-delay 0 \
            "${DATA_OPTIONS[@]}" --replicaof 127.0.0.1 "$DATA1_PORT"
    done
    for n in "${SENTINELS[@]}"; do
        # down-after 1s and a short failover-timeout (also the time before a failed failover is
        # tried again, doubled) keep failovers within seconds.
        cat >"$WORK/sentinel$n.conf" <<EOF_CONF
sentinel monitor $MASTER_NAME 127.0.0.1 $DATA1_PORT 2
sentinel down-after-milliseconds $MASTER_NAME 1000
sentinel failover-timeout $MASTER_NAME 3000
sentinel parallel-syncs $MASTER_NAME 2
$SENTINEL_CONFIG
EOF_CONF
        start_redis "SENT$n" --config "$WORK/sentinel$n.conf" "${tls[@]}" --sentinel "${replication[@]}" \
            "${SENTINEL_OPTIONS[@]}"
    done
    wait_until 60 "the sentinels to agree and the replicas to be in sync" topology_settled
}

# before_each: a test starts on a settled topology with an empty master. A master demoted by a
# failover stays a master until a sentinel's next look at it (up to 10 s later); it is made a
# replica at once here, as the sentinels would do.
before_each() {
    local port n
    port=$(master_port) || { fail "no sentinel names a master"; return 1; }
    for n in "${DATA_NODES[@]}"; do
        if [ "$(data_port "$n")" != "$port" ] && alive "$(data_pid "$n")" &&
            [ "$(dcli "$n" role 2>/dev/null | head -1)" = master ]; then
            dcli "$n" replicaof 127.0.0.1 "$port" >/dev/null
        fi
    done
    wait_until 60 "the topology to settle" topology_settled || return 1
    rcli flushall >/dev/null
    [ "$(rcli wait 2 5000)" = 2 ] || fail "the replicas did not follow the flush"
}

# force_failover: SENTINEL FAILOVER, then waits until every sentinel names another master and that
# node has taken the role. The old master may still be on its way to becoming a replica. A failover
# that a sentinel spoils (one that has not seen the chosen replica since it was a master may turn it
# back into a replica, and the failover times out) is asked for again.
force_failover() {
    local old reply deadline=$((SECONDS + 60))
    old=$(master_port 1)
    while [ "$SECONDS" -lt "$deadline" ]; do
        reply=$(scli 1 sentinel failover "$MASTER_NAME")
        case $reply in
        OK | INPROG*) ;;
        *)
            echo "    (SENTINEL FAILOVER answered: $reply; asking again)" >&2
            sleep 1
            continue
            ;;
        esac
        local round_end=$((SECONDS + 10))
        while [ "$SECONDS" -lt "$round_end" ]; do
            master_moved_from "$old" >/dev/null 2>&1 && return 0
            sleep 0.1
        done
    done
    fail "no failover within 60s (the master is still at $old)"
    return 1
}

# master_moved_from PORT: every sentinel names a master other than PORT, and it is one.
master_moved_from() {
    local port n
    port=$(master_port 1) || return 1
    [ "$port" != "$1" ] || return 1
    for n in "${SENTINELS[@]}"; do
        [ "$(master_port "$n")" = "$port" ] || return 1
    done
    [ "$(dcli "$(node_of_port "$port")" role | head -1)" = master ]
}

# The port each data node with KEY has.
nodes_with_key() {
    local n
    for n in "${DATA_NODES[@]}"; do
        if [ "$(dcli "$n" exists "$1" 2>/dev/null)" = 1 ]; then
            data_port "$n"
        fi
    done
}

# A command to run under a lock that records, in the file LOG, a line "start MICROSECONDS ID" when
# it starts and "end MICROSECONDS ID" when it ends, also when SIGTERM stops it (the times come from
# bash itself, so that a signal is recorded when it arrives, not after a fork). It lasts SECONDS, or,
# given a path instead, until that file exists (at most 120 s): a test that checks something while
# the command runs, after steps of unknown length such as a failover, creates the file afterwards.
#   bash "$SECTION" LOG ID SECONDS|/FILE [STATUS]
SECTION="$WORK/section.sh"
cat >"$SECTION" <<'EOF_SECTION'
log=$1 id=$2
trap 'kill $! 2>/dev/null; echo "end ${EPOCHREALTIME/./} $id" >>"$log"; exit 143' TERM
echo "start ${EPOCHREALTIME/./} $id" >>"$log"
if [[ $3 == /* ]]; then
    (for ((i = 0; i < 1200; i++)); do [ -e "$3" ] && exit; sleep 0.1; done) &
else
    sleep "$3" &
fi
wait $!
echo "end ${EPOCHREALTIME/./} $id" >>"$log"
exit "${4:-0}"
EOF_SECTION

# sections_never_overlap LOG COUNT: LOG holds COUNT sections, each ended before the next started.
sections_never_overlap() {
    local verdict
    verdict=$(sort -n -k2,2 "$1" | awk -v count="$2" '
        $1 == "start" { if (holder != "") { print "section " $3 " started while " holder " ran"; bad = 1 }
                        holder = $3; starts++ }
        $1 == "end"   { if (holder != $3) { print "section " $3 " ended while " holder " was the one running"; bad = 1 }
                        holder = ""; ends++ }
        END { if (starts != count || ends != count) { print starts + 0 " sections started and " ends + 0 " ended, not " count; bad = 1 }
              exit bad }')
    if [ $? != 0 ]; then
        fail "the sections overlapped: $verdict; the log: $(tr '\n' ';' <"$1")"
        return 1
    fi
}
