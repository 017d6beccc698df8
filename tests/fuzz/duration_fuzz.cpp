// Durations as users write them (--ttl, --wait, config files), and as messages print them: whatever
// parses is within [0, max_duration], and what format_duration() prints parses back to the value
// it stands for, within the rounding of the printed form. What does not parse is explained, and a
// spelling the explanation suggests parses.
#include "base/duration.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

using redlockrun::explain_bad_duration;
using redlockrun::format_duration;
using redlockrun::max_duration;
using redlockrun::Millis;
using redlockrun::parse_duration;

namespace {

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

// The most a printed duration differs from the value: "1.5s" is to the tenth, "12m3s" to the
// second, "2h5m" to the minute (it drops the seconds).
long long rounding_of(long long ms) {
    if (ms < 1000) {
        return 0;
    }
    if (ms < 100'000) {
        return 50;
    }
    if (ms < 3'600'000) {
        return 500;
    }
    return 60'000;
}

// A duration printed in a message reads back as about the same duration.
void check_printed(Millis duration) {
    const std::string printed = format_duration(duration);
    long long ms = duration.count();
    std::string_view text = printed;
    if (ms < 0) {
        check(text.substr(0, 1) == "-");
        text.remove_prefix(1);
        if (ms == std::numeric_limits<long long>::min()) {
            return; // its magnitude is no long long
        }
        ms = -ms;
    }
    if (ms > max_duration.count()) {
        return; // beyond what users may write: printed, never read back
    }
    const auto parsed = parse_duration(text);
    check(parsed.has_value());
    check(std::llabs(parsed->count() - ms) <= rounding_of(ms));
    // Printing is a fixed point once rounded.
    check(format_duration(*parsed) == std::string(text));
}

// A suggestion ("did you mean 5m?", "write 5m") is a duration: a user who follows it gets no
// second refusal.
void check_explained(std::string_view text) {
    const std::string explanation = explain_bad_duration(text);
    check(!explanation.empty());
    for (const std::string_view lead :
         {"is not a duration: did you mean ", "is not a duration: write "}) {
        if (explanation.starts_with(lead)) {
            std::string_view suggestion = std::string_view(explanation).substr(lead.size());
            if (suggestion.ends_with('?')) {
                suggestion.remove_suffix(1);
            }
            check(suggestion != text);
            check(parse_duration(suggestion).has_value());
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto parsed = parse_duration(text)) {
        check(parsed->count() >= 0 && *parsed <= max_duration);
        check_printed(*parsed);
    } else {
        check_explained(text);
    }
    // Any count at all, as a hostile server's "remaining" might be.
    if (size >= sizeof(int64_t)) {
        int64_t count = 0;
        std::memcpy(&count, data, sizeof count);
        check_printed(Millis{count});
    }
    return 0;
}
