// --url values: redis://, rediss:// and unix:// URLs. A parsed URL's password is found by
// password_span(), which hide_url_passwords() relies on to blot it out of argv, and the URL with
// its password blotted out still names the same server as the same user; a TCP endpoint written
// back as a URL parses to itself. The Sentinel URLs (DESIGN.md §8) belong here too once parse_url()
// reads them: add their checks to this target and their forms to its corpus.
#include "redis/endpoint.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using redlockrun::redis::Endpoint;
using redlockrun::redis::parse_url;
using redlockrun::redis::password_span;

namespace {

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

bool same_server(const Endpoint& a, const Endpoint& b) {
    return a.unix_socket == b.unix_socket && a.tls == b.tls && a.host == b.host &&
           a.port == b.port && a.socket_path == b.socket_path && a.db == b.db;
}

bool plain_host(const std::string& host) {
    for (char c : host) {
        const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':';
        if (!allowed) {
            return false;
        }
    }
    return !host.empty();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string url(reinterpret_cast<const char*>(data), size);
    const auto span = password_span(url);
    if (span) {
        check(span->length > 0 && span->start + span->length <= url.size());
    }
    const auto endpoint = parse_url(url);
    if (!endpoint) {
        check(!endpoint.error().empty());
        return 0;
    }
    check(!endpoint->display().empty());
    if (endpoint->unix_socket) {
        check(endpoint->socket_path.substr(0, 1) == "/");
    } else {
        check(endpoint->port >= 1 && endpoint->port <= 65535);
    }
    check(endpoint->db >= 0);

    if (endpoint->password) {
        check(span.has_value());
        std::string blotted = url;
        blotted.replace(span->start, span->length, std::string(span->length, 'x'));
        const auto hidden = parse_url(blotted);
        check(hidden && same_server(*hidden, *endpoint) && hidden->user == endpoint->user);
        check(hidden->password == std::string(span->length, 'x'));
    }

    if (!endpoint->unix_socket && plain_host(endpoint->host)) {
        const bool brackets = endpoint->host.find(':') != std::string::npos;
        const std::string again = std::string(endpoint->tls ? "rediss://" : "redis://") +
                                  (brackets ? "[" + endpoint->host + "]" : endpoint->host) + ":" +
                                  std::to_string(endpoint->port) + "/" +
                                  std::to_string(endpoint->db);
        const auto reparsed = parse_url(again);
        check(reparsed && same_server(*reparsed, *endpoint));
    }
    return 0;
}
