#!/usr/bin/env bash
# Builds the RPM from packaging/redlockrun.spec in a temporary directory, from a source tarball of
# this tree, as rpmbuild on Fedora would; then checks that its %check ran the unit tests, what the
# package holds and requires, that the binary unpacked from it is hardened and runs, and that
# rpmlint finds nothing in the spec.
#
#   rpm_package.sh SOURCE_DIR REDLOCKRUN
#
# REDLOCKRUN, the binary of the build under test, says which version to expect. On Debian, rpm's
# database holds no packages, so the BuildRequires cannot be checked (--nodeps: scripts/install-deps
# installs their Debian equivalents), and rpm lacks Fedora's CMake and shell-completion macros:
# rpm_macros beside this script supplies them. A missing tool is a failure, not a skip.
set -u
source_dir=$1
redlockrun=$2
here=$(cd "$(dirname "$0")" && pwd)
spec=$source_dir/packaging/redlockrun.spec
failures=0

fail() {
    echo "not ok: $*"
    failures=$((failures + 1))
}

for tool in rpmbuild rpm rpmlint rpm2cpio cpio tar; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps installs it)"
done
[ "$failures" -eq 0 ] || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-rpm.XXXXXX")
trap 'rm -rf "$work"' EXIT

# rpmlint on the spec: nothing but what the spec does on purpose. no-buildroot-tag: rpm has
# ignored BuildRoot since 4.6, and Fedora's guidelines say not to write one.
rpmlint "$spec" >"$work/rpmlint" 2>&1
sed 's/^/    rpmlint: /' "$work/rpmlint"
if grep -E ': [EW]: ' "$work/rpmlint" | grep -qv ': W: no-buildroot-tag$'; then
    fail "rpmlint reports errors or warnings in the spec"
fi
grep -q '1 specfiles checked' "$work/rpmlint" || fail "rpmlint did not check the spec"

version=$("$redlockrun" --version | awk '{print $2}')
[ "$(sed -n 's/^Version: *//p' "$spec")" = "$version" ] ||
    fail "the spec's Version is not $version: $(sed -n 's/^Version: *//p' "$spec")"

# The tarball Source0 names, as a release archive would hold it: the tree under name-version/,
# without version control or build directories.
mkdir -p "$work/rpm/SOURCES"
tar -C "$source_dir" --exclude-vcs --exclude='./build*' --exclude=./bench/results \
    --transform "s|^\\.|redlockrun-$version|" \
    -czf "$work/rpm/SOURCES/redlockrun-$version.tar.gz" .

macros=()
if [ "$(rpm --eval '%cmake')" = '%cmake' ]; then
    macros=(--load "$here/rpm_macros")
fi
# No debuginfo package: Debian's rpm has no find-debuginfo to make one. The build tree is kept
# (--noclean) for its compile_commands.json.
if ! rpmbuild -bb --nodeps --noclean "${macros[@]}" --define "_topdir $work/rpm" \
    --define 'debug_package %{nil}' "$spec" >"$work/build.log" 2>&1; then
    echo "not ok: rpmbuild failed"
    tail -n 40 "$work/build.log" | sed 's/^/    /'
    exit 1
fi
packages=("$work"/rpm/RPMS/*/redlockrun-"$version"-*.rpm)
if [ ! -f "${packages[0]}" ] || [ "${#packages[@]}" -ne 1 ]; then
    echo "not ok: rpmbuild made no single package: ${packages[*]}"
    exit 1
fi
package=${packages[0]}
echo "built $(basename "$package")"

# %check ran the unit tests, all of them passed, and there were some.
if ! grep -qE '^100% tests passed, 0 tests failed out of [1-9][0-9]*$' "$work/build.log"; then
    fail "%check did not run the unit tests: $(grep -E 'tests passed|No tests were found' "$work/build.log")"
fi

query() { rpm -qp --queryformat "$1" "$package" 2>/dev/null; }
[ "$(query '%{URL}')" = "$(sed -n 's/^URL: *//p' "$spec")" ] || fail "URL: $(query '%{URL}')"
[[ $(query '%{URL}') != *example.* ]] || fail "a placeholder URL: $(query '%{URL}')"

# The files: the binary, the man page, the completions where Fedora's shells look, the license.
rpm -qlp "$package" 2>/dev/null >"$work/files"
for path in /usr/bin/redlockrun /usr/share/man/man1/redlockrun.1 \
    /usr/share/bash-completion/completions/redlockrun /usr/share/zsh/site-functions/_redlockrun \
    /usr/share/fish/vendor_completions.d/redlockrun.fish \
    "/usr/share/licenses/redlockrun-$version/LICENSE"; do
    grep -qxF "$path" "$work/files" || fail "the package lacks $path"
done
# The README, and every file its relative links lead to, in the documentation directory.
readme=$(grep -E '^/usr/share/doc/redlockrun[^/]*/README\.md$' "$work/files") ||
    fail "the package lacks the README"
for link in $(grep -oE '\]\([^)#:]+[)#]' "$source_dir/README.md" | sed -E 's/^\]\(//; s/[)#]$//' | sort -u); do
    grep -qxF "${readme%/README.md}/$link" "$work/files" || fail "the package lacks $link"
done

# Requires: the sonames of the libraries the binary links (found by rpm), and OpenSSL's package,
# which the binary loads only for rediss://.
rpm -qp --requires "$package" 2>/dev/null >"$work/requires"
for requirement in 'libhiredis\.so\.[0-9.]+\(\)' 'libfmt\.so\.[0-9]+\(\)' 'libstdc\+\+\.so\.6\(\)' \
    'openssl-libs'; do
    grep -qE "^$requirement" "$work/requires" || fail "Requires lacks $requirement"
done
if grep -qE '^lib(ssl|crypto)\.so' "$work/requires"; then
    fail "the binary links OpenSSL: $(grep -E '^lib(ssl|crypto)' "$work/requires")"
fi

# Unpacked, the binary is hardened and runs.
mkdir "$work/root"
(cd "$work/root" && rpm2cpio "$package" | cpio -idm --quiet) || fail "cannot unpack the package"
build_dir=$work/rpm/BUILD/redlockrun-$version/redhat-linux-build
bash "$here/hardening.sh" "$work/root/usr/bin/redlockrun" "$build_dir/compile_commands.json" |
    sed 's/^/    hardening: /'
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the packaged binary is not built as DESIGN.md §11 asks"
root_version=$("$work/root/usr/bin/redlockrun" --version 2>&1)
[ "$root_version" = "redlockrun $version" ] ||
    fail "the packaged redlockrun --version printed '$root_version', expected 'redlockrun $version'"

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: $(basename "$package")"
