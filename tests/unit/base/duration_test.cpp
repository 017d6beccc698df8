#include "base/duration.hpp"

#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstdlib>
#include <utility>

using namespace redlockrun;
using namespace std::chrono_literals;

TEST_CASE("durations: units, decimals and bare seconds") {
    CHECK(parse_duration("1.5") == Millis{1500});
    CHECK(parse_duration("500ms") == Millis{500});
    CHECK(parse_duration("30s") == Millis{30000});
    CHECK(parse_duration("1.5s") == Millis{1500});
    CHECK(parse_duration("2m") == Millis{120000});
    CHECK(parse_duration("1h") == Millis{3600000});
    CHECK(parse_duration("1d") == Millis{86'400'000});
    CHECK(parse_duration("1.5d") == Millis{129'600'000});
    CHECK(parse_duration("0.25h") == Millis{900000});
    CHECK(parse_duration("0") == Millis{0});
    CHECK(parse_duration(".5") == Millis{500});
    CHECK(parse_duration("2.") == Millis{2000});
    CHECK(parse_duration("1.0005") == Millis{1001}); // rounded to the nearest ms
    CHECK(parse_duration("0.4ms") == Millis{0});
    CHECK(parse_duration("1.123456789123s") == Millis{1123});
}

TEST_CASE("durations: anything else is refused") {
    for (const char* bad : {"", " ", "s", ".", "-1", "+1", "1e3", "1 s", " 1", "1s ", "1.5.3",
                            "10x", "1sec", "1S", "1D", "ms5", "0x10", "1,5"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_duration(bad).has_value());
    }
}

TEST_CASE("durations: the maximum and overflow") {
    CHECK(parse_duration("1000000000s") == Millis{1'000'000'000'000});
    CHECK_FALSE(parse_duration("1000000001s").has_value());
    CHECK_FALSE(parse_duration("99999999999999999999").has_value());
    CHECK_FALSE(parse_duration("9999999999h").has_value());
    CHECK(parse_duration("277777h") == Millis{277777LL * 3600 * 1000});
    CHECK(parse_duration("11574d") == Millis{11574LL * 86'400'000});
    CHECK_FALSE(parse_duration("11575d").has_value());
    CHECK_FALSE(parse_duration("9999999999999d").has_value());
    CHECK_FALSE(parse_duration("99999999999999d").has_value());
}

TEST_CASE("durations: a refusal says why, and a near miss gets the spelling that works") {
    // Written well, but longer than any option takes.
    for (const char* large : {"99999999999", "1000000001s", "99999999999999999999", "9999999999h",
                              "11575d", "1000000000s1ms", "99999999999 seconds"}) {
        CAPTURE(large);
        CHECK(explain_bad_duration(large) == "is too large (at most 1000000000s, about 31 years)");
    }
    // Other names of the units: suggested, not accepted.
    const std::pair<const char*, const char*> near_misses[] = {
        {"5min", "5m"},         {"5mins", "5m"},    {"5minutes", "5m"},      {"5sec", "5s"},
        {"5secs", "5s"},        {"5seconds", "5s"}, {"2hours", "2h"},        {"2hr", "2h"},
        {"1day", "1d"},         {"3days", "3d"},    {"500msec", "500ms"},    {"1S", "1s"},
        {"1.5H", "1.5h"},       {"5 min", "5m"},    {"1hour30min", "1h30m"}, {"1h 30mins", "1h30m"},
        {"1d12hours", "1d12h"},
    };
    // No structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    for (const auto& near_miss : near_misses) {
        const auto& typed = near_miss.first;
        const auto& meant = near_miss.second;
        CAPTURE(typed);
        CHECK_FALSE(parse_duration(typed).has_value());
        CHECK(explain_bad_duration(typed) ==
              fmt::format("is not a duration: did you mean {}?", meant));
    }
    // Spaces, and nothing else, in the way.
    const std::pair<const char*, const char*> spaced[] = {
        {"5 m", "5m"}, {"1m 30s", "1m30s"}, {" 30s", "30s"}, {"1.5 ", "1.5"}, {"1 d 12 h", "1d12h"},
    };
    for (const auto& space : spaced) {
        const auto& typed = space.first;
        const auto& meant = space.second;
        CAPTURE(typed);
        CHECK_FALSE(parse_duration(typed).has_value());
        CHECK(explain_bad_duration(typed) == fmt::format("is not a duration: write {}", meant));
    }
    // No guess where the meaning is not clear: examples instead.
    for (const char* bad : {"soon", "", " ", "1 5", "30s1m", "30sec1min", "5x", "5 minutes ago",
                            "-5m", "1e3", "1,5", "m", "1m1m", "1\nfoo", "5mn", "1\n5"}) {
        CAPTURE(bad);
        CHECK(explain_bad_duration(bad) == "is not a duration (examples: 1.5, 500ms, 30s, 2m, 1h)");
    }
    CHECK(explain_bad_duration("1\tm").find("did you mean") == std::string::npos);
}

TEST_CASE("durations: short human form") {
    CHECK(format_duration(Millis{0}) == "0ms");
    CHECK(format_duration(Millis{250}) == "250ms");
    CHECK(format_duration(Millis{1500}) == "1.5s");
    CHECK(format_duration(Millis{2000}) == "2s");
    CHECK(format_duration(Millis{29960}) == "30s");
    CHECK(format_duration(Millis{723000}) == "12m3s");
    CHECK(format_duration(Millis{7500000}) == "2h5m");
    CHECK(format_duration(Millis{-1500}) == "-1.5s");
}

// A count can come from a server's answer (a busy lock's time left): every one prints, without the
// overflow that rounding the largest up, or negating the most negative, would be.
TEST_CASE("durations: every count prints, the extremes too") {
    CHECK(format_duration(Millis::max()) == "2562047788015h12m");
    CHECK(format_duration(Millis::min()) == "-2562047788015h12m");
    CHECK(format_duration(Millis::min() + Millis{1}) == "-2562047788015h12m");
}

TEST_CASE("durations: combinations, largest unit first") {
    CHECK(parse_duration("1m30s") == Millis{90000});
    CHECK(parse_duration("2h5m") == Millis{7'500'000});
    CHECK(parse_duration("1h0.5m") == Millis{3'630'000});
    CHECK(parse_duration("1s500ms") == Millis{1500});
    CHECK(parse_duration("1h1m1s1ms") == Millis{3'661'001});
    CHECK(parse_duration("1d12h") == Millis{129'600'000});
    CHECK(parse_duration("2d3h4m5s6ms") == Millis{183'845'006});
    for (const char* bad : {"30s1m", "1m1m", "1m30", "1s1", "m30s", "1m 30s", "1ms1s", "1h-1m",
                            "1h1d", "1d1d", "1d 12h"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_duration(bad).has_value());
    }
}

TEST_CASE("durations: what redlockrun prints, it reads back") {
    for (long long ms : {0LL, 7LL, 999LL, 1000LL, 1500LL, 59'940LL, 99'949LL, 99'960LL, 100'000LL,
                         723'000LL, 3'599'000LL, 3'600'000LL, 7'500'000LL, 86'400'000LL}) {
        const std::string text = format_duration(Millis{ms});
        CAPTURE(text);
        auto parsed = parse_duration(text);
        REQUIRE(parsed.has_value());
        // The printed form is rounded: to the ms, a tenth of a second, a second or a minute.
        CHECK(std::abs(parsed->count() - ms) <= 30'000);
        CHECK(format_duration(*parsed) == text);
    }
}
