// The clocks redlockrun measures with. Deadlines use a monotonic clock that keeps counting while
// the machine is suspended (CLOCK_BOOTTIME on Linux), because a lock's validity on the server keeps
// running out while this machine sleeps; lock expiry itself is always decided by the server's
// clock.
#pragma once

#include "base/duration.hpp"

#include <chrono>
#include <optional>

namespace redlockrun {

struct SteadyTime {
    Millis since_boot{0};

    friend auto operator<=>(const SteadyTime&, const SteadyTime&) = default;
    SteadyTime operator+(Millis d) const { return SteadyTime{since_boot + d}; }
    SteadyTime operator-(Millis d) const { return SteadyTime{since_boot - d}; }
    Millis operator-(SteadyTime other) const { return since_boot - other.since_boot; }
};

SteadyTime steady_now();

// A point in steady time after which an operation gives up; "never" is represented by nullopt.
using Deadline = std::optional<SteadyTime>;

// The earlier of a time and a deadline.
inline SteadyTime earliest(SteadyTime time, const Deadline& deadline) {
    return deadline && *deadline < time ? *deadline : time;
}

// Milliseconds from now until the deadline, clamped to [0, cap] (cap also stands for "never"), in
// the form poll(2) takes.
int poll_timeout(const Deadline& deadline, Millis cap);

} // namespace redlockrun
