# Sourced by the suites of holds (hold.sh, hold_ending.sh) after lib.sh: their holds live in a
# folder of the suite's own, and no keeper outlives the suite.
export XDG_RUNTIME_DIR="$WORK/runtime"
mkdir -m 700 "$XDG_RUNTIME_DIR"
HOLDS="$XDG_RUNTIME_DIR/redlockrun"

# Keepers are detached (their own session); a stopped one is continued so that it can die.
kill_keepers() {
    local record pid
    for record in "$HOLDS"/hold.*; do
        [ -f "$record" ] || continue
        pid=$(sed -n 's/^keeper=//p' "$record")
        [ -n "$pid" ] && [ "$pid" != 0 ] && kill -CONT "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    done
}
trap 'kill_keepers; cleanup' EXIT

# The keeper's pid, from the record its handle names.
keeper_of() { sed -n 's/^keeper=//p' "$1"; }
