#!/usr/bin/env bash
# How a hold (DESIGN §12) ends without letting a script go on unlocked: the owner's work stopped
# before the lock is let go, a loss told on the caller's stderr, --check asking Redis, --release
# bounded, -E 0, an owner that exits while --hold waits, and what holds that ended unseen leave.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/hold_lib.sh"


# A script that takes a hold, writes its handle, and runs a long command whose pid it writes too;
# started in a group of its own or in the test's. Sets script (its pid) and sleeper.
start_holding_script() { # KEY NAME [setsid] [extra hold options...]
    local key=$1 name=$2 launcher=()
    shift 2
    if [ "${1:-}" = setsid ]; then
        launcher=(setsid -w)
        shift
    fi
    RLR="$REDLOCKRUN" "${launcher[@]}" bash -c '
        h=$("$RLR" -k '"$key"' '"$*"' --hold) || exit 9
        eval "$h"
        echo "$REDLOCKRUN_HOLD" > "'"$WORK/$name.handle"'"
        sleep 60 &
        echo "$!" > "'"$WORK/$name.sleep"'"
        wait
        echo went-on
    ' >"$WORK/$name.out" 2>"$WORK/$name.err" &
    script=$!
    BACKGROUND_PIDS+=("$script")
    wait_for "$name: the script starts its command" test -s "$WORK/$name.sleep" || return 1
    read_number sleeper "$WORK/$name.sleep" || return 1
    BACKGROUND_PIDS+=("$sleeper")
}

# A run that waits for KEY and, once it holds it, writes whether PID was still alive then.
start_witness() { # KEY PID MARKER
    # A zombie is gone too: it waits only for init to reap it.
    start_bg witness -w 60s -k "$1" -- sh -c "case \$(ps -o stat= -p $2) in ''|Z*) echo gone ;; *) echo alive ;; esac > '$3'"
}

# A script in a group of its own (as cron starts one), with TRAP as its first line, that holds KEY
# with OPTIONS and runs a child that ignores SIGTERM. Sets script and deaf (the child's pid).
start_deaf_script() { # KEY NAME TRAP OPTIONS
    local key=$1 name=$2 trap_line=$3 options=$4
    RLR="$REDLOCKRUN" setsid -w bash -c "$trap_line"'
        h=$("$RLR" -k '"$key $options"' --hold) || exit 9
        eval "$h"
        sh -c "trap \"\" TERM; echo \$\$ > '"$WORK/$name.pid"'; while :; do sleep 0.1; done" &
        wait
    ' >/dev/null 2>&1 &
    script=$!
    BACKGROUND_PIDS+=("$script")
    wait_for "$name: the child that ignores SIGTERM runs" test -s "$WORK/$name.pid" || return 1
    read_number deaf "$WORK/$name.pid" || return 1
    BACKGROUND_PIDS+=("$deaf")
}

# The owner killed (TERM or KILL) while its command runs: the command is stopped before the lock
# is let go, so that the next holder never runs beside it. In a group of its own (cron, CI) and in
# its caller's group, where what the caller does next is spared.
test_the_owner_killed_stops_its_command_before_the_lock_is_let_go() {
    local signal group
    for signal in TERM KILL; do
        for group in own shared; do
            local key="killed-$signal-$group" name="$signal-$group" bystander=""
            if [ "$group" = own ]; then
                start_holding_script "$key" "$name" setsid || return
            else
                start_holding_script "$key" "$name" || return
                sleep 60 & # the caller's own process, in the caller's group, started later
                bystander=$!
                BACKGROUND_PIDS+=("$bystander")
            fi
            start_witness "$key" "$sleeper" "$WORK/$name.witness"
            wait_for "$name: the witness waits" blocked_clients_are 1 || return
            local owner
            owner=$(sed -n 's/^owner=//p' "$(cat "$WORK/$name.handle")")
            kill "-$signal" "$owner"
            exit_of "$witness"
            expect_eq "$?" 0 "$name: the witness ran"
            expect_eq "$(cat "$WORK/$name.witness" 2>/dev/null)" gone \
                "$name: the owner's command when the next holder started"
            if [ -n "$bystander" ]; then
                alive "$bystander" || fail "$name: a process of the caller's was stopped"
                kill "$bystander"
            fi
        done
    done
}

