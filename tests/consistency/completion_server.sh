# Sourced by the completion tests (bash and zsh): a real redis-server, on a unix socket only and
# behind a password, holding three locks, for -k and --list to offer their names.
#
#   start_completion_server WORK REDLOCKRUN   starts it and takes the locks; sets completion_url,
#                                             completion_password, completion_nowhere (a URL no
#                                             server answers), and REDLOCKRUN_URL to that one
#   pause_completion_server / resume_completion_server   SIGSTOP / SIGCONT: a server that does
#                                             not answer
#   stop_completion_server
#
# No config file is read (XDG_CONFIG_HOME is empty; REDLOCKRUN_URL is above the system's file).
# A missing redis-server is a failure, never a skip.

completion_server_pid=''

start_completion_server() {
    if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
        echo "not ok: redis-server and redis-cli are needed (the README's test command installs them)"
        exit 1
    fi
    completion_password=completion-secret
    completion_url="unix://$1/redis.sock"
    completion_nowhere="unix://$1/nowhere.sock"
    redis-server --port 0 --unixsocket "$1/redis.sock" --unixsocketperm 700 --save '' \
        --appendonly no --dir "$1" --logfile "$1/redis.log" \
        --requirepass "$completion_password" </dev/null >/dev/null 2>&1 &
    completion_server_pid=$!
    tries=0
    until REDISCLI_AUTH=$completion_password redis-cli -s "$1/redis.sock" ping 2>/dev/null |
        grep -q PONG; do
        tries=$((tries + 1))
        if [ "$tries" -gt 100 ]; then
            echo "not ok: redis-server did not start: $(cat "$1/redis.log" 2>/dev/null)"
            exit 1
        fi
        sleep 0.05
    done
    # Held for ten minutes after their commands end: no process keeps them.
    for key in deploy-prod backup-db 'deploy to staging'; do
        if ! REDISCLI_AUTH=$completion_password "$2" -u "$completion_url" --min-hold 10m \
            -k "$key" -- true; then
            echo "not ok: could not take the lock $key"
            exit 1
        fi
    done
    mkdir -p "$1/no-config"
    export XDG_CONFIG_HOME="$1/no-config"
    export REDLOCKRUN_URL="$completion_nowhere"
    unset REDISCLI_AUTH REDIS_URL
}

pause_completion_server() {
    kill -STOP "$completion_server_pid"
}

resume_completion_server() {
    kill -CONT "$completion_server_pid"
}

stop_completion_server() {
    if [ -n "$completion_server_pid" ]; then
        kill -CONT "$completion_server_pid" 2>/dev/null
        kill "$completion_server_pid" 2>/dev/null
        wait "$completion_server_pid" 2>/dev/null
        completion_server_pid=''
    fi
}
