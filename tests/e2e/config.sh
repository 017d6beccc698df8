#!/usr/bin/env bash
# Config files (DESIGN.md §10): the order of the places settings come from, --config, and files that
# are refused, each against real redis-servers.
#
#   REDLOCKRUN_TEST_SYSCONFDIR_BINARY  redlockrun built to read REDLOCKRUN_TEST_SYSTEM_CONFIG as its
#                                      system file (the real binary reads only the sysconfdir's)
. "$(dirname "$0")/lib.sh"

SYSCONF_BINARY=${REDLOCKRUN_TEST_SYSCONFDIR_BINARY:?set by CTest}
SYSTEM_CONFIG=${REDLOCKRUN_TEST_SYSTEM_CONFIG:?set by CTest}
EXAMPLE="$(dirname "$0")/../../packaging/redlockrun.conf.example"
mkdir -p "$(dirname "$SYSTEM_CONFIG")"
rm -f "$SYSTEM_CONFIG"
trap 'rm -f "$SYSTEM_CONFIG"; cleanup' EXIT

start_redis SYS
start_redis USER
start_redis CMD
start_redis SECURE --requirepass 'correct horse battery'

# The server a run took its lock on: the one that has the key's fencing counter.
server_of() {
    local prefix port
    for prefix in REDIS SYS USER CMD; do
        port=${prefix}_PORT
        if [ "$(redis-cli -p "${!port}" exists "{$1}:redlockrun:fence")" = 1 ]; then
            echo "$prefix"
        fi
    done
}

flush_all() {
    local prefix port
    for prefix in REDIS SYS USER CMD; do
        port=${prefix}_PORT
        redis-cli -p "${!port}" flushall >/dev/null
    done
}

write_user_config() { # TEXT [MODE]
    mkdir -p "$WORK/xdg/redlockrun"
    printf '%s\n' "$1" >"$WORK/xdg/redlockrun/config"
    chmod "${2:-600}" "$WORK/xdg/redlockrun/config"
}

# Each place overrides the one before: system file, user file, environment, command line. Seen in
# which server takes the lock (url) and in the lock's TTL (ttl).
test_each_place_overrides_the_one_before() {
    local REDLOCKRUN=$SYSCONF_BINARY
    export XDG_CONFIG_HOME="$WORK/xdg"
    unset REDLOCKRUN_URL
    printf 'url = "redis://127.0.0.1:%s"\nttl = 41s\nkill-after = 2s\n' "$SYS_PORT" >"$SYSTEM_CONFIG"
    run_rlr -k a -- true
    expect_status 0
    expect_eq "$(server_of a)" SYS "the system file alone"

    write_user_config "url = redis://127.0.0.1:$USER_PORT
ttl = 52s"
    run_rlr -k b -- sh -c "redis-cli -p $USER_PORT pttl b"
    expect_status 0
    expect_eq "$(server_of b)" USER "the user's file over the system's"
    expect_ge "$out" 45000 "the user's ttl over the system's"

    REDLOCKRUN_URL="redis://127.0.0.1:$REDIS_PORT" run_rlr -k c -- sh -c "redis-cli -p $REDIS_PORT pttl c"
    expect_status 0
    expect_eq "$(server_of c)" REDIS "the environment over the files"
    expect_ge "$out" 45000 "the user file's ttl, with the URL from the environment"

    REDLOCKRUN_URL="redis://127.0.0.1:$REDIS_PORT" run_rlr -u "redis://127.0.0.1:$CMD_PORT" -t 30s \
        -k d -- sh -c "redis-cli -p $CMD_PORT pttl d"
    expect_status 0
    expect_eq "$(server_of d)" CMD "the command line over everything"
    expect_lt "$out" 31000 "the command line's ttl"
    rm -f "$SYSTEM_CONFIG"
}

