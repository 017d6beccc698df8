// The exit statuses redlockrun chooses itself. The child's own status, and 128+N for a signal, pass
// through unchanged; everything else is one of these. man/redlockrun.1 documents the same table.
#pragma once

namespace redlockrun {

enum class ExitStatus : int {
    ok = 0,
    usage = 64,           // bad option, duration, URL; missing key or command
    foreign_value = 65,   // KEY holds something that is not a timestamp lock
    unavailable = 69,     // cannot connect, TLS/auth failure, Redis error before the command ran
    internal = 70,        // a bug in redlockrun
    os_error = 71,        // fork, pipe and other system calls
    not_acquired = 75,    // lock held with -n, or -w ran out (default of -E)
    lock_lost = 76,       // lock lost while the command ran (default of --lost-exit-code)
    cannot_execute = 126, // command found but not executable
    command_not_found = 127,
};

constexpr int to_int(ExitStatus status) {
    return static_cast<int>(status);
}

// 128+N: the command (or redlockrun, while waiting) was ended by signal N.
constexpr int signal_exit_status(int signal_number) {
    return 128 + signal_number;
}

} // namespace redlockrun
