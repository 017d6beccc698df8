#include "duration.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;
using namespace std::chrono_literals;

TEST_CASE("durations: units, decimals and bare seconds") {
    CHECK(parse_duration("1.5") == Millis{1500});
    CHECK(parse_duration("500ms") == Millis{500});
    CHECK(parse_duration("30s") == Millis{30000});
    CHECK(parse_duration("1.5s") == Millis{1500});
    CHECK(parse_duration("2m") == Millis{120000});
    CHECK(parse_duration("1h") == Millis{3600000});
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
                            "10x", "1sec", "1S", "1d", "ms5", "0x10", "1,5"}) {
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