# A command that ignores SIGTERM is killed after --kill-after, and only then is the lock let go.
test_a_command_that_ignores_sigterm_is_killed_before_the_lock_is_let_go() {
    local key=stubborn
    start_deaf_script "$key" stubborn "" "--kill-after 1s" || return
    local stubborn=$deaf
    start_witness "$key" "$stubborn" "$WORK/stubborn.witness"
    wait_for "the witness waits" blocked_clients_are 1 || return
    kill -KILL "$script"
    exit_of "$witness"
    expect_eq "$(cat "$WORK/stubborn.witness" 2>/dev/null)" gone "the command when the lock was let go"
}

# A loss is told where the person reads the script's messages, with why, who broke it and the
# note; the script ends with 143 (SIGTERM) unless it traps TERM.
test_a_loss_is_told_on_the_scripts_stderr() {
    start_holding_script told told "-t 600ms" || return
    run_rlr -k told --break --note "stuck deploy"
    expect_status 0 "--break"
    wait "$script" 2>/dev/null
    status=$?
    err=$(cat "$WORK/told.err")
    expect_status 143 "the script, stopped by SIGTERM"
    expect_contains "$err" "redlockrun: lost the lock on told:" "the loss on the script's stderr"
    expect_contains "$err" "broken by" "who broke it"
    expect_contains "$err" "stuck deploy" "the break's note"
    expect_not_contains "$(cat "$WORK/told.out")" went-on "the script went on"
    # With a trap, the status the docs name.
    RLR="$REDLOCKRUN" bash -c '
        trap "exit 76" TERM
        h=$("$RLR" -k trapped -t 600ms --hold) || exit 9
        eval "$h"
        touch "'"$WORK/trapped.ready"'"
        while :; do sleep 0.1; done
    ' >/dev/null 2>"$WORK/trapped.err" &
    local trapped=$!
    BACKGROUND_PIDS+=("$trapped")
    wait_for "the trapping script holds" test -e "$WORK/trapped.ready" || return
    rcli del trapped >/dev/null
    wait "$trapped"
    expect_eq "$?" 76 "a script that traps TERM ends with 76"
}

# The captured $(...) pipe is never the keeper's stderr: with 2>&1 inside, $(...) still returns.
test_the_keeper_never_holds_the_captured_pipe() {
    local assignments
    assignments=$(timeout 20 "$REDLOCKRUN" -k captured --owner none --max-hold 1m --hold 2>&1)
    expect_eq "$?" 0 "\$(... 2>&1) returned"
    eval "$assignments"
    local keeper
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    expect_eq "$(readlink "/proc/$keeper/fd/2")" /dev/null "the keeper's stderr"
    expect_eq "$(readlink "/proc/$keeper/cwd")" / "the keeper's working folder"
    run_rlr --release
    expect_status 0 "--release"
}

