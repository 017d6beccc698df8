#!/usr/bin/env bash
# Checks that a redlockrun binary is built as DESIGN.md §11 asks: hardening-check (devscripts) says
# yes to PIE, stack protector, fortify, read-only relocations and immediate binding, and neither
# libssl nor libcrypto is among the libraries it needs (src/redis/openssl_loader.cpp loads them
# when a rediss:// URL is used).
#
#   hardening.sh BINARY COMPILE_COMMANDS
#
# Fortify: hardening-check looks for the checked variants (__memcpy_chk, __read_chk...) among the
# C library functions the binary calls. Where the compiler could prove every call safe, as it can
# for redlockrun's, none is left to check at run time, and hardening-check answers "no, only
# unprotected functions found". That answer is accepted only when COMPILE_COMMANDS (the build's
# compile_commands.json) shows every source of the binary compiled with _FORTIFY_SOURCE and
# optimisation, which is what the question is about. A missing tool is a failure.
set -u
binary=$1
compile_commands=$2
failures=0

fail() {
    echo "not ok: $*"
    failures=$((failures + 1))
}

for tool in hardening-check readelf python3; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps installs it)"
done
[ "$failures" -eq 0 ] || exit 1

report=$(hardening-check "$binary" 2>&1)
answer() { # FEATURE: what hardening-check said about it
    sed -n "s/^ *$1: //p" <<<"$report"
}
for feature in "Position Independent Executable" "Stack protected" "Read-only relocations" \
    "Immediate binding"; do
    if [ "$(answer "$feature")" = yes ]; then
        echo "ok: $feature"
    else
        fail "$feature: $(answer "$feature")"
    fi
done

fortify=$(answer "Fortify Source functions")
# "yes" comes with a remark: "yes (some protected functions found)".
if [ "$fortify" = yes ] || [[ "$fortify" == "yes ("* ]]; then
    echo "ok: Fortify Source functions: $fortify"
elif [ "$fortify" = "no, only unprotected functions found!" ] && [ ! -r "$compile_commands" ]; then
    fail "Fortify Source functions: $fortify, and no $compile_commands to say how it was compiled"
elif [ "$fortify" = "no, only unprotected functions found!" ]; then
    # The build's own record of how each source was compiled.
    if unfortified=$(python3 - "$compile_commands" <<'EOF'
import json, re, shlex, sys
entries = json.load(open(sys.argv[1]))
sources = [entry for entry in entries if "/src/" in entry["file"]]
if not sources:
    sys.exit(f"no source of redlockrun in {sys.argv[1]}")
for entry in sources:
    words = entry.get("arguments") or shlex.split(entry["command"])
    level, optimised = 0, False
    for word in words:
        if match := re.fullmatch(r"-D_FORTIFY_SOURCE(?:=(\d+))?", word):
            level = int(match.group(1) or 1)
        elif word == "-U_FORTIFY_SOURCE":
            level = 0
        elif match := re.fullmatch(r"-O(\w*)", word):
            optimised = match.group(1) not in ("0", "g")
    if level < 2 or not optimised:
        print(entry["file"])
EOF
    ); then
        if [ -z "$unfortified" ]; then
            echo "ok: Fortify Source: every call proved safe at compile time (hardening-check:" \
                "'$fortify'); every source compiled with _FORTIFY_SOURCE=2 and optimisation"
        else
            fail "compiled without _FORTIFY_SOURCE=2 or without optimisation:" $unfortified
        fi
    else
        fail "cannot read $compile_commands"
    fi
else
    fail "Fortify Source functions: $fortify"
fi

needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if grep -qE '^lib(ssl|crypto)\.' <<<"$needed"; then
    fail "OpenSSL is linked in, not loaded on demand: $(tr '\n' ' ' <<<"$needed")"
else
    echo "ok: needs $(tr '\n' ' ' <<<"$needed")and not OpenSSL"
fi

if [ "$failures" -gt 0 ]; then
    sed 's/^/    hardening-check: /' <<<"$report"
    exit 1
fi
