#!/usr/bin/env bash
# --break (DESIGN §12): an operator ends every holder's claim on a lock; each holder learns of it at
# its next renewal, stops its command (or a hold's owner) and exits 76 naming the break.
. "$(dirname "$0")/lib.sh"
CLASSIC="$(dirname "$0")/classic_client.py"

export XDG_RUNTIME_DIR="$WORK/runtime"
mkdir -m 700 "$XDG_RUNTIME_DIR"

fence_counter() { rcli get "{$1}:redlockrun:fence"; }

test_a_broken_run_stops_its_command_and_the_waiter_takes_over() {
    start_bg holder -k stuck -t 3s -- sh -c "echo \$REDLOCKRUN_FENCE > '$WORK/fence'; sleep 30"
    wait_for "the holder runs" test -s "$WORK/fence" || return
    start_bg waiter -w 30s -k stuck -- sh -c "echo \$REDLOCKRUN_FENCE > '$WORK/next-fence'"
    wait_for "the waiter blocks" blocked_clients_are 1 || return
    local fence
    read_number fence "$WORK/fence" || return
    run_rlr -k stuck --break
    expect_status 0 "--break"
    expect_contains "$out" "stuck: broke the claim of $(hostname) pid $holder, fence $fence" \
        "what --break printed"
    exit_of "$waiter"
    expect_eq "$?" 0 "the waiter ran"
    local next
    read_number next "$WORK/next-fence" || return
    expect_lt "$fence" "$next" "the next holder's fence is larger"
    exit_of "$holder"
    expect_eq "$?" 76 "the broken holder exits 76"
    local said
    said=$(cat "$WORK/holder.err")
    expect_contains "$said" "lost the lock on stuck: it was broken by $(id -un)@$(hostname) pid" \
        "the broken holder's message"
    expect_contains "$said" "(redlockrun --break)" "the message names --break"
}

test_a_broken_hold_is_reported_lost() {
    eval "$("$REDLOCKRUN" -k held -t 600ms --owner none --max-hold 1m --hold)"
    run_rlr -k held --break
    expect_status 0 "--break"
    expect_contains "$out" "held: broke the claim of" "what --break printed"
    lock_held held && fail "the lock is still held after --break"
    sleep 0.5 # the keeper renews every 200 ms
    run_rlr --check
    expect_status 76 "--check after --break"
    expect_contains "$err" "broken by $(id -un)@$(hostname)" "--check names the break"
    run_rlr --release
    expect_status 76 "--release after --break"
}

test_every_holder_of_a_semaphore_is_broken() {
    start_bg first -k sem --limit 2 -t 3s -- sleep 30
    start_bg second -k sem --limit 2 -t 3s -- sleep 30
    wait_for "both hold" eval '[ "$(rcli hlen "{sem}:redlockrun:owner")" -ge 3 ]' || return
    run_rlr -k sem --break
    expect_status 0 "--break"
    expect_eq "$(grep -c 'sem: broke the claim of' <<<"$out")" 2 "two holders broken"
    exit_of "$first"
    expect_eq "$?" 76 "the first holder"
    exit_of "$second"
    expect_eq "$?" 76 "the second holder"
    run_rlr -k sem --limit 2 -n -- true
    expect_status 0 "a new holder takes a slot"
}

test_a_classic_client_s_lock_is_broken_too() {
    /usr/bin/python3 "$CLASSIC" "$REDIS_PORT" classic ms 30 try || fail "the classic client"
    run_rlr -k classic --break
    expect_status 0 "--break"
    expect_contains "$out" "a client of the classic algorithm" "what --break printed"
    if lock_held classic; then fail "the classic lock is still there"; fi
}

test_a_free_lock_is_left_as_it_is() {
    run_rlr -k once -- true
    local before
    before=$(database_snapshot)
    run_rlr -k once --break
    expect_status 0 "--break of a free lock"
    expect_eq "$out" "once: free; nothing to break" "what it printed"
    expect_eq "$(database_snapshot)" "$before" "nothing changed"
}

test_a_foreign_key_is_refused_and_left_alone() {
    rcli rpush foreign a b >/dev/null
    local before
    before=$(database_snapshot)
    run_rlr -k foreign --break
    expect_status 65
    expect_contains "$err" "foreign holds a list, not a timestamp lock; nothing was changed" \
        "the message"
    expect_eq "$(database_snapshot)" "$before" "nothing changed"
    run_rlr -k foreign --break -- true
    expect_status 64 "--break with a command"
    run_rlr --break
    expect_status 64 "--break without -k"
}

