# bash completion for redlockrun(1)                        -*- shell-script -*-
#
# Installed as bash-completion/completions/redlockrun. Works with the
# bash-completion package (then the command after the options is completed by
# its own completion, as for sudo or timeout) and, more simply, without it.

# Every option, as `redlockrun --help` lists them.
_redlockrun_options='-k --key -n --no-wait --nb --nonblock -w --wait --timeout
    -x --exclusive -t --ttl --no-renew
    --timestamp-unit --min-hold --limit -E --conflict-exit-code -c --command
    --on-lost --kill-after
    --lost-exit-code -u --url --password-file --sentinel-user
    --sentinel-password-file --tls-ca-file --tls-cert --tls-key
    --tls-server-name --connect-timeout --replicas --config --status --list --json
    -q --quiet -v --verbose -h --help -V --version'

# Succeeds if the option (a long name, or a single short one) takes a value.
_redlockrun_takes_value()
{
    case $1 in
        -[kwtEcu] | --key | --wait | --timeout | --ttl | --timestamp-unit | --min-hold | --limit | \
            --conflict-exit-code | \
            --command | --on-lost | --kill-after | --lost-exit-code | --url | \
            --password-file | --sentinel-user | --sentinel-password-file | \
            --tls-ca-file | --tls-cert | --tls-key | \
            --tls-server-name | --connect-timeout | --replicas | --config)
            return 0
            ;;
    esac
    return 1
}

# Splits the command line into the words the shell will pass to redlockrun.
# COMP_WORDS cuts words at = and : (--ttl=30s, redis://host:6379); this glues
# such pieces back together. Sets, in the caller's scope: rlr_words (the words),
# rlr_starts (the index in COMP_WORDS where each word starts) and rlr_cword (the
# word under the cursor).
_redlockrun_split_line()
{
    rlr_words=() rlr_starts=() rlr_cword=0
    local rest=$COMP_LINE piece i n=-1 spaced
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        piece=${COMP_WORDS[i]}
        spaced=0
        while [[ $rest == [[:space:]]* ]]; do
            rest=${rest:1}
            spaced=1
        done
        rest=${rest:${#piece}}
        if ((n < 0 || spaced)); then
            rlr_words[++n]=$piece
            rlr_starts[n]=$i
        else
            rlr_words[n]+=$piece
        fi
        if ((i == COMP_CWORD)); then
            rlr_cword=$n
        fi
    done
}

# Prints the option of a cluster of short options (-qk) that still waits for
# its value in the next word, if any.
_redlockrun_pending_short()
{
    local cluster=$1 j letter
    for ((j = 1; j < ${#cluster}; j++)); do
        letter=${cluster:j:1}
        if _redlockrun_takes_value "-$letter"; then
            # The rest of the word, if there is any, is the value.
            ((j == ${#cluster} - 1)) && printf '%s\n' "-$letter"
            return
        fi
    done
}

# Completes the value of an option.
_redlockrun_value()
{
    local option=$1 value=$2
    case $option in
        --timestamp-unit)
            mapfile -t COMPREPLY < <(compgen -W 'ms s' -- "$value")
            ;;
        --on-lost)
            mapfile -t COMPREPLY < <(compgen -W 'term ignore' -- "$value")
            ;;
        --password-file | --sentinel-password-file | --tls-ca-file | --tls-cert | --tls-key | \
            --config)
            if declare -F _filedir >/dev/null; then
                local cur=$value
                _filedir
            else
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$value")
            fi
            ;;
        -w | --wait | --timeout | -t | --ttl | --min-hold | --kill-after | --connect-timeout)
            # A duration: once a number is typed, offer its units.
            if [[ $value =~ ^[0-9]*\.?[0-9]+$|^[0-9]+\.$ ]]; then
                COMPREPLY=("${value}ms" "${value}s" "${value}m" "${value}h" "${value}d")
            fi
            ;;
        -u | --url)
            if [[ $value != *:* ]]; then
                compopt -o nospace 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -W 'redis:// rediss:// unix:/// redis-sentinel:// rediss-sentinel://' \
                    -- "$value")
            fi
            ;;
        -c | --command)
            [[ $value != *[[:space:]]* ]] &&
                mapfile -t COMPREPLY < <(compgen -c -- "$value")
            ;;
        *)
            # A key, an exit status or a server name: nothing to offer.
            COMPREPLY=()
            ;;
    esac
}

# Completes the command to run and its arguments; `first` is the index of its
# name in rlr_words.
_redlockrun_command()
{
    local first=$1 cur=${rlr_words[rlr_cword]}
    if declare -F _command_offset >/dev/null; then
        _command_offset "${rlr_starts[first]}"
    elif ((first == rlr_cword)); then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}

_redlockrun()
{
    local -a rlr_words rlr_starts
    local rlr_cword
    COMPREPLY=()
    _redlockrun_split_line
    local cur=${rlr_words[rlr_cword]} word pending='' i
    # --list given without its pattern: the one word after the options is the pattern, since
    # --list runs no command.
    local list_pattern_due=''

    # Options end at the first word that is not one, or at --.
    for ((i = 1; i < rlr_cword; i++)); do
        word=${rlr_words[i]}
        if [[ $pending ]]; then
            # --list's pattern may be left out: a word that starts with - is then an option.
            if [[ $pending != --list || $word != -* ]]; then
                [[ $pending == --list ]] && list_pattern_due=''
                pending=''
                continue
            fi
            pending=''
        fi
        case $word in
            --)
                _redlockrun_command $((i + 1))
                return
                ;;
            --list=*)
                list_pattern_due=''
                ;;
            --*=*) ;;
            --list)
                pending=$word
                list_pattern_due=yes
                ;;
            --?*)
                _redlockrun_takes_value "$word" && pending=$word
                ;;
            -?*)
                pending=$(_redlockrun_pending_short "$word")
                ;;
            *)
                if [[ $list_pattern_due ]]; then
                    list_pattern_due=''
                    continue
                fi
                _redlockrun_command "$i"
                return
                ;;
        esac
    done

    if [[ $pending && ($pending != --list || $cur != -*) ]]; then
        _redlockrun_value "$pending" "$cur"
    elif [[ $cur == --*=* ]]; then
        _redlockrun_value "${cur%%=*}" "${cur#*=}"
    elif [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$_redlockrun_options" -- "$cur")
    elif [[ $list_pattern_due ]]; then
        _redlockrun_value --list "$cur"
    else
        _redlockrun_command "$rlr_cword"
    fi
}

complete -F _redlockrun redlockrun
