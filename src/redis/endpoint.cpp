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

// "[user:]password" before the '@' of a URL: as redis-cli reads it, user information without a
// ':' is a password (never a lone user name).
Expected<bool, std::string> parse_userinfo(std::string_view userinfo, Endpoint& endpoint) {
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
    // "user:@host" names the user and leaves the password to --password-file or the environment.
    if (!password->empty()) {
        endpoint.password = *password;
    }
    return true;
}

// "host[:port]" or "[v6]:port".
Expected<HostPort, std::string> parse_host_port(std::string_view authority, int default_port) {
    HostPort where{"", default_port};
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) {
            return unexpected(std::string("an IPv6 address needs a closing ']'"));
        }
        where.host = std::string(authority.substr(1, close - 1));
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
        where.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
            if (port.empty()) {
                return unexpected(std::string("the port is empty"));
            }
        }
    }
    if (where.host.empty()) {
        return unexpected(std::string("the host name is missing"));
    }
    if (!port.empty()) {
        auto number = parse_int(port, 1, 65535);
        if (!number) {
            return unexpected(std::string("the port must be a number from 1 to 65535"));
        }
        where.port = *number;
    }
    return where;
}

// What follows "scheme://" up to any '#': "[userinfo@]hosts[/db]". Splits off and parses the user
// information, and returns the hosts; the db goes into `endpoint`.
Expected<std::string_view, std::string> parse_authority(std::string_view rest, Endpoint& endpoint) {
    auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
        if (auto parsed = parse_userinfo(authority.substr(0, at), endpoint); !parsed) {
            return unexpected(std::move(parsed.error()));
        }
        authority = authority.substr(at + 1);
    }
    if (slash != std::string_view::npos) {
        auto db = parse_int(rest.substr(slash + 1), 0, std::numeric_limits<int>::max());
        if (!db && slash + 1 < rest.size()) {
            return unexpected(std::string("the database must be a number of 0 or more"));
        }
        endpoint.db = db.value_or(0);
    }
    return authority;
}

Result parse_tcp(std::string_view rest, bool tls) {
    // [user[:password]@]host[:port][/db]
    Endpoint endpoint;
    endpoint.tls = tls;
    if (rest.find_first_of("?#") != std::string_view::npos) {
        return unexpected(
            std::string("query strings and fragments are not supported in redis URLs"));
    }
    auto authority = parse_authority(rest, endpoint);
    if (!authority) {
        return unexpected(std::move(authority.error()));
    }
    auto where = parse_host_port(*authority, endpoint.port);
    if (!where) {
        return unexpected(std::move(where.error()));
    }
    endpoint.host = std::move(where->host);
    endpoint.port = where->port;
    return endpoint;
}

Result parse_sentinel(std::string_view rest, bool tls) {
    // [user[:password]@]host1[:port1][,host2[:port2]...][/db]#MASTER
    Endpoint endpoint;
    endpoint.tls = tls;
    endpoint.host.clear();
    endpoint.port = 0;
    auto hash = rest.find('#');
    if (hash == std::string_view::npos || hash + 1 == rest.size()) {
        return unexpected(std::string("a Sentinel URL must end with #MASTER, the name the "
                                      "sentinels know the master by"));
    }
    auto name = percent_decode(rest.substr(hash + 1));
    if (!name || name->empty()) {
        return unexpected(std::string("bad percent-encoding in the master name"));
    }
    endpoint.master_name = std::move(*name);
    rest = rest.substr(0, hash);
    if (rest.find('?') != std::string_view::npos) {
        return unexpected(std::string("query strings are not supported in Sentinel URLs"));
    }
    auto authority = parse_authority(rest, endpoint);
    if (!authority) {
        return unexpected(std::move(authority.error()));
    }
    std::string_view hosts = *authority;
    for (size_t number = 1;; ++number) {
        auto comma = hosts.find(',');
        auto sentinel = parse_host_port(hosts.substr(0, comma), default_sentinel_port);
        if (!sentinel) {
            return unexpected(fmt::format("sentinel {}: {}", number, sentinel.error()));
        }
        endpoint.sentinels.push_back(std::move(*sentinel));
        if (comma == std::string_view::npos) {
            break;
        }
        hosts = hosts.substr(comma + 1);
    }
    return endpoint;
}

} // namespace

std::string HostPort::display() const {
    return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                               : fmt::format("{}:{}", host, port);
}

std::string Endpoint::display() const {
    std::string where;
    if (unix_socket) {
        where = "unix:" + socket_path;
    } else if (is_sentinel) {
        where = "sentinel " + HostPort{host, port}.display();
    } else if (via_sentinel()) {
        where = host.empty()
                    ? fmt::format("master {}", master_name)
                    : fmt::format("master {} at {}", master_name, HostPort{host, port}.display());
    } else {
        where = HostPort{host, port}.display();
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
    constexpr std::string_view sentinel = "redis-sentinel://";
    constexpr std::string_view sentinel_tls = "rediss-sentinel://";
    if (url.substr(0, sentinel.size()) == sentinel) {
        return parse_sentinel(url.substr(sentinel.size()), false);
    }
    if (url.substr(0, sentinel_tls.size()) == sentinel_tls) {
        return parse_sentinel(url.substr(sentinel_tls.size()), true);
    }
    if (url.substr(0, redis.size()) == redis) {
        return parse_tcp(url.substr(redis.size()), false);
    }
    if (url.substr(0, rediss.size()) == rediss) {
        return parse_tcp(url.substr(rediss.size()), true);
    }
    if (url.substr(0, unix_scheme.size()) == unix_scheme) {
        return parse_unix(url.substr(unix_scheme.size()));
    }
    std::string message = "the URL must start with redis://, rediss://, unix://, "
                          "redis-sentinel:// or rediss-sentinel://";
    // "localhost:6379", "10.0.0.5": redis-cli's -h and -p, written as one. Not repeated if it may
    // hold a password ('@'), which no message shows.
    if (url.find("://") == std::string_view::npos && url.find('@') == std::string_view::npos &&
        !url.empty() && url.find_first_of(" \t/") == std::string_view::npos) {
        message += fmt::format(": write redis://{}", url);
    }
    return unexpected(std::move(message));
}

std::optional<TextSpan> password_span(std::string_view url) {
    // Wider than parse_url() on purpose: everything up to the last '@' counts as user information,
    // so that a password is found even in a URL that parse_url() would refuse.
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos || url.substr(0, scheme_end) == "unix") {
        return std::nullopt;
    }
    const size_t userinfo_start = scheme_end + 3;
    // A Sentinel URL's master name, after the first '#', may hold an '@' of its own. Without an
    // '@' before that '#', the password may hold a '#' (the URL is then refused): up to the last.
    const std::string_view scheme = url.substr(0, scheme_end);
    auto at = url.rfind('@');
    if (scheme == "redis-sentinel" || scheme == "rediss-sentinel") {
        at = url.substr(0, url.find('#')).rfind('@');
        if (at == std::string_view::npos) {
            at = url.substr(0, url.rfind('#')).rfind('@');
        }
    }
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
