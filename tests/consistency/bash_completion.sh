#!/usr/bin/env bash
# Drives the bash completion function the way bash does: COMP_WORDS, COMP_CWORD, COMP_LINE and
# COMP_POINT prepared for a command line, then _redlockrun called and COMPREPLY checked.
#
#   bash_completion.sh COMPLETION_FILE REDLOCKRUN
#
# Runs every case twice: with the bash-completion package loaded (the command after the options is
# then completed by its own completion, through _command_offset) and without it. A missing
# bash-completion package is a failure, not a skip.
set -u

completion_file=$1
redlockrun=$2
framework=/usr/share/bash-completion/bash_completion

if [ "${3:-}" != --inner ]; then
    if [ ! -r "$framework" ]; then
        echo "not ok: $framework is missing (install the bash-completion package)"
        exit 1
    fi
    status=0
    bash --norc --noprofile "$0" "$completion_file" "$redlockrun" --inner with || status=1
    bash --norc --noprofile "$0" "$completion_file" "$redlockrun" --inner without || status=1
    exit $status
fi
mode=$4

work=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-bash-completion.XXXXXX")
touch "$work/password" "$work/passage"
mkdir "$work/bin"
printf '#!/bin/sh\n' >"$work/bin/redlockrun-fake-tool"
chmod +x "$work/bin/redlockrun-fake-tool"
# The completion runs the redlockrun it completes for, to list the locks.
ln -s "$redlockrun" "$work/bin/redlockrun"
PATH=$work/bin:$PATH

# A real server holding locks, behind a password, for -k and --list to offer their names; no
# config file, and by default a server that is not there.
# shellcheck source=tests/consistency/completion_server.sh
. "$(dirname "$0")/completion_server.sh"
start_completion_server "$work" "$redlockrun"
trap 'stop_completion_server; rm -rf "$work"' EXIT

if [ "$mode" = with ]; then
    # shellcheck source=/dev/null
    . "$framework"
fi
# shellcheck source=/dev/null
. "$completion_file"

# Completion for a made-up command, to see that its completion takes over after redlockrun's options.
_redlockrun_test_fake() {
    COMPREPLY=("words=${COMP_WORDS[*]}" "cword=$COMP_CWORD")
}
complete -F _redlockrun_test_fake fakecmd

failures=0

