// What one message becomes on its way out, apart from writing it: the JSON object of
// --log-format json (one line, its fields documented in the man page's LOGGING) and the syslog
// priority of --syslog. Kept apart from log.cpp so that the unit tests can read them.
#pragma once

#include "base/log.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace redlockrun {

struct LogRecord {
    long long time_ms = 0; // Unix time
    LogLevel level = LogLevel::notice;
    const LogEvent* event = nullptr;
    std::string_view key;
    const std::optional<std::string>* fence = nullptr;
    const std::optional<std::string>* note = nullptr;
    long long pid = 0;
    std::string_view message;
};

// "2026-11-29T07:45:01.123Z".
std::string utc_time(long long epoch_ms);

std::string_view level_name(LogLevel level);

// The JSON object for a message, on one line, without the newline.
std::string json_log_line(const LogRecord& record);

// The priority syslog(3) takes: the facility with the level's severity (err, notice, info).
int syslog_priority(LogLevel level, int facility);

} // namespace redlockrun
