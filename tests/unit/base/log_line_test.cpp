#include "base/log_line.hpp"

#include <doctest/doctest.h>

#include <syslog.h>

using namespace redlockrun;

TEST_CASE("log line: the time is UTC, to the millisecond") {
    CHECK(utc_time(0) == "1970-01-01T00:00:00.000Z");
    CHECK(utc_time(1795938184477) == "2026-11-29T07:43:04.477Z");
}

TEST_CASE("log line: one JSON object with every field, null where there is nothing to say") {
    const LogEvent plain("message");
    const std::optional<std::string> none;
    LogRecord record;
    record.time_ms = 1795938184477;
    record.level = LogLevel::info;
    record.event = &plain;
    record.fence = &none;
    record.note = &none;
    record.pid = 42;
    record.message = "connected";
    CHECK(json_log_line(record) ==
          R"({"time":"2026-11-29T07:43:04.477Z","level":"info","event":"message","key":null,)"
          R"("fence":null,"waited_ms":null,"held_ms":null,"status":null,"note":null,"pid":42,)"
          R"("message":"connected"})");
}

TEST_CASE("log line: an event's figures, the run's key, fence and note, any bytes escaped") {
    LogEvent busy("busy");
    busy.waited(Millis{1500}).held(Millis{20}).exit_status(75);
    const std::optional<std::string> fence = "1795938184477001";
    const std::optional<std::string> note = "deploy \"42\"\n";
    LogRecord record;
    record.time_ms = 1000;
    record.level = LogLevel::notice;
    record.event = &busy;
    record.key = "job\x1b[31m";
    record.fence = &fence;
    record.note = &note;
    record.pid = 7;
    record.message = "line one\nline two";
    CHECK(json_log_line(record) ==
          R"({"time":"1970-01-01T00:00:01.000Z","level":"notice","event":"busy",)"
          R"("key":"job\u001b[31m","fence":1795938184477001,"waited_ms":1500,"held_ms":20,)"
          R"("status":75,"note":"deploy \"42\"\n","pid":7,"message":"line one\nline two"})");
}

TEST_CASE("log line: syslog severities by level, under the facility given") {
    CHECK(syslog_priority(LogLevel::error, LOG_USER) == (LOG_USER | LOG_ERR));
    CHECK(syslog_priority(LogLevel::notice, LOG_LOCAL3) == (LOG_LOCAL3 | LOG_NOTICE));
    CHECK(syslog_priority(LogLevel::info, LOG_CRON) == (LOG_CRON | LOG_INFO));
}