# An interactive shell as owner ignores SIGTERM: on a loss its foreground job is stopped, with a
# warning on the terminal, and the shell itself is spared.
test_an_interactive_owner_loses_its_foreground_job_not_the_shell() {
    local key=interactive-loss
    RLR="$REDLOCKRUN" /usr/bin/python3 - "$key" "$WORK/job.pid" "$REDIS_PORT" >"$WORK/session" 2>&1 <<'PYTHON'
import os, pty, select, subprocess, sys, time
key, pid_file, port = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def send(text):
    os.write(fd, text.encode() + b"\n")
seen = b""
def read_until(marker, limit=20):
    global seen
    end = time.time() + limit
    while marker.encode() not in seen and time.time() < end:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return marker.encode() in seen
send(f'h=$("$RLR" -k {key} -t 600ms --hold) && eval "$h"; echo "he""ld=$?"')
read_until("held=")
send(f"sh -c 'echo $$ > {pid_file}; exec sleep 30'; echo \"after\"\"-job=$?\"")
end = time.time() + 20
while not os.path.exists(pid_file) or not open(pid_file).read().strip():
    if time.time() > end:
        break
    time.sleep(0.05)
subprocess.run(["redis-cli", "-p", port, "del", key], stdout=subprocess.DEVNULL)
read_until("after-job=")
send('echo "sh""ell=alive"')
read_until("shell=alive")
send('"$RLR" --release; echo "rel""ease=$?"')
read_until("release=")
send("exit")
os.waitpid(pid, 0)
print(seen.decode(errors="replace"))
PYTHON
    local session
    session=$(cat "$WORK/session")
    expect_contains "$session" "held=0" "the shell took the hold"
    expect_contains "$session" "after-job=143" "the foreground job was stopped with SIGTERM"
    expect_contains "$session" "stopping the foreground job of the shell" "the warning on the terminal"
    expect_contains "$session" "lost the lock on $key" "the loss on the terminal"
    expect_contains "$session" "shell=alive" "the shell was spared"
    expect_contains "$session" "release=76" "--release reports the loss"
}

# A script at a terminal that ignores SIGTERM is no interactive shell (it has no job control): on a
# loss it is killed after --kill-after, not spared.
test_a_script_at_a_terminal_that_ignores_sigterm_is_killed() {
    RLR="$REDLOCKRUN" /usr/bin/python3 - "$WORK/ready" "$REDIS_PORT" >"$WORK/session" 2>&1 <<'PYTHON'
import os, pty, select, subprocess, sys, time
ready, port = sys.argv[1], sys.argv[2]
script = f"""trap '' TERM
h=$("$RLR" -k deaf -t 600ms --kill-after 1s --hold) || exit 9
eval "$h"
touch {ready}
while :; do sleep 0.1; done"""
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "-c", script])
end = time.time() + 20
while not os.path.exists(ready) and time.time() < end:
    time.sleep(0.05)
subprocess.run(["redis-cli", "-p", port, "del", "deaf"], stdout=subprocess.DEVNULL)
seen = b""
end = time.time() + 20
while time.time() < end:
    if select.select([fd], [], [], 0.2)[0]:
        try:
            seen += os.read(fd, 4096)
        except OSError:
            pass  # the terminal was hung up: the script and the keeper are gone
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print(seen.decode(errors="replace"))
        print(f"signal={os.WTERMSIG(status) if os.WIFSIGNALED(status) else 'none'}")
        sys.exit(0)
    time.sleep(0.05)
print(seen.decode(errors="replace"))
print("still running")
os.kill(pid, 9)
PYTHON
    local session
    session=$(cat "$WORK/session")
    expect_contains "$session" "signal=9" "the script that ignores SIGTERM, killed with SIGKILL"
    expect_not_contains "$session" "still running" "the script ran on without the lock"
    expect_not_contains "$session" "shell itself is spared" "it was taken for an interactive shell"
}

# A --release from the owner's trap while its work is being stopped is answered at once, but the
# lock is let go only once that work has stopped: a child that ignores SIGTERM is killed first.
test_a_release_during_the_stop_waits_for_the_work() {
    start_deaf_script trapped-stop deaf \
        'trap "\"\$RLR\" --release; echo release=\$? > '"$WORK/trap.status"'; exit 76" TERM' \
        "--max-hold 1s --kill-after 1s" || return
    start_witness trapped-stop "$deaf" "$WORK/deaf.witness"
    exit_of "$witness"
    expect_eq "$(cat "$WORK/deaf.witness" 2>/dev/null)" gone "the deaf child when the lock was let go"
    wait "$script"
    expect_eq "$?" 76 "the script, through its trap"
    expect_eq "$(cat "$WORK/trap.status" 2>/dev/null)" release=76 "the trap's --release"
}

