#include "lock/timestamp.hpp"

namespace redlockrun::lock {

namespace {

constexpr long long first_seconds = 1'000'000'000;       // 2001-09-09 in seconds
constexpr long long first_millis = 100'000'000'000;      // below this: seconds
constexpr long long beyond_millis = 100'000'000'000'000; // 1e14 ms, year 5138

bool all_digits(std::string_view text) {
    if (text.empty()) {
        return false;
    }
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

} // namespace

std::optional<Timestamp> parse_timestamp(std::string_view value) {
    const auto dot = value.find('.');
    std::string_view whole_text = value.substr(0, dot);
    std::string_view fraction = dot == std::string_view::npos ? "" : value.substr(dot + 1);
    if (!all_digits(whole_text) || (dot != std::string_view::npos && !all_digits(fraction))) {
        return std::nullopt;
    }
    while (whole_text.size() > 1 && whole_text.front() == '0') {
        whole_text.remove_prefix(1);
    }
    if (whole_text.size() > 15) {
        return std::nullopt; // >= 1e15, beyond any timestamp
    }
    long long whole = 0;
    for (char c : whole_text) {
        whole = whole * 10 + (c - '0');
    }
    if (whole < first_seconds || whole >= beyond_millis) {
        return std::nullopt;
    }
    if (whole >= first_millis) {
        return Timestamp{whole, TimestampUnit::milliseconds};
    }
    long long millis = 0;
    for (size_t i = 0; i < 3; ++i) {
        millis = millis * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
    }
    return Timestamp{whole * 1000 + millis, TimestampUnit::seconds};
}

std::string_view unit_name(TimestampUnit unit) {
    return unit == TimestampUnit::seconds ? "s" : "ms";
}

std::optional<TimestampUnit> parse_unit(std::string_view name) {
    if (name == "s") {
        return TimestampUnit::seconds;
    }
    if (name == "ms") {
        return TimestampUnit::milliseconds;
    }
    return std::nullopt;
}

} // namespace redlockrun::lock
