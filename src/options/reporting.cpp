#include "options/reporting.hpp"

#include "base/fatal.hpp"

#include <fmt/core.h>

#include <array>
#include <string_view>
#include <syslog.h>
#include <utility>

namespace redlockrun {

namespace {

// "true" is what CLI11 gives for the bare flag; the rest are what config files write.
bool switch_of(const Setting& setting) {
    for (const std::string_view yes : {"true", "yes", "on", "1"}) {
        if (setting.value == yes) {
            return true;
        }
    }
    for (const std::string_view no : {"false", "no", "off", "0"}) {
        if (setting.value == no) {
            return false;
        }
    }
    throw UsageError(fmt::format("{}: '{}' is neither yes nor no", setting.origin, setting.value));
}

constexpr std::array<std::pair<std::string_view, int>, 11> facilities{{
    {"user", LOG_USER},
    {"daemon", LOG_DAEMON},
    {"cron", LOG_CRON},
    {"local0", LOG_LOCAL0},
    {"local1", LOG_LOCAL1},
    {"local2", LOG_LOCAL2},
    {"local3", LOG_LOCAL3},
    {"local4", LOG_LOCAL4},
    {"local5", LOG_LOCAL5},
    {"local6", LOG_LOCAL6},
    {"local7", LOG_LOCAL7},
}};

int facility_of(const Setting& setting) {
    for (const auto& [name, facility] : facilities) {
        if (setting.value == name) {
            return facility;
        }
    }
    throw UsageError(fmt::format("{}: '{}' is not user, daemon, cron or local0 to local7",
                                 setting.origin, setting.value));
}

} // namespace

LogSettings log_settings_of(const OptionText& text) {
    LogSettings settings;
    if (text.log_format) {
        if (text.log_format->value == "json") {
            settings.format = LogFormat::json;
        } else if (text.log_format->value != "text") {
            throw UsageError(fmt::format("{}: '{}' is neither text nor json",
                                         text.log_format->origin, text.log_format->value));
        }
    }
    if (text.syslog) {
        settings.syslog = switch_of(*text.syslog);
    }
    if (text.syslog_facility) {
        settings.syslog_facility = facility_of(*text.syslog_facility);
    }
    return settings;
}

} // namespace redlockrun
