#include "lock/timestamp.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::lock;

TEST_CASE("timestamps: seconds and milliseconds told apart by magnitude") {
    auto seconds = parse_timestamp("1763812345");
    REQUIRE(seconds);
    CHECK(seconds->expiry_ms == 1763812345000);
    CHECK(seconds->unit == TimestampUnit::seconds);

    auto millis = parse_timestamp("1763812345678");
    REQUIRE(millis);
    CHECK(millis->expiry_ms == 1763812345678);
    CHECK(millis->unit == TimestampUnit::milliseconds);

    CHECK(parse_timestamp("99999999999")->unit == TimestampUnit::seconds);
    CHECK(parse_timestamp("100000000000")->unit == TimestampUnit::milliseconds);
}

TEST_CASE("timestamps: decimals") {
    CHECK(parse_timestamp("1763812345.5")->expiry_ms == 1763812345500);
    CHECK(parse_timestamp("1763812345.123456")->expiry_ms == 1763812345123);
    CHECK(parse_timestamp("1763812345.07")->expiry_ms == 1763812345070);
    CHECK(parse_timestamp("1763812345678.9")->expiry_ms == 1763812345678);
    CHECK(parse_timestamp("0001763812345")->expiry_ms == 1763812345000);
}

TEST_CASE("timestamps: implausible numbers and junk are not timestamps") {
    for (const char* bad :
         {"", "1", "42", "999999999", "100000000000000", "1e12", "-1763812345", "+1763812345",
          " 1763812345", "1763812345 ", "1763812345.", ".5", "0x1763812345", "abc",
          "1763812345.5.5", "17638123456789012345", "nan", "inf"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_timestamp(bad).has_value());
    }
    CHECK(parse_timestamp("1000000000").has_value());
    CHECK(parse_timestamp("99999999999999").has_value());
}

TEST_CASE("timestamps: unit names") {
    CHECK(parse_unit("s") == TimestampUnit::seconds);
    CHECK(parse_unit("ms") == TimestampUnit::milliseconds);
    CHECK_FALSE(parse_unit("sec").has_value());
    CHECK_FALSE(parse_unit("").has_value());
    CHECK(unit_name(TimestampUnit::seconds) == "s");
    CHECK(unit_name(TimestampUnit::milliseconds) == "ms");
}
