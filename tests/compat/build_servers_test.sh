#!/usr/bin/env bash
# tests/compat/build-servers on made-up tarballs: it builds and caches one whose make works, and
# every way it cannot give a server (no SHA256SUMS, a tarball listed but missing, a wrong checksum,
# a failed build, a name not listed) ends with status 1 and one line, leaving nothing in the cache
# that a later run would take for a server.
set -u
BUILD_SERVERS="$(cd "$(dirname "$0")" && pwd)/build-servers"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-build-servers.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export REDLOCKRUN_SERVER_SOURCES="$WORK/sources" REDLOCKRUN_SERVER_CACHE="$WORK/cache"
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# make_tarball NAME MAKE_RECIPE: a source tarball whose Makefile runs MAKE_RECIPE for `make` and
# installs a redis-server script for `make install`.
make_tarball() {
    local name=$1 recipe=$2 dir="$WORK/src/${1%.tar.gz}"
    mkdir -p "$dir"
    printf 'all:\n\t%s\ninstall:\n\tmkdir -p $(PREFIX)/bin\n\tprintf "#!/bin/sh\\necho fake\\n" >$(PREFIX)/bin/redis-server\n\tchmod +x $(PREFIX)/bin/redis-server\n' \
        "$recipe" >"$dir/Makefile"
    mkdir -p "$REDLOCKRUN_SERVER_SOURCES"
    tar -czf "$REDLOCKRUN_SERVER_SOURCES/$name" -C "$WORK/src" "${name%.tar.gz}"
}

# run_build ARGS...: sets status, out and err.
run_build() {
    "$BUILD_SERVERS" "$@" >"$WORK/out" 2>"$WORK/err"
    status=$?
    out=$(cat "$WORK/out")
    err=$(cat "$WORK/err")
}

expect_refusal() { # WHAT NEEDLE
    [ "$status" = 1 ] || fail "$1: status $status, not 1"
    [[ "$err" == *"$2"* ]] || fail "$1: '$2' not in: $err"
    [ "$(wc -l <"$WORK/err" | tr -d ' ')" -le 2 ] || fail "$1: more than one line besides the build notice: $err"
    [ -z "$out" ] || fail "$1: printed a server: $out"
}

run_build
expect_refusal "no SHA256SUMS" "SHA256SUMS"

make_tarball good-1.0.tar.gz true
make_tarball broken-1.0.tar.gz false
(cd "$REDLOCKRUN_SERVER_SOURCES" && sha256sum good-1.0.tar.gz broken-1.0.tar.gz >SHA256SUMS)
good_sum=$(cut -d' ' -f1 <<<"$(sha256sum "$REDLOCKRUN_SERVER_SOURCES/good-1.0.tar.gz")")

run_build good-1.0.tar.gz
[ "$status" = 0 ] || fail "a good tarball: status $status: $err"
[ "$out" = "good-1.0	$WORK/cache/$good_sum/bin" ] || fail "a good tarball: printed '$out'"
[ "$("$WORK/cache/$good_sum/bin/redis-server")" = fake ] || fail "a good tarball: no server installed"
[ -e "$WORK/cache/$good_sum/bin/redis-sentinel" ] || fail "a good tarball: no redis-sentinel beside it"
run_build good-1.0.tar.gz
[ "$status" = 0 ] || fail "a cached server: status $status: $err"
[[ "$err" != *building* ]] || fail "a cached server was built again: $err"

run_build broken-1.0.tar.gz
expect_refusal "a failed build" "building broken-1.0.tar.gz failed"
broken_sum=$(cut -d' ' -f1 <<<"$(sha256sum "$REDLOCKRUN_SERVER_SOURCES/broken-1.0.tar.gz")")
[ ! -e "$WORK/cache/$broken_sum" ] || fail "a failed build left a server folder in the cache"
run_build
[ "$status" = 1 ] || fail "every server, one of them broken: status $status, not 1"
[[ "$err" == *"building broken-1.0.tar.gz failed"* ]] || fail "every server, one broken: $err"

run_build other-1.0.tar.gz
expect_refusal "a name not listed" "other-1.0.tar.gz is not listed"

echo "0000000000000000000000000000000000000000000000000000000000000000  gone-1.0.tar.gz" \
    >>"$REDLOCKRUN_SERVER_SOURCES/SHA256SUMS"
run_build gone-1.0.tar.gz
expect_refusal "a listed tarball that is missing" "gone-1.0.tar.gz is listed"

# The good tarball changed after its checksum was taken: cached or not, it is refused.
make_tarball good-1.0.tar.gz "echo changed"
run_build good-1.0.tar.gz
expect_refusal "a wrong checksum" "good-1.0.tar.gz has checksum"

# Without REDLOCKRUN_SERVER_SOURCES: the checkout's sibling shared/servers, or, in a clone of a
# local repository made where no such sibling is (a CI run's clean clone), the one beside the
# repository it was cloned from.
layout="$WORK/layout"
mkdir -p "$layout/project/tests/compat" "$layout/shared" "$WORK/elsewhere"
cp "$BUILD_SERVERS" "$layout/project/tests/compat/"
make_tarball good-1.0.tar.gz true
(cd "$REDLOCKRUN_SERVER_SOURCES" && sha256sum good-1.0.tar.gz >SHA256SUMS)
cp -r "$REDLOCKRUN_SERVER_SOURCES" "$layout/shared/servers"
git -C "$layout/project" init -q && git -C "$layout/project" add -A &&
    git -C "$layout/project" -c user.name=t -c user.email=t@t commit -q -m t ||
    fail "could not make the repository to clone"
git clone -q "$layout/project" "$WORK/elsewhere/clone" || fail "could not clone the repository"
for checkout in "$layout/project" "$WORK/elsewhere/clone"; do
    got=$(env -u REDLOCKRUN_SERVER_SOURCES "$checkout/tests/compat/build-servers" good-1.0.tar.gz \
        2>"$WORK/err") || fail "no REDLOCKRUN_SERVER_SOURCES, in $checkout: $(cat "$WORK/err")"
    [[ "$got" == good-1.0$'\t'* ]] || fail "no REDLOCKRUN_SERVER_SOURCES, in $checkout: printed '$got'"
done
mkdir -p "$WORK/elsewhere/lone" && cp -r "$layout/project/tests" "$WORK/elsewhere/lone/"
env -u REDLOCKRUN_SERVER_SOURCES "$WORK/elsewhere/lone/tests/compat/build-servers" good-1.0.tar.gz \
    >/dev/null 2>"$WORK/err"
[ $? = 1 ] || fail "no REDLOCKRUN_SERVER_SOURCES, and no shared/servers anywhere: not status 1"
grep -q "$WORK/elsewhere/shared/servers/SHA256SUMS" "$WORK/err" ||
    fail "no shared/servers anywhere: the message does not name where it looked: $(cat "$WORK/err")"

if [ "$failures" = 0 ]; then
    echo "build-servers: every case passed"
fi
[ "$failures" = 0 ]
