// The one way redlockrun talks to the user about itself: one line per message on stderr, prefixed
// "redlockrun: ", with control characters escaped (printable.hpp) so that no value quoted in it can
// forge a line; or, with --log-format json, one JSON object per message (log_line.hpp). With
// --syslog every message also goes to syslog. Messages never contain a password or the owner
// token; callers pass endpoints through redis::Endpoint::display(), which redacts credentials.
#pragma once

#include "base/duration.hpp"

#include <fmt/core.h>

#include <optional>
#include <string>
#include <string_view>

namespace redlockrun {

enum class Verbosity { quiet, normal, verbose };

// How a message matters: error (always shown), notice (unless -q), info (only with -v).
enum class LogLevel { error, notice, info };

enum class LogFormat { text, json };

// Where messages go and how they look (--log-format, --syslog, --syslog-facility).
struct LogSettings {
    LogFormat format = LogFormat::text;
    bool syslog = false;
    int syslog_facility = 1 << 3; // LOG_USER
};

// What a message tells, for --log-format json: its event and the figures that go with it. The
// key, fence and note are the run's (Logger::set_lock()).
struct LogEvent {
    const char* name = "message";
    std::optional<long long> waited_ms;
    std::optional<long long> held_ms;
    std::optional<int> status; // the exit status the message leads to

    explicit LogEvent(const char* event_name) : name(event_name) {}
    LogEvent& waited(Millis time) {
        waited_ms = time.count();
        return *this;
    }
    LogEvent& held(Millis time) {
        held_ms = time.count();
        return *this;
    }
    LogEvent& exit_status(int value) {
        status = value;
        return *this;
    }
};

class Logger {
public:
    explicit Logger(Verbosity verbosity = Verbosity::normal) : verbosity_(verbosity) {}

    void set_verbosity(Verbosity verbosity) { verbosity_ = verbosity; }
    void set_settings(const LogSettings& settings) { settings_ = settings; }
    // The lock this process is about, for every JSON message from now on; the fence once granted.
    void set_lock(std::string key, std::optional<std::string> note) {
        key_ = std::move(key);
        note_ = std::move(note);
    }
    // Once the lock is granted: part of the run's state, which every holder of a Logger may say.
    void set_fence(std::optional<std::string> fence) const { fence_ = std::move(fence); }

    // Always shown: a failure that decides the exit status, or a warning about safety.
    template <typename... Args>
    void error(fmt::format_string<Args...> format, Args&&... args) const {
        log(LogLevel::error, default_event_, fmt::format(format, std::forward<Args>(args)...));
    }

    // Shown unless -q: "the lock is busy" and other expected, non-fatal news.
    template <typename... Args>
    void notice(fmt::format_string<Args...> format, Args&&... args) const {
        if (wanted(LogLevel::notice)) {
            log(LogLevel::notice, default_event_, fmt::format(format, std::forward<Args>(args)...));
        }
    }

    // Shown only with -v: progress with timings.
    template <typename... Args>
    void info(fmt::format_string<Args...> format, Args&&... args) const {
        if (wanted(LogLevel::info)) {
            log(LogLevel::info, default_event_, fmt::format(format, std::forward<Args>(args)...));
        }
    }

    // The same, for a message that tells an event: log.with(LogEvent("busy")).notice(...).
    class WithEvent {
    public:
        WithEvent(const Logger& logger, LogEvent event) : logger_(logger), event_(event) {}

        template <typename... Args>
        void error(fmt::format_string<Args...> format, Args&&... args) const {
            logger_.log(LogLevel::error, event_, fmt::format(format, std::forward<Args>(args)...));
        }
        template <typename... Args>
        void notice(fmt::format_string<Args...> format, Args&&... args) const {
            if (logger_.wanted(LogLevel::notice)) {
                logger_.log(LogLevel::notice, event_,
                            fmt::format(format, std::forward<Args>(args)...));
            }
        }
        template <typename... Args>
        void info(fmt::format_string<Args...> format, Args&&... args) const {
            if (logger_.wanted(LogLevel::info)) {
                logger_.log(LogLevel::info, event_,
                            fmt::format(format, std::forward<Args>(args)...));
            }
        }

    private:
        const Logger& logger_;
        LogEvent event_;
    };

    WithEvent with(LogEvent event) const { return WithEvent(*this, event); }

private:
    // Whether a message of `level` goes anywhere: to stderr by -q and -v; syslog has every notice
    // and error, -q or not (a cron job's -q keeps its mail quiet, not the fleet's log).
    bool wanted(LogLevel level) const;
    void log(LogLevel level, const LogEvent& event, std::string_view message) const;

    Verbosity verbosity_;
    LogSettings settings_;
    std::string key_;
    std::optional<std::string> note_;
    mutable std::optional<std::string> fence_;
    LogEvent default_event_{"message"};
};

} // namespace redlockrun
