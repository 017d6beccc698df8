// How to reach Redis, resolved from the command line, the environment and the config files, each
// setting from the first of these places that gives it (DESIGN.md §10):
//   1. the command line (--url, --password-file)
//   2. $REDLOCKRUN_URL and $REDISCLI_AUTH
//   3. the config files, the user's before the system's (url, password-file)
//   4. $REDIS_URL, which applications set for their own Redis: below the config files, so that a
//      fleet's file is not overruled by an application's variable that happens to be set
//   5. redis://127.0.0.1:6379
//   URL       the first place's that gives one
//   password  the first place's that says anything about it: its password file, else the password
//             in its URL (only if that URL is the one used), else ($REDISCLI_AUTH) the password
//   TLS       rediss:// URLs, with the --tls-* files read up front; a config file's tls-* entries
//             fill in what the command line leaves out, and only for a rediss:// URL
//   sentinels (a Sentinel URL only) the user: --sentinel-user, else $REDLOCKRUN_SENTINEL_USER, else
//             the config files'; the password: --sentinel-password-file, else
//             $REDLOCKRUN_SENTINEL_PASSWORD, else the config files' sentinel-password-file
#pragma once

#include "base/duration.hpp"
#include "base/expected.hpp"
#include "base/setting.hpp"
#include "redis/endpoint.hpp"
#include "redis/tls.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlockrun::redis {

struct ConnectionSettings {
    Endpoint endpoint;                  // its password is the resolved one
    Millis connect_timeout{5000};       // bounds connecting, and each request's reply
    std::string url_source = "default"; // "--url", "$REDIS_URL"... for messages
    // Where the password came from, for -v: "--password-file", "$REDISCLI_AUTH", "the URL" (the
    // one used), "/etc/redlockrun.conf, line 2: password-file"; empty: none is sent.
    std::string password_source;
    bool password_from_command_line = false;
    // A Sentinel URL's: how to log in to the sentinels (none: they need no login).
    std::string sentinel_user;
    std::optional<std::string> sentinel_password;
    std::shared_ptr<const TlsClient> tls; // set for rediss:// only
    std::vector<std::string> warnings;    // for the user, before anything connects
    // For -v: when set, every new connection to a server (not to a sentinel) asks INFO server in
    // the same write as its login and first request, and passes this a line naming the server it
    // reached: "connected to 127.0.0.1:6379 (Valkey 8.0.1)". Unset, nothing more is asked.
    std::function<void(const std::string& line)> on_connected;
};

// What one config file says about the connection.
struct FileConnection {
    std::optional<Setting> url;
    std::optional<Setting> password_file;
    TlsOptions tls;
    std::optional<Setting> sentinel_user;
    std::optional<Setting> sentinel_password_file;
};

struct ConnectionRequest {
    std::optional<std::string> url;           // --url
    std::optional<std::string> password_file; // --password-file
    Millis connect_timeout{5000};
    TlsOptions tls; // --tls-*: only with a rediss:// URL
    // The config files, the one that wins first; they come after the environment.
    std::vector<FileConnection> files;
    std::optional<std::string> sentinel_user;          // --sentinel-user
    std::optional<std::string> sentinel_password_file; // --sentinel-password-file
};

using Environment = std::function<const char*(const char* name)>;

// A one-line message for a usage error (exit 64) on failure. It never contains a password. A file
// an option names must be a regular file (a FIFO or a device could block or never end). Throws
// Fatal(os_error) if the system runs out of descriptors or memory while reading one.
Expected<ConnectionSettings, std::string> resolve_settings(const ConnectionRequest& request,
                                                           const Environment& environment);

// Where the URL came from, to follow the server in a message: "the URL from $REDIS_URL", or for
// the default one, how to name another.
std::string describe_url_source(const std::string& url_source);

// The server and where its URL and password came from, for -v; never the password itself.
std::string describe_connection(const ConnectionSettings& settings);

} // namespace redlockrun::redis
