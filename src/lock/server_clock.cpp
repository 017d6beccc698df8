#include "lock/server_clock.hpp"

#include "base/duration.hpp"

#include <fmt/core.h>

namespace redlockrun::lock {

std::optional<std::string> ServerClock::observe(long long server_ms, SteadyTime sent,
                                                SteadyTime received) {
    const Reading reading{server_ms, sent, received};
    const auto last = last_;
    last_ = reading;
    if (!last) {
        return std::nullopt;
    }
    // The server read its clock somewhere within each request's round trip: between the two
    // readings, this much time passed here at most, and at least.
    const Millis server_moved{server_ms - last->server_ms};
    const auto longest = std::chrono::duration_cast<Millis>(received - last->sent);
    const auto shortest = std::chrono::duration_cast<Millis>(sent - last->received);
    if (server_moved > longest + clock_jump_threshold) {
        return fmt::format("the server's clock jumped forward by about {}",
                           format_duration(server_moved - longest));
    }
    if (server_moved < shortest - clock_jump_threshold) {
        return fmt::format("the server's clock jumped back by about {}",
                           format_duration(shortest - server_moved));
    }
    return std::nullopt;
}

} // namespace redlockrun::lock
