#!/usr/bin/env bash
# Sentinel with passwords and TLS: the data nodes let in only ACL users, the sentinels want a
# password (requirepass) or an ACL user of their own. redlockrun's sentinel credentials come from
# --sentinel-user/--sentinel-password-file, the environment or a config file, the master's from
# the URL, --password-file or $REDISCLI_AUTH; a wrong one is 69, and no password ever shows in a
# message or reaches the command. Then the same topology over TLS (rediss-sentinel://), through a
# failover.
. "$(dirname "$0")/lib.sh"

LOCKER_SECRET=Locker-Secret-4711   # the data nodes' user for redlockrun
WATCHER_SECRET=Watcher-Secret-1984 # the data nodes' user for the sentinels and the replicas
SENTINEL_SECRET=Sentinel-Secret-8080 # the sentinels' requirepass (their default user)
GUARD_SECRET=Guard-Secret-6060       # the sentinels' ACL user "guard"
DATA_OPTIONS=(--user default off
    --user locker on ">$LOCKER_SECRET" '~*' '&*' '+@all'
    --user watcher on ">$WATCHER_SECRET" '~*' '&*' '+@all'
    --masteruser watcher --masterauth "$WATCHER_SECRET")
DATA_CLI=(--user watcher --pass "$WATCHER_SECRET")
SENTINEL_CONFIG="requirepass $SENTINEL_SECRET
user guard on >$GUARD_SECRET +@all
sentinel sentinel-pass $SENTINEL_SECRET
sentinel auth-user lockmaster watcher
sentinel auth-pass lockmaster $WATCHER_SECRET"
SENTINEL_CLI=(--pass "$SENTINEL_SECRET")
. "$(dirname "$0")/sentinel_lib.sh"

start_sentinel_topology || exit 1
# The master's user in the URL, its password from elsewhere.
SENTINEL_URL_CREDENTIALS=locker:@
URL=$(sentinel_url)

SECRETS="$WORK/secrets"
mkdir -m 700 "$SECRETS"
write_secret() { # NAME VALUE: a file only its owner can read
    (umask 077 && printf '%s\n' "$2" >"$SECRETS/$1")
}
write_secret locker "$LOCKER_SECRET"
write_secret sentinel "$SENTINEL_SECRET"
write_secret guard "$GUARD_SECRET"
write_secret wrong Wrong-Secret-3030
ALL_SECRETS=("$LOCKER_SECRET" "$WATCHER_SECRET" "$SENTINEL_SECRET" "$GUARD_SECRET" Wrong-Secret-3030)
unset REDLOCKRUN_SENTINEL_USER REDLOCKRUN_SENTINEL_PASSWORD

# no_secret_in TEXT WHAT: none of the passwords appears in TEXT.
no_secret_in() {
    local secret
    for secret in "${ALL_SECRETS[@]}"; do
        expect_not_contains "$1" "$secret" "$2"
    done
}

# lock_run_release ARGS...: with ARGS for the credentials, a run takes the lock on the master,
# releases it, and --status reads it.
lock_run_release() {
    run_rlr "$@" -u "$URL" -k job -c "redis-cli -s '$(data_sock "$(master_node)")' --no-auth-warning ${DATA_CLI[*]} exists job"
    expect_status 0 "a run"
    expect_eq "$out" 1 "the lock was on the master while the command ran"
    no_secret_in "$err" "stderr of a run"
    expect_eq "$(rcli exists job)" 0 "released"
    [ -n "$(rcli get '{job}:redlockrun:fence')" ] || fail "no grant on the master"
    run_rlr "$@" -u "$URL" -k job --status
    expect_status 0 "--status"
    expect_contains "$out" "job: free" "--status"
    no_secret_in "$err$out" "the output of --status"
}

test_sentinel_password_from_a_file() {
    before_each || return
    lock_run_release --sentinel-password-file "$SECRETS/sentinel" --password-file "$SECRETS/locker"
    # An ACL user of the sentinels.
    lock_run_release --sentinel-user guard --sentinel-password-file "$SECRETS/guard" \
        --password-file "$SECRETS/locker"
}

test_sentinel_credentials_from_the_environment() {
    before_each || return
    REDLOCKRUN_SENTINEL_USER=guard REDLOCKRUN_SENTINEL_PASSWORD=$GUARD_SECRET REDISCLI_AUTH=$LOCKER_SECRET \
        lock_run_release
    REDLOCKRUN_SENTINEL_PASSWORD=$SENTINEL_SECRET REDISCLI_AUTH=$LOCKER_SECRET lock_run_release
}

