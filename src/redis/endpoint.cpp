#include "redis/endpoint.hpp"

#include <fmt/core.h>

#include <charconv>
#include <limits>

namespace redlockrun::redis {

namespace {

std::optional<int> parse_int(std::string_view text, int min, int max) {
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < min ||
        value > max) {
        return std::nullopt;
    }
    return value;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

std::optional<std::string> percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) {
            return std::nullopt;
        }
        int high = hex_value(text[i + 1]);
        int low = hex_value(text[i + 2]);
        if (high < 0 || low < 0) {
            return std::nullopt;
        }
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    return out;
}

using Result = Expected<Endpoint, std::string>;

Result parse_db(std::string_view text, Endpoint endpoint) {
    if (text.empty()) {
        return endpoint;
    }
    auto db = parse_int(text, 0, std::numeric_limits<int>::max());
    if (!db) {
        return unexpected(std::string("the database must be a number of 0 or more"));
    }
    endpoint.db = *db;
    return endpoint;
}

Result parse_unix(std::string_view rest) {
    // unix:///path/to/socket[?db=N]
    Endpoint endpoint;
    endpoint.unix_socket = true;
    auto query_start = rest.find('?');
    std::string_view path = rest.substr(0, query_start);
    if (path.empty() || path.front() != '/') {
        return unexpected(std::string("a unix URL needs an absolute socket path: unix:///path"));
    }
    endpoint.socket_path = std::string(path);
    if (query_start == std::string_view::npos) {
        return endpoint;
    }
    std::string_view query = rest.substr(query_start + 1);
    if (query.substr(0, 3) != "db=") {
        return unexpected(std::string("a unix URL takes only ?db=N after the path"));
    }
    return parse_db(query.substr(3), endpoint);
}

Result parse_tcp(std::string_view rest, bool tls) {
    // [user[:password]@]host[:port][/db]
    Endpoint endpoint;
    endpoint.tls = tls;
    if (rest.find_first_of("?#") != std::string_view::npos) {
        return unexpected(
            std::string("query strings and fragments are not supported in redis URLs"));
    }
    auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view db = slash == std::string_view::npos ? "" : rest.substr(slash + 1);

    auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
        std::string_view userinfo = authority.substr(0, at);
        authority = authority.substr(at + 1);
        // As redis-cli reads it: "user:password", or a lone password (never a lone user name).
        auto colon = userinfo.find(':');
        if (colon != std::string_view::npos) {
            auto user = percent_decode(userinfo.substr(0, colon));
            if (!user) {
                return unexpected(std::string("bad percent-encoding in the user name"));
            }
            endpoint.user = *user;
        }
        auto password =
            percent_decode(colon == std::string_view::npos ? userinfo : userinfo.substr(colon + 1));
        if (!password) {
            return unexpected(std::string("bad percent-encoding in the password"));
        }
        // "user:@host" names the user and leaves the password to --password-file or the
        // environment.
        if (!password->empty()) {
            endpoint.password = *password;
        }
    }

    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) {
            return unexpected(std::string("an IPv6 address needs a closing ']'"));
        }
        endpoint.host = std::string(authority.substr(1, close - 1));
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                return unexpected(std::string("unexpected text after the IPv6 address"));
            }
            port = after.substr(1);
            if (port.empty()) {
                return unexpected(std::string("the port is empty"));
            }
        }
    } else {
        auto colon = authority.find(':');
        endpoint.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
            if (port.empty()) {
                return unexpected(std::string("the port is empty"));
            }
        }
    }
    if (endpoint.host.empty()) {
        return unexpected(std::string("the host name is missing"));
    }
    if (!port.empty()) {
        auto number = parse_int(port, 1, 65535);
        if (!number) {
            return unexpected(std::string("the port must be a number from 1 to 65535"));
        }
        endpoint.port = *number;
    }
    return parse_db(db, endpoint);
}

} // namespace

std::string Endpoint::display() const {
    std::string where;
    if (unix_socket) {
        where = "unix:" + socket_path;
    } else if (host.find(':') != std::string::npos) {
        where = fmt::format("[{}]:{}", host, port);
    } else {
        where = fmt::format("{}:{}", host, port);
    }
    if (db != 0) {
        where += fmt::format(" (db {})", db);
    }
    return where;
}

Expected<Endpoint, std::string> parse_url(std::string_view url) {
    constexpr std::string_view redis = "redis://";
    constexpr std::string_view rediss = "rediss://";
    constexpr std::string_view unix_scheme = "unix://";
    if (url.substr(0, redis.size()) == redis) {
        return parse_tcp(url.substr(redis.size()), false);
    }
    if (url.substr(0, rediss.size()) == rediss) {
        return parse_tcp(url.substr(rediss.size()), true);
    }
    if (url.substr(0, unix_scheme.size()) == unix_scheme) {
        return parse_unix(url.substr(unix_scheme.size()));
    }
    return unexpected(std::string("the URL must start with redis://, rediss:// or unix://"));
}

std::optional<TextSpan> password_span(std::string_view url) {
    // Wider than parse_url() on purpose: everything up to the last '@' counts as user information,
    // so that a password is found even in a URL that parse_url() would refuse.
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos || url.substr(0, scheme_end) == "unix") {
        return std::nullopt;
    }
    const size_t userinfo_start = scheme_end + 3;
    const auto at = url.rfind('@');
    if (at == std::string_view::npos || at < userinfo_start) {
        return std::nullopt;
    }
    const auto colon = url.substr(userinfo_start, at - userinfo_start).find(':');
    const size_t start =
        colon == std::string_view::npos ? userinfo_start : userinfo_start + colon + 1;
    if (start == at) {
        return std::nullopt;
    }
    return TextSpan{start, at - start};
}

} // namespace redlockrun::redis
