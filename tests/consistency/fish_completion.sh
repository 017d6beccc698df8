#!/usr/bin/env bash
# Checks completions/redlockrun.fish: `fish -n`, then what `complete -C LINE` offers for prepared
# command lines (fish computes completions without a terminal).
#
#   fish_completion.sh COMPLETION_FILE REDLOCKRUN
set -u

completion_file=$1
redlockrun=$2
failures=0

if ! command -v fish >/dev/null; then
    echo "not ok: fish is not installed"
    exit 1
fi
if ! fish --no-config -n "$completion_file"; then
    echo "not ok: fish -n $completion_file"
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-fish-completion.XXXXXX")
touch "$work/password" "$work/passage"
# The completion runs the redlockrun it completes for, to list the locks.
mkdir "$work/bin"
ln -s "$(realpath "$redlockrun")" "$work/bin/redlockrun"
PATH=$work/bin:$PATH

# A real server holding locks, behind a password, for -k and --list to offer their names; no
# config file, and by default a server that is not there.
# shellcheck source=tests/consistency/completion_server.sh
. "$(dirname "$0")/completion_server.sh"
start_completion_server "$work" "$redlockrun"
trap 'stop_completion_server; rm -rf "$work"' EXIT

# candidates LINE: the candidates (without their descriptions) that fish offers at the end of LINE.
candidates() {
    # shellcheck disable=SC2016 # expanded by fish
    fish --no-config -c '
        source $argv[1]
        complete -c fakecmd -f -a "fake-alpha fake-beta"
        complete -C $argv[2]' "$completion_file" "$1" | cut -f1 | LC_ALL=C sort -u
}

expect() { # LINE [CANDIDATE...]: at least these are offered (nothing at all if none is given)
    local line=$1 got wanted
    shift
    got=$(candidates "$line")
    if [ $# -eq 0 ] && [ -n "$got" ]; then
        echo "not ok: '$line' offered: $(echo $got)"
        failures=$((failures + 1))
    fi
    for wanted in "$@"; do
        if ! grep -qxF -- "$wanted" <<<"$got"; then
            echo "not ok: '$line' did not offer $wanted (offered: $(echo $got))"
            failures=$((failures + 1))
        fi
    done
}

expect_not() { # LINE CANDIDATE...: none of these is offered
    local line=$1 got unwanted
    shift
    got=$(candidates "$line")
    for unwanted in "$@"; do
        if grep -qxF -- "$unwanted" <<<"$got"; then
            echo "not ok: '$line' offered $unwanted"
            failures=$((failures + 1))
        fi
    done
}

# Every option of --help is offered after "-".
listed=$(bash "$(dirname "$0")/help_options.sh" "$redlockrun") || exit 1
mapfile -t help_options <<<"$listed"
expect 'redlockrun -' "${help_options[@]}"
expect 'redlockrun --ti' --timestamp-unit

expect 'redlockrun --timestamp-unit ' ms s
expect 'redlockrun -k job --on-lost ' term ignore
expect 'redlockrun --on-lost=i' --on-lost=ignore
expect 'redlockrun -t 30' 30ms 30s 30m 30h 30d
expect 'redlockrun --timeout 30' 30ms 30s 30m 30h 30d
expect 'redlockrun -xk job ech' echo
expect 'redlockrun --timeout 5m -k job ech' echo
expect 'redlockrun --kill-after=2' --kill-after=2s
expect 'redlockrun -u ' redis:// rediss:// unix:/// redis-sentinel:// rediss-sentinel://
expect "redlockrun --password-file $work/pas" "$work/passage" "$work/password"
expect "redlockrun --sentinel-password-file $work/pas" "$work/passage" "$work/password"
expect "redlockrun --tls-ca-file $work/pas" "$work/passage" "$work/password"
expect "redlockrun --config $work/pas" "$work/passage" "$work/password"
expect 'redlockrun -k '
expect 'redlockrun -qk '
# --list's pattern may be left out: after it, a word that starts with - is an option.
expect 'redlockrun --list '
expect 'redlockrun --list --js' --json
expect 'redlockrun --list b* --js' --json
expect 'redlockrun --list --json -u ' redis:// rediss:// unix:///
expect_not 'redlockrun --list ' echo
# With --list, the one word after the options is its pattern, not a command.
expect_not 'redlockrun --list --json ' echo
expect_not 'redlockrun --json --list -q ' echo
expect "redlockrun --list --json 'b*' --js" --json

# The command, after the options or after --, and then its own completion.
expect 'redlockrun -k job ech' echo
expect 'redlockrun -k job -- ech' echo
expect 'redlockrun -k job -- fakecmd ' fake-alpha fake-beta
expect 'redlockrun --ttl=30s -kjob fakecmd fake-' fake-alpha fake-beta
expect_not 'redlockrun -k job -- fakecmd -' --ttl --key
expect_not 'redlockrun -k job fakecmd ' --ttl ms

# No key yet: the options come first, not commands; a word typed that does not start with - is
# a command, and once the key is given the command follows.
expect 'redlockrun ' -k --key --list --nonblock
expect_not 'redlockrun ' echo
expect 'redlockrun -q ' -k --key
expect 'redlockrun -u redis://h:1 -w 5m ' -k --key
expect 'redlockrun -k job ' echo
expect_not 'redlockrun -k job ' -k --key
expect 'redlockrun ech' echo

# Lock names from the server: none when it is not reachable, none without its password (and no
# prompt), its locks with $REDISCLI_AUTH, or with the URL given on the line.
expect 'redlockrun -k '
expect 'redlockrun --list '
export REDLOCKRUN_URL=$completion_url
expect 'redlockrun -k '
export REDISCLI_AUTH=$completion_password
expect 'redlockrun -k ' deploy-prod backup-db 'deploy to staging'
expect 'redlockrun -k dep' deploy-prod 'deploy to staging'
expect_not 'redlockrun -k dep' backup-db
expect 'redlockrun -qk b' backup-db
expect 'redlockrun --list ' deploy-prod backup-db 'deploy to staging'
expect 'redlockrun -k nothing-like-it'
export REDLOCKRUN_URL=$completion_nowhere
expect 'redlockrun -k '
expect "redlockrun -u $completion_url -k d" deploy-prod 'deploy to staging'
expect "redlockrun --url=$completion_url --list b" backup-db
# A server that does not answer: nothing, within the bound.
export REDLOCKRUN_URL=$completion_url
pause_completion_server
started=$SECONDS
expect 'redlockrun -k '
if ((SECONDS - started > 4)); then
    echo "not ok: completing a key from a server that does not answer took $((SECONDS - started)) s"
    failures=$((failures + 1))
fi
resume_completion_server
unset REDISCLI_AUTH

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: fish completion"
