// --url values: redis://, rediss://, unix://, redis-sentinel:// and rediss-sentinel:// URLs. A
// parsed URL's password is found by password_span(), which hide_url_passwords() relies on to blot
// it out of argv, and the URL with its password blotted out still names the same server (or the
// same sentinels and master) as the same user; a TCP or Sentinel endpoint written back as a URL
// parses to itself.
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
           a.port == b.port && a.socket_path == b.socket_path && a.db == b.db &&
           a.master_name == b.master_name && a.sentinels == b.sentinels;
}

std::string with_brackets(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// The master's name, percent-encoded but for letters and digits.
std::string encoded(const std::string& name) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : name) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            out.push_back(static_cast<char>(c));
        } else {
            out += {'%', hex[c >> 4], hex[c & 15]};
        }
    }
    return out;
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
    if (endpoint->via_sentinel()) {
        // Nothing is known of the master until the sentinels are asked.
        check(!endpoint->unix_socket && endpoint->host.empty() && endpoint->port == 0);
        check(!endpoint->sentinels.empty());
        for (const auto& sentinel : endpoint->sentinels) {
            check(!sentinel.host.empty() && sentinel.port >= 1 && sentinel.port <= 65535);
        }
    } else if (endpoint->unix_socket) {
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

    if (endpoint->via_sentinel()) {
        bool plain = true;
        std::string again = endpoint->tls ? "rediss-sentinel://" : "redis-sentinel://";
        for (size_t i = 0; i < endpoint->sentinels.size(); ++i) {
            const auto& sentinel = endpoint->sentinels[i];
            plain = plain && plain_host(sentinel.host);
            again +=
                (i ? "," : "") + with_brackets(sentinel.host) + ":" + std::to_string(sentinel.port);
        }
        again += "/" + std::to_string(endpoint->db) + "#" + encoded(endpoint->master_name);
        if (plain) {
            const auto reparsed = parse_url(again);
            check(reparsed && same_server(*reparsed, *endpoint));
        }
    } else if (!endpoint->unix_socket && plain_host(endpoint->host)) {
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
