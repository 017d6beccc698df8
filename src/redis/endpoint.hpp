// Where the Redis server is and who to log in as, parsed from a URL:
//   redis://[[user:]password@]host[:port][/db]     rediss://... (TLS)     unix:///path[?db=N]
//   redis-sentinel://[[user:]password@]host1[:port1][,host2[:port2]...][/db]#MASTER
//   rediss-sentinel://... (TLS to the sentinels and to the master)
// A Sentinel URL names the sentinels to ask where the master called MASTER is (port 26379 unless
// given); its user information, as a redis:// URL's, is for the master.
// As for redis-cli, user information without a ':' is a password. User and password may be
// percent-encoded. Error messages never repeat the URL or any part of its user information.
#pragma once

#include "base/expected.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun::redis {

struct HostPort {
    std::string host; // an IPv6 literal is stored without brackets
    int port = 0;

    bool operator==(const HostPort&) const = default;
    // "127.0.0.1:6379", "[::1]:6380".
    std::string display() const;
};

struct Endpoint {
    bool unix_socket = false;
    bool tls = false;
    std::string host = "127.0.0.1"; // TCP only; an IPv6 literal is stored without brackets
    int port = 6379;                // TCP only
    std::string socket_path;        // unix only
    int db = 0;
    std::string user;                    // empty: the default user
    std::optional<std::string> password; // from the URL, if it had a non-empty one
    // A Sentinel URL's: the master's name and the sentinels to ask for it, in the URL's order.
    // host and port are then those of the master the sentinels named last (empty: not yet asked).
    std::string master_name;
    std::vector<HostPort> sentinels;
    // This is a sentinel itself, asked where a master is (for messages).
    bool is_sentinel = false;

    bool via_sentinel() const { return !master_name.empty(); }
    // "127.0.0.1:6379", "[::1]:6380 (db 2)", "unix:/run/redis.sock", "master mymaster at
    // 10.0.0.5:6379" - never the credentials.
    std::string display() const;
};

inline constexpr std::string_view default_url = "redis://127.0.0.1:6379";
inline constexpr int default_sentinel_port = 26379;

Expected<Endpoint, std::string> parse_url(std::string_view url);

// Where a password is written in `url`, as bytes of the text (still percent-encoded), so that it
// can be blotted out; none if the URL has no password. Also finds one in a URL that parse_url()
// refuses.
struct TextSpan {
    size_t start;
    size_t length;
};
std::optional<TextSpan> password_span(std::string_view url);

} // namespace redlockrun::redis
