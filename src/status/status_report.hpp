// --status: one line on stdout saying whether the lock is free or who holds it for how long, and
// how many wait, then a line for each waiter in the order they will be served; or (--json) one
// JSON object.
#pragma once

#include "base/log.hpp"
#include "lock/answers.hpp"
#include "redis/settings.hpp"
#include "status/lock_state.hpp"

#include <string>
#include <vector>

namespace redlockrun {

struct StatusReport {
    int exit_status = 0; // 0 free, 75 held, 65 not a timestamp lock
    std::string line;    // for stdout; for a foreign key, the error message instead
};

// The line for stdout (not yet made printable): "job: free", "job: held by web1 pid 4242 for
// another 12s, fence 17, acquired 3s ago"...; for a foreign key, what it holds.
std::string status_line(const LockState& state);
// A line for each waiter, in the order they will be served: "  1. web2 pid 4243 (note: deploy 43),
// exclusive, --supersede, waiting for 2m10s, gives up in 12m50s".
std::vector<std::string> waiter_lines(const LockState& state);

// Interprets what the status script read, with the same timestamp rules the scripts apply.
StatusReport describe_status(const std::string& key, const lock::StatusSnapshot& snapshot);

enum class StatusFormat { text, json };

// Asks Redis and prints the report; returns the exit status. A foreign key is an error on stderr
// (and, as JSON, an object on stdout too).
int show_status(const std::string& key, StatusFormat format,
                const redis::ConnectionSettings& settings, const Logger& log);

} // namespace redlockrun
