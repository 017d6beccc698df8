# fish completion for redlockrun(1). Installed as
# vendor_completions.d/redlockrun.fish.

# Options that take a value, as `commandline` splits them into tokens.
set -g __redlockrun_value_options -k --key -w --wait --timeout -t --ttl --timestamp-unit \
    --min-hold --limit --note \
    -E --conflict-exit-code -c --command --on-lost --kill-after --lost-exit-code --owner --max-hold \
    -u --url --password-file --sentinel-user --sentinel-password-file --tls-ca-file --tls-cert --tls-key --tls-server-name \
    --connect-timeout --replicas --metrics-file --syslog-facility --log-format --config

# Prints the position, among the tokens before the cursor, of the command that
# redlockrun will run (options end at the first word that is not one, or at
# --); prints the number of those tokens plus one if the cursor is on it, and
# nothing while the cursor is still among redlockrun's own options.
function __redlockrun_command_position
    set -l tokens (commandline -opc)
    set -l i 2
    set -l pattern_next
    # --list given without its pattern: the one word after the options is the pattern, since
    # --list runs no command.
    set -l pattern_due
    while test $i -le (count $tokens)
        set -l token $tokens[$i]
        if test "$token" = --
            echo (math $i + 1)
            return
        else if contains -- $token $__redlockrun_value_options
            set i (math $i + 1)
        else if contains -- $token --list --release --check
            # Its pattern (or handle) may be left out: the next word is it unless it starts with -.
            set -l next (math $i + 1)
            if test $next -gt (count $tokens)
                set pattern_next 1
            else if not string match -q -- '-*' $tokens[$next]
                set i $next
            else
                set pattern_due 1
            end
        else if string match -qr -- '^--(list|release|check)=' $token
            set -e pattern_due
        else if string match -qr -- '^-[nxqvhV]*[kwtEcu]$' $token
            # A cluster of short options whose last one waits for its value.
            set i (math $i + 1)
        else if not string match -q -- '-?*' $token
            if test -n "$pattern_due"
                set -e pattern_due
            else
                echo $i
                return
            end
        end
        set i (math $i + 1)
    end
    # The cursor is on a new word, unless that word is the value of an option, or --list's pattern.
    if test $i -eq (math (count $tokens) + 1)
        and test -z "$pattern_next"
        and test -z "$pattern_due"
        and not string match -q -- '-*' (commandline -ct)
        echo $i
    end
end

# True while the cursor is among redlockrun's own options.
function __redlockrun_in_options
    test -z "$(__redlockrun_command_position)"
end

# True on an empty word where the command would start while no key is given
# yet (nor --list, which takes none): the options are offered there, not
# commands, since the command comes after -k KEY.
function __redlockrun_key_due
    test -z (commandline -ct); or return 1
    set -l tokens (commandline -opc)
    test "$(__redlockrun_command_position)" = (math (count $tokens) + 1); or return 1
    for token in $tokens[2..-1]
        if string match -qr -- '^(-k|--key|--key=.*|--list|--list=.*|--release|--release=.*|--check|--check=.*|-[nxqvhV]*k.*)$' $token
            return 1
        end
    end
end

# True where --list's pattern goes (-k's value is the option's own argument).
function __redlockrun_list_pattern_due
    test (commandline -opc)[-1] = --list; and not string match -q -- '-*' (commandline -ct)
end

# The names of the locks that redlockrun --list finds on the server that the
# options typed so far name. Bounded: a server that does not answer within a
# second offers nothing, silently. Never asks for a password: stdin is
# /dev/null, and only a config file's or $REDISCLI_AUTH's is used.
function __redlockrun_lock_names
    set -l tokens (commandline -opc)
    set -l connection
    set -l i 2
    while test $i -le (count $tokens)
        set -l token $tokens[$i]
        switch $token
            case -u --url --config --password-file --sentinel-user --sentinel-password-file \
                --tls-ca-file --tls-cert --tls-key --tls-server-name
                set i (math $i + 1)
                test $i -le (count $tokens); and set -a connection $token $tokens[$i]
            case '--url=*' '--config=*' '--password-file=*' '--sentinel-*=*' '--tls-*=*'
                set -a connection $token
            case '-u?*'
                set -a connection --url (string sub -s 3 -- $token)
        end
        set i (math $i + 1)
    end
    # The prefix typed, its glob characters escaped, is where SCAN starts matching; a name that
    # JSON had to escape is left out rather than offered wrongly.
    set -l pattern (string replace -ra -- '([][*?\\\\])' '\\\\$1' "$(commandline -ct)")'*'
    set -l bounded
    command -q timeout; and set bounded timeout 3
    $bounded $tokens[1] $connection --connect-timeout 1s --list $pattern --json </dev/null 2>/dev/null |
        string replace -rf -- '^\{"key":"([^"\\\\]*)",.*' '$1'
