#include "hold/hold.hpp"

#include "base/fatal.hpp"
#include "base/json_writer.hpp"
#include "hold/keeper.hpp"
#include "hold/owner.hpp"
#include "run/lock_attempt.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

// None of the caller's descriptors may stay open in the keeper (a pipe held open would keep
// `$(redlockrun --hold)` from returning): everything above stderr is closed before redlockrun
// opens anything of its own.
void close_inherited_descriptors() {
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) == 0) {
        return;
    }
#endif
    std::vector<int> open;
    if (DIR* folder = ::opendir("/proc/self/fd")) {
        while (const dirent* entry = ::readdir(folder)) {
            const int fd = std::atoi(entry->d_name);
            if (fd > 2 && fd != ::dirfd(folder)) {
                open.push_back(fd);
            }
        }
        ::closedir(folder);
    }
    for (int fd : open) {
        ::close(fd);
    }
}

std::optional<Process> find_owner(const Options& options) {
    if (options.owner && options.owner->none) {
        return std::nullopt;
    }
    auto owner = options.owner ? named_owner(options.owner->pid) : script_owner();
    if (!owner) {
        throw Fatal(ExitStatus::usage,
                    fmt::format("{}: {}",
                                options.owner ? "--owner" : "cannot tell whose hold it is",
                                owner.error()));
    }
    return *owner;
}

// A second hold of one key by one owner would wait for the first, which only that owner can end.
void refuse_second_hold(const std::string& folder, const Options& options,
                        const std::optional<Process>& owner) {
    if (!owner) {
        return;
    }
    for (const auto& handle : handles_in(folder)) {
        const auto record = read_record(handle);
        if (record && record->key == options.key && record->owner == owner->pid &&
            record->owner_start == owner->start_time && record->ended.empty() &&
            record->keeper > 0 && ::kill(record->keeper, 0) == 0) {
            throw Fatal(ExitStatus::usage,
                        fmt::format("process {} holds {} already (REDLOCKRUN_HOLD={}); a second "
                                    "--hold of it would wait for itself",
                                    owner->pid, options.key, handle));
        }
    }
}

// A socket's address. sun_path holds 107 bytes; a longer path (a deep $TMPDIR) is reached through
// its folder, opened here and kept open while the address is used: /proc/self/fd/N/NAME.
struct SocketAddress {
    sockaddr_un address{};
    UniqueFd folder;
    bool usable = false;

    explicit SocketAddress(const std::string& path) {
        address.sun_family = AF_UNIX;
        std::string reachable = path;
        if (path.size() >= sizeof address.sun_path) {
            const auto slash = path.rfind('/');
            folder.reset(::open(path.substr(0, slash).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!folder.valid()) {
                return;
            }
            reachable = fmt::format("/proc/self/fd/{}/{}", folder.get(), path.substr(slash + 1));
        }
        if (reachable.size() >= sizeof address.sun_path) {
            return;
        }
        std::memcpy(address.sun_path, reachable.c_str(), reachable.size() + 1);
        usable = true;
    }
    const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&address); }
};

UniqueFd listen_at(const std::string& path) {
    const SocketAddress address(path);
    UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!address.usable || !listener.valid() ||
        ::bind(listener.get(), address.get(), sizeof address.address) != 0 ||
        ::listen(listener.get(), 8) != 0) {
        throw Fatal(ExitStatus::os_error,
                    fmt::format("cannot listen on {}: {}", path,
                                address.usable ? std::strerror(errno) : "the path is too long"));
    }
    return listener;
}