test_the_documented_acl_rule_allows_it() {
    # The rule docs/lock.md gives, as a user would paste it.
    local rule
    rule=$(sed -n 's/^ *ACL SETUSER locker on >PASSWORD //p' "$(dirname "$0")/../../docs/lock.md")
    [ -n "$rule" ] || {
        fail "no ACL SETUSER line in docs/lock.md"
        return
    }
    rcli acl log reset >/dev/null # the denials other tests provoked
    # shellcheck disable=SC2086 # the rule is a list of words
    rcli acl setuser locker on '>pw' $rule >/dev/null
    local url="redis://locker:pw@127.0.0.1:$REDIS_PORT"
    start_bg holder -u "$url" -k acl -t 3s -- sleep 30
    wait_for "the holder holds" lock_held acl || return
    # Waiters, listed, one of them superseded by a newer one.
    start_bg older -u "$url" -k acl -w 30s --supersede -- true
    wait_for "the older waiter" blocked_clients_are 1 || return
    start_bg newer -u "$url" -k acl -w 30s --supersede -- true
    exit_of "$older"
    expect_eq "$?" 75 "the superseded waiter as the ACL user: $(cat "$WORK/older.err")"
    wait_for "the newer waiter" blocked_clients_are 1 || return
    run_rlr -u "$url" -k acl --status
    expect_contains "$out" "; 1 waiting" "--status as the ACL user"
    run_rlr -u "$url" -k acl --break
    expect_status 0 "--break as the ACL user"
    exit_of "$holder"
    expect_eq "$?" 76 "the broken holder"
    exit_of "$newer" || fail "the newer waiter as the ACL user: $(cat "$WORK/newer.err")"
    expect_eq "$(rcli acl log | grep -c reason)" 0 "no ACL denial logged: $(rcli acl log | tr '\n' ' ')"
    # With it, a release records its hold's duration.
    run_rlr -u "$url" -k acl-took -- true
    expect_status 0 "a run as the ACL user"
    expect_eq "$(rcli llen '{acl-took}:redlockrun:durations')" 1 "the duration kept"
}

# A rule written for an earlier version lacks +lpush and +lrange (the holds' durations), and +pttl
# and +hlen (the waiters' records): it locks and waits the same; nothing is kept or listed of
# either, and --supersede, which cannot work without the records, is refused naming the permission.
test_a_rule_of_an_earlier_version_still_locks() {
    local rule
    rule=$(sed -n 's/^ *ACL SETUSER locker on >PASSWORD //p' "$(dirname "$0")/../../docs/lock.md")
    rule=${rule/ +lpush +lrange +pttl +hlen/}
    [[ "$rule" != *lpush* && "$rule" != *lrange* && "$rule" != *pttl* && "$rule" != *hlen* &&
        -n "$rule" ]] || {
        fail "cannot take +lpush, +lrange, +pttl and +hlen out of the rule: $rule"
        return
    }
    # shellcheck disable=SC2086 # the rule is a list of words
    rcli acl setuser older on '>pw' $rule >/dev/null
    local url="redis://older:pw@127.0.0.1:$REDIS_PORT"
    run_rlr -u "$url" -k older -- true
    expect_status 0 "a run"
    start_bg holder -u "$url" -k older -- sleep 30
    wait_for "the holder holds" lock_held older || return
    run_rlr -u "$url" -w 200ms -k older -- true
    expect_status 75 "a waiter that gives up"
    start_bg waiter -u "$url" -w 30s -k older -- touch "$WORK/waiter-ran"
    wait_for "the waiter" blocked_clients_are 1 || return
    run_rlr -u "$url" -k older --status --json
    expect_contains "$out" '"hold_durations":null' "no duration could be kept"
    expect_contains "$out" '"waiting":1' "the waiter counted in the queue"
    expect_contains "$out" '"waiters":[{"position":1,"mode":"exclusive","limit":null,"host":null,"pid":null,' "the waiter not described"
    run_rlr -u "$url" -k older --status
    expect_contains "$out" "  1. a waiter without a record (exclusive)" "--status"
    expect_eq "$(rcli exists '{older}:redlockrun:durations' '{older}:redlockrun:waiters')" 0 "nothing written"
    run_rlr -u "$url" -w 30s --supersede -k older -- touch "$WORK/superseding-ran"
    expect_status 69 "--supersede without +pttl"
    expect_contains "$err" "(the user lacks an ACL permission that redlockrun's scripts need: the man page's ACL list names every command they run)" "--supersede without +pttl"
    [ -e "$WORK/superseding-ran" ] && fail "the refused --supersede run ran"
    kill -TERM "$holder"
    exit_of "$waiter" || fail "the waiter: $(cat "$WORK/waiter.err")"
    [ -e "$WORK/waiter-ran" ] || fail "the waiter did not run"
}

run_tests
