#!/usr/bin/env bash
# TLS (rediss://): the lock over TLS, certificates verified by default (CA and name), client
# certificates, and every TLS file or option that cannot work refused with 64 before anything
# connects; servers that do not speak TLS, or do not answer, give 69.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || {
    echo "FATAL: openssl is not installed (the README's test command installs it)" >&2
    exit 1
}
# The system's CA store must be the default, whatever this shell's environment says.
unset SSL_CERT_FILE SSL_CERT_DIR

# A CA of the tests' own, a server certificate for localhost and 127.0.0.1, a client certificate,
# and a second CA that signed nothing the servers use.
PKI="$WORK/pki"
mkdir "$PKI"
make_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/$1.key" 2>/dev/null; }
make_ca() {
    make_key "$1"
    openssl req -x509 -new -key "$PKI/$1.key" -out "$PKI/$1.crt" -days 2 -subj "/CN=$1" 2>/dev/null
}
make_signed() { # NAME SUBJECT [EXTENSIONS]
    make_key "$1"
    openssl req -new -key "$PKI/$1.key" -out "$PKI/$1.csr" -subj "/CN=$2" 2>/dev/null
    printf '%s\n' "${3:-basicConstraints=CA:FALSE}" >"$PKI/$1.ext"
    openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
        -out "$PKI/$1.crt" -days 2 -extfile "$PKI/$1.ext" 2>/dev/null
}
make_ca ca
make_ca other-ca
make_signed server localhost "subjectAltName=DNS:localhost,IP:127.0.0.1"
make_signed client "redlockrun test client"
openssl pkey -in "$PKI/client.key" -aes256 -passout pass:Key-Secret-1312 \
    -out "$PKI/client-encrypted.key" 2>/dev/null
printf 'not a certificate\n' >"$PKI/not-pem.txt"
for file in ca.crt other-ca.crt server.crt server.key client.crt client.key client-encrypted.key; do
    [ -s "$PKI/$file" ] || { echo "FATAL: openssl did not make $file" >&2; exit 1; }
done

tls_options=(--tls-cert-file "$PKI/server.crt" --tls-key-file "$PKI/server.key"
    --tls-ca-cert-file "$PKI/ca.crt")
start_redis TLS --tls "${tls_options[@]}" --tls-auth-clients no
start_redis MUTUAL --tls "${tls_options[@]}" --tls-auth-clients yes
start_redis GUARDED --tls "${tls_options[@]}" --tls-auth-clients no --requirepass 'Tls-Secret-5150'
# Closes a client connection after one second without a request.
start_redis IDLE --tls "${tls_options[@]}" --tls-auth-clients no --timeout 1
tls_cli() { redis-cli -s "$TLS_SOCK" "$@"; }
tls_lock_held() { [ "$(tls_cli exists "$1")" = 1 ]; }
mutual_cli() { redis-cli -s "$MUTUAL_SOCK" "$@"; }
TLS_URL="rediss://127.0.0.1:$TLS_PORT"
CA=(--tls-ca-file "$PKI/ca.crt")

before_each() { tls_cli flushall >/dev/null; mutual_cli flushall >/dev/null; }

test_a_lock_over_tls_runs_the_command_and_is_released() {
    before_each
    run_rlr -u "$TLS_URL" "${CA[@]}" -k job -- sh -c 'echo "fence $REDLOCKRUN_FENCE"'
    expect_status 0
    expect_eq "$out" "fence $(tls_cli get '{job}:redlockrun:fence')" "the command ran under the lock"
    expect_eq "$(tls_cli exists job)" 0 "released"
    run_rlr -u "$TLS_URL" "${CA[@]}" -k job --status
    expect_status 0
    expect_contains "$out" "free" "--status over TLS"
}

# Renewals and the waiter's BLPOP read replies that arrive long after the request, through OpenSSL's
# buffers; the hand-off must be as prompt as in clear.
test_renewal_and_handoff_over_tls() {
    before_each
    start_bg holder -v -u "$TLS_URL" "${CA[@]}" -t 1s -k job -c "sleep 1.5; date +%s%3N >$WORK/holder-end"
    wait_for "the holder" tls_lock_held job
    start_bg waiter -u "$TLS_URL" "${CA[@]}" -k job -c "date +%s%3N >$WORK/waiter-start"
    exit_of "$holder"
    expect_eq "$?" 0 "the holder's status"
    exit_of "$waiter"
    expect_eq "$?" 0 "the waiter's status"
    expect_contains "$(cat "$WORK/holder.err")" "renewed job" "renewals over TLS"
    local started ended
    read_number started "$WORK/waiter-start" || return
    read_number ended "$WORK/holder-end" || return
    local gap=$((started - ended))
    expect_ge "$gap" 0 "the waiter started after the holder ended"
    expect_lt "$gap" 2500 "woken by the release, not by its 5 s poll"
    expect_eq "$(tls_cli exists job)" 0 "released"
}

