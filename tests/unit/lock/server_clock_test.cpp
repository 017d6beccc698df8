#include "lock/server_clock.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;
using namespace redlockrun::lock;

namespace {

const SteadyTime start{Millis{5'000'000}};
constexpr long long unix_ms = 1'800'000'000'000;

} // namespace

TEST_CASE("server clock: the first answer is only a reading") {
    ServerClock clock;
    CHECK_FALSE(clock.observe(unix_ms, start, start + Millis{2}));
}

TEST_CASE("server clock: moving with this machine, round trips and all, is no jump") {
    ServerClock clock;
    clock.observe(unix_ms, start, start + Millis{2});
    // 10 s later here, the server read 10 s later too; then a slow answer (900 ms round trip)
    // whose reading came late in its trip, and one whose reading came early in a slow trip.
    CHECK_FALSE(clock.observe(unix_ms + 10'000, start + Millis{10'000}, start + Millis{10'002}));
    CHECK_FALSE(clock.observe(unix_ms + 20'899, start + Millis{20'000}, start + Millis{20'900}));
    CHECK_FALSE(clock.observe(unix_ms + 30'000, start + Millis{30'000}, start + Millis{30'900}));
}

TEST_CASE("server clock: a step forward of more than a second is a jump") {
    ServerClock clock;
    clock.observe(unix_ms, start, start + Millis{2});
    const auto jump =
        clock.observe(unix_ms + 10'000 + 30'000, start + Millis{10'000}, start + Millis{10'002});
    REQUIRE(jump);
    CHECK(*jump == "the server's clock jumped forward by about 30s");
    // Counted from the reading that told of it: the next one, moving on normally, is no jump.
    CHECK_FALSE(clock.observe(unix_ms + 50'000, start + Millis{20'000}, start + Millis{20'002}));
    // Just within the bound (round trips counted) is no jump; just past it is.
    CHECK_FALSE(clock.observe(unix_ms + 61'002, start + Millis{30'000}, start + Millis{30'002}));
    CHECK(clock.observe(unix_ms + 72'006, start + Millis{40'000}, start + Millis{40'002}));
}

TEST_CASE("server clock: a step back of more than a second is a jump") {
    ServerClock clock;
    clock.observe(unix_ms, start, start + Millis{2});
    const auto jump =
        clock.observe(unix_ms + 10'000 - 60'000, start + Millis{10'000}, start + Millis{10'002});
    REQUIRE(jump);
    CHECK(*jump == "the server's clock jumped back by about 60s");
    // A clock that stands still for 3 s while 3 s pass here went back too.
    CHECK(clock.observe(unix_ms - 50'000, start + Millis{13'000}, start + Millis{13'002}));
}