test_config_replaces_both_files() {
    local REDLOCKRUN=$SYSCONF_BINARY
    export XDG_CONFIG_HOME="$WORK/xdg"
    unset REDLOCKRUN_URL
    printf 'url = redis://127.0.0.1:%s\nttl = 300ms\n' "$SYS_PORT" >"$SYSTEM_CONFIG"
    write_user_config "url = redis://127.0.0.1:$USER_PORT"
    printf 'url = redis://127.0.0.1:%s\n' "$CMD_PORT" >"$WORK/named.conf"
    run_rlr --config "$WORK/named.conf" -k e -- sh -c "redis-cli -p $CMD_PORT pttl e"
    expect_status 0
    expect_eq "$(server_of e)" CMD "--config's file, and neither of the others"
    expect_ge "$out" 20000 "the system file's ttl was not read"

    # /dev/null: no settings from any file.
    REDLOCKRUN_URL="redis://127.0.0.1:$REDIS_PORT" run_rlr --config /dev/null -k f -- true
    expect_status 0
    expect_eq "$(server_of f)" REDIS "no file at all"

    flush_all
    run_rlr --config "$WORK/missing.conf" -k g -- touch "$WORK/ran"
    expect_status 64
    expect_eq "$err" "redlockrun: cannot read the config file $WORK/missing.conf: No such file or directory" "message"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(server_of g)" "" "nothing written"
    rm -f "$SYSTEM_CONFIG"
}

# Applications set $REDIS_URL for their own Redis: a config file's url wins over it, so that every
# host of a fleet locks on the fleet's server; $REDLOCKRUN_URL and --url still win over the file.
# -v and a connection error name where the URL came from, and -v which password was used.
test_a_config_files_url_wins_over_redis_url() {
    export XDG_CONFIG_HOME="$WORK/xdg"
    unset REDLOCKRUN_URL
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
    write_user_config "# the fleet's server
url = redis://127.0.0.1:$USER_PORT"
    run_rlr -v -k i -- true
    expect_status 0
    expect_eq "$(server_of i)" USER "the file's server, not \$REDIS_URL's"
    expect_contains "$err" "redlockrun: using Redis at 127.0.0.1:$USER_PORT (the URL from $WORK/xdg/redlockrun/config, line 2: url); no password" "-v names the server and the URL's origin"
    REDLOCKRUN_URL="redis://127.0.0.1:$CMD_PORT" run_rlr -v -k j -- true
    expect_status 0
    expect_eq "$(server_of j)" CMD "\$REDLOCKRUN_URL over the file"
    expect_contains "$err" "(the URL from \$REDLOCKRUN_URL)" "-v names \$REDLOCKRUN_URL"
    run_rlr -u "redis://127.0.0.1:$SYS_PORT" -k k -- true
    expect_eq "$(server_of k)" SYS "--url over the file"

    rm -f "$WORK/xdg/redlockrun/config"
    REDISCLI_AUTH='correct horse battery' REDIS_URL="redis://127.0.0.1:$SECURE_PORT" run_rlr -v -k l -- true
    expect_status 0 "\$REDIS_URL without a file"
    expect_contains "$err" "redlockrun: using Redis at 127.0.0.1:$SECURE_PORT (the URL from \$REDIS_URL); password from \$REDISCLI_AUTH" "-v names the password's origin"
    expect_not_contains "$err" "horse" "-v never shows the password"
    redis-cli -p "$SECURE_PORT" --no-auth-warning -a 'correct horse battery' flushall >/dev/null

    local port
    port=$(free_port)
    write_user_config "url = redis://127.0.0.1:$port"
    run_rlr -k m -- touch "$WORK/ran"
    expect_status 69
    expect_eq "$err" "redlockrun: cannot connect to Redis at 127.0.0.1:$port (the URL from $WORK/xdg/redlockrun/config, line 1: url): Connection refused" "the error names the file and line"
    unset REDIS_URL
    rm -f "$WORK/xdg/redlockrun/config"
    run_rlr -u "redis://127.0.0.1:$port" -k m -- touch "$WORK/ran"
    expect_contains "$err" "(the URL from --url)" "the error names --url"
    [ -e "$WORK/ran" ] && fail "the command ran"
    # A developer's machine may have a Redis on the default port: this run may then succeed.
    XDG_CONFIG_HOME="$WORK/nothing" run_rlr -k m -- true
    if [ "$status" = 69 ]; then # nothing listens on the default port on this machine
        expect_contains "$err" "cannot connect to Redis at 127.0.0.1:6379 (the default URL; set --url, \$REDLOCKRUN_URL or url in a config file)" "the error names the default"
    fi
    flush_all
}

