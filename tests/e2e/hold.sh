#!/usr/bin/env bash
# --hold, --release, --check (DESIGN §12): a lock held by a detached keeper for a script section or
# across CI steps; its owner, its bound, and what --release and --check report.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/hold_lib.sh"

# Runs SCRIPT with SHELL (sh -c), REDLOCKRUN set; its stdout and stderr go to $WORK/script.out.
run_script() {
    local shell=$1 script=$2
    RLR="$REDLOCKRUN" timeout -k 5 60 "$shell" -c "$script" >"$WORK/script.out" 2>&1
    status=$?
    out=$(cat "$WORK/script.out")
    err=$out
}

test_a_script_section_holds_the_lock_and_hands_it_on() {
    start_bg waiter -w 30s -k section -- sh -c "echo \$REDLOCKRUN_FENCE > '$WORK/waiter-fence'"
    run_script bash '
        eval "$("$RLR" -k section --hold)" || exit 9
        echo "pid=$$ fence=$REDLOCKRUN_FENCE"
        "$RLR" -k section --status
        "$RLR" -k section -n true; echo "run=$?"
        "$RLR" --check; echo "check=$?"
        "$RLR" --release; echo "release=$?"
    '
    expect_status 0 "the script"
    local pid
    pid=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' <<<"$out")
    expect_contains "$out" "section: held by $(hostname) pid $pid (a hold) since" \
        "--status names the script and marks the hold"
    expect_contains "$out" "run=75" "a run cannot take a held lock"
    expect_contains "$out" "check=0" "--check while held"
    expect_contains "$out" "release=0" "--release of a kept hold"
    local fence
    fence=$(sed -n 's/.*fence=\([0-9]*\)$/\1/p' <<<"$out")
    [ -n "$fence" ] || fail "no REDLOCKRUN_FENCE in the script: $out"
    # The waiter queued before the hold was taken? No: it may have taken the lock first. Either
    # way it runs once the lock is free, with a fence above the hold's if it came after.
    exit_of "$waiter"
    expect_eq "$?" 0 "the waiter ran"
    local waiter_fence
    read_number waiter_fence "$WORK/waiter-fence" || return
    [ "$waiter_fence" != "$fence" ] || fail "the waiter was given the hold's fence"
    lock_held section && fail "the lock is still held after the release and the waiter"
    [ -z "$(ls -A "$HOLDS")" ] || fail "the hold left files behind: $(ls "$HOLDS")"
}

test_a_release_wakes_a_waiting_run() {
    eval "$("$REDLOCKRUN" -k wake -t 60s --owner none --max-hold 1m --hold)"
    start_bg waiter -w 30s -k wake -- touch "$WORK/ran"
    wait_for "the waiter blocks" blocked_clients_are 1 || return
    run_rlr --release
    expect_status 0 "--release"
    exit_of "$waiter"
    expect_eq "$?" 0 "the waiter got the lock"
    [ -e "$WORK/ran" ] || fail "the waiter's command did not run"
}

test_command_substitution_returns_while_the_keeper_holds() {
    # With the caller's pipe held open by the keeper, $(...) would never return: timeout says so.
    local assignments
    assignments=$(timeout 20 "$REDLOCKRUN" -k subst --owner none --max-hold 1m --hold)
    status=$?
    expect_status 0 "\$(redlockrun --hold) returned"
    expect_contains "$assignments" "export REDLOCKRUN_KEY='subst'" "assignments"
    expect_contains "$assignments" "export REDLOCKRUN_HOLD='$HOLDS/hold." "assignments"
    lock_held subst || fail "the lock is not held after --hold returned"
    eval "$assignments"
    expect_eq "$REDLOCKRUN_FENCE" "$(rcli hget '{subst}:redlockrun:owner' fence)" "the fence"
    # Neither the keeper nor anything of the caller's: only /dev/null on 0-2.
    local pid fds
    pid=$(keeper_of "$REDLOCKRUN_HOLD")
    fds=$(for fd in 0 1 2; do readlink "/proc/$pid/fd/$fd"; done | sort -u)
    expect_eq "$fds" /dev/null "the keeper's stdio"
    expect_eq "$(ps -o sid= -p "$pid" | tr -d ' ')" "$pid" "the keeper leads its own session"
    run_rlr -k subst --status --json
    expect_eq "$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["holders"][0]["hold"])' <<<"$out")" \
        True "--status --json marks a hold"
    run_rlr --release
    expect_status 0 "--release"
}

# The owner is the script in every common form: the lock is held while the script runs, by its
# pid, and let go when it exits without a --release. KEY in HOLD_COMMAND stands for the key.
check_owner_form() { # SHELL HOLD_COMMAND WHAT
    local shell=$1 hold=$2 what=$3 key="form-$RANDOM"
    run_script "$shell" "
        eval \"\$(${hold//KEY/$key})\" || exit 9
        echo \"pid=\$\$\"
        \"\$RLR\" -k $key --status
    "
    expect_status 75 "$what: --status, the script's last command"
    local pid
    pid=$(sed -n 's/^pid=//p' <<<"$out")
    expect_contains "$out" "$key: held by $(hostname) pid $pid" "$what: held by the script"
    wait_for "$what: the lock is let go when the script exits" eval "! lock_held $key"
}

