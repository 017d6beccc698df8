#include "base/clock.hpp"

#include <algorithm>
#include <time.h>

namespace redlockrun {

SteadyTime steady_now() {
    timespec now{};
#ifdef CLOCK_BOOTTIME
    if (clock_gettime(CLOCK_BOOTTIME, &now) != 0)
#endif
        clock_gettime(CLOCK_MONOTONIC, &now);
    return SteadyTime{Millis{now.tv_sec * 1000 + now.tv_nsec / 1'000'000}};
}

int poll_timeout(const Deadline& deadline, Millis cap) {
    if (!deadline) {
        return static_cast<int>(cap.count());
    }
    // Round up so that a wake-up never comes just before the deadline and spins.
    const auto left = *deadline - steady_now();
    return static_cast<int>(std::clamp(left, Millis{0}, cap).count());
}

} // namespace redlockrun
