// Durations as users write them on the command line: "1.5", "500ms", "30s", "1.5s", "2m", "1h",
// "1d", and combinations with the larger units first, "1m30s", "2h5m", "1d12h", as redlockrun
// prints them. A bare number is seconds; a decimal fraction is allowed with any unit. The units are
// timeout(1)'s (s, m, h, d) and ms; other spellings ("5min", "5 m") are refused, and
// explain_bad_duration() names the one that works.
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

// Why parse_duration() refused `text`, as the end of a message that quotes it ("--ttl: '5min' ...
// "): "is too large (at most ...)" for a well-formed duration beyond max_duration; "is not a
// duration: did you mean 5m?" for another spelling of a unit ("5min", "2hours", "500msec", "1S");
// "is not a duration: write 5m" for one with spaces in it ("5 m", "1m 30s"); otherwise "is not a
// duration" with examples.
std::string explain_bad_duration(std::string_view text);

// A short human form for messages, which parse_duration() reads back: "250ms", "1.5s", "12m3s",
// "2h5m".
std::string format_duration(Millis duration);

} // namespace redlockrun