# --check asks Redis at that moment: a deleted key, a lock taken by another run, a server that
# cannot be asked are never 0, long before the next renewal.
test_check_asks_redis() {
    local assignments
    assignments=$("$REDLOCKRUN" -k asked -t 60s --owner none --max-hold 5m --hold) || fail "--hold"
    eval "$assignments"
    run_rlr --check
    expect_status 0 "--check while held"
    rcli del asked >/dev/null
    run_rlr --check
    expect_status 76 "--check right after the key was deleted (renewal due in 20s)"
    expect_contains "$err" "the hold on asked was lost" "its message"
    run_rlr --release
    expect_status 76 "--release of the lost hold"

    assignments=$("$REDLOCKRUN" -k taken-over -t 60s --on-lost ignore --owner none --max-hold 5m --hold) ||
        fail "--hold"
    eval "$assignments"
    rcli del taken-over >/dev/null
    run_rlr -k taken-over -- true
    expect_status 0 "another run takes the lock"
    run_rlr --check
    expect_status 76 "--check after another run took the lock"
    run_rlr --release

    assignments=$("$REDLOCKRUN" -k norenew -t 60s --no-renew --owner none --max-hold 5m --hold) ||
        fail "--hold --no-renew"
    eval "$assignments"
    run_rlr --check
    expect_status 0 "--check of a --no-renew hold while held"
    local ttl_before
    ttl_before=$(rcli pttl norenew)
    rcli del norenew >/dev/null
    run_rlr --check
    expect_status 76 "--check of a --no-renew hold after the key was deleted"
    run_rlr --release
    [ "$ttl_before" -le 60000 ] || fail "--check renewed a --no-renew hold: pttl $ttl_before"

    assignments=$("$REDLOCKRUN" -k unasked -t 60s --connect-timeout 1s --owner none --max-hold 5m --hold) ||
        fail "--hold"
    eval "$assignments"
    kill -STOP "$REDIS_PID"
    RUN_RLR_LIMIT=30 run_rlr --check
    kill -CONT "$REDIS_PID"
    [ "$status" != 0 ] || fail "--check said 0 while Redis could not be asked"
    expect_status 69 "--check while Redis cannot be asked"
    run_rlr --release
}

# --release of a stopped keeper gives up on it within 10 s, ends it, and releases the lock in Redis
# itself (0 if Redis still held it for the hold, 76 if it was lost); a --release whose caller gave
# up is still reported truthfully later.
test_release_of_a_stopped_keeper_is_bounded() {
    local assignments keeper
    assignments=$("$REDLOCKRUN" -k stopped -t 60s --owner none --max-hold 5m --hold) || fail "--hold"
    eval "$assignments"
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    kill -STOP "$keeper"
    RUN_RLR_LIMIT=30 run_rlr --release
    expect_status 0 "--release of a stopped keeper whose lock Redis still holds"
    expect_lt "$elapsed_ms" 15000 "--release gave up on the keeper within about 10 s"
    expect_contains "$err" "released stopped in its keeper's stead" "its message"
    expect_contains "$err" "did not answer within 10s" "its message says why"
    wait_for "the stopped keeper is ended" eval "! alive $keeper"
    lock_held stopped && fail "the lock is still held after the --release"

    assignments=$("$REDLOCKRUN" -k stopped-lost -t 60s --owner none --max-hold 5m --hold) || fail "--hold"
    eval "$assignments"
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    kill -STOP "$keeper"
    rcli del stopped-lost >/dev/null
    run_rlr -k stopped-lost -- true
    RUN_RLR_LIMIT=30 run_rlr --release
    expect_status 76 "--release of a stopped keeper whose lock was lost meanwhile"
    expect_contains "$err" "was lost while its keeper did not answer" "its message"
    wait_for "that keeper is ended too" eval "! alive $keeper"

    # The answer comes from the Redis the --release is told of: one it cannot reach is 69.
    assignments=$("$REDLOCKRUN" -k stopped-unreachable -t 60s --owner none --max-hold 5m --hold) ||
        fail "--hold"
    eval "$assignments"
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    kill -STOP "$keeper"
    RUN_RLR_LIMIT=30 run_rlr -u "redis://127.0.0.1:1" --release
    expect_status 69 "--release of a stopped keeper, Redis out of reach"
    wait_for "that keeper is ended too" eval "! alive $keeper"

    assignments=$("$REDLOCKRUN" -k gave-up -t 60s --owner none --max-hold 5m --hold) || fail "--hold"
    eval "$assignments"
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    kill -STOP "$keeper"
    timeout -s KILL 1 "$REDLOCKRUN" --release
    kill -CONT "$keeper"
    wait_for "the keeper serves the release it was sent" eval "! lock_held gave-up"
    wait_for "the keeper exits" eval "! alive $keeper"
    run_rlr --check
    expect_status 76 "--check after a release whose caller gave up"
    expect_contains "$err" "released" "--check says it was released"
    run_rlr --release
    expect_status 0 "a later --release reports the release"
}