test_a_password_travels_inside_tls_and_is_never_shown() {
    redis-cli -s "$GUARDED_SOCK" --no-auth-warning -a 'Tls-Secret-5150' flushall >/dev/null
    local url="rediss://127.0.0.1:$GUARDED_PORT"
    REDISCLI_AUTH=Wrong-Secret-8086 run_rlr -v -u "$url" "${CA[@]}" -k job -- touch "$WORK/ran"
    expect_status 69 "a wrong password"
    expect_contains "$err" "WRONGPASS" "message"
    expect_not_contains "$err" "Wrong-Secret-8086" "the password"
    [ -e "$WORK/ran" ] && fail "the command ran"
    REDISCLI_AUTH=Tls-Secret-5150 run_rlr -v -u "$url" "${CA[@]}" -k job -- touch "$WORK/ran"
    expect_status 0 "the right one"
    [ -e "$WORK/ran" ] || fail "the command did not run"
    expect_not_contains "$err$out" "Tls-Secret-5150" "the password"
    expect_eq "$(redis-cli -s "$GUARDED_SOCK" --no-auth-warning -a 'Tls-Secret-5150' exists job)" 0 "released"
}

# The server closes the connection while the command runs: the release goes out on a new one,
# with a new handshake.
test_a_release_after_the_server_closed_an_idle_connection() {
    redis-cli -s "$IDLE_SOCK" flushall >/dev/null
    run_rlr -u "rediss://127.0.0.1:$IDLE_PORT" "${CA[@]}" -k idle -- sleep 3
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_eq "$(redis-cli -s "$IDLE_SOCK" pttl idle)" -2 "the lock is released, not left to expire"
    run_rlr -u "rediss://127.0.0.1:$IDLE_PORT" "${CA[@]}" -t 6s -k idle -- sleep 5
    expect_status 0 "renewals every 2 s"
    expect_eq "$err" "" "stderr of renewals on connections closed while idle"
    expect_eq "$(redis-cli -s "$IDLE_SOCK" pttl idle)" -2 "released after the renewals"
}

# A proxy that forgets idle connections resets the release's: it goes out again, over a new
# handshake (tests/e2e/idle_proxy.py).
test_a_release_through_a_proxy_that_resets_idle_connections() {
    before_each
    python3 "$(dirname "$0")/idle_proxy.py" 0 "$TLS_PORT" 1 drop "$WORK/proxy" 2>"$WORK/proxy.log" &
    BACKGROUND_PIDS+=("$!")
    wait_for "the proxy" test -s "$WORK/proxy"
    run_rlr -u "rediss://127.0.0.1:$(cat "$WORK/proxy")" "${CA[@]}" -k job -- sleep 2
    expect_status 0
    expect_eq "$err" "" "stderr"
    expect_eq "$(wc -l <"$WORK/proxy.resets")" 1 "the release met the reset"
    expect_eq "$(tls_cli pttl job)" -2 "the lock is released"
}

test_the_server_name_is_verified() {
    before_each
    run_rlr -u "$TLS_URL" "${CA[@]}" --tls-server-name redis.example.com -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "certificate was not accepted: hostname mismatch (it is not issued for redis.example.com; see --tls-server-name)" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(tls_cli dbsize)" 0 "nothing written"
    run_rlr -u "$TLS_URL" "${CA[@]}" --tls-server-name 127.0.0.2 -k job -- true
    expect_status 69 "an IP address the certificate does not name"
    expect_contains "$err" "certificate was not accepted: IP address mismatch (it is not issued for 127.0.0.2; see --tls-server-name)" "message"
    run_rlr -u "rediss://localhost:$TLS_PORT" "${CA[@]}" -k job -- true
    expect_status 0 "a name in the certificate"
    run_rlr -u "$TLS_URL" "${CA[@]}" --tls-server-name localhost -k job -- true
    expect_status 0 "--tls-server-name names what the certificate is for"
}

test_a_certificate_from_an_unknown_ca_is_refused() {
    before_each
    run_rlr -u "$TLS_URL" -k job -- touch "$WORK/ran"
    expect_status 69 "the system's CAs do not know the test CA"
    run_rlr -u "$TLS_URL" -w 10s -k job -- touch "$WORK/ran"
    expect_status 69 "with -w"
    expect_lt "$elapsed_ms" 3000 "with -w, at once: no wait mends a certificate"
    expect_contains "$err" "cannot connect to Redis at 127.0.0.1:$TLS_PORT (the URL from --url): the server's certificate was not accepted: self-signed certificate in certificate chain (see --tls-ca-file)" "message"
    run_rlr -u "$TLS_URL" --tls-ca-file "$PKI/other-ca.crt" -k job -- touch "$WORK/ran"
    expect_status 69 "another CA"
    expect_contains "$err" "certificate was not accepted" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(tls_cli dbsize)" 0 "nothing written"
}

