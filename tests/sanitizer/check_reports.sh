#!/usr/bin/env bash
# check_reports.sh DIR COMMAND [ARG...]: runs COMMAND (an end-to-end suite of the sanitizer build)
# with every sanitizer report written to a file in DIR rather than to the stderr of whichever process
# found it, and fails if any report appears. A finding already ends its process with status 86, which
# fails the test that checks that status; this also catches processes whose status nobody reads (a
# background waiter, a run killed at a test's end) and shows the report itself.
set -u
dir=$1
shift
rm -rf "$dir"
mkdir -p "$dir"
# One runtime serves both sanitizers: each report goes to DIR/report.PID.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$dir/report"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$dir/report"

"$@"
status=$?

reports=("$dir"/*)
if [ -e "${reports[0]}" ]; then
    for report in "${reports[@]}"; do
        echo "not ok - sanitizer report $report:"
        cat "$report"
    done
    exit 1
fi
exit "$status"