# Missing default files are fine: only --config's must exist.
test_missing_default_files_are_fine() {
    local REDLOCKRUN=$SYSCONF_BINARY
    export XDG_CONFIG_HOME="$WORK/nothing/here"
    run_rlr -k h -- true
    expect_status 0
    expect_eq "$(server_of h)" REDIS "the environment's server"
}

test_a_password_in_a_file_others_can_read_is_refused() {
    export XDG_CONFIG_HOME="$WORK/xdg"
    unset REDLOCKRUN_URL
    local mode
    for mode in 644 640 604; do
        write_user_config "url = redis://:correct%20horse%20battery@127.0.0.1:$SECURE_PORT" "$mode"
        run_rlr -k job -- touch "$WORK/ran"
        expect_status 64 "mode $mode"
        expect_contains "$err" "the config file $WORK/xdg/redlockrun/config holds a password" "mode $mode"
        expect_contains "$err" "(mode 0$mode)" "mode $mode"
        expect_not_contains "$err" "horse" "mode $mode"
        [ -e "$WORK/ran" ] && fail "the command ran (mode $mode)"
    done
    # A lone password in the URL counts as well.
    write_user_config "url = redis://S3cret@127.0.0.1:$SECURE_PORT" 644
    run_rlr -k job -- true
    expect_status 64
    expect_not_contains "$err" "S3cret" "message"
    expect_eq "$(redis-cli -p "$SECURE_PORT" --no-auth-warning -a 'correct horse battery' dbsize)" 0 \
        "nothing written"

    write_user_config "url = redis://:correct%20horse%20battery@127.0.0.1:$SECURE_PORT" 600
    run_rlr -k job -- true
    expect_status 0 "a private file"
    # A password file named by the config is fine at any mode of the config itself.
    printf 'correct horse battery\n' >"$WORK/password"
    chmod 600 "$WORK/password"
    write_user_config "url = redis://127.0.0.1:$SECURE_PORT
password-file = $WORK/password" 644
    run_rlr -k job -- true
    expect_status 0 "a password file"
    expect_eq "$err" "" "no warning"
}

test_an_unknown_or_forbidden_entry_is_an_error_naming_file_and_line() {
    export XDG_CONFIG_HOME="$WORK/xdg"
    write_user_config "# defaults
ttl = 10s
conect-timeout = 1s"
    run_rlr -k job -- touch "$WORK/ran"
    expect_status 64
    expect_eq "$err" "redlockrun: $WORK/xdg/redlockrun/config, line 3: unknown entry 'conect-timeout' (see FILES in redlockrun(1))" "a misspelt entry"
    local entry
    for entry in 'key = other' 'command = "rm -rf /"' 'status = true' 'config = /etc/passwd' \
        'quiet = true'; do
        write_user_config "$entry"
        run_rlr -k job -- touch "$WORK/ran"
        expect_status 64 "$entry"
        expect_contains "$err" "$WORK/xdg/redlockrun/config, line 1: ${entry%% *} can be given on the command line only" "$entry"
    done
    write_user_config "ttl = 1x"
    run_rlr -k job -- touch "$WORK/ran"
    expect_status 64
    expect_contains "$err" "$WORK/xdg/redlockrun/config, line 1: ttl: '1x' is not a duration" "a bad value"
    [ -e "$WORK/ran" ] && fail "the command ran"
    expect_eq "$(rcli dbsize)" 0 "nothing written"
}

