// What the status script read, interpreted once: free, held (by whom, until when), held after its
// command ended (--min-hold), or foreign. The --status line and its JSON object are both written
// from this, so they cannot disagree. The same timestamp rules as the scripts apply
// (lock/timestamp.hpp), and every time is the server's.
#pragma once

#include "lock/answers.hpp"
#include "lock/timestamp.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun {

enum class LockCondition {
    free,               // no key, or a timestamp that has passed
    held,               // an unexpired timestamp
    held_after_command, // held for --min-hold: every holder's command has ended
    foreign,            // the key holds something that is not a timestamp lock
};

// "free", "held", "held-after-command", "foreign": the names the JSON output uses.
std::string_view condition_name(LockCondition condition);

struct HolderState {
    // A client of the classic algorithm wrote the key: nothing is known of it but the expiry.
    bool classic = false;
    lock::Holder holder;
    // The holder's fence: a whole number below 2^53 (the scripts grant no larger one, and every
    // JSON reader holds it exactly); empty if the record has none.
    std::string fence;
    // What the record holds instead, if anything (written by another program: 1e400, -3, 1.5):
    // shown as it is, never as a fence.
    std::string not_a_fence;
    std::optional<long long> acquired_ms;
    std::optional<long long> expires_ms;
    std::optional<long long> remaining_ms;
    std::optional<long long> hold_until_ms;
    std::optional<long long> ended_ms;
    // How often the holder renews: 0 for --no-renew; none where its record does not say.
    std::optional<long long> renew_ms;
    // Why it holds the lock (--note), as it was written; empty: none.
    std::string note;
    // A hold (--hold): the pid is the hold's owner's.
    bool hold = false;
    // A semaphore holder's slot (REDLOCKRUN_SLOT): a whole number below 2^53; none if its record
    // has none (a holder of an earlier version, or a record written by another program).
    std::optional<long long> slot;
};

struct LockState {
    std::string key;
    LockCondition condition = LockCondition::free;
    std::string redis_type; // the key's: "none", "string", "list"...
    long long now_ms = 0;   // the server's time when the script ran
    // The key's value and what it means, when it is a timestamp.
    std::optional<std::string> value;
    std::optional<lock::Timestamp> timestamp;
    std::optional<long long> remaining_ms; // until the key's expiry; 0 once it has passed
    std::string last_fence;                // the fence counter; empty if there is none
    // While held: 1 for an exclusive lock, N for a semaphore (--limit N), the cap on shared holders
    // (lock::shared_cap) for shared ones.
    std::optional<long long> limit;
    bool semaphore = false; // held by a semaphore's holders, or by shared ones
    bool shared = false;    // held by shared holders (--shared)
    // Earliest grant first (then by fence); empty unless held.
    std::vector<HolderState> holders;
    // How long the last holds took (up to 20): their median and the longest; none before the
    // first release recorded one.
    std::optional<long long> took_median_ms;
    std::optional<long long> took_longest_ms;
    int took_count = 0;
    // Who waits, in the order they will be served (whatever the condition: a waiter may be about
    // to take a lock that was just let go).
    std::vector<lock::WaiterRecord> waiters;
};

LockState interpret_status(const std::string& key, const lock::StatusSnapshot& snapshot);

// 0 free, 75 held (after its command too), 65 foreign: --status's exit status.
int exit_status_of(const LockState& state);

// later - earlier, saturated: the times come from Redis, and any value must give a duration.
long long ms_between(long long later, long long earlier);

} // namespace redlockrun