end

# Completes the command and its arguments as if they stood alone.
function __redlockrun_complete_command
    set -l position (__redlockrun_command_position)
    set -l tokens (commandline -opc)
    set -l words $tokens[$position..-1] (commandline -ct)
    if test (count $words) -le 1
        __fish_complete_command
    else
        complete -C (string join -- ' ' (string escape -- $words[1..-2]) "$words[-1]")
    end
end

# Once a number is typed, offers it with each unit.
function __redlockrun_durations
    set -l value (commandline -ct | string replace -r -- '^(--[a-z-]+=|-[wt])' '')
    if string match -qr -- '^([0-9]*\.)?[0-9]+$|^[0-9]+\.$' $value
        printf '%s\t%s\n' $value"ms" milliseconds $value"s" seconds $value"m" minutes $value"h" hours $value"d" days
    end
end

complete -c redlockrun -f

# Lock
complete -c redlockrun -n __redlockrun_in_options -s k -l key -x -a '(__redlockrun_lock_names)' -d 'Name of the lock (a Redis key)'
complete -c redlockrun -n __redlockrun_in_options -s n -l no-wait -d 'Fail at once if the lock is held'
complete -c redlockrun -n __redlockrun_in_options -l nb -d 'Fail at once if the lock is held'
complete -c redlockrun -n __redlockrun_in_options -l nonblock -d 'Fail at once if the lock is held'
complete -c redlockrun -n __redlockrun_in_options -s w -l wait -x -a '(__redlockrun_durations)' -d 'Give up after waiting this long (duration)'
complete -c redlockrun -n __redlockrun_in_options -l timeout -x -a '(__redlockrun_durations)' -d 'Give up after waiting this long (duration)'
complete -c redlockrun -n __redlockrun_in_options -s s -l shared -d 'Share the lock with other --shared runs, never with an exclusive one'
complete -c redlockrun -n __redlockrun_in_options -s x -l exclusive -d 'An exclusive lock: the default, as in flock(1)'
complete -c redlockrun -n __redlockrun_in_options -s t -l ttl -x -a '(__redlockrun_durations)' -d 'How long the lock stays valid (duration, default 30s)'
complete -c redlockrun -n __redlockrun_in_options -l no-renew -d 'Let the lock lapse after the TTL'
complete -c redlockrun -n __redlockrun_in_options -l supersede -d 'Newest wins: end the earlier waiters that asked for it too'
complete -c redlockrun -n __redlockrun_in_options -l timestamp-unit -x -a 'ms\t"Milliseconds (default)" s\tSeconds' -d 'Unit of the timestamp written to the key'
complete -c redlockrun -n __redlockrun_in_options -s E -l conflict-exit-code -x -d 'Exit status when the lock is not acquired (default 75)'

# Command
complete -c redlockrun -n __redlockrun_in_options -s c -l command -x -a '(__fish_complete_command)' -d 'Run a string with /bin/sh -c'
complete -c redlockrun -n __redlockrun_in_options -l on-lost -x -a 'term\t"Stop the command (default)" ignore\t"Warn and let it run on"' -d 'What to do if the lock is lost'
complete -c redlockrun -n __redlockrun_in_options -l min-hold -x -a '(__redlockrun_durations)' -d 'Keep the lock at least this long after the grant (duration)'
complete -c redlockrun -n __redlockrun_in_options -l limit -x -d 'Let up to n runs hold the lock at once (1-100)'
complete -c redlockrun -n __redlockrun_in_options -l note -x -d 'Why this run holds the lock (text, at most 256 bytes)'
complete -c redlockrun -n __redlockrun_in_options -l kill-after -x -a '(__redlockrun_durations)' -d 'Send SIGKILL this long after SIGTERM (duration, default 10s)'
complete -c redlockrun -n __redlockrun_in_options -l lost-exit-code -x -d 'Exit status when the lock was lost (default 76)'
complete -c redlockrun -n __redlockrun_in_options -l hold -d 'Take the lock and leave a keeper holding it for the script'
complete -c redlockrun -n __redlockrun_in_options -l owner -x -a 'none\t"Only --release or --max-hold ends the hold"' -d 'With --hold: the process whose exit ends the hold'
complete -c redlockrun -n __redlockrun_in_options -l max-hold -x -a '(__redlockrun_durations)' -d 'With --hold: release after this long at the latest (duration)'
complete -c redlockrun -n __redlockrun_in_options -l release -r -F -d 'End a hold: 0 if it was kept, 76 if it was lost'
complete -c redlockrun -n __redlockrun_in_options -l check -r -F -d '0 while a hold is intact, 76 once it was lost'

