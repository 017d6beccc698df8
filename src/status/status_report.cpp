#include "status/status_report.hpp"

#include "base/fatal.hpp"
#include "base/printable.hpp"
#include "lock/keys.hpp"
#include "lock/lock_client.hpp"
#include "status/status_json.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>

namespace redlockrun {

namespace {

std::string for_another(std::optional<long long> remaining_ms) {
    return remaining_ms ? fmt::format(" for another {}", format_duration(Millis{*remaining_ms}))
                        : std::string{};
}

std::optional<Millis> millis(std::optional<long long> ms) {
    return ms && *ms >= 0 ? std::optional<Millis>{Millis{*ms}} : std::nullopt;
}

// "web1 pid 4242 since 3m12s ago, renewed every 10s, fence 17"; for a holder that does not renew,
// when the lock expires; with --min-hold after the command: "web1 pid 4242, whose command ended
// 5s ago; --min-hold lets the lock go in 55s, fence 17". A note follows the name: "web1 pid 4242
// (note: deploy 42) since ...".
std::string describe_holder(const HolderState& holder, long long now_ms) {
    std::string text = lock::describe(holder.holder) + (holder.hold ? " (a hold)" : std::string()) +
                       (holder.slot ? fmt::format(" in slot {}", *holder.slot) : std::string()) +
                       lock::describe_note(holder.note);
    const auto since = [now_ms](std::optional<long long> time) {
        return time ? millis(std::max(0LL, ms_between(now_ms, *time))) : std::nullopt;
    };
    text += lock::describe_tenure(since(holder.acquired_ms), millis(holder.renew_ms),
                                  since(holder.ended_ms), Millis{holder.remaining_ms.value_or(0)});
    if (!holder.fence.empty()) {
        text += fmt::format(", fence {}", holder.fence);
    } else if (!holder.not_a_fence.empty()) {
        text += fmt::format(", fence {} (not a fence number)", holder.not_a_fence);
    }
    return text;
}

std::string held_line(const LockState& state) {
    const auto& holders = state.holders;
    if (!holders.empty() && holders.front().classic) {
        return fmt::format("{}: held by a client of the classic algorithm{} (timestamp {} {})",
                           state.key,
                           lock::describe_tenure(std::nullopt, std::nullopt, std::nullopt,
                                                 Millis{state.remaining_ms.value_or(0)}),
                           *state.value, lock::unit_name(state.timestamp->unit));
    }
    if (!state.semaphore && !holders.empty()) {
        return fmt::format("{}: held by {}", state.key,
                           describe_holder(holders.front(), state.now_ms));
    }
    std::string line = state.shared
                           ? fmt::format("{}: held by {} shared {}", state.key, holders.size(),
                                         holders.size() == 1 ? "holder" : "holders")
                           : fmt::format("{}: held by {} of {} holders", state.key, holders.size(),
                                         state.limit.value_or(1));
    if (holders.empty()) {
        return line + for_another(state.remaining_ms);
    }
    const char* separator = ": ";
    for (const auto& holder : holders) {
        line += separator + describe_holder(holder, state.now_ms);
        separator = "; ";
    }
    return line;
}

} // namespace

// "; holds took 4m12s (median of the last 20), the longest 9m": said of a held lock, where it
// tells how long the hold may go on; nothing before the first release recorded one. (The JSON
// has it whatever the state.)
std::string took_text(const LockState& state) {
    if (!state.took_median_ms || (state.condition != LockCondition::held &&
                                  state.condition != LockCondition::held_after_command)) {
        return {};
    }
    return fmt::format("; holds took {} (median of the last {}), the longest {}",
                       format_duration(Millis{*state.took_median_ms}), state.took_count,
                       format_duration(Millis{state.took_longest_ms.value_or(0)}));
}

std::string condition_line(const LockState& state) {
    switch (state.condition) {
    case LockCondition::free:
        if (state.timestamp) {
            return fmt::format(
                "{}: free (the timestamp {} {} expired {} ago)", state.key, *state.value,
                lock::unit_name(state.timestamp->unit),
                format_duration(Millis{ms_between(state.now_ms, state.timestamp->expiry_ms)}));
        }
        return state.last_fence.empty()
                   ? fmt::format("{}: free", state.key)
                   : fmt::format("{}: free (last fence {})", state.key, state.last_fence);
    case LockCondition::held:
    case LockCondition::held_after_command:
        return held_line(state);
    case LockCondition::foreign:
        return state.redis_type == "string"
                   ? fmt::format("{}: not a lock (a value that is not a Unix timestamp)", state.key)
                   : fmt::format("{}: not a lock (a {})", state.key, state.redis_type);
    }
    return state.key;
}

// "; 2 waiting": how many wait; nothing when none do.
std::string waiting_text(const LockState& state) {
    return state.waiters.empty() ? std::string()
                                 : fmt::format("; {} waiting", state.waiters.size());
}

std::string status_line(const LockState& state) {
    return condition_line(state) + took_text(state) + waiting_text(state);
}

// "exclusive", "shared", "--limit 3": a waiter's mode, as its record names it.
std::string waiter_mode(const std::string& mode) {
    if (mode == "1") {
        return "exclusive";
    }
    if (mode == "shared") {
        return "shared";
    }
    return mode.empty() ? std::string("mode not known") : fmt::format("--limit {}", mode);
}

std::vector<std::string> waiter_lines(const LockState& state) {
    std::vector<std::string> lines;
    int position = 0;
    for (const auto& waiter : state.waiters) {
        ++position;
        std::string line = fmt::format("  {}. ", position);
        if (waiter.waiter.host.empty() && waiter.waiter.pid.empty()) {
            line += fmt::format("a waiter without a record ({})", waiter_mode(waiter.mode));
            lines.push_back(std::move(line));
            continue;
        }
        line += lock::describe(waiter.waiter) + (waiter.hold ? " (a hold)" : std::string()) +
                lock::describe_note(waiter.note);
        std::string details = waiter_mode(waiter.mode);
        if (waiter.supersede) {
            details += ", --supersede";
        }
        line += ", " + details;
        if (waiter.since_ms) {
            line += fmt::format(
                ", waiting for {}",
                format_duration(Millis{std::max(0LL, state.now_ms - *waiter.since_ms)}));
        }
        if (waiter.deadline_ms) {
            line += fmt::format(
                ", gives up in {}",
                format_duration(Millis{std::max(0LL, *waiter.deadline_ms - state.now_ms)}));
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

StatusReport describe_status(const std::string& key, const lock::StatusSnapshot& snapshot) {
    const LockState state = interpret_status(key, snapshot);
    if (state.condition == LockCondition::foreign) {
        return {exit_status_of(state),
                lock::describe_foreign(key, lock::Foreign{state.redis_type}, lock::Refused::no)};
    }
    return {exit_status_of(state), status_line(state)};
}

int show_status(const std::string& key, StatusFormat format,
                const redis::ConnectionSettings& settings, const Logger& log) {
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
    const LockState state = interpret_status(key, *snapshot);
    if (format == StatusFormat::json) {
        std::fputs((status_json(state) + "\n").c_str(), stdout);
    } else if (state.condition != LockCondition::foreign) {
        std::fputs((printable(status_line(state)) + "\n").c_str(), stdout);
        for (const auto& line : waiter_lines(state)) {
            std::fputs((printable(line) + "\n").c_str(), stdout);
        }
    }
    std::fflush(stdout);
    if (state.condition == LockCondition::foreign) {
        log.error("{}",
                  lock::describe_foreign(key, lock::Foreign{state.redis_type}, lock::Refused::no));
    }
    return exit_status_of(state);
}

} // namespace redlockrun
