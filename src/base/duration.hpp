// Durations as users write them on the command line: "1.5", "500ms", "30s", "1.5s", "2m", "1h", and
// combinations with the larger units first, "1m30s", "2h5m", as redlockrun prints them. A bare
// number is seconds; a decimal fraction is allowed with any unit.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace redlockrun {

using Millis = std::chrono::milliseconds;

// The longest duration accepted anywhere (about 31 years): keeps every deadline computation far
// away from overflow.
inline constexpr Millis max_duration{1'000'000'000'000};

// Parses a duration, rounded to the nearest millisecond. Returns nothing for anything else: empty
// text, signs, exponents, spaces, unknown or repeated units, or more than max_duration.
std::optional<Millis> parse_duration(std::string_view text);

// A short human form for messages, which parse_duration() reads back: "250ms", "1.5s", "12m3s",
// "2h5m".
std::string format_duration(Millis duration);

} // namespace redlockrun
