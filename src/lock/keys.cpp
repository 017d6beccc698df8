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

LockKeys lock_keys(const std::string& key) {
    std::string_view tag = hash_tag(key);
    const std::string prefix = fmt::format("{{{}}}", tag.empty() ? std::string_view(key) : tag);
    return LockKeys{key, prefix + ":redlockrun:owner", prefix + ":redlockrun:fence",
                    prefix + ":redlockrun:wake"};
}

} // namespace redlockrun::lock