test_sentinel_credentials_from_a_config_file() {
    before_each || return
    unset REDLOCKRUN_URL # the environment would override the files' url
    (umask 077 && cat >"$WORK/config" <<EOF_CONFIG
password-file = "$SECRETS/locker"
sentinel-user = guard
sentinel-password-file = "$SECRETS/guard"
EOF_CONFIG
    )
    run_rlr --config "$WORK/config" -u "$URL" -k job -- true
    expect_status 0 "a run"
    no_secret_in "$err" "stderr"
    expect_eq "$(rcli exists job)" 0 "released"
    [ -n "$(rcli get '{job}:redlockrun:fence')" ] || fail "no grant on the master"
    run_rlr --config "$WORK/config" -u "$URL" -k job --status
    expect_status 0 "--status"
    # The command line overrides the file: a wrong password from it is refused.
    run_rlr --config "$WORK/config" -u "$URL" --sentinel-password-file "$SECRETS/wrong" -k job -- touch "$WORK/ran"
    expect_status 69 "a wrong password on the command line over the file's right one"
    [ -e "$WORK/ran" ] && fail "the command ran"
    no_secret_in "$err" "stderr"
    # The URL of three sentinels in the file too, quoted as a value with commas must be.
    printf 'url = "%s"\n' "$URL" >>"$WORK/config"
    run_rlr --config "$WORK/config" -k job --status
    expect_status 0 "--status with the Sentinel URL from the file"
    rcli flushall >/dev/null
    run_rlr --config "$WORK/config" -k job -- true
    expect_status 0 "a run with the Sentinel URL from the file"
    [ -n "$(rcli get '{job}:redlockrun:fence')" ] || fail "no grant on the master with the file's URL"
}

# Wrong, or no, credentials for the sentinels: 69 naming the sentinels and why, with no password
# shown and nothing written on the master. A wrong password for the master: the same.
test_wrong_credentials_give_69() {
    before_each || return
    local before
    rcli set unrelated 1 >/dev/null
    before=$(database_snapshot)
    run_rlr --sentinel-password-file "$SECRETS/wrong" --password-file "$SECRETS/locker" -u "$URL" \
        -k job -- touch "$WORK/ran"
    expect_status 69 "a wrong sentinel password"
    expect_contains "$err" "127.0.0.1:$SENT1_PORT" "the message names the sentinels"
    expect_contains "$err" "WRONGPASS" "the message says the sentinels refused the password"
    no_secret_in "$err" "stderr"
    run_rlr --sentinel-user guard --sentinel-password-file "$SECRETS/sentinel" \
        --password-file "$SECRETS/locker" -u "$URL" -k job -- touch "$WORK/ran"
    expect_status 69 "another user's password"
    expect_contains "$err" "WRONGPASS" "message"
    no_secret_in "$err" "stderr"
    run_rlr --password-file "$SECRETS/locker" -u "$URL" -k job -- touch "$WORK/ran"
    expect_status 69 "no sentinel password"
    expect_contains "$err" "needs a password, and none was given: give one with --sentinel-password-file" \
        "the message says the sentinels want a password"
    no_secret_in "$err" "stderr"
    run_rlr --sentinel-password-file "$SECRETS/sentinel" --password-file "$SECRETS/wrong" -u "$URL" \
        -k job -- touch "$WORK/ran"
    expect_status 69 "a wrong password for the master"
    expect_contains "$err" "WRONGPASS" "message"
    no_secret_in "$err" "stderr"
    REDLOCKRUN_SENTINEL_PASSWORD=Wrong-Secret-3030 REDISCLI_AUTH=$LOCKER_SECRET \
        run_rlr -u "$URL" -k job --status
    expect_status 69 "--status with a wrong sentinel password from the environment"
    no_secret_in "$err$out" "the output of --status"
    [ -e "$WORK/ran" ] && fail "a command ran"
    expect_eq "$(database_snapshot)" "$before" "the master's data"
}

# secrets_of PID [VARIABLE=VALUE...]: what of the passwords /proc shows of PID's arguments and
# environment, but for the variables given, which the user set: the command inherits redlockrun's
# environment as it is (a redis-cli or a nested redlockrun in it may use them), and redlockrun adds
# no password to it.
secrets_of() {
    local pid=$1 secret
    shift
    for secret in "${ALL_SECRETS[@]}"; do
        if tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qF -- "$secret"; then
            echo "argv: $secret"
        fi
        if tr '\0' '\n' <"/proc/$pid/environ" | grep -vxF "${@/#/-e}" -e '' | grep -qF -- "$secret"; then
            echo "environment: $secret"
        fi
    done
}

