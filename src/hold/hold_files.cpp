#include "hold/hold_files.hpp"

#include "base/read_all.hpp"
#include "base/unique_fd.hpp"
#include "hold/keeper_socket.hpp"
#include "lock/token.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

constexpr std::string_view handle_prefix = "hold.";
constexpr size_t id_length = 32;

// Whether `path` is a folder (not a link to one) of this user's that no one else can write to or
// read from.
std::optional<std::string> check_folder(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
        return fmt::format("cannot use {}: {}", path, std::strerror(errno));
    }
    if (!S_ISDIR(info.st_mode)) {
        return fmt::format("{} is not a folder", path);
    }
    if (info.st_uid != ::geteuid()) {
        return fmt::format("{} belongs to another user", path);
    }
    if ((info.st_mode & 077) != 0) {
        return fmt::format("{} is open to other users (mode {:o}; it must be 700)", path,
                           info.st_mode & 07777);
    }
    return std::nullopt;
}

bool is_hex_id(std::string_view id) {
    return id.size() == id_length &&
           id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string escaped(std::string_view value) {
    std::string out;
    for (unsigned char c : value) {
        if (c == '%' || c < 0x20 || c == 0x7f) {
            out += fmt::format("%{:02X}", c);
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::optional<std::string> unescaped(std::string_view value) {
    std::string out;
    for (size_t i = 0; i < value.size(); ++i) {
        if (value[i] != '%') {
            out += value[i];
            continue;
        }
        unsigned byte = 0;
        if (i + 2 >= value.size()) {
            return std::nullopt;
        }
        auto [end, error] = std::from_chars(value.data() + i + 1, value.data() + i + 3, byte, 16);
        if (error != std::errc{} || end != value.data() + i + 3) {
            return std::nullopt;
        }
        out += static_cast<char>(byte);
        i += 2;
    }
    return out;
}

template <typename Number>
bool number_from(const std::string& text, Number& number) {
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    return !text.empty() && error == std::errc{} && end == text.data() + text.size();
}

} // namespace

Expected<std::string, std::string> holds_folder(const Getenv& getenv) {
    std::string folder;
    const char* runtime = getenv("XDG_RUNTIME_DIR");
    if (runtime != nullptr && runtime[0] == '/') {
        folder = std::string(runtime) + "/redlockrun";
    } else {
        const char* tmp = getenv("TMPDIR");
        folder = fmt::format("{}/redlockrun-{}", tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp",
                             ::geteuid());
    }
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
        return unexpected(fmt::format("cannot make {}: {}", folder, std::strerror(errno)));
    }
    if (auto unusable = check_folder(folder)) {
        return unexpected(*unusable);
    }
    return folder;
}

HoldPaths new_hold_paths(const std::string& folder) {
    const std::string handle = fmt::format("{}/{}{}", folder, handle_prefix, lock::make_token());
    return HoldPaths{handle, handle + ".sock"};
}

Expected<HoldPaths, std::string> paths_of_handle(const std::string& handle) {
    const auto slash = handle.rfind('/');
    const std::string_view name = slash == std::string::npos
                                      ? std::string_view(handle)
                                      : std::string_view(handle).substr(slash + 1);
    if (handle.empty() || handle.front() != '/' || !name.starts_with(handle_prefix) ||
        !is_hex_id(name.substr(handle_prefix.size()))) {
        return unexpected(fmt::format("'{}' is not a hold's handle (redlockrun --hold prints one "
                                      "in REDLOCKRUN_HOLD)",
                                      handle));
    }
    if (auto unusable = check_folder(handle.substr(0, slash))) {
        return unexpected(fmt::format("the handle's folder cannot be trusted: {}", *unusable));
    }
    return HoldPaths{handle, handle + ".sock"};
}

std::string record_text(const HoldRecord& record) {
    return fmt::format("key={}\nfence={}\nowner={}\nowner_start={}\nkeeper={}\n"
                       "keeper_start={}\ntaken_ms={}\ntoken={}\nunit={}\nmode={}\nended={}\n"
                       "ended_ms={}\nwhy={}\n",
                       escaped(record.key), escaped(record.fence), record.owner, record.owner_start,
                       record.keeper, record.keeper_start, record.taken_ms, escaped(record.token),
                       escaped(record.unit), escaped(record.mode), escaped(record.ended),
                       record.ended_ms, escaped(record.why));
}

std::optional<HoldRecord> parse_record(const std::string& text) {
    HoldRecord record;
    bool has_key = false;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            return std::nullopt; // cut short
        }
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        const auto equals = line.find('=');
        if (equals == std::string::npos) {
            return std::nullopt;
        }
        const std::string name = line.substr(0, equals);
        auto value = unescaped(std::string_view(line).substr(equals + 1));
        if (!value) {
            return std::nullopt;
        }
        bool ok = true;
        if (name == "key") {
            record.key = *value;
            has_key = true;
        } else if (name == "fence") {
            record.fence = *value;
        } else if (name == "owner") {
            ok = number_from(*value, record.owner);
        } else if (name == "owner_start") {
            ok = number_from(*value, record.owner_start);
        } else if (name == "keeper") {
            ok = number_from(*value, record.keeper);
        } else if (name == "keeper_start") {
            ok = number_from(*value, record.keeper_start);
        } else if (name == "taken_ms") {
            ok = number_from(*value, record.taken_ms);
        } else if (name == "token") {
            record.token = *value;
        } else if (name == "unit") {
            record.unit = *value;
        } else if (name == "mode") {
            record.mode = *value;
        } else if (name == "ended") {
            record.ended = *value;
        } else if (name == "ended_ms") {
            ok = number_from(*value, record.ended_ms);
        } else if (name == "why") {
            record.why = *value;
        } // other names: written by a later version; ignored
        if (!ok) {
            return std::nullopt;
        }
    }
    if (!has_key) {
        return std::nullopt;
    }
    return record;
}

