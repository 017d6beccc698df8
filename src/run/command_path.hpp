// Finds the program to run the way execvp(3) would, but before fork(): the child then only calls
// execve, which is async-signal-safe.
#pragma once

#include "base/exit_status.hpp"
#include "base/expected.hpp"

#include <string>

namespace redlockrun::run {

struct NotRunnable {
    ExitStatus status; // command_not_found or cannot_execute
    std::string message;
};

// A name with a '/' is used as it is; otherwise each directory of path_env (empty entries mean the
// current directory; unset means the system's default path) is tried in turn.
Expected<std::string, NotRunnable> find_command(const std::string& name, const char* path_env);

} // namespace redlockrun::run