test_the_owner_is_the_script_in_bash_and_dash() {
    check_owner_form bash '"$RLR" -k KEY --hold' "bash"
    check_owner_form bash '"$RLR" -k KEY --hold 2>/dev/null' "bash, stderr redirected in \$(...)"
    check_owner_form dash '"$RLR" -k KEY --hold' "dash"
    check_owner_form dash '"$RLR" -k KEY --hold 2>/dev/null' "dash, stderr redirected in \$(...)"
    check_owner_form sh '"$RLR" -k KEY --hold </dev/null' "sh -c, as cron runs a line"
}

# A pipe inside the $(...): redlockrun's output reaches the script through a filter that is no
# ancestor of redlockrun, and the $(...)'s subshell, its parent, exits at once.
test_the_owner_is_the_script_with_a_pipe_in_the_substitution() {
    local shell
    for shell in bash dash; do
        check_owner_form "$shell" '"$RLR" -k KEY --hold | tee /dev/null' "$shell, | tee"
        check_owner_form "$shell" '"$RLR" -k KEY --hold | cat' "$shell, | cat"
        check_owner_form "$shell" '"$RLR" -k KEY --hold 2>&1 | grep export' "$shell, 2>&1 | grep"
        check_owner_form "$shell" '"$RLR" -k KEY --hold | cat | tee /dev/null' "$shell, | cat | tee"
    done
}

# Output that goes down a pipe no caller reads: no process can be told to be the script, and a
# hold whose owner is a guess could end a moment later. Refused before Redis is asked; --owner
# names the owner then.
test_a_hold_whose_output_no_caller_reads_is_refused() {
    local before shell
    before=$(database_snapshot)
    for shell in bash dash; do
        run_script "$shell" '
            { "$RLR" -k unread --hold; echo "hold=$?" >&2; } | cat >/dev/null
            { "$RLR" -k unread --hold; echo "piped=$?" >&2; } | tee /dev/null | cat >/dev/null
            x=$({ "$RLR" -k unread --hold; echo "inner=$?" >&2; } | cat >/dev/null)
            echo "lock=$(redis-cli -p '"$REDIS_PORT"' exists unread)"
        '
        expect_contains "$out" "hold=64" "$shell: a hold whose output goes to | cat >/dev/null"
        expect_contains "$out" "piped=64" "$shell: through two filters"
        expect_contains "$out" "inner=64" "$shell: inside a \$(...) whose shell reads another pipe"
        expect_contains "$out" "lock=0" "$shell: the lock is not held meanwhile"
        expect_contains "$out" "cannot tell whose hold it is" "$shell: the message"
        expect_contains "$out" "--owner PID (e.g. --owner \$\$)" "$shell: the message says what to do"
        expect_eq "$(grep -c '^redlockrun: cannot tell whose hold it is: .*--owner PID' <<<"$out")" \
            3 "$shell: a line for each refusal, saying what to do"
    done
    expect_eq "$(database_snapshot)" "$before" "nothing changed in Redis"
    [ -z "$(ls -A "$HOLDS" 2>/dev/null)" ] || fail "a refused hold left files: $(ls "$HOLDS")"
}

# --owner PID of the caller's own process: the way to a hold whose output goes elsewhere.
test_owner_pid_of_the_callers_own_process_owns_the_hold() {
    run_script bash '
        "$RLR" -k own-pid --owner $$ --hold | cat >"'"$WORK/assignments"'" || exit 9
        . "'"$WORK/assignments"'"
        echo "pid=$$"
        "$RLR" -k own-pid --status
        "$RLR" --check; echo "check=$?"
    '
    expect_status 0 "the script"
    local pid
    pid=$(sed -n 's/^pid=//p' <<<"$out")
    expect_contains "$out" "own-pid: held by $(hostname) pid $pid (a hold)" "held by the script"
    expect_contains "$out" "check=0" "--check"
    wait_for "the lock is let go when the script exits" eval "! lock_held own-pid"

    # A process of the caller's other than its parent: the hold ends when that one exits.
    sleep 30 &
    local sleeper=$!
    BACKGROUND_PIDS+=("$sleeper")
    eval "$("$REDLOCKRUN" -k own-sleeper --owner "$sleeper" --hold)" || {
        fail "--owner of the caller's sleep"
        return
    }
    run_rlr -k own-sleeper --status
    expect_contains "$out" "own-sleeper: held by $(hostname) pid $sleeper (a hold)" "held by the sleep"
    kill "$sleeper"
    wait_for "the lock is let go when the sleep exits" eval "! lock_held own-sleeper"
}

