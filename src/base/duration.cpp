#include "base/duration.hpp"

#include <fmt/core.h>

#include <cstdint>

namespace redlockrun {

namespace {

constexpr std::int64_t micros_per_ms = 1000;
constexpr std::int64_t max_micros = max_duration.count() * micros_per_ms;

struct Unit {
    std::string_view name;
    std::int64_t micros;
};

// Longest names first, so that "ms" is not read as "m" followed by junk.
constexpr Unit units[] = {{"ms", 1'000}, {"h", 3'600'000'000}, {"m", 60'000'000}, {"s", 1'000'000}};

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Reads one "<number>[.<fraction>]" at pos; its value in millionths, or nothing.
std::optional<std::pair<std::int64_t, std::int64_t>> read_number(std::string_view text,
                                                                 size_t& pos) {
    std::int64_t whole = 0;
    size_t whole_digits = 0;
    // 13 digits of whole hours already exceed max_duration: stop before the arithmetic overflows.
    while (pos < text.size() && is_digit(text[pos])) {
        if (++whole_digits > 13) {
            return std::nullopt;
        }
        whole = whole * 10 + (text[pos++] - '0');
    }
    std::int64_t fraction = 0; // in units of 1e-9, digits past the ninth ignored
    size_t fraction_digits = 0;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        std::int64_t scale = 100'000'000;
        while (pos < text.size() && is_digit(text[pos])) {
            fraction += (text[pos++] - '0') * scale;
            scale /= 10;
            ++fraction_digits;
        }
    }
    if (whole_digits + fraction_digits == 0) {
        return std::nullopt;
    }
    return std::pair{whole, fraction};
}

} // namespace

std::optional<Millis> parse_duration(std::string_view text) {
    size_t pos = 0;
    std::int64_t micros = 0;
    std::int64_t previous_unit =
        max_micros + 1; // units must come largest first: "1h30m", not "30m1h"
    do {
        auto number = read_number(text, pos);
        if (!number) {
            return std::nullopt;
        }
        std::int64_t unit = 0;
        if (pos == text.size() && micros == 0 && previous_unit > max_micros) {
            unit = 1'000'000; // a lone bare number is seconds
        }
        for (const Unit& candidate : units) {
            if (unit == 0 && text.substr(pos, candidate.name.size()) == candidate.name) {
                unit = candidate.micros;
                pos += candidate.name.size();
            }
        }
        if (unit == 0 || unit >= previous_unit) {
            return std::nullopt;
        }
        previous_unit = unit;
        const auto [whole, fraction] = *number;
        if (whole > (max_micros - micros) / unit) {
            return std::nullopt;
        }
        // fraction < 1e9 and unit <= 3.6e9: the product stays below 3.6e18, inside int64.
        micros += whole * unit + fraction * (unit / 1000) / 1'000'000;
        if (micros > max_micros) {
            return std::nullopt;
        }
    } while (pos < text.size());
    return Millis{(micros + micros_per_ms / 2) / micros_per_ms};
}

namespace {

// In unsigned arithmetic: the magnitude of the most negative count has no signed type, and rounding
// the largest ones up would overflow one. A count can come from a server's answer (the time a busy
// lock has left), so every value must print.
std::string format_magnitude(unsigned long long ms) {
    if (ms < 1000) {
        return fmt::format("{}ms", ms);
    }
    if (ms < 99'950) {
        // One decimal, dropped when it is zero: "1.5s", "2s". From 99.95 s on, that would round to
        // "100s", which reads back as a duration printed "1m40s".
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

} // namespace

std::string format_duration(Millis duration) {
    const auto ms = duration.count();
    if (ms < 0) {
        return "-" + format_magnitude(0ULL - static_cast<unsigned long long>(ms));
    }
    return format_magnitude(static_cast<unsigned long long>(ms));
}

} // namespace redlockrun
