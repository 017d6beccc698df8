#!/usr/bin/env zsh
# Checks completions/_redlockrun: `zsh -n`, then real completions in an interactive zsh on a
# pseudo-terminal. Every candidate the completion system adds is recorded (compadd is wrapped),
# Tab is pressed after a prepared command line, and the recording is compared with what the case
# expects.
#
#   zsh_completion.zsh COMPLETIONS_DIR REDLOCKRUN
emulate -L zsh
setopt err_return no_unset pipe_fail

completions=$1
redlockrun=$2
failures=0

if ! zsh -n $completions/_redlockrun; then
    print "not ok: zsh -n $completions/_redlockrun"
    exit 1
fi
zmodload zsh/zpty

work=$(mktemp -d ${TMPDIR:-/tmp}/redlockrun-zsh-completion.XXXXXX)
trap 'zpty -d shell 2>/dev/null; stop_completion_server; rm -rf $work' EXIT
touch $work/password $work/passage
# The completion runs the redlockrun it completes for, to list the locks.
mkdir $work/bin
ln -s ${redlockrun:A} $work/bin/redlockrun
path=($work/bin $path)

# A real server holding locks, behind a password, for -k and --list to offer their names; no
# config file, and by default a server that is not there.
source ${0:A:h}/completion_server.sh
start_completion_server $work $redlockrun

# One interactive zsh for every case, with the completion system loaded from COMPLETIONS_DIR only
# (plus zsh's own functions), no listing (so no prompts), and compadd recording to $work/added.
zpty shell zsh -f -i
# The prompt is a marker: zsh prints it once the line editor has the terminal. Keys written before
# that meet the terminal's line discipline instead, which takes Ctrl-U for its own line kill and
# throws away the Tab with the line, so every case waits for it.
zpty -w shell "PS1='ZLE''>' RPS1=''; fpath=($completions \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w shell "unsetopt auto_list list_ambiguous auto_menu beep; bindkey -e"
zpty -w shell "compadd() { local -a added; builtin compadd -O added \"\$@\"; (( \$#added )) && print -rl -- \$added >>$work/added; builtin compadd \"\$@\" }"
zpty -w shell "_fakecmd() { compadd fake-alpha fake-beta }; compdef _fakecmd fakecmd"
zpty -w shell "print REA''DY"
zpty -r -m shell ignored '*READY*ZLE>*'

# candidates LINE: the candidates offered when Tab is pressed at the end of LINE, one per line.
cases=0
candidates() {
    : >$work/added
    # Tab, then Ctrl-U to drop the line, then a marker to know that the completion is over, and
    # the next prompt. The marker is new for every case, so that output left over from an earlier
    # case cannot end this one's wait.
    (( cases += 1 ))
    zpty -n -w shell "$1"$'\t'$'\x15'"print DO''NE:$cases:"$'\n'
    zpty -r -m shell ignored "*DONE:$cases:*ZLE>*"
    sort -u $work/added
}

in_shell() { # COMMAND: runs it in the interactive zsh, before the next case
    (( cases += 1 ))
    zpty -w shell "$1; print DO''NE:$cases:"
    zpty -r -m shell ignored "*DONE:$cases:*ZLE>*"
}

expect() { # LINE [CANDIDATE...]: at least these are offered (nothing at all if none is given)
    local line=$1 got wanted
    shift
    got=$(candidates $line)
    if (( $# == 0 )) && [[ -n $got ]]; then
        print -r "not ok: '$line' offered: ${(f)got}"
        (( failures += 1 ))
    fi
    for wanted in "$@"; do
        if ! print -r -- $got | grep -qxF -- $wanted; then
            print -r "not ok: '$line' did not offer $wanted (offered: ${(f)got})"
            (( failures += 1 ))
        fi
    done
}

expect_not() { # LINE CANDIDATE...: none of these is offered
    local line=$1 got unwanted
    shift
    got=$(candidates $line)
    for unwanted in "$@"; do
        if print -r -- $got | grep -qxF -- $unwanted; then
            print -r "not ok: '$line' offered $unwanted"
            (( failures += 1 ))
        fi
    done
}

# Every option of --help is offered after "-".
listed=$(bash ${0:A:h}/help_options.sh $redlockrun) || exit 1
help_options=(${(f)listed})
expect 'redlockrun -' $help_options
expect 'redlockrun --ti' --timestamp-unit

expect 'redlockrun --timestamp-unit ' ms s
expect 'redlockrun --timestamp-unit=' ms s
expect 'redlockrun -k job --on-lost ' term ignore
expect 'redlockrun --on-lost=' term ignore
expect 'redlockrun -t 30' h d
expect 'redlockrun --timeout 30' h d
expect 'redlockrun -x -k job ech' echo
expect 'redlockrun -u ' redis:// rediss:// unix:/// redis-sentinel:// rediss-sentinel://
expect "redlockrun --password-file $work/pas" passage password
expect "redlockrun --tls-key $work/pas" passage password
expect "redlockrun --config $work/pas" passage password
expect "redlockrun --sentinel-password-file $work/pas" passage password
expect 'redlockrun -k '
expect 'redlockrun --list --js' --json
expect 'redlockrun -k job --status --js' --json
expect_not 'redlockrun --list ' echo

# The command, after the options or after --, and then its own completion.
expect 'redlockrun -k job ech' echo
expect 'redlockrun -k job -- ech' echo
expect 'redlockrun -k job -- fakecmd ' fake-alpha fake-beta
expect 'redlockrun --ttl=30s -k job fakecmd fake-' fake-alpha fake-beta
expect_not 'redlockrun -k job -- fakecmd -' --ttl --key
expect_not 'redlockrun -k job fakecmd --t' --ttl

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
expect_not 'redlockrun --list ' deploy-prod echo
in_shell "export REDLOCKRUN_URL=$completion_url"
expect 'redlockrun -k '
in_shell "export REDISCLI_AUTH=$completion_password"
expect 'redlockrun -k ' deploy-prod backup-db 'deploy to staging'
expect 'redlockrun -k dep' deploy-prod 'deploy to staging'
expect_not 'redlockrun -k dep' backup-db
expect 'redlockrun -qk b' backup-db
expect 'redlockrun --list ' deploy-prod backup-db 'deploy to staging'
expect 'redlockrun -k nothing-like-it'
in_shell "export REDLOCKRUN_URL=$completion_nowhere"
expect 'redlockrun -k '
expect "redlockrun -u $completion_url -k d" deploy-prod 'deploy to staging'
expect "redlockrun --url=$completion_url --list b" backup-db
# A server that does not answer: nothing, within the bound.
in_shell "export REDLOCKRUN_URL=$completion_url"
pause_completion_server
started=$SECONDS
expect 'redlockrun -k '
if (( SECONDS - started > 4 )); then
    print "not ok: completing a key from a server that does not answer took $(( SECONDS - started )) s"
    (( failures += 1 ))
fi
resume_completion_server

if (( failures )); then
    print "$failures failure(s)"
    exit 1
fi
print "ok: zsh completion"