# The keeper signals its owner on a loss: even root may not name another user's process.
test_owner_pid_of_another_users_process_is_refused() {
    local other
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 30 &
        other=$!
        BACKGROUND_PIDS+=("$other")
        wait_for "the sleep runs as nobody" \
            eval '[ "$(awk "/^Uid:/ {print \$2}" /proc/'"$other"'/status)" = "$(id -u nobody)" ]' ||
            return
    else
        other=$(ps -e -o pid=,uid= | awk '$1 > 1 && $2 == 0 { print $1; exit }') # root's
    fi
    local before
    before=$(database_snapshot)
    run_rlr -k foreign-owner --owner "$other" --hold
    expect_status 64 "--owner of another user's process"
    expect_contains "$err" "--owner: process $other belongs to another user" "the message"
    expect_eq "$(wc -l <<<"$err")" 1 "one line"
    expect_eq "$(rcli exists foreign-owner)" 0 "the lock is not taken"
    expect_eq "$(database_snapshot)" "$before" "nothing changed in Redis"
}

test_the_owner_is_an_interactive_shell() {
    local key=interactive
    RLR="$REDLOCKRUN" /usr/bin/python3 - "$key" >"$WORK/session" 2>&1 <<'EOF'
import os, pty, select, sys, time
key = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def send(text):
    os.write(fd, text.encode() + b"\n")
def read_until(marker, limit=15):
    seen, end = b"", time.time() + limit
    while marker.encode() not in seen and time.time() < end:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return seen.decode(errors="replace")
# The marker is split in the command line, so that only the output matches it.
send(f'eval "$("$RLR" -k {key} --hold)"; echo "shell=$$ he""ld=$?"')
text = read_until("held=")
text += read_until("\n")
print(text)
print(os.popen(f'"$RLR" -k {key} --status').read())
send("exit")
os.waitpid(pid, 0)
EOF
    local session shell_pid
    session=$(cat "$WORK/session")
    shell_pid=$(sed -n 's/.*shell=\([0-9]*\) held=0.*/\1/p' <<<"$session" | head -n 1)
    [ -n "$shell_pid" ] || {
        fail "the interactive shell did not take the hold: $session"
        return
    }
    expect_contains "$session" "$key: held by $(hostname) pid $shell_pid" "held by the shell"
    wait_for "the lock is let go when the shell exits" eval "! lock_held $key"
}

test_ci_steps_hold_with_owner_none_and_max_hold() {
    # Step 1 takes the hold and passes its handle on, as a CI system passes a step's outputs.
    run_rlr -k deploy --owner none --max-hold 10m --hold --json
    expect_status 0 "step 1: --hold --json"
    local handle owner
    handle=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["hold"])' <<<"$out")
    owner=$(/usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["owner"], o["max_hold_ms"], o["key"], type(o["fence"]).__name__, o["fence"])' <<<"$out")
    # The fence is a number, as in --status --json.
    expect_eq "$owner" "None 600000 deploy int $(rcli hget '{deploy}:redlockrun:owner' fence)" \
        "the JSON's owner, max_hold_ms, key, fence"
    # Steps 2 and 3 are other processes, with the handle in the environment or as a word.
    status=0
    REDLOCKRUN_HOLD=$handle "$REDLOCKRUN" --check 2>"$WORK/err" || status=$?
    err=$(cat "$WORK/err")
    expect_status 0 "step 2: --check"
    lock_held deploy || fail "the lock is not held between the steps"
    run_rlr --release "$handle"
    expect_status 0 "step 3: --release HANDLE"
    lock_held deploy && fail "the lock is still held after --release"
    run_rlr --release "$handle"
    expect_status 64 "a second --release"
    expect_contains "$err" "no hold has the handle" "a second --release"
}

