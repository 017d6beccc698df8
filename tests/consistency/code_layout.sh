#!/usr/bin/env bash
# The C and C++ sources are laid out as .clang-format says (clang-format 14, Debian 12's): a change
# whose layout differs fails here, not in a later review. Fails, and never skips, without
# clang-format-14 (scripts/install-deps installs it).
#   code_layout.sh SOURCE_DIR
set -uo pipefail
source_dir=$1
format=clang-format-14
command -v "$format" >/dev/null || { echo "not ok: $format is not installed"; exit 1; }
cd "$source_dir" || exit 1
checked=0 differing=()
while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    "$format" --dry-run -Werror "$file" >/dev/null 2>&1 || differing+=("$file")
done < <(find src tests/unit bench/helpers -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) -print0)
if [ "$checked" -lt 50 ]; then
    echo "not ok: only $checked C and C++ files found under src, tests/unit and bench/helpers"
    exit 1
fi
if [ "${#differing[@]}" -gt 0 ]; then
    echo "not ok: laid out otherwise than .clang-format says ($format -i FILE fixes it):"
    printf '  %s\n' "${differing[@]}"
    exit 1
fi
echo "ok: $checked files laid out as .clang-format says"
