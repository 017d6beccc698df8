// From a waitpid(2) status to redlockrun's exit status: the command's own code, or 128+N when
// signal N ended it (as shells report it).
#pragma once

#include <string>

namespace redlockrun::run {

int exit_status_from_wait(int wait_status);

// "exited with status 3", "was killed by SIGTERM" - for -v and lost-lock messages.
std::string describe_wait_status(int wait_status);

// "SIGTERM", "SIGRTMIN+3" (as kill -l says it); "signal 200" for numbers without a name.
std::string signal_name(int signal_number);

} // namespace redlockrun::run