# A line redlockrun cannot read as `entry = value` is never read as something else (a file whose
# lines end in a lone CR was one comment, and the run used the default server): 64, the file, the
# line and what is wrong, before anything connects.
test_a_line_that_is_not_entry_equals_value_is_an_error() {
    export XDG_CONFIG_HOME="$WORK/xdg"
    unset REDLOCKRUN_URL REDIS_URL
    local file="$WORK/xdg/redlockrun/config" text expected
    mkdir -p "$WORK/xdg/redlockrun"
    # Each file's URL names the USER server: read in part, or as nothing (the default server), a
    # file would end the run otherwise than with 64.
    while IFS='|' read -r text expected; do
        printf "$text" "$USER_PORT" >"$file"
        chmod 600 "$file"
        run_rlr -k job -- touch "$WORK/ran"
        expect_status 64 "$text"
        expect_eq "$err" "redlockrun: $file, $expected" "$text"
        [ -e "$WORK/ran" ] && fail "the command ran ($text)"
    done <<'CASES'
# hi\rurl = redis://127.0.0.1:%s\r|line 1: a carriage return (CR) ends a line where a newline (LF) should: save the file with LF (or CR LF) line ends
\xef\xbb\xbfurl = redis://127.0.0.1:%s\n|line 1: the file starts with a byte-order mark (U+FEFF): save it as UTF-8 without one
ttl = 5s\nurl = redis://127.0.0.1:%s\0/1\n|line 2: holds a NUL byte: a config file is text
url: redis://127.0.0.1:%s\n|line 1: no '=': write entry = value
\n\nurl redis://127.0.0.1:%s\n|line 3: no '=': write entry = value
redis.url = redis://127.0.0.1:%s\n|line 1: 'redis.url' is a dotted name: redlockrun's entries have no sections, write url = value
url = redis://127.0.0.1:%s\nurl = redis://127.0.0.1:1\n|line 2: url is set twice (also on line 1)
[redis]\nurl = redis://127.0.0.1:%s\n|line 1: [redis]: redlockrun's settings have no sections
CASES
    expect_eq "$(redis-cli -p "$USER_PORT" dbsize)" 0 "nothing written"

    # CR LF line ends, comments, quotes and blank lines are read as they were.
    printf '# written on Windows\r\n\r\nurl = "redis://127.0.0.1:%s" # quoted\r\nttl = 41s\r\n' \
        "$USER_PORT" >"$file"
    run_rlr -k crlf -- sh -c "redis-cli -p $USER_PORT pttl crlf"
    expect_status 0 "CR LF line ends"
    expect_eq "$(server_of crlf)" USER "the file's server"
    expect_ge "$out" 35000 "the file's ttl"
}

# cron starts jobs in $HOME: a relative path in a file names a file beside it, while one on the
# command line stays relative to the working directory.
test_relative_paths_in_a_file_are_beside_it() {
    unset REDLOCKRUN_URL
    mkdir -p "$WORK/etc/secrets" "$WORK/elsewhere" "$WORK/here"
    printf 'correct horse battery\n' >"$WORK/etc/secrets/pw"
    chmod 600 "$WORK/etc/secrets/pw"
    printf 'url = redis://127.0.0.1:%s\npassword-file = secrets/pw\n' "$SECURE_PORT" >"$WORK/etc/rl.conf"
    (cd "$WORK/elsewhere" && run_rlr --config "$WORK/etc/rl.conf" -k rel -- true && echo "$status:$err") \
        >"$WORK/result"
    expect_eq "$(cat "$WORK/result")" "0:" "an absolute --config, run from another folder"
    (cd "$WORK" && run_rlr --config etc/rl.conf -k rel -- true && echo "$status:$err") >"$WORK/result"
    expect_eq "$(cat "$WORK/result")" "0:" "a relative --config"
    # The command line's --password-file is the working directory's.
    printf 'wrong\n' >"$WORK/here/pw"
    chmod 600 "$WORK/here/pw"
    (cd "$WORK/here" && run_rlr --config "$WORK/etc/rl.conf" --password-file pw -k rel -- true &&
        echo "$status:$err") >"$WORK/result"
    expect_contains "$(cat "$WORK/result")" "69:" "the working directory's pw, which is wrong"
    expect_contains "$(cat "$WORK/result")" "WRONGPASS" "the working directory's pw, which is wrong"
    # A missing file is named as the file's folder makes it.
    printf 'url = redis://127.0.0.1:%s\npassword-file = nothing\n' "$SECURE_PORT" >"$WORK/etc/rl.conf"
    (cd "$WORK/elsewhere" && run_rlr --config "$WORK/etc/rl.conf" -k rel -- true && echo "$status:$err") \
        >"$WORK/result"
    expect_eq "$(cat "$WORK/result")" "64:redlockrun: $WORK/etc/rl.conf, line 2: password-file: cannot read $WORK/etc/nothing: No such file or directory" "a missing file"
}

