// What a value in the lock key means. The key holds a bare decimal Unix time at which the lock
// expires, written by redlockrun or by clients of the classic SETNX/GETSET algorithm, in seconds or
// milliseconds: integers or decimals below 1e11 are seconds, from there on milliseconds. A value
// before 2001-09-09 (1e9 s) or from 1e14 ms on is not a timestamp ("1" from a SET key 1 NX lock is
// not). The server-side scripts apply the same rules (src/lock/scripts/common.lua).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace redlockrun::lock {

enum class TimestampUnit { seconds, milliseconds };

struct Timestamp {
    long long expiry_ms = 0;
    TimestampUnit unit = TimestampUnit::milliseconds;
};

std::optional<Timestamp> parse_timestamp(std::string_view value);

std::string_view unit_name(TimestampUnit unit); // "s" or "ms"
std::optional<TimestampUnit> parse_unit(std::string_view name);

} // namespace redlockrun::lock