int write_record(const std::string& path, const HoldRecord& record) {
    const std::string temporary = path + ".new";
    UniqueFd file(
        ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!file.valid()) {
        return errno;
    }
    const std::string text = record_text(record);
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(file.get(), text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            const int error = n < 0 ? errno : EIO;
            ::unlink(temporary.c_str());
            return error;
        }
        written += static_cast<size_t>(n);
    }
    file.reset();
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        return error;
    }
    return 0;
}

std::optional<HoldRecord> read_record(const std::string& path) {
    UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!file.valid()) {
        return std::nullopt;
    }
    auto text = read_all(file.get(), 64 * 1024);
    if (!text) {
        return std::nullopt;
    }
    return parse_record(*text);
}

std::vector<std::string> handles_in(const std::string& folder) {
    std::vector<std::string> handles;
    DIR* entries = ::opendir(folder.c_str());
    if (entries == nullptr) {
        return handles;
    }
    while (const dirent* entry = ::readdir(entries)) {
        const std::string_view name = entry->d_name;
        if (name.starts_with(handle_prefix) && is_hex_id(name.substr(handle_prefix.size()))) {
            handles.push_back(folder + "/" + std::string(name));
        }
    }
    ::closedir(entries);
    return handles;
}

namespace {

long long now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

void mark_keeper_gone(HoldRecord& record) {
    record.ended = "lost";
    record.ended_ms = now_ms();
    record.why = fmt::format("its keeper (pid {}) was gone (killed?), so the lock was not renewed "
                             "and lapsed within its TTL",
                             record.keeper);
}

void clean_stale_holds(const std::string& folder,
                       const std::function<bool(pid_t, unsigned long long)>& keeper_running) {
    constexpr long long kept_after_its_end_ms = 24LL * 3600 * 1000;
    for (const auto& handle : handles_in(folder)) {
        auto record = read_record(handle);
        if (!record || record->keeper <= 0 ||
            keeper_running(record->keeper, record->keeper_start)) {
            continue;
        }
        if (record->ended.empty()) {
            mark_keeper_gone(*record);
            write_record(handle, *record);
            ::unlink((handle + ".sock").c_str());
        } else if (now_ms() - record->ended_ms >= kept_after_its_end_ms) {
            ::unlink((handle + ".sock").c_str());
            ::unlink(handle.c_str());
        }
    }
    DIR* entries = ::opendir(folder.c_str());
    if (entries == nullptr) {
        return;
    }
    std::vector<std::string> sockets;
    while (const dirent* entry = ::readdir(entries)) {
        const std::string_view name = entry->d_name;
        if (name.starts_with(handle_prefix) && name.ends_with(".sock")) {
            sockets.push_back(folder + "/" + std::string(name));
        }
    }
    ::closedir(entries);
    // A --hold binds its socket, then listens on it: one found between the two refuses a
    // connection, yet is live. Only a socket older than this is asked.
    constexpr long long settled_ms = 10000;
    for (const auto& socket : sockets) {
        // A socket beside a record is its keeper's, and goes with it (above); only one without a
        // record (a --hold that never got the lock) is asked whether anyone listens.
        const std::string handle =
            socket.substr(0, socket.size() - std::string_view(".sock").size());
        struct stat record {};
        struct stat made {};
        if (::lstat(handle.c_str(), &record) == 0 || ::lstat(socket.c_str(), &made) != 0) {
            continue;
        }
        const long long age_ms = now_ms() - (static_cast<long long>(made.st_mtim.tv_sec) * 1000 +
                                             made.st_mtim.tv_nsec / 1000000);
        if (age_ms >= settled_ms && !someone_listens(socket)) {
            ::unlink(socket.c_str());
        }
    }
}

} // namespace redlockrun::hold
