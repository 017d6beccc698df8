#include "status/lock_state.hpp"

#include "base/exit_status.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <tuple>

namespace redlockrun {

namespace {

std::optional<long long> remaining_until(std::optional<long long> expires_ms, long long now_ms) {
    if (!expires_ms) {
        return std::nullopt;
    }
    return std::max(0LL, ms_between(*expires_ms, now_ms));
}

// A fence as the scripts grant it: decimal digits for a number from 0 to 2^53 - 1.
bool is_fence(const std::string& text) {
    constexpr unsigned long long largest = (1ULL << 53) - 1;
    unsigned long long number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    return !text.empty() && error == std::errc{} && end == text.data() + text.size() &&
           number <= largest;
}

HolderState holder_state(const lock::HolderRecord& record, long long now_ms) {
    HolderState holder;
    holder.holder = record.holder;
    (is_fence(record.fence) ? holder.fence : holder.not_a_fence) = record.fence;
    holder.acquired_ms = record.acquired_ms;
    holder.expires_ms = record.expires_ms;
    holder.remaining_ms = remaining_until(record.expires_ms, now_ms);
    holder.hold_until_ms = record.hold_until_ms;
    holder.ended_ms = record.ended_ms;
    holder.renew_ms = record.renew_ms;
    holder.note = record.note;
    holder.hold = record.hold;
    if (is_fence(record.slot)) { // a whole number below 2^53, as a fence is
        holder.slot = std::stoll(record.slot);
    }
    return holder;
}

// HGETALL gives a semaphore's holders in no order: the earliest grant first, for output that reads
// the same twice.
bool granted_earlier(const HolderState& a, const HolderState& b) {
    const auto order = [](const HolderState& h) {
        return std::tuple(h.acquired_ms.value_or(std::numeric_limits<long long>::max()),
                          h.fence.size(), h.fence, h.holder.host, h.holder.pid);
    };
    return order(a) < order(b);
}

} // namespace

std::string_view condition_name(LockCondition condition) {
    switch (condition) {
    case LockCondition::free:
        return "free";
    case LockCondition::held:
        return "held";
    case LockCondition::held_after_command:
        return "held-after-command";
    case LockCondition::foreign:
        return "foreign";
    }
    return "unknown";
}

long long ms_between(long long later, long long earlier) {
    long long difference = 0;
    if (__builtin_sub_overflow(later, earlier, &difference)) {
        return later > earlier ? std::numeric_limits<long long>::max()
                               : std::numeric_limits<long long>::min();
    }
    return difference;
}

LockState interpret_status(const std::string& key, const lock::StatusSnapshot& snapshot) {
    LockState state;
    state.key = key;
    state.redis_type = snapshot.type;
    state.now_ms = snapshot.now_ms;
    state.last_fence = snapshot.last_fence;
    state.took_median_ms = snapshot.took_median_ms;
    state.took_longest_ms = snapshot.took_longest_ms;
    state.took_count = snapshot.took_count;
    state.waiters = snapshot.waiters;
    if (snapshot.type == "none") {
        return state;
    }
    if (snapshot.type == "string") {
        state.timestamp = lock::parse_timestamp(snapshot.value);
    }
    if (!state.timestamp) {
        state.condition = LockCondition::foreign;
        return state;
    }
    state.value = snapshot.value;
    state.remaining_ms = remaining_until(state.timestamp->expiry_ms, snapshot.now_ms);
    if (*state.remaining_ms == 0) {
        return state; // free: the timestamp has passed
    }
    state.condition = LockCondition::held;
    if (snapshot.owner_value != snapshot.value) {
        // Not what redlockrun wrote: a client of the classic algorithm holds the key.
        HolderState classic;
        classic.classic = true;
        classic.expires_ms = state.timestamp->expiry_ms;
        classic.remaining_ms = state.remaining_ms;
        state.holders.push_back(classic);
        state.limit = 1;
        return state;
    }
    state.semaphore = snapshot.limit.has_value();
    state.shared = snapshot.shared;
    state.limit = snapshot.limit.value_or(1);
    for (const auto& record : snapshot.holders) {
        state.holders.push_back(holder_state(record, snapshot.now_ms));
        if (!state.semaphore) {
            state.holders.back().expires_ms = state.timestamp->expiry_ms;
            state.holders.back().remaining_ms = state.remaining_ms;
        }
    }
    std::sort(state.holders.begin(), state.holders.end(), granted_earlier);
    if (!state.holders.empty() &&
        std::all_of(state.holders.begin(), state.holders.end(),
                    [](const HolderState& holder) { return holder.ended_ms.has_value(); })) {
        state.condition = LockCondition::held_after_command;
    }
    return state;
}

int exit_status_of(const LockState& state) {
    switch (state.condition) {
    case LockCondition::free:
        return to_int(ExitStatus::ok);
    case LockCondition::held:
    case LockCondition::held_after_command:
        return to_int(ExitStatus::not_acquired);
    case LockCondition::foreign:
        return to_int(ExitStatus::foreign_value);
    }
    return to_int(ExitStatus::internal);
}

} // namespace redlockrun
