#!/usr/bin/env bash
# Lints the man page with every tool that reads it: groff (with and without tbl), mandoc, man-db
# as lintian runs it, and lexgrog (the NAME line that whatis and apropos index). Any output is a
# failure, and so is a missing tool.
#
#   man_lint.sh MAN_PAGE
set -u
page=$1
failures=0

for tool in groff mandoc man lexgrog; do
    if ! command -v "$tool" >/dev/null; then
        echo "not ok: $tool is not installed (scripts/install-deps installs it)"
        failures=$((failures + 1))
    fi
done
[ "$failures" -eq 0 ] || exit 1

# lint NAME COMMAND...: the command must succeed and print nothing at all.
lint() {
    local name=$1 output status
    shift
    output=$("$@" 2>&1)
    status=$?
    if [ "$status" -ne 0 ] || [ -n "$output" ]; then
        echo "not ok: $name (exit $status)"
        [ -n "$output" ] && printf '%s\n' "$output" | sed 's/^/    /'
        failures=$((failures + 1))
    else
        echo "ok: $name"
    fi
}

lint "groff -man -ww -z" groff -man -ww -z "$page"
lint "groff -t -man -ww -z" groff -t -man -ww -z "$page"
lint "mandoc -T lint" mandoc -T lint "$page"
# man formats the page on standard output, which does not count; its warnings go to standard error.
lint "man --warnings (as lintian runs it)" sh -c \
    'LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$1" >/dev/null' sh "$page"

# lexgrog must find the NAME line that whatis and apropos index.
whatis=$(lexgrog "$page" 2>&1)
if [[ $whatis != *'"redlockrun - run a command while holding a lock in Redis"'* ]]; then
    echo "not ok: lexgrog does not find the NAME line: $whatis"
    failures=$((failures + 1))
else
    echo "ok: lexgrog"
fi

[ "$failures" -eq 0 ]