# A --release killed while the keeper's answer is on its way (its socket still open while its
# memory is torn down) never reads it: the keeper's record, written before the answer, says the
# hold was released, for a later --check or --release.
test_an_answer_never_read_leaves_the_ending_for_later() {
    local assignments keeper
    assignments=$("$REDLOCKRUN" -k unread -t 60s --owner none --max-hold 5m --hold) || fail "--hold"
    eval "$assignments"
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    # Asks as --release does, waits for the answer to arrive, and closes without reading it.
    /usr/bin/python3 - "$REDLOCKRUN_HOLD.sock" <<'PYTHON' || fail "no answer arrived"
import select, socket, sys
client = socket.socket(socket.AF_UNIX)
client.connect(sys.argv[1])
client.sendall(b"release\n")
readable, _, _ = select.select([client], [], [], 30)
sys.exit(0 if readable else 1)
PYTHON
    wait_for "the keeper exits" eval "! alive $keeper"
    lock_held unread && fail "the lock is still held after the release"
    run_rlr --check
    expect_status 76 "--check after a release whose answer was never read"
    expect_contains "$err" "released" "--check says it was released"
    run_rlr -v --release
    expect_status 0 "a later --release reports the release"
    expect_contains "$err" "unread was released" "its message (-v)"
    run_rlr --check
    expect_status 64 "--check once that --release has removed the record"
}

# A --hold that cannot write its handle (stdout full) releases the lock and leaves no files.
test_a_handle_that_cannot_be_written_releases_the_hold() {
    local new_files
    ls "$HOLDS" 2>/dev/null | sort >"$WORK/holds.before"
    "$REDLOCKRUN" -k unwritten -t 60s --owner none --max-hold 1m --hold >/dev/full 2>"$WORK/full.err"
    expect_eq "$?" 71 "--hold with its stdout full"
    expect_contains "$(cat "$WORK/full.err")" \
        "cannot write the hold's handle: No space left on device; released unwritten" "its message"
    lock_held unwritten && fail "the lock is still held"
    # Its keeper may clean what earlier tests left: only a file that was not there before counts.
    new_files=$(ls "$HOLDS" 2>/dev/null | sort | comm -13 "$WORK/holds.before" -)
    expect_eq "$new_files" "" "files the refused --hold left in the holds' folder"
}

# -E 0 means "skip quietly": the script stops with status 0 instead of going on unlocked.
test_conflict_exit_code_0_stops_the_script() {
    start_bg holder -k skipped -- sleep 30
    wait_for "the holder holds" lock_held skipped || return
    local shell
    for shell in bash dash; do
        RLR="$REDLOCKRUN" "$shell" -c '
            h=$("$RLR" -k skipped -n -E 0 --hold) || exit 9
            eval "$h"
            echo went-on
        ' >"$WORK/skip.out" 2>&1
        status=$?
        expect_status 0 "$shell: the script with -E 0 on a busy lock"
        expect_not_contains "$(cat "$WORK/skip.out")" went-on "$shell: the script went on"
        RLR="$REDLOCKRUN" "$shell" -c '
            eval "$("$RLR" -k skipped -n -E 0 --hold)" || exit 9
            echo went-on
        ' >"$WORK/skip.out" 2>&1
        status=$?
        expect_status 0 "$shell: the one-line form"
        expect_not_contains "$(cat "$WORK/skip.out")" went-on "$shell: the one-line form went on"
    done
    run_rlr -k skipped -n -E 0 --hold --json
    expect_status 64 "--json with -E 0"
}

