#include "base/duration.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace redlockrun {

namespace {

constexpr std::int64_t micros_per_ms = 1000;
constexpr std::int64_t max_micros = max_duration.count() * micros_per_ms;

struct Unit {
    std::string_view name;
    std::int64_t micros;
};

// Longest names first, so that "ms" is not read as "m" followed by junk.
constexpr Unit units[] = {{"ms", 1'000},
                          {"d", 86'400'000'000},
                          {"h", 3'600'000'000},
                          {"m", 60'000'000},
                          {"s", 1'000'000}};

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

struct Number {
    std::int64_t whole = 0;
    std::int64_t fraction = 0; // in units of 1e-9, digits past the ninth ignored
    bool too_many_digits = false;
};

// Reads one "<number>[.<fraction>]" at pos, or nothing if there is no digit there.
std::optional<Number> read_number(std::string_view text, size_t& pos) {
    Number number;
    size_t whole_digits = 0;
    while (pos < text.size() && is_digit(text[pos])) {
        // 13 digits of whole days already exceed max_duration: the rest are read, but not added
        // up, before the arithmetic overflows.
        if (++whole_digits > 13) {
            number.too_many_digits = true;
        } else {
            number.whole = number.whole * 10 + (text[pos] - '0');
        }
        ++pos;
    }
    size_t fraction_digits = 0;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        std::int64_t scale = 100'000'000;
        while (pos < text.size() && is_digit(text[pos])) {
            number.fraction += (text[pos++] - '0') * scale;
            scale /= 10;
            ++fraction_digits;
        }
    }
    if (whole_digits + fraction_digits == 0) {
        return std::nullopt;
    }
    return number;
}

enum class Reading { duration, too_large, not_a_duration };

struct Scan {
    Reading reading;
    Millis duration{0};
};

// Reads the whole of `text` as a duration. One that is written well but is longer than
// max_duration is told apart from one that is not a duration at all, for the message.
Scan scan_duration(std::string_view text) {
    size_t pos = 0;
    std::int64_t micros = 0;
    bool too_large = false;
    bool first = true;
    std::int64_t previous_unit = 0; // units must come largest first: "1h30m", not "30m1h"
    do {
        auto number = read_number(text, pos);
        if (!number) {
            return {Reading::not_a_duration};
        }
        std::int64_t unit = 0;
        if (pos == text.size() && first) {
            unit = 1'000'000; // a lone bare number is seconds
        }
        for (const Unit& candidate : units) {
            if (unit == 0 && text.substr(pos, candidate.name.size()) == candidate.name) {
                unit = candidate.micros;
                pos += candidate.name.size();
            }
        }
        if (unit == 0 || (!first && unit >= previous_unit)) {
            return {Reading::not_a_duration};
        }
        first = false;
        previous_unit = unit;
        if (too_large || number->too_many_digits || number->whole > (max_micros - micros) / unit) {
            too_large = true;
            continue;
        }
        // fraction < 1e9 and unit <= 8.64e10: the product stays below 8.64e16, inside int64.
        micros += number->whole * unit + number->fraction * (unit / 1000) / 1'000'000;
        too_large = micros > max_micros;
    } while (pos < text.size());
    if (too_large) {
        return {Reading::too_large};
    }
    return {Reading::duration, Millis{(micros + micros_per_ms / 2) / micros_per_ms}};
}

// Other names people give the units (timeout(1) knows none of them), in lower case.
struct UnitSpelling {
    std::string_view spelling;
    std::string_view unit;
};

constexpr UnitSpelling unit_spellings[] = {
    {"ms", "ms"}, {"msec", "ms"}, {"msecs", "ms"}, {"millisecond", "ms"}, {"milliseconds", "ms"},
    {"s", "s"},   {"sec", "s"},   {"secs", "s"},   {"second", "s"},       {"seconds", "s"},
    {"m", "m"},   {"min", "m"},   {"mins", "m"},   {"minute", "m"},       {"minutes", "m"},
    {"h", "h"},   {"hr", "h"},    {"hrs", "h"},    {"hour", "h"},         {"hours", "h"},
    {"d", "d"},   {"day", "d"},   {"days", "d"},
};

bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

void skip_spaces(std::string_view text, size_t& pos) {
    while (pos < text.size() && text[pos] == ' ') {
        ++pos;
    }
}

// `text` with every unit spelt as parse_duration() reads it and no spaces: "5 min" -> "5m",
// "1hour 30mins" -> "1h30m". Nothing if a part is not a number followed by a name of a unit (a
// bare number is one only alone), so that no guess is made about what "1 5" or "5x" meant.
std::optional<std::string> respelt(std::string_view text) {
    std::string spelt;
    size_t pos = 0;
    size_t parts = 0;
    bool bare_number = false;
    skip_spaces(text, pos);
    while (pos < text.size()) {
        const size_t number_start = pos;
        while (pos < text.size() && (is_digit(text[pos]) || text[pos] == '.')) {
            ++pos;
        }
        if (pos == number_start) {
            return std::nullopt;
        }
        spelt += text.substr(number_start, pos - number_start);
        ++parts;
        skip_spaces(text, pos);
        std::string word;
        while (pos < text.size() && is_letter(text[pos])) {
            word += lower(text[pos++]);
        }
        skip_spaces(text, pos);
        if (word.empty()) {
            bare_number = true;
            continue;
        }
        const auto* found = std::find_if(std::begin(unit_spellings), std::end(unit_spellings),
                                         [&](const UnitSpelling& u) { return u.spelling == word; });
        if (found == std::end(unit_spellings)) {
            return std::nullopt;
        }
        spelt += found->unit;
    }
    if (parts == 0 || (bare_number && parts > 1)) {
        return std::nullopt;
    }
    return spelt;
}

std::string without_spaces(std::string_view text) {
    std::string kept;
    for (char c : text) {
        if (c != ' ') {
            kept += c;
        }
    }
    return kept;
}

std::string too_large_message() {
    return fmt::format("is too large (at most {}s, about 31 years)",
                       max_duration.count() / micros_per_ms);
}

} // namespace

std::optional<Millis> parse_duration(std::string_view text) {
    const Scan scan = scan_duration(text);
    if (scan.reading != Reading::duration) {
        return std::nullopt;
    }
    return scan.duration;
}

std::string explain_bad_duration(std::string_view text) {
    if (scan_duration(text).reading == Reading::too_large) {
        return too_large_message();
    }
    const auto spelt = respelt(text);
    if (spelt && *spelt != text) {
        switch (scan_duration(*spelt).reading) {
        case Reading::duration:
            return *spelt == without_spaces(text)
                       ? fmt::format("is not a duration: write {}", *spelt)
                       : fmt::format("is not a duration: did you mean {}?", *spelt);
        case Reading::too_large:
            return too_large_message();
        case Reading::not_a_duration:
            break;
        }
    }
    return "is not a duration (examples: 1.5, 500ms, 30s, 2m, 1h)";
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
