// The keys of one lock. The user's key holds the timestamp; the companions live in the same Redis
// Cluster slot: {T}:redlockrun:owner, :fence and :wake, where T is the key's hash tag if it has a
// valid one ("{tag}"), otherwise the whole key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace redlockrun::lock {

struct LockKeys {
    std::string lock;
    std::string owner;
    std::string fence;
    std::string wake;

    // In the order the scripts take them as KEYS.
    std::vector<std::string> all() const { return {lock, owner, fence, wake}; }
};

// The part of the key Redis Cluster hashes: the text between the first '{' and the next '}', if
// that is not empty; otherwise empty (the whole key is hashed).
std::string_view hash_tag(std::string_view key);

LockKeys lock_keys(const std::string& key);

} // namespace redlockrun::lock
