// How to reach Redis, resolved from the command line and the environment:
//   URL       --url, else $REDLOCKRUN_URL, else $REDIS_URL, else redis://127.0.0.1:6379
//   password  --password-file, else the URL's, else $REDISCLI_AUTH
//   TLS       rediss:// URLs, with the --tls-* files read up front
#pragma once

#include "duration.hpp"
#include "expected.hpp"
#include "redis/endpoint.hpp"
#include "redis/tls.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace redlockrun::redis {

struct ConnectionSettings {
    Endpoint endpoint;                  // its password is the resolved one
    Millis connect_timeout{5000};       // bounds connecting, and each request's reply
    std::string url_source = "default"; // "--url", "$REDIS_URL"... for messages
    bool password_from_command_line = false;
    std::shared_ptr<const TlsClient> tls; // set for rediss:// only
};

struct ConnectionRequest {
    std::optional<std::string> url;           // --url
    std::optional<std::string> password_file; // --password-file
    Millis connect_timeout{5000};
    TlsOptions tls; // --tls-*: only with a rediss:// URL
};

using Environment = std::function<const char*(const char* name)>;

// A one-line message for a usage error (exit 64) on failure. It never contains a password. A file
// an option names must be a regular file (a FIFO or a device could block or never end). Throws
// Fatal(os_error) if the system runs out of descriptors or memory while reading one.
Expected<ConnectionSettings, std::string> resolve_settings(const ConnectionRequest& request,
                                                           const Environment& environment);

} // namespace redlockrun::redis
