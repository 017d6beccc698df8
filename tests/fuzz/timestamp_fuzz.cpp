// Values found in a lock key (written by redlockrun or by clients of the classic algorithm): what
// parses is a time between 2001-09-09 and 1e14 ms, in the unit its magnitude says, and the value
// written again in that unit parses to the same time.
#include "lock/timestamp.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using redlockrun::lock::parse_timestamp;
using redlockrun::lock::parse_unit;
using redlockrun::lock::TimestampUnit;
using redlockrun::lock::unit_name;

namespace {

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

std::string zero_padded(long long value, size_t digits) {
    std::string text = std::to_string(value);
    return std::string(digits - text.size(), '0') + text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view value(reinterpret_cast<const char*>(data), size);
    if (auto unit = parse_unit(value)) {
        check(unit_name(*unit) == value);
    }
    const auto parsed = parse_timestamp(value);
    if (!parsed) {
        return 0;
    }
    const long long ms = parsed->expiry_ms;
    check(ms < 100'000'000'000'000);
    std::string again;
    if (parsed->unit == TimestampUnit::seconds) {
        check(ms >= 1'000'000'000'000 && ms / 1000 < 100'000'000'000);
        again = std::to_string(ms / 1000) + "." + zero_padded(ms % 1000, 3);
    } else {
        check(ms >= 100'000'000'000);
        again = std::to_string(ms);
    }
    const auto reparsed = parse_timestamp(again);
    check(reparsed && reparsed->expiry_ms == ms && reparsed->unit == parsed->unit);
    return 0;
}