test_a_server_that_wants_a_client_certificate() {
    before_each
    local url="rediss://127.0.0.1:$MUTUAL_PORT"
    run_rlr -u "$url" "${CA[@]}" -k job -- touch "$WORK/ran"
    expect_status 69 "without a client certificate"
    # TLS 1.3 says why in an alert after the handshake; a reset can overtake it.
    [[ "$err" == *"the server requires a client certificate (see --tls-cert)"* ||
        "$err" == *"closed the connection"* ]] || fail "message: $err"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(mutual_cli dbsize)" 0 "nothing written"
    # The refusal races with our first request (an alert, or a reset first): whichever wins, it
    # is 69, also for --status, which has no signal handling of its own to fall back on.
    local attempt
    for attempt in 1 2 3; do
        run_rlr -u "$url" "${CA[@]}" -k job --status
        expect_status 69 "--status without a client certificate, attempt $attempt"
    done
    run_rlr -u "$url" "${CA[@]}" --tls-cert "$PKI/client.crt" --tls-key "$PKI/client.key" -k job -- touch "$WORK/ran"
    expect_status 0 "with one"
    [ -e "$WORK/ran" ] || fail "the command did not run"
    expect_eq "$(mutual_cli exists job)" 0 "released"
}

test_unusable_tls_files_and_options_are_usage_errors() {
    before_each
    local url="rediss://127.0.0.1:$MUTUAL_PORT" cert=(--tls-cert "$PKI/client.crt")
    # A FIFO that nobody writes to would block whoever opens it for reading.
    [ -p "$PKI/fifo" ] || mkfifo "$PKI/fifo"
    local args expected
    while IFS='|' read -r args expected; do
        eval "set -- $args"
        timeout -k 1 10 "$REDLOCKRUN" "$@" -k job -- touch "$WORK/ran" >"$WORK/out" 2>"$WORK/err"
        status=$?
        err=$(cat "$WORK/err")
        expect_status 64 "$args"
        expect_contains "$err" "$expected" "message for $args"
        expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "one line for $args"
    done <<EOF_CASES
-u $url --tls-ca-file $PKI/missing.crt|--tls-ca-file: cannot read $PKI/missing.crt: No such file or directory
-u $url --tls-ca-file $PKI|--tls-ca-file: cannot read $PKI: Is a directory
-u $url --tls-ca-file $PKI/fifo|--tls-ca-file: $PKI/fifo is a FIFO, not a regular file
-u $url --tls-ca-file /dev/zero|--tls-ca-file: /dev/zero is a character device, not a regular file
-u $url --tls-cert $PKI/fifo --tls-key $PKI/client.key|--tls-cert: $PKI/fifo is a FIFO, not a regular file
-u $url ${cert[*]} --tls-key $PKI/fifo|--tls-key: $PKI/fifo is a FIFO, not a regular file
-u $url --tls-ca-file $PKI/not-pem.txt|--tls-ca-file: $PKI/not-pem.txt holds no usable PEM certificate
-u $url ${cert[*]}|--tls-cert needs --tls-key
-u $url --tls-key $PKI/client.key|--tls-key needs --tls-cert
-u $url --tls-cert $PKI/client.key --tls-key $PKI/client.key|--tls-cert: $PKI/client.key holds no usable PEM certificate
-u $url ${cert[*]} --tls-key $PKI/server.key|--tls-key: $PKI/server.key is not the key of the certificate in $PKI/client.crt
-u $url ${cert[*]} --tls-key $PKI/client-encrypted.key|--tls-key: $PKI/client-encrypted.key is encrypted; give a key without a passphrase
-u $url --tls-server-name=|--tls-server-name: the name is empty
-u redis://127.0.0.1:$MUTUAL_PORT --tls-ca-file $PKI/ca.crt|--tls-ca-file needs a rediss:// URL, and --url gives a redis:// one
-u unix://$MUTUAL_SOCK --tls-server-name localhost|--tls-server-name needs a rediss:// URL, and --url gives a unix:// one
EOF_CASES
    [ -e "$WORK/ran" ] && fail "a command ran"
    expect_eq "$(mutual_cli dbsize)" 0 "nothing written"
    expect_eq "$(rcli dbsize)" 0 "nothing written in clear either"
}