# An owner that exits while --hold waits ends the wait: nothing is queued, nothing taken later.
test_an_owner_that_exits_while_hold_waits_ends_the_wait() {
    start_bg holder -k busy -- sleep 60
    wait_for "the holder holds" lock_held busy || return
    RLR="$REDLOCKRUN" bash -c '
        h=$("$RLR" -k busy -w 60s --hold 2>"'"$WORK/waiting.err"'")
        echo "status=$?" > "'"$WORK/waiting.status"'"
    ' &
    local script=$!
    BACKGROUND_PIDS+=("$script")
    wait_for "--hold waits" blocked_clients_are 1 || return
    local waiting
    waiting=$(pgrep -f -n -- "-k busy -w 60s --hold")
    [ -n "$waiting" ] || fail "no waiting --hold found"
    kill -KILL "$script"
    wait_for "the waiting --hold gives up" eval "! alive $waiting" || return
    expect_contains "$(cat "$WORK/waiting.err")" "its owner, pid $script, exited while waiting for busy" \
        "its message"
    wait_for "nothing is left blocked" blocked_clients_are 0
    expect_eq "$(rcli zcard '{busy}:redlockrun:queue')" 0 "the queue"
    kill "$holder"
    wait_for "the holder's lock is let go" eval "! lock_held busy"
    if lock_held busy; then fail "the dead owner's --hold took the lock"; fi
}

test_max_hold_must_outlast_the_grant() {
    local before
    before=$(database_snapshot)
    run_rlr -k short --owner none --max-hold 1ms --hold
    expect_status 64 "--max-hold 1ms"
    expect_contains "$err" "--max-hold must be 1s or more" "its message"
    run_rlr -k short --owner none --max-hold 999ms --hold
    expect_status 64 "--max-hold 999ms"
    expect_eq "$(database_snapshot)" "$before" "nothing changed in Redis"
    run_rlr -k short --owner none --max-hold 1s --hold
    expect_status 0 "--max-hold 1s"
}

# --owner PID of another process: when its hold ends by --max-hold or --break, --release says
# so (76) with the reason, however the owner ended.
test_an_owner_not_the_caller_keeps_the_ending_for_release() {
    local how
    for how in max-hold break; do
        sleep 60 &
        local owner=$!
        BACKGROUND_PIDS+=("$owner")
        local bound=(-t 600ms)
        [ "$how" = max-hold ] && bound=(--max-hold 1s)
        local assignments
        assignments=$("$REDLOCKRUN" -k "other-$how" "${bound[@]}" --owner "$owner" --hold) ||
            fail "$how: --hold"
        eval "$assignments"
        [ "$how" = break ] && run_rlr -k "other-$how" --break --note "by hand"
        wait_for "$how: the owner is stopped" eval "! alive $owner"
        wait_for "$how: the lock is let go" eval "! lock_held other-$how"
        run_rlr --release
        expect_status 76 "$how: --release"
        if [ "$how" = max-hold ]; then
            expect_contains "$err" "--max-hold of 1s ran out" "$how: the reason"
        else
            expect_contains "$err" "by hand" "$how: the reason"
        fi
    done
}

# REDISCLI_AUTH is read, then blotted: the keeper's /proc/PID/environ does not show it.
test_the_keeper_forgets_the_password_in_its_environment() {
    rcli config set requirepass env-s3cret >/dev/null
    local assignments
    assignments=$(REDISCLI_AUTH=env-s3cret "$REDLOCKRUN" -k envpw --owner none --max-hold 1m --hold) ||
        fail "--hold with REDISCLI_AUTH"
    eval "$assignments"
    local keeper
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    expect_not_contains "$(tr '\0' '\n' <"/proc/$keeper/environ")" env-s3cret "the keeper's environment"
    REDISCLI_AUTH=env-s3cret run_rlr --release
    expect_status 0 "--release"
    redis-cli -p "$REDIS_PORT" -a env-s3cret --no-auth-warning config set requirepass '' >/dev/null
}

