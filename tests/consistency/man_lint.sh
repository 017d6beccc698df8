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
# The page is a reference: OPTIONS comes within the first screens, the long topics after it.
options_at=$(LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING= man -l "$page" 2>/dev/null |
    grep -n '^OPTIONS$' | head -1 | cut -d: -f1)
if [ -z "$options_at" ] || [ "$options_at" -gt 250 ]; then
    echo "not ok: OPTIONS starts at rendered line ${options_at:-(not found)} at 80 columns; at most 250"
    failures=$((failures + 1))
else
    echo "ok: OPTIONS starts at rendered line $options_at"
fi

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

# The page is a reference: OPTIONS comes within the first screens, the long topics after it.
options_at=$(LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING= man -l "$page" 2>/dev/null |
    grep -n '^OPTIONS$' | head -1 | cut -d: -f1)
if [ -z "$options_at" ] || [ "$options_at" -gt 250 ]; then
    echo "not ok: OPTIONS starts at rendered line ${options_at:-(not found)} at 80 columns; at most 250"
    failures=$((failures + 1))
else
    echo "ok: OPTIONS starts at rendered line $options_at"
fi

[ "$failures" -eq 0 ]