# Redis
complete -c redlockrun -n __redlockrun_in_options -s u -l url -x -a 'redis://\tTCP rediss://\tTLS unix:///\t"Unix socket" redis-sentinel://\tSentinel rediss-sentinel://\t"Sentinel, TLS"' -d 'Redis server URL'
complete -c redlockrun -n __redlockrun_in_options -l password-file -r -F -d 'Read the password from a file'
complete -c redlockrun -n __redlockrun_in_options -l sentinel-user -x -d 'Log in to the sentinels as this ACL user'
complete -c redlockrun -n __redlockrun_in_options -l sentinel-password-file -r -F -d 'Read the sentinel password from a file'
complete -c redlockrun -n __redlockrun_in_options -l tls-ca-file -r -F -d 'Trust the CA certificates in a file (PEM)'
complete -c redlockrun -n __redlockrun_in_options -l tls-cert -r -F -d 'Present a client certificate (PEM)'
complete -c redlockrun -n __redlockrun_in_options -l tls-key -r -F -d 'The client certificate'"'"'s private key (PEM)'
complete -c redlockrun -n __redlockrun_in_options -l tls-server-name -x -a '(__fish_print_hostnames)' -d 'Name the server'"'"'s certificate must be issued for'
complete -c redlockrun -n __redlockrun_in_options -l connect-timeout -x -a '(__redlockrun_durations)' -d 'Give up connecting after this long (duration, default 5s)'
complete -c redlockrun -n __redlockrun_in_options -l replicas -x -d 'After every grant and renewal, wait until n replicas have it (WAIT)'

# Reporting
complete -c redlockrun -n __redlockrun_in_options -l metrics-file -r -F -d 'Keep counters and the last run'"'"'s figures in a Prometheus text file'
complete -c redlockrun -n __redlockrun_in_options -l syslog -d 'Send redlockrun'"'"'s messages to syslog too'
complete -c redlockrun -n __redlockrun_in_options -l syslog-facility -x -a 'user daemon cron local0 local1 local2 local3 local4 local5 local6 local7' -d 'With --syslog: the facility'
complete -c redlockrun -n __redlockrun_in_options -l log-format -x -a 'text json' -d 'Messages as text (default) or one JSON object each'

# Other
complete -c redlockrun -n __redlockrun_in_options -l config -r -F -d 'Read settings from a file instead of the config files'
complete -c redlockrun -n __redlockrun_in_options -l status -d 'Show who holds the lock and exit'
complete -c redlockrun -n __redlockrun_in_options -l list -d 'List the locks whose keys match a pattern, and exit'
complete -c redlockrun -n __redlockrun_in_options -l break -d "End every holder's claim on the lock now (for an operator)"
complete -c redlockrun -n __redlockrun_in_options -l held -d 'With --list: only the locks that are held'
complete -c redlockrun -n __redlockrun_in_options -l json -d 'With --status, --list or --hold: print JSON'
complete -c redlockrun -n __redlockrun_in_options -s q -l quiet -d 'No message when the lock is busy'
complete -c redlockrun -n __redlockrun_in_options -s v -l verbose -d 'Report waiting, acquiring and releasing'
complete -c redlockrun -n __redlockrun_in_options -s h -l help -d 'Display help'
complete -c redlockrun -n __redlockrun_in_options -s V -l version -d 'Display version'

# --list's pattern: the lock names, from the server.
complete -c redlockrun -n __redlockrun_list_pattern_due -x -a '(__redlockrun_lock_names)'

# No key yet: the options, as if a dash had been typed.
complete -c redlockrun -n __redlockrun_key_due -x -a '(complete -C "redlockrun -")'

# The command after the options, and its own arguments.
complete -c redlockrun -n 'not __redlockrun_in_options; and not __redlockrun_key_due' -x -a '(__redlockrun_complete_command)'