# In a CI job, a hold taken without --owner ends with the step's shell: --hold says so, once, on
# stderr, once it has the lock; with --owner none, outside a CI job, or when it takes nothing, it
# says nothing.
test_a_hold_in_a_ci_step_without_owner_says_it_ends_with_the_step() {
    local variable said
    for variable in CI GITHUB_ACTIONS GITLAB_CI; do
        run_script bash "
            unset CI GITHUB_ACTIONS GITLAB_CI
            export $variable=true
            h=\$(\"\$RLR\" -k ci-step --hold) || exit 9
            eval \"\$h\"
            \"\$RLR\" --release
        "
        expect_status 0 "$variable: the step"
        said=$(grep -c "in a CI job, a hold ends with the shell that took it (this step's): to keep ci-step across steps, take it with --owner none --max-hold DURATION" <<<"$out")
        expect_eq "$said" 1 "$variable: the line, once: $out"
    done
    run_script bash '
        unset CI GITHUB_ACTIONS GITLAB_CI
        h=$("$RLR" -k ci-step --hold) || exit 9
        eval "$h"
        "$RLR" --release
    '
    expect_status 0 "outside CI"
    expect_eq "$out" "" "outside CI, --hold says nothing"
    CI=true run_rlr -k ci-step --owner none --max-hold 1m --hold
    expect_status 0 "--owner none in CI"
    expect_not_contains "$err" "in a CI job" "with --owner none"
    local handle
    handle=$(sed -n "s/^export REDLOCKRUN_HOLD='\(.*\)'$/\1/p" <<<"$out")
    # A hold that takes nothing (the lock is busy, -n) says nothing of how a hold would end.
    CI=true run_rlr -k ci-step -n --hold
    expect_status 75 "a busy -n in CI"
    expect_not_contains "$err" "in a CI job" "a hold not taken"
    expect_contains "$err" "ci-step" "the busy message"
    run_rlr --release "$handle"
    expect_status 0 "its release"
}

test_owner_none_needs_max_hold_and_changes_nothing() {
    local before
    before=$(database_snapshot)
    run_rlr -k nomax --owner none --hold
    expect_status 64
    expect_contains "$err" "--owner none needs --max-hold" "the message"
    run_rlr -k nomax --hold -- true
    expect_status 64 "--hold with a command"
    run_rlr -k nomax --owner 0 --hold
    expect_status 64 "--owner 0"
    run_rlr -k nomax --owner 999999999 --hold
    expect_status 64 "--owner that is no process"
    expect_contains "$err" "no process has pid 999999999" "its message"
    run_rlr -k nomax --max-hold 1m -- true
    expect_status 64 "--max-hold without --hold"
    run_rlr -k nomax --release
    expect_status 64 "--release with -k"
    expect_eq "$(database_snapshot)" "$before" "nothing changed in Redis"
}

test_max_hold_ends_the_hold_and_release_reports_it() {
    eval "$("$REDLOCKRUN" -k bounded -t 2s --owner none --max-hold 1s --hold)"
    lock_held bounded || fail "not held"
    wait_for "the hold ends at --max-hold" eval "! lock_held bounded"
    run_rlr --check
    expect_status 76 "--check after --max-hold"
    expect_contains "$err" "--max-hold of 1s ran out" "--check says why"
    run_rlr --release
    expect_status 76 "--release after --max-hold"
    expect_contains "$err" "the hold on bounded ended" "--release says so"
    run_rlr --release
    expect_status 64 "the handle is gone after --release"
}

# The owner and what it runs, whether it leads its own process group (as cron, CI runners and job
# control start scripts) or shares its caller's: the command it waits for stops too, and its
# caller's own processes in that group are spared.
test_a_lost_hold_stops_its_owner() {
    local group
    for group in shared own; do
        local launcher=() key="stolen-$group" bystander=""
        [ "$group" = own ] && launcher=(setsid -w)
        RLR="$REDLOCKRUN" "${launcher[@]}" bash -c '
            eval "$("$RLR" -k '"$key"' -t 300ms --hold)" || exit 9
            sleep 20 &
            echo "$!" > "'"$WORK/sleep-$group"'"
            wait
            echo never
        ' >"$WORK/script-$group.out" 2>&1 &
        local script=$!
        BACKGROUND_PIDS+=("$script")
        if [ "$group" = shared ]; then
            sleep 20 & # the caller's, in the caller's group
            bystander=$!
            BACKGROUND_PIDS+=("$bystander")
        fi
        wait_for "the hold is taken" lock_held "$key" || return
        local sleeper
        wait_for "the script starts its command" test -s "$WORK/sleep-$group" || return
        read_number sleeper "$WORK/sleep-$group" || return
        BACKGROUND_PIDS+=("$sleeper")
        rcli del "$key" >/dev/null
        wait "$script" 2>/dev/null
        status=$?
        err=$(cat "$WORK/script-$group.out")
        expect_status 143 "$group group: the owner was stopped with SIGTERM"
        expect_not_contains "$err" never "$group group: the script went on"
        wait_for "$group group: the owner's command is stopped" eval "! alive $sleeper"
        if [ -n "$bystander" ]; then
            alive "$bystander" || fail "a process of the caller's was signalled"
            kill "$bystander"
        fi
    done
}

test_a_loss_is_kept_for_check_and_release() {
    eval "$("$REDLOCKRUN" -k kept-loss -t 300ms --on-lost ignore --hold)"
    rcli del kept-loss >/dev/null
    sleep 0.5 # a renewal (every 100 ms) finds the key gone
    run_rlr --check
    expect_status 76 "--check after the loss"
    expect_contains "$err" "the hold on kept-loss was lost" "--check's message"
    expect_contains "$err" "deleted" "--check says why"
    run_rlr --release
    expect_status 76 "--release after the loss"
    run_rlr --lost-exit-code 3 --check
    expect_status 64 "after --release the handle is gone"
}

test_a_killed_keeper_is_reported_lost_and_the_lock_lapses() {
    eval "$("$REDLOCKRUN" -k killed -t 1s --owner none --max-hold 1m --hold)"
    kill -KILL "$(keeper_of "$REDLOCKRUN_HOLD")"
    run_rlr --check
    expect_status 76 "--check with the keeper gone"
    expect_contains "$err" "keeper" "the message names the keeper"
    wait_for "the lock lapses after its TTL" eval "! lock_held killed"
    run_rlr --release
    expect_status 76 "--release with the keeper gone"
}

test_a_keeper_paused_past_its_ttl_loses_the_hold() {
    eval "$("$REDLOCKRUN" -k paused -t 500ms --owner none --max-hold 1m --hold)"
    local keeper
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    kill -STOP "$keeper"
    RUN_RLR_LIMIT=30 run_rlr --check
    expect_status 76 "--check of a stopped keeper"
    expect_contains "$err" "does not answer" "the message"
    wait_for "the lock lapses" eval "! lock_held paused"
    run_rlr -k paused -- true
    expect_status 0 "another run takes the lapsed lock"
    kill -CONT "$keeper"
    run_rlr --release
    expect_status 76 "--release after the pause"
    expect_contains "$err" "was lost" "the message"
}

test_a_second_hold_by_the_same_owner_is_refused() {
    run_script bash '
        eval "$("$RLR" -k twice --hold)" || exit 9
        "$RLR" -k twice --hold; echo "second=$?"
        "$RLR" --release; echo "release=$?"
    '
    expect_contains "$out" "second=64" "the second --hold"
    expect_contains "$out" "holds twice already" "its message"
    expect_contains "$out" "release=0" "the first hold is intact"
}

test_busy_and_foreign_locks_are_not_held() {
    start_bg holder -k busy -- sleep 30
    wait_for "the holder holds" lock_held busy || return
    run_rlr -k busy -n --owner none --max-hold 1m --hold
    expect_status 75 "-n on a held lock"
    expect_contains "$err" "not holding it" "the message"
    expect_eq "$out" "(exit 75)" "no assignments: eval fails with the status"
    run_rlr -k busy -E 3 -n --owner none --max-hold 1m --hold
    expect_status 3 "-E"
    run_rlr -k busy -w 300ms --owner none --max-hold 1m --hold
    expect_status 75 "-w ran out"
    [ -z "$(ls -A "$HOLDS")" ] || fail "a hold not taken left files: $(ls "$HOLDS")"
    rcli set foreign-key hello >/dev/null
    run_rlr -k foreign-key --owner none --max-hold 1m --hold
    expect_status 65 "a foreign key"
    expect_eq "$(rcli get foreign-key)" hello "the foreign key is untouched"
}

test_bad_handles_are_refused() {
    run_rlr --release
    expect_status 64 "no handle and no \$REDLOCKRUN_HOLD"
    expect_contains "$err" "REDLOCKRUN_HOLD" "the message"
    run_rlr --check /tmp/not-a-handle
    expect_status 64 "not a handle"
    run_rlr --check "$HOLDS/hold.0123456789abcdef0123456789abcdef"
    expect_status 64 "a handle never issued"
    mkdir -p -m 755 "$WORK/open"
    run_rlr --check "$WORK/open/hold.0123456789abcdef0123456789abcdef"
    expect_status 64 "a handle in a folder open to others"
    expect_contains "$err" "cannot be trusted" "the message"
}

# --release and --check alone (with -q or -v) are read without the full parse of the command line
# (options/hold_request.hpp); any other option, here a --ttl that they ignore, takes the full
# parse. Both must answer alike: the same status, and the same message once the handles, keys and
# numbers in it are set aside.
normalised() { # TEXT: with handles, keys, numbers and durations set aside
    local text=${1//"$HOLDS"/HOLDS}
    sed -E 's/hold\.[0-9a-f]{32}/hold.ID/g; s/alike-[a-z]+/KEY/g
            s/[0-9]+(\.[0-9]+)?(ms|s|m|h|d)?/N/g' <<<"$text"
}

answer_of() { # ARGS...: "STATUS|STDOUT|STDERR" of a run, normalised
    run_rlr "$@"
    normalised "$status|$out|$err"
}

expect_alike() { # WHAT ARGS...: the short cut and the full parse answer ARGS alike
    local what=$1 short full
    shift
    short=$(answer_of "$@")
    full=$(answer_of --ttl 30s "$@")
    expect_eq "$short" "$full" "$what"
    [ -n "$short" ] || fail "$what: no answer"
}

# A hold on KEY whose --max-hold has ended it: its handle in the variable NAME.
ended_hold() { # NAME KEY
    local assignments
    assignments=$("$REDLOCKRUN" -k "$2" -t 2s --owner none --max-hold 1s --hold) || {
        fail "--hold of $2 failed: $assignments"
        return 1
    }
    eval "$assignments"
    printf -v "$1" '%s' "$REDLOCKRUN_HOLD"
    wait_for "the hold on $2 ends" grep -q '^ended=ended' "$REDLOCKRUN_HOLD"
}

test_release_and_check_answer_alike_without_the_full_parse() {
    local verb
    for verb in --release --check; do
        (
            unset REDLOCKRUN_HOLD
            expect_alike "$verb: no handle, no \$REDLOCKRUN_HOLD" "$verb"
            expect_alike "$verb -q: no handle" -q "$verb"
            expect_alike "$verb -v: no handle" "$verb" --verbose
            expect_alike "$verb: a handle never issued" "$verb" \
                "$HOLDS/hold.0123456789abcdef0123456789abcdef"
            mkdir -p -m 755 "$WORK/open"
            expect_alike "$verb: a handle in a folder open to others" \
                "$verb=$WORK/open/hold.0123456789abcdef0123456789abcdef"
            expect_alike "$verb: not a handle" "$verb" /tmp/not-a-handle
            exit "$TEST_FAILED"
        ) || fail "$verb without a handle to use: the answers differ"
    done

    local first second
    ended_hold first alike-ended || return
    ended_hold second alike-ended || return
    expect_alike "--check of an ended hold" --check "$first"
    expect_alike "-v --check of an ended hold" -v --check "$first"
    local short
    short=$(answer_of --release "$first")
    run_rlr --ttl 30s --release "$second"
    expect_status 76 "--release of an ended hold"
    expect_eq "$short" "$(normalised "$status|$out|$err")" \
        "--release of an ended hold, with and without the full parse"
    expect_alike "--release of a released hold" --release "$first"

    eval "$("$REDLOCKRUN" -k alike-kept --owner none --max-hold 1m --hold)"
    expect_alike "--check of a kept hold" --check
    expect_alike "-q --check of a kept hold" -q --check "$REDLOCKRUN_HOLD"
    expect_alike "-v --check of a kept hold" --check="$REDLOCKRUN_HOLD" -v
    short=$(answer_of -v --release)
    eval "$("$REDLOCKRUN" -k alike-kept --owner none --max-hold 1m --hold)"
    run_rlr --ttl 30s -v --release
    expect_status 0 "-v --release of a kept hold"
    expect_contains "$err" "released alike-kept" "-v --release says so"
    expect_eq "$short" "$(normalised "$status|$out|$err")" \
        "-v --release of a kept hold, with and without the full parse"

    eval "$("$REDLOCKRUN" -k alike-gone -t 1s --owner none --max-hold 1m --hold)"
    kill -KILL "$(keeper_of "$REDLOCKRUN_HOLD")"
    expect_alike "--check of a hold whose keeper was killed" --check

    # Options --release does not take are refused as before, by the full parse.
    run_rlr --release --json
    expect_status 64 "--release --json"
    expect_contains "$err" "--release goes with none of" "--release --json's message"
    run_rlr -k alike-kept --check -q
    expect_status 64 "--check -k"
    expect_contains "$err" "--check takes no -k" "--check -k's message"
    run_rlr -q -v --check
    expect_status 64 "-q -v"
    expect_contains "$err" "-q and -v exclude each other" "-q -v's message"
}

# The config files count for --release and --check read without the full parse, as for any run:
# their --lost-exit-code is used, and a config file that cannot be read stops them.
test_release_and_check_without_the_full_parse_read_the_config_files() {
    local config="$WORK/config"
    mkdir -p "$config/redlockrun"
    eval "$("$REDLOCKRUN" -k config-gone -t 1s --owner none --max-hold 1m --hold)"
    kill -KILL "$(keeper_of "$REDLOCKRUN_HOLD")"
    echo 'lost-exit-code = 3' >"$config/redlockrun/config"
    XDG_CONFIG_HOME="$config" run_rlr --check
    expect_status 3 "--check of a lost hold with the config file's lost-exit-code"
    XDG_CONFIG_HOME="$config" run_rlr -q --release "$REDLOCKRUN_HOLD"
    expect_status 3 "--release of a lost hold with the config file's lost-exit-code"

    eval "$("$REDLOCKRUN" -k config-kept --owner none --max-hold 1m --hold)"
    echo 'no-such-entry = 1' >"$config/redlockrun/config"
    XDG_CONFIG_HOME="$config" run_rlr --release
    expect_status 64 "--release with a config file that cannot be read"
    expect_contains "$err" "unknown entry 'no-such-entry'" "the config file's message"
    lock_held config-kept || fail "--release let the lock go despite the config file's error"
    run_rlr --release
    expect_status 0 "--release once the config file is put right"
}

# A keeper answers a --release before it removes the hold's files, and the --release removes them
# too: a --check or --release right after it finds no hold, never the socket of a keeper on its
# way out, which answers no one. A stand-in keeper that answers and then stays, listening, is one
# caught at that moment.
test_a_check_right_after_a_release_finds_no_hold() {
    mkdir -p -m 700 "$HOLDS"
    local handle="$HOLDS/hold.0123456789abcdef0123456789abcdef"
    /usr/bin/python3 -c '
import socket, sys, time
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(8)
open(sys.argv[2], "w").write("listening")
client, _ = listener.accept()
client.recv(64)
client.sendall(b"released\n")
client.close()
time.sleep(60)
' "$handle.sock" "$WORK/listening" &
    local keeper=$!
    BACKGROUND_PIDS+=("$keeper")
    printf 'key=on-its-way-out\nfence=1\nowner=0\nowner_start=0\nkeeper=%s\ntaken_ms=%s\n' \
        "$keeper" "$(now_ms)" >"$handle"
    printf 'ended=\nended_ms=0\nwhy=\n' >>"$handle"
    wait_for "the stand-in keeper listens" test -s "$WORK/listening" || return
    run_rlr --release "$handle"
    expect_status 0 "--release"
    RUN_RLR_LIMIT=30 run_rlr --check "$handle"
    expect_status 64 "--check right after the --release"
    expect_contains "$err" "no hold has the handle" "--check's message"
    RUN_RLR_LIMIT=15 run_rlr --release "$handle"
    expect_status 64 "--release right after the --release"
}

test_min_hold_keeps_a_released_hold() {
    eval "$("$REDLOCKRUN" -k minhold --min-hold 3s --owner none --max-hold 1m --hold)"
    run_rlr --release
    expect_status 0 "--release"
    lock_held minhold || fail "--min-hold let the lock go at the release"
    run_rlr -k minhold -n -- true
    expect_status 75 "a run within --min-hold"
}

test_the_handle_and_record_hold_no_password() {
    rcli config set requirepass s3cret-pw >/dev/null
    run_rlr -u "redis://:s3cret-pw@127.0.0.1:$REDIS_PORT" -k secret --owner none --max-hold 1m --hold
    expect_status 0 "--hold with a password"
    expect_not_contains "$out" s3cret-pw "the assignments"
    eval "$out"
    expect_not_contains "$(cat "$REDLOCKRUN_HOLD")" s3cret-pw "the record file"
    local keeper
    keeper=$(keeper_of "$REDLOCKRUN_HOLD")
    expect_not_contains "$(tr '\0' ' ' <"/proc/$keeper/cmdline")" s3cret-pw "the keeper's argv"
    run_rlr --release
    expect_status 0 "--release"
    redis-cli -p "$REDIS_PORT" -a s3cret-pw --no-auth-warning config set requirepass '' >/dev/null
}

# A hold that ends before its owner is done (--max-hold, a keeper told to stop) stops the owner
# first, as a lost one does, and keeps the lock until the owner has exited: its section never
# runs on beside the next holder.
test_a_hold_ended_early_stops_its_owner_before_letting_go() {
    local how
    # Every signal that would end the keeper by default ends the hold early.
    for how in max-hold TERM ALRM XCPU RTMIN+3 USR1; do
        local key="early-$how" bound=()
        [ "$how" = max-hold ] && bound=(--max-hold 1s)
        RLR="$REDLOCKRUN" setsid -w bash -c '
            eval "$("$RLR" -k '"$key"' '"${bound[*]}"' --hold)" || exit 9
            echo "$REDLOCKRUN_HOLD" > "'"$WORK/handle-$how"'"
            sleep 30 &
            echo "$!" > "'"$WORK/sleep-$how"'"
            wait
        ' >/dev/null 2>&1 &
        local script=$!
        BACKGROUND_PIDS+=("$script")
        wait_for "the script starts its command" test -s "$WORK/sleep-$how" || return
        local sleeper handle
        read_number sleeper "$WORK/sleep-$how" || return
        BACKGROUND_PIDS+=("$sleeper")
        handle=$(cat "$WORK/handle-$how")
        [ "$how" = max-hold ] || kill -s "$how" "$(keeper_of "$handle")"
        wait "$script" 2>/dev/null
        status=$?
        err=""
        expect_status 143 "$how: the owner was stopped"
        wait_for "$how: the lock is let go once the owner has exited" eval "! lock_held $key"
        if alive "$sleeper"; then
            fail "$how: the owner's command runs on after the lock was let go"
        fi
    done
}

test_an_eval_of_a_hold_not_taken_fails_with_its_status() {
    start_bg holder -k taken -- sleep 30
    wait_for "the holder holds" lock_held taken || return
    run_script bash '
        eval "$("$RLR" -k taken -n --hold)" || exit
        echo "went on without the lock"
    '
    expect_status 75 "eval of a busy lock's --hold"
    expect_not_contains "$out" "went on" "the script stopped"
    run_script dash '
        eval "$("$RLR" -k taken --hold --no-such-option 2>/dev/null)"
        echo "eval=$?"
    '
    expect_contains "$out" "eval=64" "a usage error"
    run_rlr -k taken -n --hold --json
    expect_status 75 "--json"
    expect_eq "$out" "" "--json prints nothing for a hold not taken"
}

# A waiting --hold ends on every signal that would end it by default as it does on SIGTERM:
# SIGALRM (timeout -s ALRM), SIGXCPU (a CPU limit), a real-time signal. It prints "(exit 128+N)",
# so that eval fails with that status, and leaves the queue it waited in. Killed by the signal, it
# would print nothing, and `eval ""` would let the script go on without the lock.
test_a_signal_that_ends_a_waiting_hold_makes_eval_fail() {
    # Shared holders make an exclusive waiter queue behind them.
    start_bg holder -s -k busy -- sleep 60
    wait_for "the holder holds" lock_held busy || return
    local signal expected
    for signal in ALRM XCPU RTMIN+3; do
        expected=$((128 + $(kill -l "$signal")))
        run_script bash '
            h=$(timeout --preserve-status -s '"$signal"' 1 "$RLR" -k busy -w 30s --hold)
            echo "hold=$? printed=$h"
            eval "$h"
            echo "eval=$?"
        '
        expect_contains "$out" "hold=$expected printed=(exit $expected)" "SIG$signal: --hold's output"
        expect_contains "$out" "eval=$expected" "SIG$signal: eval fails with 128+N"
        expect_contains "$out" "SIG$signal while waiting for busy" "SIG$signal: the message"
        expect_eq "$(rcli exists '{busy}:redlockrun:queue')" 0 "SIG$signal: nothing left queued"
        [ -z "$(ls -A "$HOLDS")" ] || fail "SIG$signal: the hold not taken left files: $(ls "$HOLDS")"
    done
    run_rlr -k busy --status
    expect_contains "$out" "$(hostname) pid $holder since" "the holder still holds the lock"
}

# Killed with SIGKILL while it waits, --hold prints nothing: `eval "$(redlockrun --hold)" || exit`
# would eval an empty string and go on. The documented idiom takes the assignments first, so that
# the substitution's own status stops the script.
test_the_two_line_idiom_stops_a_script_whose_hold_is_killed() {
    start_bg holder -k busy -- sleep 60
    wait_for "the holder holds" lock_held busy || return
    run_script bash '
        h=$(timeout -s KILL 1 "$RLR" -k busy -w 30s --hold) || exit 7
        eval "$h"
        echo WENT_ON
    '
    expect_status 7 "the script whose --hold was killed"
    expect_not_contains "$out" WENT_ON "the script stopped"
    # Why it takes two lines: the one-line form goes on.
    run_script bash '
        eval "$(timeout -s KILL 1 "$RLR" -k busy -w 30s --hold)" || exit 7
        echo WENT_ON
    '
    expect_contains "$out" WENT_ON "the one-line form"
}

# With a pipe inside the $(...), the substitution's status is the filter's: a --hold killed with
# SIGKILL while it waits leaves it 0 and $h empty. The documented form checks $h before its eval,
# in bash and dash (which has no pipefail); without that check the script goes on, which is why it
# is taught. A lock not taken for another reason prints its `(exit N)`, which the eval fails with.
test_the_pipe_idiom_stops_a_script_whose_hold_is_killed() {
    local shell
    start_bg holder -k busy -- sleep 60
    wait_for "the holder holds" lock_held busy || return
    for shell in bash dash; do
        run_script "$shell" '
            h=$(timeout -s KILL 1 "$RLR" -k busy -w 30s --hold | tee /dev/null)
            [ -n "$h" ] && eval "$h" || exit
            echo WENT_ON
        '
        expect_status 1 "$shell: the script whose --hold was killed"
        expect_not_contains "$out" WENT_ON "$shell: the script stopped"
        run_script "$shell" '
            h=$(timeout -s KILL 1 "$RLR" -k busy -w 30s --hold | tee /dev/null) || exit
            eval "$h" || exit
            echo WENT_ON
        '
        expect_contains "$out" WENT_ON "$shell: without the check, the script goes on"
        run_script "$shell" '
            h=$("$RLR" -k busy -n --hold | tee /dev/null)
            [ -n "$h" ] && eval "$h" || exit
            echo WENT_ON
        '
        expect_status 75 "$shell: a busy lock"
        expect_not_contains "$out" WENT_ON "$shell: a busy lock stops the script"
        run_script "$shell" '
            h=$("$RLR" -k piped --hold | tee /dev/null)
            [ -n "$h" ] && eval "$h" || exit
            "$RLR" -k piped --status; "$RLR" --release; echo "release=$?"
        '
        expect_status 0 "$shell: the piped hold"
        expect_contains "$out" "piped: held by $(hostname) pid" "$shell: the piped hold is held"
        expect_contains "$out" "release=0" "$shell: the piped hold's release"
    done
}

# The documented idiom takes the hold for the script, in bash and in dash.
test_the_two_line_idiom_makes_the_script_the_owner() {
    local shell pid
    for shell in bash dash; do
        run_script "$shell" '
            h=$("$RLR" -k two-lines --hold) || exit 7
            eval "$h"
            echo "pid=$$ fence=$REDLOCKRUN_FENCE"
            "$RLR" -k two-lines --status
            "$RLR" --release; echo "release=$?"
        '
        expect_status 0 "$shell: the script"
        pid=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' <<<"$out")
        expect_contains "$out" "two-lines: held by $(hostname) pid $pid (a hold)" "$shell: held by the script"
        [[ "$out" =~ fence=[0-9]+ ]] || fail "$shell: no REDLOCKRUN_FENCE in the script: $out"
        expect_contains "$out" "release=0" "$shell: --release"
    done
}

test_a_release_that_cannot_reach_redis_is_69() {
    eval "$("$REDLOCKRUN" -k unreachable -t 30s --connect-timeout 1s --owner none --max-hold 1m --hold)"
    kill -STOP "$REDIS_PID"
    run_rlr --release
    kill -CONT "$REDIS_PID"
    expect_status 69 "--release while Redis does not answer"
    expect_contains "$err" "could not release unreachable" "the message"
    expect_contains "$err" "expires by itself within the TTL" "the message says what becomes of it"
    run_rlr --check
    expect_status 64 "the hold is over after its --release"
}

test_the_owner_is_the_first_process_of_a_container() {
    # A PID namespace of its own, as a container's: the script that reads $(...) is pid 1.
    RLR="$REDLOCKRUN" timeout 60 unshare --pid --fork --mount-proc sh -c '
        eval "$("$RLR" -k container --hold)" || exit
        echo "pid=$$"
        "$RLR" -k container --status
        "$RLR" --release
        echo "release=$?"
    ' >"$WORK/container.out" 2>&1
    out=$(cat "$WORK/container.out")
    expect_contains "$out" "pid=1" "the script is pid 1"
    expect_contains "$out" "container: held by $(hostname) pid 1 " "held by the script"
    expect_contains "$out" "release=0" "--release"
}

run_tests
