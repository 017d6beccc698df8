#!/usr/bin/env bash
# Builds the .deb from scratch with packaging/build-deb in a temporary directory, then checks what
# is in it (paths, modes, control fields), that lintian finds no error or warning (overrides
# ignored), and that the binary unpacked from it is hardened and takes a lock in a redis-server
# started here. Nothing is installed: the package is unpacked with dpkg-deb -x.
#
#   deb_package.sh SOURCE_DIR REDLOCKRUN
#
# REDLOCKRUN, the binary of the build under test, says which version to expect. A missing tool is
# a failure, not a skip.
set -u
source_dir=$1
redlockrun=$2
failures=0

fail() {
    echo "not ok: $*"
    failures=$((failures + 1))
}

for tool in cmake cpack dpkg-deb dpkg-shlibdeps dpkg-buildflags lintian gzip strip objdump \
    hardening-check redis-server redis-cli; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps installs it)"
done
[ "$failures" -eq 0 ] || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-deb.XXXXXX")
redis_pid=
cleanup() {
    [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

version=$("$redlockrun" --version | awk '{print $2}')
if ! deb=$("$source_dir/packaging/build-deb" "$work/build" 2>"$work/build.log" | tail -n 1) ||
    [ ! -f "$deb" ]; then
    echo "not ok: packaging/build-deb failed"
    sed 's/^/    /' "$work/build.log"
    exit 1
fi
echo "built $(basename "$deb")"
[ "$(basename "$deb")" = "redlockrun_${version}-1_$(dpkg --print-architecture).deb" ] ||
    fail "the package is named $(basename "$deb")"

# Contents: "mode owner path" for each entry.
dpkg-deb -c "$deb" | awk '{print $1, $2, $6}' >"$work/contents"
expect_entry() { # MODE PATH
    grep -qxF -- "$1 root/root $2" "$work/contents" || fail "the package lacks '$1 root/root $2'"
}
expect_entry -rwxr-xr-x ./usr/bin/redlockrun
expect_entry -rw-r--r-- ./usr/share/man/man1/redlockrun.1.gz
expect_entry -rw-r--r-- ./usr/share/bash-completion/completions/redlockrun
expect_entry -rw-r--r-- ./usr/share/zsh/vendor-completions/_redlockrun
expect_entry -rw-r--r-- ./usr/share/fish/vendor_completions.d/redlockrun.fish
expect_entry -rw-r--r-- ./usr/share/doc/redlockrun/copyright
expect_entry -rw-r--r-- ./usr/share/doc/redlockrun/examples/redlockrun.conf
expect_entry -rw-r--r-- ./usr/share/doc/redlockrun/changelog.Debian.gz
expect_entry -rw-r--r-- ./usr/share/doc/redlockrun/README.md
# Every relative link of the packaged README leads to a file the package has.
for link in $(grep -oE '\]\([^)#:]+[)#]' "$source_dir/README.md" | sed -E 's/^\]\(//; s/[)#]$//' | sort -u); do
    expect_entry -rw-r--r-- "./usr/share/doc/redlockrun/$link"
done
if grep -v -e '^d' -e ' ./usr/bin/' -e ' ./usr/share/' "$work/contents" | grep -q .; then
    fail "files outside /usr/bin and /usr/share: $(grep -v -e '^d' -e ' ./usr/' "$work/contents")"
fi

# Control fields.
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = redlockrun ] || fail "Package: $(field Package)"
[ "$(field Version)" = "${version}-1" ] || fail "Version: $(field Version), expected ${version}-1"
[ "$(field Section)" = utils ] || fail "Section: $(field Section)"
[ "$(field Priority)" = optional ] || fail "Priority: $(field Priority)"
[[ $(field Maintainer) =~ ^[^\<]+\ \<[^@]+@[^\>]+\>$ ]] || fail "Maintainer: $(field Maintainer)"
[ "$(field Description | wc -l)" -ge 5 ] || fail "no extended Description: $(field Description)"
[ -n "$(field Homepage)" ] || fail "no Homepage"
[[ "$(field Homepage) $(field Maintainer)" != *example.* ]] ||
    fail "a placeholder: Homepage $(field Homepage), Maintainer $(field Maintainer)"
# The RPM spec names the same home page and maintainer.
spec=$source_dir/packaging/redlockrun.spec
[ "$(sed -n 's/^URL: *//p' "$spec")" = "$(field Homepage)" ] ||
    fail "the spec's URL ($(sed -n 's/^URL: *//p' "$spec")) is not the Homepage, $(field Homepage)"
grep -qF -- "$(field Maintainer)" <(sed -n '/^%changelog/,$p' "$spec") ||
    fail "the spec's %changelog does not name the Maintainer, $(field Maintainer)"

# lintian, with any override ignored: no error and no warning, except the one only an upload to
# the archive can clear (the first changelog entry closes no bug report). Notes are shown.
lintian --no-override --display-info --fail-on none "$deb" >"$work/lintian" 2>&1
lintian_status=$?
grep -v 'running with root privileges is not recommended' "$work/lintian" | sed 's/^/    lintian: /'
[ "$lintian_status" -eq 0 ] || fail "lintian could not check the package (exit $lintian_status)"
if grep -E '^[EW]: ' "$work/lintian" | grep -qv ' initial-upload-closes-no-bugs '; then
    fail "lintian reports errors or warnings"
fi

# Unpacked into a temporary root, the binary runs and the other files are the source tree's.
dpkg-deb -x "$deb" "$work/root"

# Depends names the package of every shared library the binary needs (dpkg-shlibdeps), and
# libssl3, which the binary loads only for rediss://, where dpkg-shlibdeps cannot see it.
depends=$(field Depends)
[[ $depends == *libc6* ]] || fail "Depends lacks libc6: $depends"
[[ $depends =~ (^|, )libssl3( |,|$) ]] || fail "Depends lacks libssl3: $depends"
if grep -q lintian "$work/contents"; then
    fail "the package carries lintian overrides: $(grep lintian "$work/contents")"
fi
for library in $(objdump -p "$work/root/usr/bin/redlockrun" | awk '$1 == "NEEDED" {print $2}'); do
    path=$(ldconfig -p | awk -v name="$library" '$1 == name {print $NF; exit}')
    package=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$package" ] || package=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
    [[ -n "$package" && $depends == *"$package"* ]] ||
        fail "the binary needs $library (package ${package:-unknown}), which Depends lacks: $depends"
done
bash "$source_dir/tests/consistency/hardening.sh" "$work/root/usr/bin/redlockrun" \
    "$work/build/compile_commands.json" | sed 's/^/    hardening: /'
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the packaged binary is not built as DESIGN.md §11 asks"
root_version=$("$work/root/usr/bin/redlockrun" --version 2>&1)
[ "$root_version" = "redlockrun $version" ] ||
    fail "the packaged redlockrun --version printed '$root_version', expected 'redlockrun $version'"
cmp -s "$work/root/usr/share/bash-completion/completions/redlockrun" \
    "$source_dir/completions/redlockrun.bash" || fail "the packaged bash completion differs"
cmp -s "$work/root/usr/share/zsh/vendor-completions/_redlockrun" \
    "$source_dir/completions/_redlockrun" || fail "the packaged zsh completion differs"
cmp -s "$work/root/usr/share/fish/vendor_completions.d/redlockrun.fish" \
    "$source_dir/completions/redlockrun.fish" || fail "the packaged fish completion differs"
cmp -s "$work/root/usr/share/doc/redlockrun/copyright" "$source_dir/LICENSE" ||
    fail "the packaged copyright file is not LICENSE"
gzip -dc "$work/root/usr/share/man/man1/redlockrun.1.gz" >"$work/redlockrun.1"
grep -q "^\.TH REDLOCKRUN 1 .*\"redlockrun $version\"" "$work/redlockrun.1" ||
    fail "the packaged man page's .TH line does not carry version $version"
if ! file "$work/root/usr/bin/redlockrun" | grep -q ', stripped'; then
    fail "the packaged binary is not stripped"
fi

# The packaged binary takes a lock, with the libraries the system has: in a redis-server of its own
# on a unix socket, and OpenSSL is found for rediss:// (a CA file that does not exist is then the
# only complaint, 64, before anything connects).
redis-server --port 0 --unixsocket "$work/redis.sock" --save '' --appendonly no \
    --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 1 100); do
    redis-cli -s "$work/redis.sock" ping >/dev/null 2>&1 && break
    sleep 0.1
done
fence=$("$work/root/usr/bin/redlockrun" -u "unix://$work/redis.sock" -k deb-package -- \
    sh -c 'echo "$REDLOCKRUN_FENCE"' 2>"$work/run.err")
run_status=$?
[ "$run_status" -eq 0 ] && [[ $fence =~ ^[0-9]+$ ]] ||
    fail "the packaged redlockrun did not run a command under a lock (status $run_status, output" \
        "'$fence'): $(cat "$work/run.err")"
"$work/root/usr/bin/redlockrun" -u "rediss://127.0.0.1:1" --tls-ca-file "$work/missing.pem" \
    -k deb-package -- true 2>"$work/tls.err"
tls_status=$?
[ "$tls_status" -eq 64 ] && grep -q -- "--tls-ca-file: cannot read" "$work/tls.err" ||
    fail "the packaged redlockrun with rediss:// (status $tls_status): $(cat "$work/tls.err")"

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: $(basename "$deb")"
