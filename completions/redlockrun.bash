# bash completion for redlockrun(1)                        -*- shell-script -*-
#
# Installed as bash-completion/completions/redlockrun. Works with the
# bash-completion package (then the command after the options is completed by
# its own completion, as for sudo or timeout) and, more simply, without it.

# Every option, as `redlockrun --help` lists them.
_redlockrun_options='-k --key -n --no-wait --nb --nonblock -w --wait --timeout
    -s --shared -x --exclusive -t --ttl --no-renew
    --timestamp-unit --min-hold --limit --note --supersede -E --conflict-exit-code -c --command
    --on-lost --kill-after
    --lost-exit-code --hold --owner --max-hold --release --check -u --url --password-file --sentinel-user
    --sentinel-password-file --tls-ca-file --tls-cert --tls-key
    --tls-server-name --connect-timeout --replicas --metrics-file --syslog --syslog-facility
    --log-format --config --status --list --held --break --json
    -q --quiet -v --verbose -h --help -V --version'

# Succeeds if the option (a long name, or a single short one) takes a value.
_redlockrun_takes_value()
{
    case $1 in
        -[kwtEcu] | --key | --wait | --timeout | --ttl | --timestamp-unit | --min-hold | --limit | \
            --note | --conflict-exit-code | \
            --command | --on-lost | --kill-after | --lost-exit-code | --owner | --max-hold | \
            --url | \
            --password-file | --sentinel-user | --sentinel-password-file | \
            --tls-ca-file | --tls-cert | --tls-key | \
            --tls-server-name | --connect-timeout | --replicas | --metrics-file | \
            --syslog-facility | --log-format | --config)
            return 0
            ;;
    esac
    return 1
}

# Succeeds if the option (a long name) says which Redis to ask, and how: these
# are passed on when the lock names are listed.
_redlockrun_connection_option()
{
    case $1 in
        --url | --config | --password-file | --sentinel-user | --sentinel-password-file | \
            --tls-ca-file | --tls-cert | --tls-key | --tls-server-name)
            return 0
            ;;
    esac
    return 1
}

# Offers the names of the locks that start with $1, as `redlockrun --list` finds
# them on the server that the options typed so far name (rlr_connection holds
# them). Bounded: a server that does not answer within a second offers nothing,
# silently. Never asks for a password: stdin is /dev/null, and only a config
# file's or $REDISCLI_AUTH's is used.
_redlockrun_lock_names()
{
    local prefix=$1 pattern
    # The prefix, its glob characters escaped, is where SCAN starts matching.
    pattern=$(printf '%s' "$prefix" | sed 's/[][*?\\]/\\&/g')'*'
    local -a bounded=()
    command -v timeout >/dev/null && bounded=(timeout 3)
    local name
    COMPREPLY=()
    # A name that JSON had to escape is left out rather than offered wrongly.
    while IFS= read -r name; do
        [[ $name == "$prefix"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
    done < <("${bounded[@]}" "${rlr_words[0]}" "${rlr_connection[@]}" --connect-timeout 1s \
        --list "$pattern" --json </dev/null 2>/dev/null |
        sed -n 's/^{"key":"\([^"\\]*\)",.*/\1/p')
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
        --owner)
            mapfile -t COMPREPLY < <(compgen -W 'none' -- "$value")
            ;;
        --syslog-facility)
            mapfile -t COMPREPLY < <(compgen -W 'user daemon cron local0 local1 local2 local3
                local4 local5 local6 local7' -- "$value")
            ;;
        --log-format)
            mapfile -t COMPREPLY < <(compgen -W 'text json' -- "$value")
            ;;
        --password-file | --sentinel-password-file | --tls-ca-file | --tls-cert | --tls-key | \
            --config | --release | --check | --metrics-file)
            if declare -F _filedir >/dev/null; then
                local cur=$value
                _filedir
            else
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$value")
            fi
            ;;
        -w | --wait | --timeout | -t | --ttl | --min-hold | --max-hold | --kill-after | \
            --connect-timeout)
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
        -k | --key | --list)
            _redlockrun_lock_names "$value"
            ;;
        *)
            # An exit status, a server name or a note: nothing to offer.
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
    local -a rlr_words rlr_starts rlr_connection=()
    local rlr_cword
    COMPREPLY=()
    _redlockrun_split_line
    local cur=${rlr_words[rlr_cword]} word pending='' i
    # --list given without its pattern: the one word after the options is the pattern, since
    # --list runs no command.
    local list_pattern_due=''
    # Until a key is given (or --list, which takes none), an empty word is offered the options,
    # not commands: the command comes after -k KEY.
    local key_due=yes

    # Options end at the first word that is not one, or at --.
    for ((i = 1; i < rlr_cword; i++)); do
        word=${rlr_words[i]}
        if [[ $pending ]]; then
            # --list's pattern and --release's and --check's handle may be left out: a word that
            # starts with - is then an option.
            if [[ $pending != @(--list|--release|--check) || $word != -* ]]; then
                [[ $pending == --list ]] && list_pattern_due=''
                [[ $pending == -k || $pending == --key ]] && key_due=''
                [[ $pending == -u ]] && pending=--url
                _redlockrun_connection_option "$pending" && rlr_connection+=("$pending" "$word")
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
                list_pattern_due='' key_due=''
                ;;
            --*=*)
                [[ $word == --key=* ]] && key_due=''
                _redlockrun_connection_option "${word%%=*}" && rlr_connection+=("$word")
                ;;
            --list)
                pending=$word
                list_pattern_due=yes key_due=''
                ;;
            --release | --check)
                pending=$word
                key_due=''
                ;;
            --?*)
                _redlockrun_takes_value "$word" && pending=$word
                ;;
            -?*)
                pending=$(_redlockrun_pending_short "$word")
                # The value is in the same word: -kjob, -qkjob, -uredis://host.
                [[ $word =~ ^-[^kwtEcu]*k. ]] && key_due=''
                [[ $word =~ ^-[^kwtEcu]*u(.+)$ ]] && rlr_connection+=(--url "${BASH_REMATCH[1]}")
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

    if [[ $pending && ($pending != @(--list|--release|--check) || $cur != -*) ]]; then
        _redlockrun_value "$pending" "$cur"
    elif [[ $cur == --*=* ]]; then
        _redlockrun_value "${cur%%=*}" "${cur#*=}"
    elif [[ $cur == -* || (-z $cur && $key_due) ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$_redlockrun_options" -- "$cur")
    elif [[ $list_pattern_due ]]; then
        _redlockrun_value --list "$cur"
    else
        _redlockrun_command "$rlr_cword"
    fi
}

complete -F _redlockrun redlockrun
