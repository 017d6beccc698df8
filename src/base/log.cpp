#include "base/log.hpp"

#include "base/log_line.hpp"
#include "base/printable.hpp"

#include <cerrno>
#include <ctime>
#include <string>
#include <syslog.h>
#include <unistd.h>

namespace redlockrun {

namespace {

// One write(2) per message so that lines from concurrent processes do not interleave.
void write_line(std::string text) {
    text.push_back('\n');
    const char* data = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t written = ::write(STDERR_FILENO, data, left);
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        data += written;
        left -= static_cast<size_t>(written);
    }
}

long long now_ms() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// syslog(3) opens its socket at the first message (no LOG_NDELAY), with the close-on-exec flag:
// a run's command never inherits it. The ident and pid are syslog's own fields.
void to_syslog(LogLevel level, int facility, const std::string& text) {
    static bool opened = false;
    if (!opened) {
        openlog("redlockrun", LOG_PID, facility);
        opened = true;
    }
    syslog(syslog_priority(level, facility), "%s", text.c_str());
}

} // namespace

bool Logger::wanted(LogLevel level) const {
    switch (level) {
    case LogLevel::error:
        return true;
    case LogLevel::notice:
        return verbosity_ != Verbosity::quiet || settings_.syslog;
    case LogLevel::info:
        break;
    }
    return verbosity_ == Verbosity::verbose;
}

void Logger::log(LogLevel level, const LogEvent& event, std::string_view message) const {
    const bool to_stderr = level == LogLevel::error ||
                           (level == LogLevel::notice && verbosity_ != Verbosity::quiet) ||
                           (level == LogLevel::info && verbosity_ == Verbosity::verbose);
    if (to_stderr && settings_.format == LogFormat::json) {
        LogRecord record;
        record.time_ms = now_ms();
        record.level = level;
        record.event = &event;
        record.key = key_;
        record.fence = &fence_;
        record.note = &note_;
        record.pid = ::getpid();
        record.message = message;
        write_line(json_log_line(record));
    } else if (to_stderr) {
        // A value quoted in the message (a key, a file name, a host name from Redis) cannot break
        // the line.
        write_line("redlockrun: " + printable(message));
    }
    if (settings_.syslog) {
        to_syslog(level, settings_.syslog_facility, printable(message));
    }
}

} // namespace redlockrun