// A word a POSIX shell reads back as exactly `value`.
std::string shell_quoted(const std::string& value) {
    std::string quoted = "'";
    for (char c : value) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

std::string hold_output(const Options& options, const HoldRecord& record,
                        const std::string& handle) {
    if (options.json) {
        JsonObject object;
        object.string("key", record.key)
            .string("fence", record.fence)
            .string("hold", handle)
            .number("owner",
                    record.owner > 0 ? std::optional<long long>(record.owner) : std::nullopt)
            .number("max_hold_ms",
                    options.max_hold ? std::optional(options.max_hold->count()) : std::nullopt);
        return object.text() + "\n";
    }
    return fmt::format("export REDLOCKRUN_KEY={}\nexport REDLOCKRUN_FENCE={}\n"
                       "export REDLOCKRUN_HOLD={}\n",
                       shell_quoted(record.key), shell_quoted(record.fence), shell_quoted(handle));
}

bool print(const std::string& text) {
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
           std::fflush(stdout) == 0;
}

// One request to a keeper, and its one-line reply; none if the keeper cannot be reached (gone)
// or does not answer within `limit` (stopped).
struct Asked {
    bool reached = false;
    std::optional<std::string> reply;
};

Asked ask_keeper(const std::string& socket_path, const std::string& request, Millis limit) {
    Asked asked;
    UniqueFd connection(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const SocketAddress address(socket_path);
    if (!address.usable || !connection.valid() ||
        ::connect(connection.get(), address.get(), sizeof address.address) != 0) {
        return asked;
    }
    asked.reached = true;
    const std::string line = request + "\n";
    if (::send(connection.get(), line.data(), line.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(line.size())) {
        return asked;
    }
    const SteadyTime until = steady_now() + limit;
    std::string text;
    char buffer[512];
    while (text.find('\n') == std::string::npos && text.size() < 64 * 1024) {
        pollfd readable{connection.get(), POLLIN, 0};
        const int ready = ::poll(&readable, 1, poll_timeout(until, limit));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return asked;
        }
        const ssize_t n = ::read(connection.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return asked;
        }
        text.append(buffer, static_cast<size_t>(n));
    }
    const auto end = text.find('\n');
    if (end != std::string::npos) {
        asked.reply = text.substr(0, end);
    }
    return asked;
}

std::string ago(long long then_ms) {
    const long long age = std::max(0LL, epoch_ms() - then_ms);
    return format_duration(Millis{age}) + " ago";
}

} // namespace

int take_hold(const Options& options, const redis::ConnectionSettings& settings, const Logger& log,
              const Getenv& getenv) {
    close_inherited_descriptors();
    const std::optional<Process> owner = find_owner(options);
    auto folder = holds_folder(getenv);
    if (!folder) {
        throw Fatal(ExitStatus::os_error, folder.error());
    }
    refuse_second_hold(*folder, options, owner);
    const HoldPaths paths = new_hold_paths(*folder);
    UniqueFd listener = listen_at(paths.socket);
    struct SocketFile {
        const std::string& path;
        bool keep = false;
        ~SocketFile() {
            if (!keep) {
                ::unlink(path.c_str());
            }
        }
    } socket_file{paths.socket};

    run::LockAttempt attempt(options, settings, log,
                             std::to_string(owner ? owner->pid : ::getpid()), true);
    auto outcome = attempt.acquire("not holding it");
    if (const int* status = std::get_if<int>(&outcome)) {
        return *status;
    }
    const auto& acquired = std::get<lock::Acquired>(outcome);
    const SteadyTime acquired_at = steady_now();
    run::say_acquired(options.key, options.note, acquired, attempt.policy, log);

    HoldRecord record;
    record.key = options.key;
    record.fence = acquired.grant.fence;
    record.owner = owner ? owner->pid : 0;
    record.owner_start = owner ? owner->start_time : 0;
    record.taken_ms = epoch_ms();

    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) {
        run::release(attempt.lock, log, acquired_at);
        throw Fatal(ExitStatus::os_error, fmt::format("pipe: {}", std::strerror(errno)));
    }
    UniqueFd ready_read(ready[0]);
    UniqueFd ready_write(ready[1]);
    const pid_t keeper = ::fork();
    if (keeper < 0) {
        run::release(attempt.lock, log, acquired_at);
        throw Fatal(ExitStatus::os_error, fmt::format("fork: {}", std::strerror(errno)));
    }
    if (keeper == 0) {
        ready_read.reset();
        KeeperStart start{options,     attempt, acquired,
                          acquired_at, owner,   std::move(listener),
                          paths,       record,  std::move(ready_write)};
        socket_file.keep = true;
        return keep_hold(start, log);
    }
    // From here on the connection is the keeper's: this process must not use it.
    socket_file.keep = true;
    ready_write.reset();
    listener.reset();
    std::string answer;
    char buffer[512];
    while (true) {
        const ssize_t n = ::read(ready_read.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        answer.append(buffer, static_cast<size_t>(n));
    }
    if (answer != "ok") {
        int status = to_int(ExitStatus::internal);
        std::string message = "the keeper ended before it took the lock over; the lock expires "
                              "by itself within the TTL";
        if (const auto space = answer.find(' '); space != std::string::npos) {
            status = std::atoi(answer.substr(0, space).c_str());
            message = answer.substr(space + 1);
        } else {
            ::unlink(paths.socket.c_str());
        }
        log.error("{}", message);
        return status;
    }
    if (!print(hold_output(options, record, paths.handle))) {
        // No one got the handle: the hold would only keep others out.
        ask_keeper(paths.socket, "release", Millis{10000});
        throw Fatal(ExitStatus::os_error, fmt::format("cannot write the hold's handle: {}; "
                                                      "released {}",
                                                      std::strerror(errno), options.key));
    }
    return 0;
}

int end_or_check_hold(const Options& options, const Logger& log, const Getenv& getenv) {
    const bool releasing = options.release_handle.has_value();
    std::string handle = releasing ? *options.release_handle : *options.check_handle;
    const char* name = releasing ? "--release" : "--check";
    if (handle.empty()) {
        const char* from_environment = getenv("REDLOCKRUN_HOLD");
        if (from_environment == nullptr || *from_environment == '\0') {
            throw Fatal(ExitStatus::usage,
                        fmt::format("{}: no handle given, and $REDLOCKRUN_HOLD is not set (eval "
                                    "what redlockrun --hold prints)",
                                    name));
        }
        handle = from_environment;
    }
    auto paths = paths_of_handle(handle);
    if (!paths) {
        throw Fatal(ExitStatus::usage, fmt::format("{}: {}", name, paths.error()));
    }
    const auto record = read_record(paths->handle);
    if (!record) {
        throw Fatal(ExitStatus::usage,
                    fmt::format("{}: no hold has the handle {} (it was released already, ended "
                                "with its owner, or was taken on another machine)",
                                name, handle));
    }
    const auto forget = [&] {
        if (releasing) {
            ::unlink(paths->socket.c_str());
            ::unlink(paths->handle.c_str());
        }
    };
    const Asked asked = ask_keeper(paths->socket, releasing ? "release" : "check",
                                   releasing ? Millis{120000} : Millis{10000});
    const std::string& key = record->key;
    if (!asked.reached) {
        forget();
        if (!record->ended.empty()) {
            log.error("the hold on {} {} {}: {}", key,
                      record->ended == "lost" ? "was lost" : "ended", ago(record->ended_ms),
                      record->why);
        } else {
            log.error("the hold on {} is not kept: its keeper (pid {}) is gone, so the lock is "
                      "not renewed and expires within its TTL",
                      key, record->keeper);
        }
        return options.lost_exit_code;
    }
    if (!asked.reply) {
        log.error("the keeper of the hold on {} (pid {}) does not answer (is it stopped?): the "
                  "hold cannot be counted on",
                  key, record->keeper);
        return options.lost_exit_code;
    }
    // Whatever the answer to a --release, the hold is over, and its keeper removes its files after
    // answering: removed here as well, a --check or --release that follows at once finds no hold
    // rather than the socket of a keeper on its way out, which would not answer.
    forget();
    const std::string& reply = *asked.reply;
    if (reply == "intact") {
        log.info("{} is held (fence {}), taken {}", key, record->fence, ago(record->taken_ms));
        return 0;
    }
    if (reply == "released") {
        log.info("released {} after holding it for {}", key,
                 format_duration(Millis{std::max(0LL, epoch_ms() - record->taken_ms)}));
        return 0;
    }
    if (reply.starts_with("lost ")) {
        const auto space = reply.find(' ', 5);
        const long long when = std::atoll(reply.substr(5, space - 5).c_str());
        log.error("the hold on {} was lost {}: {}", key, ago(when),
                  space == std::string::npos ? std::string() : reply.substr(space + 1));
        return options.lost_exit_code;
    }
    if (reply.starts_with("failed ")) {
        log.error("{}", reply.substr(7));
        return to_int(ExitStatus::unavailable);
    }
    throw Fatal(ExitStatus::internal,
                fmt::format("the keeper of the hold on {} answered '{}'", key, reply));
}

} // namespace redlockrun::hold
