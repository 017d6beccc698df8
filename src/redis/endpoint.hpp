// Where the Redis server is and who to log in as, parsed from a URL:
//   redis://[[user:]password@]host[:port][/db]     rediss://... (TLS)     unix:///path[?db=N]
// As for redis-cli, user information without a ':' is a password. User and password may be
// percent-encoded. Error messages never repeat the URL or any part of its user information.
#pragma once

#include "expected.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace redlockrun::redis {

struct Endpoint {
    bool unix_socket = false;
    bool tls = false;
    std::string host = "127.0.0.1"; // TCP only; an IPv6 literal is stored without brackets
    int port = 6379;                // TCP only
    std::string socket_path;        // unix only
    int db = 0;
    std::string user;                    // empty: the default user
    std::optional<std::string> password; // from the URL, if it had a non-empty one

    // "127.0.0.1:6379", "[::1]:6380/2", "unix:/run/redis.sock" - never the credentials.
    std::string display() const;
};

inline constexpr std::string_view default_url = "redis://127.0.0.1:6379";

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
