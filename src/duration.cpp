#include "duration.hpp"

#include <fmt/core.h>

#include <cstdint>

namespace redlockrun {

namespace {

constexpr std::int64_t micros_per_ms = 1000;

std::optional<std::int64_t> unit_in_micros(std::string_view unit) {
    if (unit.empty() || unit == "s") {
        return 1'000'000;
    }
    if (unit == "ms") {
        return 1'000;
    }
    if (unit == "m") {
        return 60'000'000;
    }
    if (unit == "h") {
        return 3'600'000'000;
    }
    return std::nullopt;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

} // namespace

std::optional<Millis> parse_duration(std::string_view text) {
    size_t pos = 0;
    std::int64_t whole = 0;
    size_t whole_digits = 0;
    // 13 digits of whole seconds already exceed max_duration; stop before the arithmetic overflows.
    while (pos < text.size() && is_digit(text[pos])) {
        if (++whole_digits > 13) {
            return std::nullopt;
        }
        whole = whole * 10 + (text[pos++] - '0');
    }
    std::int64_t fraction = 0;
    std::int64_t fraction_scale = 1;
    size_t fraction_digits = 0;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        while (pos < text.size() && is_digit(text[pos])) {
            // Digits past the ninth are below a nanosecond of an hour's millisecond: ignore them.
            if (fraction_digits < 9) {
                fraction = fraction * 10 + (text[pos] - '0');
                fraction_scale *= 10;
            }
            ++fraction_digits;
            ++pos;
        }
    }
    if (whole_digits + fraction_digits == 0) {
        return std::nullopt;
    }
    auto unit = unit_in_micros(text.substr(pos));
    if (!unit) {
        return std::nullopt;
    }
    // whole < 1e13 and unit <= 3.6e9 could overflow int64 only for hours; check before multiplying.
    const auto max_micros = max_duration.count() * micros_per_ms;
    if (whole > max_micros / *unit) {
        return std::nullopt;
    }
    // fraction < 1e9 and unit <= 3.6e9: the product stays below 3.6e18, inside int64.
    const std::int64_t fraction_micros = fraction * *unit / fraction_scale;
    std::int64_t micros = whole * *unit + fraction_micros;
    if (micros > max_micros) {
        return std::nullopt;
    }
    return Millis{(micros + micros_per_ms / 2) / micros_per_ms};
}

std::string format_duration(Millis duration) {
    const auto ms = duration.count();
    if (ms < 0) {
        return "-" + format_duration(Millis{-ms});
    }
    if (ms < 1000) {
        return fmt::format("{}ms", ms);
    }
    if (ms < 100'000) {
        // One decimal, dropped when it is zero: "1.5s", "2s".
        const auto tenths = (ms + 50) / 100;
        return tenths % 10 == 0 ? fmt::format("{}s", tenths / 10)
                                : fmt::format("{}.{}s", tenths / 10, tenths % 10);
    }
    const auto seconds = (ms + 500) / 1000;
    if (seconds < 3600) {
        return fmt::format("{}m{}s", seconds / 60, seconds % 60);
    }
    return fmt::format("{}h{}m", seconds / 3600, seconds % 3600 / 60);
}

} // namespace redlockrun
