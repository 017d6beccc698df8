#include "redis/settings.hpp"

#include "base/fatal.hpp"
#include "base/read_all.hpp"
#include "base/unique_fd.hpp"

#include <fmt/core.h>

#include <algorithm>
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

// A password file, for `option` (--password-file or --sentinel-password-file).
Expected<std::string, std::string> read_password_file(const char* option, const std::string& path) {
    auto opened = open_regular_file(option, path);
    if (!opened) {
        return unexpected(opened.error());
    }
    const UniqueFd file = std::move(*opened);
    auto text = read_all(file.get(), max_password_file_size);
    if (!text && !text.error().too_large()) {
        return unexpected(cannot_read(option, path, text.error().error));
    }
    if (!text) {
        return unexpected(fmt::format("{}: {} is larger than {} bytes: not a password file", option,
                                      path, max_password_file_size));
    }
    std::string password = std::move(*text);
    // A file written by `echo` ends in a newline that is not part of the password.
    if (!password.empty() && password.back() == '\n') {
        password.pop_back();
        if (!password.empty() && password.back() == '\r') {
            password.pop_back();
        }
    }
    if (password.empty()) {
        return unexpected(fmt::format("{}: {} is empty", option, path));
    }
    if (password.find('\n') != std::string::npos) {
        return unexpected(fmt::format("{}: {} has more than one line", option, path));
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

// The command line's --tls-* options, with what it leaves out taken from the first config file that
// gives it. A config file's TLS entries are defaults for rediss:// URLs, so a URL without TLS from
// elsewhere does not turn them into an error; --tls-* on the command line with such a URL is one.
Expected<bool, std::string> set_up_tls(const ConnectionRequest& request,
                                       ConnectionSettings& settings) {
    if (!settings.endpoint.tls) {
        if (request.tls.any()) {
            // Silently talking in clear to a server the user meant to reach over TLS is worse
            // than refusing.
            return unexpected(fmt::format("{} needs a rediss:// URL, and {} gives a {} one",
                                          first_tls_option(request.tls), settings.url_source,
                                          settings.endpoint.unix_socket      ? "unix://"
                                          : settings.endpoint.via_sentinel() ? "redis-sentinel://"
                                                                             : "redis://"));
        }
        return true;
    }
    TlsOptions options = request.tls;
    for (const auto& file : request.files) {
        for (auto field : {&TlsOptions::ca_file, &TlsOptions::cert_file, &TlsOptions::key_file,
                           &TlsOptions::server_name}) {
            if (!(options.*field)) {
                options.*field = file.tls.*field;
            }
        }
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

// One of the places connection settings come from, in the order they win: the command line,
// $REDLOCKRUN_URL and $REDISCLI_AUTH, each config file, $REDIS_URL.
struct Place {
    std::optional<Setting> url;
    std::optional<Setting> password_file;
    std::optional<Setting> password; // $REDISCLI_AUTH
    std::optional<Setting> sentinel_user;
    std::optional<Setting> sentinel_password_file;
    std::optional<Setting> sentinel_password; // $REDLOCKRUN_SENTINEL_PASSWORD
};

std::vector<Place> places_in_order(const ConnectionRequest& request,
                                   const Environment& environment) {
    auto variable = [&environment](const char* name) -> std::optional<Setting> {
        const char* value = environment(name);
        if (value == nullptr || *value == '\0') {
            return std::nullopt;
        }
        return Setting{value, fmt::format("${}", name)};
    };
    std::vector<Place> places;
    places.reserve(3 + request.files.size());
    Place& command_line = places.emplace_back();
    if (request.url) {
        command_line.url = Setting{*request.url, "--url"};
    }
    if (request.password_file) {
        command_line.password_file = Setting{*request.password_file, "--password-file"};
    }
    if (request.sentinel_user) {
        command_line.sentinel_user = Setting{*request.sentinel_user, "--sentinel-user"};
    }
    if (request.sentinel_password_file) {
        command_line.sentinel_password_file =
            Setting{*request.sentinel_password_file, "--sentinel-password-file"};
    }
    Place& environment_place = places.emplace_back();
    environment_place.url = variable("REDLOCKRUN_URL");
    environment_place.password = variable("REDISCLI_AUTH");
    environment_place.sentinel_user = variable("REDLOCKRUN_SENTINEL_USER");
    environment_place.sentinel_password = variable("REDLOCKRUN_SENTINEL_PASSWORD");
    for (const auto& file : request.files) {
        places.push_back(Place{file.url, file.password_file, std::nullopt, file.sentinel_user,
                               file.sentinel_password_file, std::nullopt});
    }
    // Applications set $REDIS_URL for their own Redis, not for locks: a fleet's config file wins
    // over it, or one host could lock on another server than the others and exclude nobody.
    places.push_back(Place{variable("REDIS_URL"), std::nullopt, std::nullopt, std::nullopt,
                           std::nullopt, std::nullopt});
    return places;
}

// read_password_file() speaks of the option; a config file's entry is named by where it is.
std::string as_from(const Setting& password_file, std::string_view option,
                    const std::string& message) {
    if (password_file.origin == option) {
        return message;
    }
    const std::string prefix = fmt::format("{}: ", option);
    return fmt::format("{}: {}", password_file.origin,
                       message.starts_with(prefix) ? message.substr(prefix.size()) : message);
}

// Only a warning, as the password was readable before this run; and only for a file every user
// can read: one its group can read is the usual way to share a secret with a service group, and
// cron would mail a warning about it on every run.
std::optional<std::string> exposure_warning(const Setting& password_file) {
    struct stat status {};
    if (::stat(password_file.value.c_str(), &status) != 0 || (status.st_mode & S_IROTH) == 0) {
        return std::nullopt;
    }
    return fmt::format("{}: {} can be read by every user (mode {:04o}); make it unreadable to "
                       "others with chmod o-r",
                       password_file.origin, password_file.value, status.st_mode & 07777);
}

// How to log in to the sentinels of a Sentinel URL: each of user and password from the first place
// that gives one. Given on the command line for a URL of another kind, they are an error (the user
// meant to reach sentinels); from the environment or a config file they are left unused.
Expected<bool, std::string> sentinel_login(const ConnectionRequest& request,
                                           const std::vector<Place>& places,
                                           ConnectionSettings& settings) {
    if (!settings.endpoint.via_sentinel()) {
        if (request.sentinel_user || request.sentinel_password_file) {
            return unexpected(
                fmt::format("{} needs a redis-sentinel:// URL, and {} gives another",
                            request.sentinel_user ? "--sentinel-user" : "--sentinel-password-file",
                            settings.url_source));
        }
        return true;
    }
    for (const auto& place : places) {
        if (place.sentinel_user) {
            settings.sentinel_user = place.sentinel_user->value;
            break;
        }
    }
    for (const auto& place : places) {
        if (place.sentinel_password_file) {
            auto password =
                read_password_file("--sentinel-password-file", place.sentinel_password_file->value);
            if (!password) {
                return unexpected(as_from(*place.sentinel_password_file, "--sentinel-password-file",
                                          password.error()));
            }
            if (auto warning = exposure_warning(*place.sentinel_password_file)) {
                settings.warnings.push_back(std::move(*warning));
            }
            settings.sentinel_password = std::move(*password);
            break;
        }
        if (place.sentinel_password) {
            settings.sentinel_password = place.sentinel_password->value;
            break;
        }
    }
    if (!settings.sentinel_user.empty() && !settings.sentinel_password) {
        return unexpected(
            std::string("a sentinel user is named but no sentinel password is given: give one "
                        "with --sentinel-password-file or $REDLOCKRUN_SENTINEL_PASSWORD"));
    }
    return true;
}

} // namespace

Expected<ConnectionSettings, std::string> resolve_settings(const ConnectionRequest& request,
                                                           const Environment& environment) {
    ConnectionSettings settings;
    settings.connect_timeout = request.connect_timeout;

    const std::vector<Place> places = places_in_order(request, environment);
    const auto url_place = std::find_if(places.begin(), places.end(),
                                        [](const Place& place) { return place.url.has_value(); });
    std::string url(default_url);
    if (url_place != places.end()) {
        url = url_place->url->value;
        settings.url_source = url_place->url->origin;
    }
    auto endpoint = parse_url(url);
    if (!endpoint) {
        return unexpected(fmt::format("{}: {}", settings.url_source, endpoint.error()));
    }
    settings.endpoint = std::move(*endpoint);
    if (auto tls = set_up_tls(request, settings); !tls) {
        return unexpected(tls.error());
    }
    settings.password_from_command_line = request.url && settings.endpoint.password.has_value();

    // The first place that says anything about the password decides it; a URL's password counts
    // only if that URL is the one used.
    const std::optional<std::string> url_password = std::move(settings.endpoint.password);
    settings.endpoint.password.reset();
    for (auto place = places.begin(); place != places.end(); ++place) {
        if (place->password_file) {
            auto password = read_password_file("--password-file", place->password_file->value);
            if (!password) {
                return unexpected(
                    as_from(*place->password_file, "--password-file", password.error()));
            }
            if (auto warning = exposure_warning(*place->password_file)) {
                settings.warnings.push_back(std::move(*warning));
            }
            settings.endpoint.password = std::move(*password);
            settings.password_source = place->password_file->origin;
            break;
        }
        if (place == url_place && url_password) {
            settings.endpoint.password = url_password;
            settings.password_source = "the URL";
            break;
        }
        if (place->password) {
            settings.endpoint.password = place->password->value;
            settings.password_source = place->password->origin;
            break;
        }
    }
    if (!settings.endpoint.user.empty() && !settings.endpoint.password) {
        // Not even the user name is repeated: a mistyped URL may have put a password there.
        return unexpected(fmt::format("{}: the URL names a user but no password; give one with "
                                      "--password-file, $REDISCLI_AUTH or in the URL",
                                      settings.url_source));
    }
    if (auto sentinels = sentinel_login(request, places, settings); !sentinels) {
        return unexpected(sentinels.error());
    }
    return settings;
}

std::string describe_url_source(const std::string& url_source) {
    if (url_source == "default") {
        return "the default URL; set --url, $REDLOCKRUN_URL or url in a config file";
    }
    return fmt::format("the URL from {}", url_source);
}

std::string describe_connection(const ConnectionSettings& settings) {
    return fmt::format("using Redis at {} ({}); {}", settings.endpoint.display(),
                       describe_url_source(settings.url_source),
                       settings.password_source.empty()
                           ? std::string("no password")
                           : fmt::format("password from {}", settings.password_source));
}

} // namespace redlockrun::redis
