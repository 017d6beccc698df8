#include "redis/settings.hpp"

#include "unique_fd.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace redlockrun::redis {

namespace {

// Anything larger is a mistake (or a device such as /dev/zero, which would never end).
constexpr size_t max_password_file_size = 64 * 1024;

Expected<std::string, std::string> read_password_file(const std::string& path) {
    const auto cannot_read = [&path] {
        return unexpected(
            fmt::format("--password-file: cannot read {}: {}", path, std::strerror(errno)));
    };
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) {
        return cannot_read();
    }
    std::string password;
    char buffer[512];
    for (;;) {
        const ssize_t got = ::read(file.get(), buffer, sizeof buffer);
        if (got == 0) {
            break;
        }
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return cannot_read();
        }
        password.append(buffer, static_cast<size_t>(got));
        if (password.size() > max_password_file_size) {
            return unexpected(
                fmt::format("--password-file: {} is larger than {} bytes: not a password file",
                            path, max_password_file_size));
        }
    }
    // A file written by `echo` ends in a newline that is not part of the password.
    if (!password.empty() && password.back() == '\n') {
        password.pop_back();
        if (!password.empty() && password.back() == '\r') {
            password.pop_back();
        }
    }
    if (password.empty()) {
        return unexpected(fmt::format("--password-file: {} is empty", path));
    }
    if (password.find('\n') != std::string::npos) {
        return unexpected(fmt::format("--password-file: {} has more than one line", path));
    }
    return password;
}

// The first --tls-* option given, for a message.
const char* first_tls_option(const TlsOptions& tls) {
    if (tls.ca_file) {
        return "--tls-ca-file";
    }
    if (tls.cert_file) {
        return "--tls-cert";
    }
    if (tls.key_file) {
        return "--tls-key";
    }
    return "--tls-server-name";
}

Expected<bool, std::string> set_up_tls(const TlsOptions& options, ConnectionSettings& settings) {
    if (!settings.endpoint.tls) {
        if (options.any()) {
            // Silently talking in clear to a server the user meant to reach over TLS is worse
            // than refusing.
            return unexpected(fmt::format("{} needs a rediss:// URL, and {} gives a {} one",
                                          first_tls_option(options), settings.url_source,
                                          settings.endpoint.unix_socket ? "unix://" : "redis://"));
        }
        return true;
    }
    auto client = TlsClient::create(options);
    if (!client) {
        return unexpected(client.error());
    }
    settings.tls = std::move(*client);
    return true;
}

} // namespace

Expected<ConnectionSettings, std::string> resolve_settings(const ConnectionRequest& request,
                                                           const Environment& environment) {
    ConnectionSettings settings;
    settings.connect_timeout = request.connect_timeout;

    auto variable = [&environment](const char* name) -> std::optional<std::string> {
        const char* value = environment(name);
        return value && *value ? std::optional<std::string>(value) : std::nullopt;
    };
    std::string url(default_url);
    if (request.url) {
        url = *request.url;
        settings.url_source = "--url";
    } else if (auto value = variable("REDLOCKRUN_URL")) {
        url = *value;
        settings.url_source = "$REDLOCKRUN_URL";
    } else if (auto value_of_redis_url = variable("REDIS_URL")) {
        url = *value_of_redis_url;
        settings.url_source = "$REDIS_URL";
    }
    auto endpoint = parse_url(url);
    if (!endpoint) {
        return unexpected(fmt::format("{}: {}", settings.url_source, endpoint.error()));
    }
    settings.endpoint = std::move(*endpoint);
    if (auto tls = set_up_tls(request.tls, settings); !tls) {
        return unexpected(tls.error());
    }
    settings.password_from_command_line = request.url && settings.endpoint.password.has_value();

    if (request.password_file) {
        auto password = read_password_file(*request.password_file);
        if (!password) {
            return unexpected(password.error());
        }
        settings.endpoint.password = std::move(*password);
    } else if (!settings.endpoint.password) {
        settings.endpoint.password = variable("REDISCLI_AUTH");
    }
    if (!settings.endpoint.user.empty() && !settings.endpoint.password) {
        return unexpected(fmt::format("{}: user {} has no password; give one with --password-file, "
                                      "$REDISCLI_AUTH or in the URL",
                                      settings.url_source, settings.endpoint.user));
    }
    return settings;
}

} // namespace redlockrun::redis