# Splits a line into COMP_WORDS as bash does with its default COMP_WORDBREAKS: at blanks, and
# around runs of = and : (so --ttl=30s is three words, redis://h:1 five).
split_like_bash() {
    local line=$1 i char word='' breaks=''
    COMP_WORDS=()
    for ((i = 0; i < ${#line}; i++)); do
        char=${line:i:1}
        if [[ $char == [[:space:]] ]]; then
            [[ $word ]] && COMP_WORDS+=("$word")
            [[ $breaks ]] && COMP_WORDS+=("$breaks")
            word='' breaks=''
        elif [[ $char == [=:] ]]; then
            [[ $word ]] && COMP_WORDS+=("$word")
            word=''
            breaks+=$char
        else
            [[ $breaks ]] && COMP_WORDS+=("$breaks")
            breaks=''
            word+=$char
        fi
    done
    [[ $word ]] && COMP_WORDS+=("$word")
    [[ $breaks ]] && COMP_WORDS+=("$breaks")
    # A line that ends in a blank completes a new, empty word.
    [[ $line == *[[:space:]] || ${#COMP_WORDS[@]} -eq 0 ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
}

# complete LINE: runs the completion for LINE (cursor at its end); the answer is in COMPREPLY.
complete_line() {
    COMP_LINE=$1
    COMP_POINT=${#1}
    split_like_bash "$1"
    COMPREPLY=()
    # compopt complains outside a real completion; nothing else may print.
    _redlockrun 2>"$work/stderr"
    if grep -v 'compopt: not currently executing completion function' "$work/stderr" | grep -q .; then
        echo "not ok [$mode]: '$1' printed: $(cat "$work/stderr")"
        failures=$((failures + 1))
    fi
}

sorted() {
    printf '%s\n' "$@" | LC_ALL=C sort -u | tr '\n' ' '
}

# expect_exactly LINE CANDIDATE...: COMPREPLY holds these and nothing else.
expect_exactly() {
    local line=$1
    shift
    complete_line "$line"
    local got wanted
    got=$(sorted "${COMPREPLY[@]}")
    wanted=$(sorted "$@")
    if [ "$got" != "$wanted" ]; then
        echo "not ok [$mode]: '$line' offered: ${got:-nothing}; expected: ${wanted:-nothing}"
        failures=$((failures + 1))
    fi
}

# expect_including LINE CANDIDATE...: COMPREPLY holds at least these.
expect_including() {
    local line=$1 wanted
    shift
    complete_line "$line"
    for wanted in "$@"; do
        if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$wanted"; then
            echo "not ok [$mode]: '$line' did not offer $wanted (offered: $(sorted "${COMPREPLY[@]}"))"
            failures=$((failures + 1))
        fi
    done
}

# expect_excluding LINE CANDIDATE...: COMPREPLY holds none of these.
expect_excluding() {
    local line=$1 unwanted
    shift
    complete_line "$line"
    for unwanted in "$@"; do
        if printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$unwanted"; then
            echo "not ok [$mode]: '$line' offered $unwanted"
            failures=$((failures + 1))
        fi
    done
}

# Every option of --help, and nothing else, when completing "-".
if ! listed=$(bash "$(dirname "$0")/help_options.sh" "$redlockrun"); then
    echo "not ok [$mode]: could not list the options of --help"
    failures=$((failures + 1))
fi
mapfile -t help_options <<<"$listed"
expect_exactly 'redlockrun -' "${help_options[@]}"
expect_exactly 'redlockrun -k job -' "${help_options[@]}"
expect_exactly 'redlockrun --tim' --timeout --timestamp-unit
expect_exactly 'redlockrun --no-' --no-wait --no-renew
expect_exactly 'redlockrun --non' --nonblock
expect_exactly 'redlockrun --ex' --exclusive

# Values of enumerated options, separate or after =.
expect_exactly 'redlockrun --timestamp-unit ' ms s
expect_exactly 'redlockrun -k job --timestamp-unit m' ms
expect_exactly 'redlockrun --on-lost ' term ignore
expect_exactly 'redlockrun --on-lost i' ignore
expect_exactly 'redlockrun --on-lost=' term ignore
expect_exactly 'redlockrun -k job --on-lost=t' term

# Durations: a typed number is offered with each unit; nothing is made up before that.
expect_exactly 'redlockrun -t 30' 30ms 30s 30m 30h 30d
expect_exactly 'redlockrun -k job -w 1.5' 1.5ms 1.5s 1.5m 1.5h 1.5d
expect_exactly 'redlockrun --kill-after=2' 2ms 2s 2m 2h 2d
expect_exactly 'redlockrun -k job --timeout 5' 5ms 5s 5m 5h 5d
expect_exactly 'redlockrun --timeout=5' 5ms 5s 5m 5h 5d
expect_exactly 'redlockrun --connect-timeout ' 
expect_exactly 'redlockrun -t x'

# --list's pattern may be left out: after it, a word that starts with - is an option.
expect_exactly 'redlockrun --list '
expect_exactly 'redlockrun --list --js' --json
expect_exactly "redlockrun --list 'b*' --js" --json
expect_exactly 'redlockrun --list=b* --js' --json
expect_exactly 'redlockrun --list --json --status -u ' redis:// rediss:// unix:/// \
    redis-sentinel:// rediss-sentinel://
expect_exactly 'redlockrun -k job --status --j' --json
# With --list, the one word after the options is its pattern, not a command.
expect_exactly 'redlockrun --list --json redlockrun-fake-t'
expect_exactly 'redlockrun --json --list -q redlockrun-fake-t'
expect_exactly "redlockrun --list --json 'b*' --js" --json
expect_including 'redlockrun --list=b* --json redlockrun-fake-t' redlockrun-fake-tool

# Holds: --owner's one word, --max-hold's durations, and the handle that --release and --check
# may be given (a file), or leave out (a word that starts with - is then an option).
expect_exactly 'redlockrun -k job --hold --owner ' none
expect_exactly 'redlockrun -k job --hold --owner=n' none
expect_exactly 'redlockrun -k job --hold --max-hold 9' 9ms 9s 9m 9h 9d
expect_exactly "redlockrun --release $work/passw" "$work/password"
expect_exactly "redlockrun --check=$work/passw" "$work/password"
expect_exactly 'redlockrun --release -' "${help_options[@]}"
expect_exactly 'redlockrun --check -q --verb' --verbose

# Values with nothing to offer: keys and exit statuses; also after a cluster of short options.
expect_exactly 'redlockrun -k '
expect_exactly 'redlockrun -qk '
expect_exactly 'redlockrun -E '
expect_exactly 'redlockrun -k job --lost-exit-code '

# Files and URLs.
expect_exactly "redlockrun --password-file $work/pas" "$work/passage" "$work/password"
expect_exactly "redlockrun -k job --password-file=$work/passw" "$work/password"
expect_exactly "redlockrun --sentinel-password-file $work/pas" "$work/passage" "$work/password"
expect_exactly 'redlockrun -u r' redis:// rediss:// redis-sentinel:// rediss-sentinel://
expect_exactly 'redlockrun -u ' redis:// rediss:// unix:/// redis-sentinel:// rediss-sentinel://
expect_exactly "redlockrun --tls-ca-file $work/pas" "$work/passage" "$work/password"
expect_exactly "redlockrun --config $work/pas" "$work/passage" "$work/password"
expect_exactly "redlockrun -u rediss://h --tls-cert=$work/passw" "$work/password"
expect_exactly 'redlockrun --tls-server-name ' 

# The command: after the options, or after --; options given as option=value or as a URL with
# colons, which bash cuts into several words, do not end the options.
expect_including 'redlockrun -k job redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun -k job -- redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun -kjob -n redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun -x --nonblock -k job redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun --timeout 5m -k job redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun --ttl=30s -u redis://127.0.0.1:6379/0 -k job redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun -c redlockrun-fake-t' redlockrun-fake-tool
expect_excluding 'redlockrun -k job -- -' --ttl --key

# The command's own arguments: its completion takes over (with bash-completion), or file names.
if [ "$mode" = with ]; then
    expect_exactly 'redlockrun -k job fakecmd a' 'words=fakecmd a' 'cword=1'
    expect_exactly 'redlockrun -k job -- fakecmd --ttl x' 'words=fakecmd --ttl x' 'cword=2'
    expect_exactly 'redlockrun -u redis://h:1 --on-lost=term -k job fakecmd ' 'words=fakecmd ' 'cword=1'
    expect_exactly 'redlockrun -k job -- fakecmd -- x' 'words=fakecmd -- x' 'cword=2'
else
    expect_exactly "redlockrun -k job fakecmd $work/passa" "$work/passage"
    expect_exactly "redlockrun -k job -- fakecmd --ttl $work/passw" "$work/password"
fi

# No key yet: the options come first, not commands; a word typed that does not start with - is
# a command, and once the key is given the command follows.
expect_including 'redlockrun ' -k --key --list --nonblock
expect_excluding 'redlockrun ' redlockrun-fake-tool
expect_including 'redlockrun -q ' -k --key
expect_including 'redlockrun -u redis://h:1 -w 5m ' -k --key
expect_including 'redlockrun -k job ' redlockrun-fake-tool
expect_excluding 'redlockrun -k job ' -k --key
expect_including 'redlockrun -qkjob ' redlockrun-fake-tool
expect_including 'redlockrun --key=job ' redlockrun-fake-tool
expect_including 'redlockrun redlockrun-fake-t' redlockrun-fake-tool
expect_including 'redlockrun -- ' redlockrun-fake-tool

# Lock names from the server: none when it is not reachable, none without its password (and no
# prompt: stdin is not read), its locks with $REDISCLI_AUTH, or with the URL given on the line.
expect_exactly 'redlockrun -k '
expect_exactly 'redlockrun --list '
REDLOCKRUN_URL=$completion_url
expect_exactly 'redlockrun -k '
export REDISCLI_AUTH=$completion_password
expect_exactly 'redlockrun -k ' deploy-prod backup-db 'deploy\ to\ staging'
expect_exactly 'redlockrun -k dep' deploy-prod 'deploy\ to\ staging'
expect_exactly 'redlockrun -qk b' backup-db
expect_exactly 'redlockrun --key=deploy-' deploy-prod
expect_exactly 'redlockrun --list ' deploy-prod backup-db 'deploy\ to\ staging'
expect_exactly 'redlockrun --json --list b' backup-db
expect_exactly 'redlockrun -k nothing-like-it'
REDLOCKRUN_URL=$completion_nowhere
expect_exactly 'redlockrun -k '
expect_exactly "redlockrun -u $completion_url -k d" deploy-prod 'deploy\ to\ staging'
expect_exactly "redlockrun --url=$completion_url --list b" backup-db
# A server that does not answer: nothing, within the bound.
REDLOCKRUN_URL=$completion_url
pause_completion_server
started=$SECONDS
expect_exactly 'redlockrun -k '
if ((SECONDS - started > 4)); then
    echo "not ok [$mode]: completing a key from a server that does not answer took $((SECONDS - started)) s"
    failures=$((failures + 1))
fi
resume_completion_server
unset REDISCLI_AUTH
REDLOCKRUN_URL=$completion_nowhere

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s) [$mode bash-completion]"
    exit 1
fi
echo "ok: bash completion [$mode bash-completion]"
