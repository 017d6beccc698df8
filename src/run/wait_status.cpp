#include "run/wait_status.hpp"

#include "base/exit_status.hpp"

#include <fmt/core.h>

#include <csignal>
#include <cstring>
#include <sys/wait.h>

namespace redlockrun::run {

int exit_status_from_wait(int wait_status) {
    if (WIFEXITED(wait_status)) {
        return WEXITSTATUS(wait_status);
    }
    if (WIFSIGNALED(wait_status)) {
        return signal_exit_status(WTERMSIG(wait_status));
    }
    return to_int(ExitStatus::internal);
}

std::string signal_name(int signal_number) {
    if (const char* abbreviation = ::sigabbrev_np(signal_number)) {
        return fmt::format("SIG{}", abbreviation);
    }
    // The C library has no names for the real-time signals; kill -l counts the first half up from
    // SIGRTMIN and the second down from SIGRTMAX.
    if (signal_number >= SIGRTMIN && signal_number <= SIGRTMAX) {
        const int up = signal_number - SIGRTMIN;
        const int down = SIGRTMAX - signal_number;
        if (up <= (SIGRTMAX - SIGRTMIN) / 2) {
            return up == 0 ? "SIGRTMIN" : fmt::format("SIGRTMIN+{}", up);
        }
        return down == 0 ? "SIGRTMAX" : fmt::format("SIGRTMAX-{}", down);
    }
    return fmt::format("signal {}", signal_number);
}

std::string describe_wait_status(int wait_status) {
    if (WIFEXITED(wait_status)) {
        return fmt::format("exited with status {}", WEXITSTATUS(wait_status));
    }
    if (WIFSIGNALED(wait_status)) {
        return fmt::format("was killed by {}{}", signal_name(WTERMSIG(wait_status)),
                           WCOREDUMP(wait_status) ? " (core dumped)" : "");
    }
    return "ended in an unknown way";
}

} // namespace redlockrun::run
