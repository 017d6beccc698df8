#include "status_report.hpp"

#include "fatal.hpp"
#include "lock/keys.hpp"
#include "lock/lock_client.hpp"
#include "lock/timestamp.hpp"
#include "printable.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cstdio>

namespace redlockrun {

namespace {

std::string fence_note(const std::string& fence) {
    return fence.empty() ? "" : fmt::format(", fence {}", fence);
}

} // namespace

StatusReport describe_status(const std::string& key, const lock::StatusSnapshot& snapshot) {
    if (snapshot.type == "none") {
        return {0, snapshot.last_fence.empty()
                       ? fmt::format("{}: free", key)
                       : fmt::format("{}: free (last fence {})", key, snapshot.last_fence)};
    }
    auto timestamp = snapshot.type == "string" ? lock::parse_timestamp(snapshot.value)
                                               : std::optional<lock::Timestamp>{};
    if (!timestamp) {
        return {to_int(ExitStatus::foreign_value),
                lock::describe_foreign(key, lock::Foreign{snapshot.type})};
    }
    const Millis left{timestamp->expiry_ms - snapshot.now_ms};
    const auto unit = lock::unit_name(timestamp->unit);
    if (left.count() <= 0) {
        return {0, fmt::format("{}: free (the timestamp {} {} expired {} ago)", key, snapshot.value,
                               unit, format_duration(-left))};
    }
    if (snapshot.owner_value != snapshot.value) {
        return {to_int(ExitStatus::not_acquired),
                fmt::format("{}: held by a client of the classic algorithm for another {} "
                            "(timestamp {} {})",
                            key, format_duration(left), snapshot.value, unit)};
    }
    std::string since;
    long long acquired_ms = 0;
    const auto& acquired = snapshot.acquired_ms;
    if (auto [end, error] =
            std::from_chars(acquired.data(), acquired.data() + acquired.size(), acquired_ms);
        !acquired.empty() && error == std::errc{} && end == acquired.data() + acquired.size()) {
        since = fmt::format(", acquired {} ago",
                            format_duration(Millis{snapshot.now_ms - acquired_ms}));
    }
    return {to_int(ExitStatus::not_acquired),
            fmt::format("{}: held by {} for another {}{}{}", key, lock::describe(snapshot.holder),
                        format_duration(left), fence_note(snapshot.fence), since)};
}

int show_status(const std::string& key, const redis::ConnectionSettings& settings,
                const Logger& log) {
    auto keys = lock::lock_keys(key);
    if (!keys) {
        throw Fatal(ExitStatus::usage, keys.error());
    }
    redis::Connection connection(settings, nullptr);
    lock::LockClient client(connection, std::move(*keys), lock::Identity{}, lock::LockParams{});
    auto snapshot = client.status();
    if (!snapshot) {
        throw Fatal(redis::exit_status_of(snapshot.error()), snapshot.error().message);
    }
    StatusReport report = describe_status(key, *snapshot);
    if (report.exit_status == to_int(ExitStatus::foreign_value)) {
        log.error("{}", report.line);
    } else {
        std::fputs((printable(report.line) + "\n").c_str(), stdout);
        std::fflush(stdout);
    }
    return report.exit_status;
}

} // namespace redlockrun
