#!/usr/bin/env bash
# Prints the options `redlockrun --help` lists, short and long, one per line: what the completion
# tests expect each shell to offer.
#
#   help_options.sh REDLOCKRUN
#
# Exits 1 if it finds fewer than 20, since a parser that found nothing would make "every option is
# offered" pass.
set -uo pipefail
options=$("$1" --help | sed -E 's/^ +//; s/ {2,}.*//' |
    grep -oE '^--?[A-Za-z][-A-Za-z]*|, --?[A-Za-z][-A-Za-z]*' | sed 's/^, //') || options=
count=$(grep -c . <<<"$options")
if [ "$count" -lt 20 ]; then
    echo "not ok: found only $count options in $1 --help: $(tr '\n' ' ' <<<"$options")" >&2
    exit 1
fi
printf '%s\n' "$options"