# What holds that ended unseen leave is cleaned by the next --hold, --check or --release.
test_leftovers_are_cleaned() {
    # A waiting --hold killed with SIGKILL leaves its socket.
    start_bg holder -k left -- sleep 60
    wait_for "the holder holds" lock_held left || return
    timeout -s KILL 1 "$REDLOCKRUN" -k left -w 30s --owner none --max-hold 1m --hold >/dev/null
    local sockets
    sockets=$(ls "$HOLDS" | grep -c '\.sock$')
    expect_eq "$sockets" 1 "the killed --hold's socket, before"
    # A --hold binds its socket and then listens on it: one seen in between refuses connections
    # and is live. Only a socket older than 10 s is a leftover: this one is made older.
    touch -m -d '1 minute ago' "$HOLDS"/hold.*.sock
    local young="$HOLDS/hold.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock"
    /usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$young"
    # A keeper killed with SIGKILL leaves its record and socket.
    local assignments killed_handle
    assignments=$("$REDLOCKRUN" -k gone-keeper -t 1s --owner none --max-hold 1m --hold) || fail "--hold"
    eval "$assignments"
    killed_handle=$REDLOCKRUN_HOLD
    local killed_keeper
    killed_keeper=$(keeper_of "$killed_handle")
    kill -KILL "$killed_keeper"
    wait_for "the keeper is gone" eval "! alive $killed_keeper" || return
    # A record that ended two days ago, whose keeper is long gone.
    local old="$HOLDS/hold.0123456789abcdef0123456789abcdef"
    printf 'key=old\nfence=1\nowner=0\nowner_start=0\nkeeper=999999999\nkeeper_start=1\ntaken_ms=1\nended=ended\nended_ms=%s\nwhy=old\n' \
        "$(($(now_ms) - 2 * 86400 * 1000))" >"$old"
    chmod 600 "$old"
    # The new hold's keeper cleans, once --hold has returned.
    assignments=$("$REDLOCKRUN" -k fresh --owner none --max-hold 1m --hold) || fail "a fresh --hold"
    eval "$assignments"
    wait_for "the record that ended two days ago is removed" eval "! test -e $old"
    wait_for "the killed keeper's socket is removed" eval "! test -e $killed_handle.sock"
    expect_eq "$(sed -n 's/^ended=//p' "$killed_handle")" lost "the killed keeper's record"
    wait_for "the killed --hold's socket is removed" eval "[ \$(ls $HOLDS | grep -c '\.sock\$') = 2 ]"
    expect_eq "$(ls "$HOLDS" | grep -c '\.sock$')" 2 "sockets left: the fresh hold's and the young one"
    [ -e "$young" ] || fail "a socket just bound, not yet listened on, was taken for a leftover"
    rm -f "$young"
    run_rlr --release "$killed_handle"
    expect_status 76 "--release of the killed keeper's hold"
    expect_contains "$err" "keeper" "it says the keeper was gone"
    # --check and --release clean too, after their answer.
    local another
    another="$HOLDS/hold.fedcba9876543210fedcba9876543210"
    printf 'key=older\nfence=1\nowner=0\nowner_start=0\nkeeper=999999999\nkeeper_start=1\ntaken_ms=1\nended=\nended_ms=0\nwhy=\n' >"$another"
    chmod 600 "$another"
    run_rlr --check
    expect_status 0 "--check of the fresh hold"
    expect_eq "$(sed -n 's/^ended=//p' "$another")" lost "a record whose keeper is gone, after a --check"
    run_rlr --release
    expect_status 0 "--release of the fresh hold"
}

run_tests