# A password file its group can read is the usual way to share it with a service group (cron would
# mail a warning on every run); one that others can read is warned about. A file's password-file
# that the command line or the environment overrides is not read, so not warned about either.
test_password_file_warnings_are_for_others_only() {
    export XDG_CONFIG_HOME="$WORK/xdg"
    unset REDLOCKRUN_URL
    printf 'correct horse battery\n' >"$WORK/password"
    printf 'correct horse battery\n' >"$WORK/private"
    chmod 600 "$WORK/private"
    local mode
    for mode in 600 640 660 440; do
        chmod "$mode" "$WORK/password"
        run_rlr -u "redis://127.0.0.1:$SECURE_PORT" --password-file "$WORK/password" -k job -- true
        expect_status 0 "mode $mode"
        expect_eq "$err" "" "no warning at mode $mode"
    done
    for mode in 604 644; do
        chmod "$mode" "$WORK/password"
        run_rlr -u "redis://127.0.0.1:$SECURE_PORT" --password-file "$WORK/password" -k job -- true
        expect_status 0 "mode $mode"
        expect_eq "$err" "redlockrun: --password-file: $WORK/password can be read by every user (mode 0$mode); make it unreadable to others with chmod o-r" "mode $mode"
    done
    write_user_config "url = redis://127.0.0.1:$SECURE_PORT
password-file = $WORK/password" 600
    run_rlr -k job -- true
    expect_status 0
    expect_eq "$err" "redlockrun: $WORK/xdg/redlockrun/config, line 2: password-file: $WORK/password can be read by every user (mode 0644); make it unreadable to others with chmod o-r" "the file's password-file"
    run_rlr --password-file "$WORK/private" -k job -- true
    expect_status 0 "--password-file over the file's"
    expect_eq "$err" "" "the file's password-file, overridden, is not warned about"
    REDISCLI_AUTH='correct horse battery' run_rlr -k job -- true
    expect_status 0 "\$REDISCLI_AUTH over the file's password-file"
    expect_eq "$err" "" "the file's password-file, overridden by the environment"
}

# Opening a FIFO for reading waits for a writer: a config file must never make redlockrun hang.
test_a_fifo_is_refused_at_once() {
    export XDG_CONFIG_HOME="$WORK/xdg"
    mkdir -p "$WORK/xdg/redlockrun"
    mkfifo "$WORK/xdg/redlockrun/config" "$WORK/fifo.conf"
    run_rlr -k job -- true
    expect_status 64
    expect_eq "$err" "redlockrun: the config file $WORK/xdg/redlockrun/config is not a regular file; it is not read" "the user's file"
    run_rlr --config "$WORK/fifo.conf" -k job -- true
    expect_status 64
    expect_contains "$err" "the config file $WORK/fifo.conf is not a regular file" "--config"
    expect_lt "$elapsed_ms" 10000 "did not wait for a writer"
}

# The installed example is accepted entry by entry, with its commented-out entries put in.
test_the_example_file_is_accepted() {
    [ -f "$EXAMPLE" ] || { fail "no $EXAMPLE"; return; }
    sed -E 's/^# ?([a-z-]+ = )/\1/' "$EXAMPLE" >"$WORK/example.conf"
    chmod 600 "$WORK/example.conf"
    grep -q '^url = ' "$WORK/example.conf" || fail "the example has no url entry"
    # The command line's URL and the environment's password make the example's own unused.
    REDISCLI_AUTH=x run_rlr --config "$WORK/example.conf" -u "unix://$WORK/no.sock" -k job --status
    expect_status 69
    expect_contains "$err" "cannot connect to Redis at unix:$WORK/no.sock" "the example was accepted"
    run_rlr --config "$EXAMPLE" -k job -- true
    expect_status 0 "the example as installed"
}

run_tests