# An exhausted descriptor table while reading a TLS file is the operating system's trouble (71).
test_tls_and_clear_text_mixed_up_give_69() {
    before_each
    run_rlr -u "rediss://127.0.0.1:$REDIS_PORT" "${CA[@]}" --connect-timeout 2s -k job -- touch "$WORK/ran"
    expect_status 69 "rediss:// to a server in clear"
    expect_contains "$err" "cannot connect to Redis at 127.0.0.1:$REDIS_PORT" "message"
    # Redis in clear usually waits for the rest of what it takes for a command ("no answer to the
    # TLS handshake"); should it answer in clear instead, the handshake fails.
    expect_contains "$err" "TLS handshake" "message"
    run_rlr -u "redis://127.0.0.1:$TLS_PORT" --connect-timeout 2s -k job -- touch "$WORK/ran"
    expect_status 69 "redis:// to a TLS port"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli dbsize)" 0 "nothing written"
    expect_eq "$(tls_cli dbsize)" 0 "nothing written"
}

test_a_stalled_tls_server_times_out_in_the_handshake() {
    before_each
    kill -STOP "$TLS_PID"
    run_rlr -u "$TLS_URL" "${CA[@]}" --connect-timeout 300ms -k job -- true
    kill -CONT "$TLS_PID"
    expect_status 69
    expect_contains "$err" "cannot connect to Redis at 127.0.0.1:$TLS_PORT (the URL from --url): no answer to the TLS handshake within 300ms" "message"
}

# OpenSSL is loaded only for rediss:// (src/redis/openssl_loader.cpp): a plain run maps neither
# libssl nor libcrypto, and pays nothing for them at start-up.
mapped_openssl() { # PID: the OpenSSL libraries in its address space, one per line
    grep -oE '/(libssl|libcrypto)\.so[^ ]*$' "/proc/$1/maps" | sort -u
}

test_only_a_rediss_run_maps_openssl() {
    before_each
    start_bg plain -u "redis://127.0.0.1:$REDIS_PORT" -k plain -- sleep 30
    start_bg secure -u "$TLS_URL" "${CA[@]}" -k secure -- sleep 30
    wait_for "the plain holder" lock_held plain || return
    wait_for "the TLS holder" tls_lock_held secure || return
    expect_eq "$(mapped_openssl "$plain")" "" "OpenSSL mapped by a redis:// run"
    local secure_maps
    secure_maps=$(mapped_openssl "$secure")
    expect_contains "$secure_maps" "/libssl.so.3" "libssl mapped by a rediss:// run"
    expect_contains "$secure_maps" "/libcrypto.so.3" "libcrypto mapped by a rediss:// run"
}

# A libssl.so.3 that cannot be loaded, put first on the search path: the system's own cannot be
# hidden from an unprivileged test, but one earlier on LD_LIBRARY_PATH shadows it. The failure
# path is the same as for a missing library (dlopen fails); only the system's reason differs.
test_an_openssl_that_cannot_be_loaded_gives_69() {
    before_each
    mkdir "$WORK/broken"
    printf 'not a shared object\n' >"$WORK/broken/libssl.so.3"
    LD_LIBRARY_PATH="$WORK/broken" run_rlr -u "$TLS_URL" "${CA[@]}" -k job -- touch "$WORK/ran"
    expect_status 69
    expect_contains "$err" "redlockrun: rediss:// needs OpenSSL's libssl.so.3 (package libssl3), which cannot be loaded: $WORK/broken/libssl.so.3:" "message"
    expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "one line"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(tls_cli dbsize)" 0 "nothing written"
    LD_LIBRARY_PATH="$WORK/broken" run_rlr -u "redis://127.0.0.1:$REDIS_PORT" -k job -- touch "$WORK/ran"
    expect_status 0 "a redis:// run does not need OpenSSL"
    [ -e "$WORK/ran" ] || fail "the command did not run without TLS"
}

# A shared object that loads but is not OpenSSL's libssl (here libcrypto under libssl's name):
# a function missing from it is named, rather than called through a null pointer.
test_a_libssl_without_openssls_functions_gives_69() {
    before_each
    local libcrypto
    libcrypto=$(ldconfig -p | awk '$1 == "libcrypto.so.3" {print $NF; exit}')
    [ -n "$libcrypto" ] || { fail "ldconfig knows no libcrypto.so.3"; return; }
    mkdir "$WORK/impostor"
    cp "$libcrypto" "$WORK/impostor/libssl.so.3"
    LD_LIBRARY_PATH="$WORK/impostor" run_rlr -u "$TLS_URL" "${CA[@]}" -k job --status
    expect_status 69
    expect_contains "$err" "rediss:// needs OpenSSL's libssl.so.3 (package libssl3), which cannot be loaded: $WORK/impostor/libssl.so.3: undefined symbol: SSL_" "message"
    expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "one line"
}

run_tests
