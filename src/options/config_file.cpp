#include "options/config_file.hpp"

#include "base/fatal.hpp"
#include "base/read_all.hpp"
#include "base/unique_fd.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace redlockrun {

namespace {

constexpr size_t max_config_file_size = 64 * 1024;

bool is_dev_null(const struct stat& status) {
    struct stat null_device {};
    return S_ISCHR(status.st_mode) && ::stat("/dev/null", &null_device) == 0 &&
           S_ISCHR(null_device.st_mode) && status.st_rdev == null_device.st_rdev;
}

[[noreturn]] void cannot_read(const std::string& path, int error) {
    const auto status =
        error == EMFILE || error == ENFILE ? ExitStatus::os_error : ExitStatus::usage;
    throw Fatal(status,
                fmt::format("cannot read the config file {}: {}", path, std::strerror(error)));
}

} // namespace

ConfigPlaces config_places(const std::string& system_file,
                           const std::function<const char*(const char* name)>& environment) {
    ConfigPlaces places;
    places.system_file = system_file;
    const char* config_home = environment("XDG_CONFIG_HOME");
    const char* home = environment("HOME");
    if (config_home != nullptr && config_home[0] == '/') {
        places.user_file = fmt::format("{}/redlockrun/config", config_home);
    } else if (home != nullptr && home[0] != '\0') {
        places.user_file = fmt::format("{}/.config/redlockrun/config", home);
    }
    return places;
}

std::optional<ConfigFile> read_config_file(const std::string& path, bool required) {
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one.
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!file.valid()) {
        const int error = errno;
        if (!required) {
            if (error == ENOENT || error == ENOTDIR) {
                return std::nullopt;
            }
            // With the descriptor table full, open() fails before it looks for the file; a usual
            // place that holds no file is still no reason to stop.
            struct stat status {};
            if ((error == EMFILE || error == ENFILE) && ::stat(path.c_str(), &status) != 0 &&
                (errno == ENOENT || errno == ENOTDIR)) {
                return std::nullopt;
            }
        }
        cannot_read(path, error);
    }
    struct stat status {};
    if (::fstat(file.get(), &status) != 0) {
        cannot_read(path, errno);
    }
    ConfigFile config{path, {}, static_cast<unsigned>(status.st_mode & 07777)};
    if (is_dev_null(status)) {
        return config;
    }
    if (!S_ISREG(status.st_mode)) {
        throw Fatal(ExitStatus::usage,
                    fmt::format("the config file {} is not a regular file; it is not read", path));
    }
    auto text = read_all(file.get(), max_config_file_size);
    if (!text && !text.error().too_large()) {
        cannot_read(path, text.error().error);
    }
    if (!text) {
        throw Fatal(ExitStatus::usage, fmt::format("the config file {} is larger than {} bytes",
                                                   path, max_config_file_size));
    }
    config.text = std::move(*text);
    return config;
}

} // namespace redlockrun
