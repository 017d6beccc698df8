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

Expected<LockKeys, std::string> lock_keys(const std::string& key) {
    if (key.find(reserved_infix) != std::string::npos) {
        return unexpected(fmt::format("the key {} contains \"{}\", which names redlockrun's own "
                                      "keys; choose another key",
                                      key, reserved_infix));
    }
    const std::string_view tag = hash_tag(key);
    const std::string prefix =
        tag.empty() ? fmt::format("{{{}}}", key) : fmt::format("{{{}}}:{}", tag, key);
    return LockKeys{key, prefix + ":redlockrun:owner", prefix + ":redlockrun:fence",
                    prefix + ":redlockrun:wake", prefix + ":redlockrun:queue"};
}

} // namespace redlockrun::lock
