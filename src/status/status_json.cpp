#include "status/status_json.hpp"

#include "base/json_writer.hpp"

#include <algorithm>

namespace redlockrun {

namespace {

std::optional<std::string> unless_empty(const std::string& text) {
    return text.empty() ? std::nullopt : std::optional(text);
}

// How a lock is held, as the JSON names it: "exclusive", "shared" or "semaphore"; none while free.
std::optional<std::string> mode_of(const LockState& state) {
    if (state.condition != LockCondition::held &&
        state.condition != LockCondition::held_after_command) {
        return std::nullopt;
    }
    return state.shared ? "shared" : (state.semaphore ? "semaphore" : "exclusive");
}

std::string holder_json(const HolderState& holder, const std::optional<std::string>& mode) {
    JsonObject object;
    object.string("client", holder.classic ? "classic" : "redlockrun")
        .string("mode", mode)
        .string("host", holder.classic ? std::nullopt : unless_empty(holder.holder.host))
        .number("pid", decimal_number(holder.holder.pid))
        .number("fence", decimal_number(holder.fence))
        .number("acquired_ms", holder.acquired_ms)
        .number("expires_ms", holder.expires_ms)
        .number("remaining_ms", holder.remaining_ms)
        .number("hold_until_ms", holder.hold_until_ms)
        .number("command_ended_ms", holder.ended_ms)
        .string("note", unless_empty(holder.note))
        .json("hold", holder.hold ? "true" : "false")
        .number("slot", holder.slot);
    return object.text();
}

std::string waiter_json(const lock::WaiterRecord& waiter, int position, long long now_ms) {
    const bool known = !waiter.waiter.host.empty() || !waiter.waiter.pid.empty();
    const auto limit = waiter.mode == "shared" ? std::nullopt : decimal_number(waiter.mode);
    JsonObject object;
    object.number("position", position)
        .string("mode", waiter.mode == "shared" ? std::optional<std::string>("shared")
                        : !limit                ? std::nullopt
                        : *limit == 1           ? std::optional<std::string>("exclusive")
                                                : std::optional<std::string>("semaphore"))
        .number("limit", limit && *limit > 1 ? limit : std::nullopt)
        .string("host", known ? unless_empty(waiter.waiter.host) : std::nullopt)
        .number("pid", decimal_number(waiter.waiter.pid))
        .number("since_ms", waiter.since_ms)
        .number("waited_ms", waiter.since_ms
                                 ? std::optional(std::max(0LL, now_ms - *waiter.since_ms))
                                 : std::nullopt)
        .number("deadline_ms", waiter.deadline_ms)
        .string("note", unless_empty(waiter.note))
        .json("hold", waiter.hold ? "true" : "false")
        .json("supersede", waiter.supersede ? "true" : "false");
    return object.text();
}

} // namespace

std::string status_json(const LockState& state) {
    std::vector<std::string> holders;
    const auto mode = mode_of(state);
    for (const auto& holder : state.holders) {
        holders.push_back(holder_json(holder, mode));
    }
    JsonObject object;
    object.string("key", state.key)
        .string("state", std::string(condition_name(state.condition)))
        .string("redis_type", state.redis_type)
        .string("value", state.value)
        .number("limit", state.limit)
        .string("mode", mode)
        .number("server_time_ms", state.now_ms)
        .number("expires_ms",
                state.timestamp ? std::optional(state.timestamp->expiry_ms) : std::nullopt)
        .number("remaining_ms", state.remaining_ms)
        .number("last_fence", decimal_number(state.last_fence))
        .json("holders", json_array(holders));
    if (state.took_median_ms) {
        JsonObject took;
        took.number("median_ms", state.took_median_ms)
            .number("longest_ms", state.took_longest_ms)
            .number("count", state.took_count);
        object.json("hold_durations", took.text());
    } else {
        object.json("hold_durations", "null");
    }
    std::vector<std::string> waiters;
    for (const auto& waiter : state.waiters) {
        waiters.push_back(waiter_json(waiter, static_cast<int>(waiters.size()) + 1, state.now_ms));
    }
    object.number("waiting", static_cast<long long>(waiters.size()))
        .json("waiters", json_array(waiters));
    return object.text();
}

} // namespace redlockrun
