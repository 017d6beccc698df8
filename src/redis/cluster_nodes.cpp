#include "redis/cluster_nodes.hpp"

#include <fmt/core.h>

#include <charconv>
#include <optional>

namespace redlockrun::redis {

namespace {

// The words of a line, split at spaces.
std::vector<std::string_view> words_of(std::string_view line) {
    std::vector<std::string_view> words;
    while (!line.empty()) {
        const auto space = line.find(' ');
        if (space != 0) {
            words.push_back(line.substr(0, space));
        }
        line = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    }
    return words;
}

bool has_flag(std::string_view flags, std::string_view flag) {
    while (!flags.empty()) {
        const auto comma = flags.find(',');
        if (flags.substr(0, comma) == flag) {
            return true;
        }
        flags = comma == std::string_view::npos ? std::string_view{} : flags.substr(comma + 1);
    }
    return false;
}

// "ip:port@cport[,hostname]" (Redis before 4.0 wrote "ip:port"); the IP may be an IPv6 literal,
// whose last ':' is the one before the port.
std::optional<HostPort> address_of(std::string_view field) {
    const std::string_view address = field.substr(0, field.find_first_of("@,"));
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view digits = address.substr(colon + 1);
    int port = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (error != std::errc{} || end != digits.data() + digits.size() || port < 1 || port > 65535) {
        return std::nullopt;
    }
    return HostPort{std::string(address.substr(0, colon)), port};
}

} // namespace

Expected<std::vector<ClusterMaster>, std::string> cluster_masters(std::string_view text) {
    std::vector<ClusterMaster> masters;
    size_t nodes = 0;
    while (!text.empty()) {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (line.ends_with('\r')) {
            line.remove_suffix(1);
        }
        if (line.empty()) {
            continue;
        }
        const auto words = words_of(line);
        // id, address, flags, master, ping-sent, pong-recv, config-epoch, link-state[, slots]
        if (words.size() < 8) {
            return unexpected(fmt::format(
                "a line of CLUSTER NODES has {} fields, not 8 or more: {}", words.size(), line));
        }
        ++nodes;
        const std::string_view flags = words[2];
        if (!has_flag(flags, "master") || has_flag(flags, "fail") || has_flag(flags, "noaddr") ||
            has_flag(flags, "handshake")) {
            continue;
        }
        auto address = address_of(words[1]);
        if (!address) {
            return unexpected(fmt::format(
                "CLUSTER NODES gives a master an address that is not host:port: {}", words[1]));
        }
        masters.push_back({std::move(*address), has_flag(flags, "myself")});
    }
    if (nodes == 0) {
        return unexpected(std::string("CLUSTER NODES describes no node"));
    }
    return masters;
}

} // namespace redlockrun::redis
