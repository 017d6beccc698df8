#include "base/log_line.hpp"

#include "base/json_writer.hpp"

#include <fmt/core.h>

#include <ctime>
#include <syslog.h>

namespace redlockrun {

std::string utc_time(long long epoch_ms) {
    const auto seconds = static_cast<std::time_t>(epoch_ms / 1000);
    std::tm parts{};
    if (gmtime_r(&seconds, &parts) == nullptr) {
        return "";
    }
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", parts.tm_year + 1900,
                       parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                       epoch_ms % 1000);
}

std::string_view level_name(LogLevel level) {
    switch (level) {
    case LogLevel::error:
        return "error";
    case LogLevel::notice:
        return "notice";
    case LogLevel::info:
        break;
    }
    return "info";
}

std::string json_log_line(const LogRecord& record) {
    const auto optional_text = [](const std::optional<std::string>* text) {
        return text != nullptr ? *text : std::nullopt;
    };
    JsonObject object;
    object.string("time", utc_time(record.time_ms))
        .string("level", std::string(level_name(record.level)))
        .string("event", std::string(record.event != nullptr ? record.event->name : "message"))
        .string("key", record.key.empty() ? std::nullopt
                                          : std::optional<std::string>(std::string(record.key)))
        .number("fence", decimal_number(optional_text(record.fence).value_or("")))
        .number("waited_ms", record.event != nullptr ? record.event->waited_ms : std::nullopt)
        .number("held_ms", record.event != nullptr ? record.event->held_ms : std::nullopt)
        .number("status", record.event != nullptr && record.event->status
                              ? std::optional<long long>(*record.event->status)
                              : std::nullopt)
        .string("note", optional_text(record.note))
        .number("pid", record.pid)
        .string("message", std::string(record.message));
    return object.text();
}

int syslog_priority(LogLevel level, int facility) {
    switch (level) {
    case LogLevel::error:
        return facility | LOG_ERR;
    case LogLevel::notice:
        return facility | LOG_NOTICE;
    case LogLevel::info:
        break;
    }
    return facility | LOG_INFO;
}

} // namespace redlockrun
