#!/usr/bin/env bash
# Installs the build under test into a temporary root (DESTDIR, prefix /usr) and checks that every
# file lands where this build's configuration says: GNUInstallDirs, overridable per shell.
#
#   install.sh BUILD_DIR BINDIR MANDIR DOCDIR BASH_DIR ZSH_DIR FISH_DIR INSTALL_COPYRIGHT
#
# The directories are as configured (relative to the prefix, or absolute); an empty completion
# directory means that completion is not installed.
set -u
build_dir=$1 bindir=$2 mandir=$3 docdir=$4 bash_dir=$5 zsh_dir=$6 fish_dir=$7 copyright=$8
failures=0

work=$(mktemp -d "${TMPDIR:-/tmp}/redlockrun-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! DESTDIR=$work/root cmake --install "$build_dir" --prefix /usr >"$work/log" 2>&1; then
    echo "not ok: cmake --install failed"
    sed 's/^/    /' "$work/log"
    exit 1
fi

# place DIR NAME: where DIR/NAME ends up under the temporary root.
place() {
    case $1 in
        /*) echo "$work/root$1/$2" ;;
        *) echo "$work/root/usr/$1/$2" ;;
    esac
}
expected=("$(place "$bindir" redlockrun)" "$(place "$mandir/man1" redlockrun.1)"
    "$(place "$docdir/examples" redlockrun.conf)")
[ -n "$bash_dir" ] && expected+=("$(place "$bash_dir" redlockrun)")
[ -n "$zsh_dir" ] && expected+=("$(place "$zsh_dir" _redlockrun)")
[ -n "$fish_dir" ] && expected+=("$(place "$fish_dir" redlockrun.fish)")
case $copyright in
    ON | on | TRUE | true | 1 | YES | yes) expected+=("$(place "$docdir" copyright)") ;;
esac
# The README and what its links lead to: ARCHITECTURE.md, docs/, the man page's source.
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
expected+=("$(place "$docdir" README.md)" "$(place "$docdir" ARCHITECTURE.md)"
    "$(place "$docdir/man" redlockrun.1)")
for page in "$source_dir"/docs/*.md; do
    expected+=("$(place "$docdir/docs" "$(basename "$page")")")
done

for path in "${expected[@]}"; do
    if [ -f "$path" ]; then
        echo "ok: ${path#"$work/root"}"
    else
        echo "not ok: ${path#"$work/root"} was not installed"
        failures=$((failures + 1))
    fi
done
installed=$(cd "$work/root" && find . -type f | sort)
if [ "$(wc -l <<<"$installed")" -ne "${#expected[@]}" ]; then
    echo "not ok: installed files other than the expected ones:"
    sed 's/^/    /' <<<"$installed"
    failures=$((failures + 1))
fi
"$(place "$bindir" redlockrun)" --version >/dev/null || {
    echo "not ok: the installed redlockrun --version failed"
    failures=$((failures + 1))
}
[ "$failures" -eq 0 ]
