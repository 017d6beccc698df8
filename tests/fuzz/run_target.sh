#!/usr/bin/env bash
# run_target.sh TARGET CORPUS REGRESSIONS WORK SECONDS: runs the libFuzzer TARGET on every input kept
# in REGRESSIONS, then fuzzes it for SECONDS from a copy of CORPUS in WORK, so that what it finds
# stays in the build tree. Fails on any crash, leak, sanitizer report or failed check; the input
# that did it is left in WORK/artifacts (README.md: how to keep it as a regression input).
set -euo pipefail
target=$1 corpus=$2 regressions=$3 work=$4 seconds=$5

rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$corpus"/* "$work/corpus/"

limits=(-timeout=10 -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$work/artifacts/")

kept=()
if [ -d "$regressions" ]; then
    kept=("$regressions"/*)
fi
if [ ${#kept[@]} -gt 0 ] && [ -e "${kept[0]}" ]; then
    echo "# ${#kept[@]} regression inputs"
    "$target" "${limits[@]}" "${kept[@]}"
fi

"$target" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus"
