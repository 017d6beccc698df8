#include "redis/settings.hpp"

#include "fatal.hpp"
#include "unique_fd.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace redlockrun::redis {

namespace {

// Anything larger is a mistake, not a password file.
constexpr size_t max_password_file_size = 64 * 1024;

// "a FIFO", "a character device"... for a file that is not a regular one.
const char* file_type_name(mode_t mode) {
    if (S_ISFIFO(mode)) {
        return "a FIFO";
    }
    if (S_ISCHR(mode)) {
        return "a character device";
    }
    if (S_ISBLK(mode)) {
        return "a block device";
    }
    if (S_ISSOCK(mode)) {
        return "a socket";
    }
    return "not a file";
}

// The system running out of descriptors or memory is not a usage error: it ends the run with 71.
std::string cannot_read(const char* option, const std::string& path, int error) {
    std::string message = fmt::format("{}: cannot read {}: {}", option, path, std::strerror(error));
    if (error == EMFILE || error == ENFILE || error == ENOMEM) {
        throw Fatal(ExitStatus::os_error, message);
    }
    return message;
}

// Opens a file an option names, for reading. Only a regular file will do: opening a FIFO that
// nobody writes to would block for ever (O_NONBLOCK keeps the open itself from blocking, fstat
// then tells what it is), and a device may never end.
Expected<UniqueFd, std::string> open_regular_file(const char* option, const std::string& path) {
    UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    struct stat status {};
    if (!file.valid() || ::fstat(file.get(), &status) != 0) {
        return unexpected(cannot_read(option, path, errno));
    }
    if (S_ISDIR(status.st_mode)) {
        return unexpected(cannot_read(option, path, EISDIR));
    }
    if (!S_ISREG(status.st_mode)) {
        return unexpected(fmt::format("{}: {} is {}, not a regular file", option, path,
                                      file_type_name(status.st_mode)));
    }
    return file;
}

Expected<std::string, std::string> read_password_file(const std::string& path) {
    const auto cannot_read_file = [&path] {
        return unexpected(cannot_read("--password-file", path, errno));
    };
    auto opened = open_regular_file("--password-file", path);
    if (!opened) {
        return unexpected(opened.error());
    }
    const UniqueFd file = std::move(*opened);
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
            return cannot_read_file();
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
    // Checked here as well as where they are loaded, so that a FIFO or a device is refused before
    // anything opens it the blocking way.
    for (const auto& [option, file] :
         {std::pair{"--tls-ca-file", &options.ca_file}, std::pair{"--tls-cert", &options.cert_file},
          std::pair{"--tls-key", &options.key_file}}) {
        if (*file) {
            if (auto opened = open_regular_file(option, **file); !opened) {
                return unexpected(opened.error());
            }
        }
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
