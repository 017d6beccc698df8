// Starting the command: clone (as vfork), then in the child only async-signal-safe calls before
// execve. The
// command gets its own process group (so signals can be forwarded to all of it), the terminal if
// redlockrun had it, PR_SET_PDEATHSIG so it dies with redlockrun, and redlockrun's original signal
// dispositions. Exec failures come back through a close-on-exec pipe.
#pragma once

#include "base/expected.hpp"
#include "run/command_path.hpp"
#include "run/signals.hpp"
#include "run/terminal.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace redlockrun::run {

struct ChildSpec {
    std::string path;              // from find_command()
    std::vector<std::string> argv; // argv[0] included
    // The command's environment: the inherited one (environ), with each of the overrides
    // (NAME=value) replacing any variable of the same name.
    char** inherited_environment = nullptr;
    std::vector<std::string> environment_overrides;
};

// The child's pid, which is also its process group id. NotRunnable carries 126/127 for exec errors
// and os_error for fork/pipe failures.
Expected<pid_t, NotRunnable> spawn_child(const ChildSpec& spec, const SignalPipe& signals,
                                         const Terminal& terminal);

// Environment for the command, as execve() takes it (ending in a null pointer): the variables of
// `environ_in` that none of `overrides` (NAME=value) names, then the overrides. It points into
// both, which must outlive it: nothing is copied.
std::vector<char*> child_environment(char** environ_in, const std::vector<std::string>& overrides);

} // namespace redlockrun::run
