// Watches the server's clock against this machine's monotonic clock. Redis and Valkey expire keys
// by the server's wall clock, and the lock scripts read the time with TIME: a clock stepped
// forward ends every lock early, one stepped back keeps an abandoned lock late. The scripts that
// grant and renew a lock answer with the server's time; this compares each answer with the one
// before, and tells of a jump, for -v and for the message of a loss it explains.
#pragma once

#include "base/clock.hpp"

#include <optional>
#include <string>

namespace redlockrun::lock {

// What a jump is: the server's clock moved this much more, or less, than this machine's
// monotonic clock can have between two answers, round trips included.
inline constexpr Millis clock_jump_threshold{1000};

class ServerClock {
public:
    // The server answered with its time `server_ms` (Unix ms) to a request sent at `sent` whose
    // answer arrived at `received`. Returns a description of a jump since the previous answer, if
    // there was one: "the server's clock jumped forward by about 30s".
    std::optional<std::string> observe(long long server_ms, SteadyTime sent, SteadyTime received);

private:
    struct Reading {
        long long server_ms;
        SteadyTime sent;
        SteadyTime received;
    };
    std::optional<Reading> last_;
};

} // namespace redlockrun::lock
