// --status: one line on stdout saying whether the lock is free or who holds it for how long.
#pragma once

#include "lock/answers.hpp"
#include "log.hpp"
#include "redis/settings.hpp"

#include <string>

namespace redlockrun {

struct StatusReport {
    int exit_status = 0; // 0 free, 75 held, 65 not a timestamp lock
    std::string line;    // for stdout; for a foreign key, the error message instead
};

// Interprets what the status script read, with the same timestamp rules the scripts apply.
StatusReport describe_status(const std::string& key, const lock::StatusSnapshot& snapshot);

// Asks Redis and prints the report; returns the exit status.
int show_status(const std::string& key, const redis::ConnectionSettings& settings,
                const Logger& log);

} // namespace redlockrun
