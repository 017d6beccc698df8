// The keys of one lock (DESIGN §1). The user's key K holds the timestamp; the companions are named
// from the whole of K, never from its hash tag alone, so that two locks that share a tag
// (backup:{tenant1} and report:{tenant1}), or foo and {foo}, never share an owner record:
//
//     C:redlockrun:owner, C:redlockrun:fence, C:redlockrun:wake, C:redlockrun:queue,
//     C:redlockrun:broken, C:redlockrun:durations, C:redlockrun:waiters
//
// (and a semaphore's waiters' own wake-up lists, C:redlockrun:wake:ID, which the scripts name)
// where C is {K} for a key without a valid hash tag, and {T}:K for a key whose tag is T. Either way
// C's own hash tag is K's slot, so the companions live in one Redis Cluster slot (except for a key
// with a '}' but no tag, such as a}b: no C can have its slot, and the server refuses the scripts).
//
// The naming is injective: no two keys share a C. {K} never reads as {T}:K' for a key K' whose tag
// is T, except for keys such as a}:{a ({a}:{a}, as {a} has), which are refused.
#pragma once

#include "base/expected.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun::lock {

struct LockKeys {
    std::string lock;
    std::string owner;
    std::string fence;
    std::string wake;
    std::string queue;     // a semaphore's waiters, in arrival order
    std::string broken;    // the holders that --break ended, for their next renewal to learn of it
    std::string durations; // how long the last holds took, for --status and the waiting message
    std::string waiters;   // who waits, for --status, --list and a waiter's place in line

    // In the order the scripts take them as KEYS.
    std::vector<std::string> all() const {
        return {lock, owner, fence, wake, queue, broken, durations, waiters};
    }
};

// The part of the key Redis Cluster hashes: the text between the first '{' and the next '}', if
// that is not empty; otherwise empty (the whole key is hashed).
std::string_view hash_tag(std::string_view key);

// The text that marks redlockrun's own keys. A lock key that contains it could be another lock's
// companion, so it is refused.
inline constexpr std::string_view reserved_infix = ":redlockrun:";

// The keys of the lock named `key`, or why `key` cannot name a lock (a sentence for the user): a
// key that contains reserved_infix, or one without a hash tag whose C would be a tagged key's
// (a}:{a, whose C would be {a}'s). The tagged key is the one kept: its companions are in its slot,
// where those of a key with a '}' but no tag never are, so such a key could not have them on a
// Cluster anyway, and refusing it changes no lock that works there.
Expected<LockKeys, std::string> lock_keys(const std::string& key);

// The lock key whose companion is named `name` (C:redlockrun:owner, :fence, :wake, :queue, :broken,
// :durations, :waiters, or a waiter's :wake:ID), or none if no lock key has a companion of that
// name: the inverse of the naming above.
std::optional<std::string> lock_key_of(std::string_view name);

} // namespace redlockrun::lock