# The command sees no password in its arguments, nor in its environment beyond what the user put
# there, whichever way the passwords came.
test_no_password_reaches_the_command() {
    before_each || return
    local way
    for way in files environment url; do
        rm -f "$WORK/child"
        case $way in
        files)
            start_bg holder --sentinel-user guard --sentinel-password-file "$SECRETS/guard" \
                --password-file "$SECRETS/locker" -u "$URL" -k job -c "echo \$\$ >'$WORK/child'; exec sleep 30"
            ;;
        environment)
            REDLOCKRUN_SENTINEL_USER=guard REDLOCKRUN_SENTINEL_PASSWORD=$GUARD_SECRET \
                start_bg holder -u "$URL" --password-file "$SECRETS/locker" -k job \
                -c "echo \$\$ >'$WORK/child'; exec sleep 30"
            ;;
        url)
            # The master's password in the URL: redlockrun warns, and hides it from ps.
            REDLOCKRUN_SENTINEL_PASSWORD=$SENTINEL_SECRET \
                start_bg holder -u "$(SENTINEL_URL_CREDENTIALS="locker:$LOCKER_SECRET@" sentinel_url)" \
                -k job -c "echo \$\$ >'$WORK/child'; exec sleep 30"
            ;;
        esac
        wait_for "the command ($way)" test -s "$WORK/child" || { kill "$holder"; continue; }
        wait_for "sleep to be exec'd ($way)" grep -q sleep "/proc/$(cat "$WORK/child")/cmdline"
        local child
        child=$(cat "$WORK/child")
        local given=()
        case $way in
        environment) given=("REDLOCKRUN_SENTINEL_PASSWORD=$GUARD_SECRET") ;;
        url) given=("REDLOCKRUN_SENTINEL_PASSWORD=$SENTINEL_SECRET") ;;
        esac
        expect_eq "$(secrets_of "$child" "${given[@]}")" "" "passwords in the command's /proc ($way)"
        if [ ${#given[@]} -gt 0 ]; then
            tr '\0' '\n' <"/proc/$child/environ" | grep -qxF -- "${given[0]}" ||
                fail "the command did not inherit ${given[0]%%=*} as it was set ($way)"
        fi
        expect_eq "$(grep -c '^' <(tr '\0' '\n' <"/proc/$holder/cmdline" | grep -F -e "$LOCKER_SECRET" \
            -e "$GUARD_SECRET" -e "$SENTINEL_SECRET"))" 0 "passwords in redlockrun's arguments ($way)"
        kill -TERM "$holder"
        exit_of "$holder"
        expect_eq "$?" 143 "the holder's status ($way)"
        no_secret_in "$(cat "$WORK/holder.err")" "stderr ($way)"
    done
}

# rediss-sentinel://: TLS to the sentinels and to the data nodes, with replication and the
# sentinels' own links over TLS too; a failover while a holder runs. On a topology of its own.
test_tls_lock_run_release_and_a_failover() {
    command -v openssl >/dev/null || { fail "openssl is not installed"; return; }
    local pki="$WORK/pki"
    mkdir "$pki"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$pki/ca.key" -out "$pki/ca.crt" -days 2 -subj "/CN=sentinel test CA" 2>/dev/null
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/server.key" 2>/dev/null
    openssl req -new -key "$pki/server.key" -out "$pki/server.csr" -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$pki/server.ext"
    openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
        -out "$pki/server.crt" -days 2 -extfile "$pki/server.ext" 2>/dev/null
    [ -s "$pki/server.crt" ] || { fail "openssl made no certificate"; return; }
    TOPOLOGY_TLS=1
    TOPOLOGY_TLS_OPTIONS=(--tls-cert-file "$pki/server.crt" --tls-key-file "$pki/server.key"
        --tls-ca-cert-file "$pki/ca.crt" --tls-auth-clients no)
    DATA_OPTIONS=() DATA_CLI=() SENTINEL_OPTIONS=() SENTINEL_CLI=() SENTINEL_CONFIG='' SENTINEL_URL_CREDENTIALS=''
    start_sentinel_topology || return
    local url
    url=$(sentinel_url)
    [[ "$url" == rediss-sentinel://* ]] || fail "the URL: $url"
    local ca=(--tls-ca-file "$pki/ca.crt")
    run_rlr -u "$url" "${ca[@]}" -k job -- sh -c 'echo $REDLOCKRUN_FENCE'
    expect_status 0 "a run over TLS"
    expect_eq "$out" "$(rcli get '{job}:redlockrun:fence')" "the fence of the grant on the master"
    expect_eq "$(rcli exists job)" 0 "released"
    run_rlr -u "$url" "${ca[@]}" -k job --status
    expect_status 0 "--status over TLS"
    # The system's CAs do not know the test CA: the sentinels' certificates are refused.
    run_rlr -u "$url" -k job -- touch "$WORK/ran"
    expect_status 69 "without --tls-ca-file"
    expect_contains "$err" "certificate" "message"
    [ -e "$WORK/ran" ] && fail "the command ran without a verified connection"
    # A failover while a holder renews every second.
    local old_master
    old_master=$(master_port)
    # The holder's command lasts until the checks below are done, however long the failover takes.
    start_bg holder -v --replicas 1 -t 3s -u "$url" "${ca[@]}" -k job -- bash "$SECTION" "$WORK/sections" holder "$WORK/done" 9
    wait_for "the holder" lock_held job || return
    force_failover || return
    sleep 4
    run_rlr -u "$url" "${ca[@]}" -n -k job -- true
    expect_status 75 "the lock is held on the new master"
    touch "$WORK/done"
    exit_of "$holder"
    expect_eq "$?" 9 "the holder's status (its command's own)"
    expect_not_contains "$(cat "$WORK/holder.err")" "lost the lock" "the holder's stderr"
    [ "$(master_port)" != "$old_master" ] || fail "no failover"
    expect_eq "$(rcli exists job)" 0 "released on the new master"
}

run_tests
