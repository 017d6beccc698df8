#include "lock/keys.hpp"

#include <fmt/core.h>

namespace redlockrun::lock {

std::string_view hash_tag(std::string_view key) {
    const auto open = key.find('{');
    if (open == std::string_view::npos) {
        return {};
    }
    const auto close = key.find('}', open + 1);
    if (close == std::string_view::npos) {
        return {};
    }
    return key.substr(open + 1, close - open - 1);
}

namespace {

// The key with a hash tag whose companions are named with `prefix`, read as {T}:K; empty if
// there is none.
std::string_view tagged_key_named_by(std::string_view prefix) {
    if (!prefix.starts_with('{')) {
        return {};
    }
    const std::string_view tag = hash_tag(prefix);
    const size_t after_tag = tag.size() + 2;
    if (tag.empty() || prefix.size() <= after_tag + 1 || prefix[after_tag] != ':') {
        return {};
    }
    const std::string_view key = prefix.substr(after_tag + 1);
    if (hash_tag(key) != tag || key.find(reserved_infix) != std::string_view::npos) {
        return {};
    }
    return key;
}

} // namespace

Expected<LockKeys, std::string> lock_keys(const std::string& key) {
    if (key.find(reserved_infix) != std::string::npos) {
        return unexpected(fmt::format("the key {} contains \"{}\", which names redlockrun's own "
                                      "keys; choose another key",
                                      key, reserved_infix));
    }
    const std::string_view tag = hash_tag(key);
    const std::string prefix =
        tag.empty() ? fmt::format("{{{}}}", key) : fmt::format("{{{}}}:{}", tag, key);
    // {K} can read as {T}:K' for a key K' whose tag is T (a}:{a and {a}): the two locks would
    // share their companions. The tagged key keeps them: its name is the common one, and its
    // companions are in its slot, where those of a key like a}:{a (a '}' and no tag) never are.
    if (tag.empty()) {
        if (const auto other = tagged_key_named_by(prefix); !other.empty()) {
            return unexpected(fmt::format(
                "the key {} has no hash tag, and its other keys ({}:redlockrun:*) would be those "
                "of the key {}; put a hash tag in it, or leave out its braces",
                key, prefix, other));
        }
    }
    return LockKeys{key,
                    prefix + ":redlockrun:owner",
                    prefix + ":redlockrun:fence",
                    prefix + ":redlockrun:wake",
                    prefix + ":redlockrun:queue",
                    prefix + ":redlockrun:broken",
                    prefix + ":redlockrun:durations",
                    prefix + ":redlockrun:waiters"};
}

namespace {

// What follows C in the names of the companions.
constexpr std::string_view companion_suffixes[] = {
    ":redlockrun:owner",  ":redlockrun:fence",     ":redlockrun:wake",   ":redlockrun:queue",
    ":redlockrun:broken", ":redlockrun:durations", ":redlockrun:waiters"};
// A semaphore's waiters each have a wake-up list, C:redlockrun:wake:ID.
constexpr std::string_view waiter_wake_infix = ":redlockrun:wake:";

// C, the part of `name` before a companion's suffix; empty if `name` is no companion's.
std::string_view companion_prefix(std::string_view name) {
    for (const auto suffix : companion_suffixes) {
        if (name.ends_with(suffix)) {
            return name.substr(0, name.size() - suffix.size());
        }
    }
    // A waiter's ID is redlockrun's own and never holds the infix, but the key before it may
    // (redlockrun:wake:{x} is a key): the last one is the one that ends C.
    const auto infix = name.rfind(waiter_wake_infix);
    if (infix != std::string_view::npos && infix + waiter_wake_infix.size() < name.size()) {
        return name.substr(0, infix);
    }
    return {};
}

// The key that names its companions with `prefix`, if `candidate` is one.
bool names_with(std::string_view candidate, std::string_view prefix) {
    if (candidate.empty()) {
        return false;
    }
    const auto keys = lock_keys(std::string(candidate));
    return keys && keys->owner.size() == prefix.size() + companion_suffixes[0].size() &&
           std::string_view(keys->owner).starts_with(prefix);
}

} // namespace

std::optional<std::string> lock_key_of(std::string_view name) {
    const std::string_view prefix = companion_prefix(name);
    if (prefix.size() < 2 || prefix.front() != '{') {
        return std::nullopt;
    }
    // {T}:K, for a key K whose hash tag is T.
    if (const auto tagged = tagged_key_named_by(prefix); !tagged.empty()) {
        return std::string(tagged);
    }
    // {K}, for a key K without a hash tag.
    if (prefix.back() == '}') {
        const std::string_view plain = prefix.substr(1, prefix.size() - 2);
        if (names_with(plain, prefix)) {
            return std::string(plain);
        }
    }
    return std::nullopt;
}

} // namespace redlockrun::lock
