#include "redis/server_info.hpp"

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <string_view>

namespace redlockrun::redis {
namespace {

// The value of `field` in INFO's text ("field:value" lines ending in CRLF), if it is there.
std::optional<std::string_view> info_field(std::string_view text, std::string_view field) {
    while (!text.empty()) {
        const size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.size() > field.size() && line.starts_with(field) && line[field.size()] == ':') {
            return line.substr(field.size() + 1);
        }
    }
    return std::nullopt;
}

} // namespace

std::string describe_server(const Reply& info) {
    if (info.is_error()) {
        return fmt::format("INFO refused: {}", info.text);
    }
    const auto text = info.as_string();
    if (!text) {
        return fmt::format("INFO answered {}", info.describe());
    }
    // Valkey's own name and version; a later fork that follows its lead is named as it names
    // itself.
    if (const auto name = info_field(*text, "server_name"); name && !name->empty()) {
        if (const auto version = info_field(*text, fmt::format("{}_version", *name))) {
            std::string display(*name);
            display[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(display[0])));
            return fmt::format("{} {}", display, *version);
        }
    }
    if (const auto version = info_field(*text, "redis_version")) {
        return fmt::format("Redis {}", *version);
    }
    return "INFO named no version";
}

std::string describe_connected(const Endpoint& endpoint, const Reply& info) {
    Endpoint where = endpoint;
    where.db = 0;
    const std::string database =
        endpoint.db != 0 ? fmt::format(", db {}", endpoint.db) : std::string();
    return fmt::format("connected to {} ({}{})", where.display(), describe_server(info), database);
}

} // namespace redlockrun::redis
