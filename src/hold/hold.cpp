#include "hold/hold.hpp"

#include "base/fatal.hpp"
#include "base/json_writer.hpp"
#include "hold/keeper.hpp"
#include "hold/keeper_socket.hpp"
#include "hold/keeperless_release.hpp"
#include "hold/owner.hpp"
#include "run/lock_attempt.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

// A CI system's job: $CI, which most set, or GitHub's and GitLab's own variables.
bool in_ci_job(const Getenv& getenv) {
    for (const char* name : {"CI", "GITHUB_ACTIONS", "GITLAB_CI"}) {
        const char* value = getenv(name);
        if (value != nullptr && *value != '\0') {
            return true;
        }
    }
    return false;
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

// Whether the keeper keeps the caller's stderr, so that a loss is told where the person reads the
// script's messages (a terminal, a CI log, cron's mail): not when it is the $(...) pipe itself
// (2>&1), which the keeper must not hold open; and, for a hold that no process owns, only a
// terminal or a file, since a CI runner may wait for the step's output pipe to close.
bool keeps_stderr(bool owned) {
    struct stat out {};
    struct stat err {};
    if (::fstat(STDERR_FILENO, &err) != 0) {
        return false;
    }
    if (::fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == err.st_dev && out.st_ino == err.st_ino &&
        S_ISFIFO(err.st_mode)) {
        return false;
    }
    return owned || ::isatty(STDERR_FILENO) == 1 || S_ISREG(err.st_mode);
}

// $REDISCLI_AUTH was read into the settings already: the keeper, which lives on, must not keep it
// where /proc/PID/environ shows it. The bytes are blotted in place, then the name unset.
void forget_password_in_environment() {
    constexpr std::string_view name = "REDISCLI_AUTH=";
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        if (std::string_view(*entry).starts_with(name)) {
            char* value = *entry + name.size();
            std::memset(value, 'x', std::strlen(value));
        }
    }
    ::unsetenv("REDISCLI_AUTH");
}

// A word a POSIX shell reads back as exactly `value`.
std::string shell_quoted(const std::string& value) {
    std::string quoted = "'";
    for (char c : value) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

std::string hold_output(const Options& options, const HoldRecord& record, const std::string& handle,
                        std::optional<int> slot) {
    if (options.json) {
        JsonObject object;
        object.string("key", record.key)
            .number("fence", decimal_number(record.fence))
            .number("slot", slot)
            .string("hold", handle)
            .number("owner",
                    record.owner > 0 ? std::optional<long long>(record.owner) : std::nullopt)
            .number("max_hold_ms",
                    options.max_hold ? std::optional(options.max_hold->count()) : std::nullopt);
        return object.text() + "\n";
    }
    return fmt::format("export REDLOCKRUN_KEY={}\nexport REDLOCKRUN_FENCE={}\n{}"
                       "export REDLOCKRUN_HOLD={}\n",
                       shell_quoted(record.key), shell_quoted(record.fence),
                       slot ? fmt::format("export REDLOCKRUN_SLOT={}\n", *slot) : std::string(),
                       shell_quoted(handle));
}

bool print(const std::string& text) {
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
           std::fflush(stdout) == 0;
}

std::string ago(long long then_ms) {
    const long long age = std::max(0LL, epoch_ms() - then_ms);
    return format_duration(Millis{age}) + " ago";
}

} // namespace

int take_hold(const Options& options, const redis::ConnectionSettings& settings, const Logger& log,
              const Getenv& getenv, telemetry::RunFigures& figures) {
    close_inherited_descriptors();
    forget_password_in_environment();
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
    // An owner that exits while --hold waits takes nothing with it: the wait ends, and its place
    // in the queue with it.
    std::optional<ExitWatch> owner_exit;
    if (owner) {
        owner_exit.emplace(*owner);
        if (owner_exit->fd() >= 0) {
            attempt.give_up_when_readable(owner_exit->fd(),
                                          fmt::format("its owner, pid {}, exited", owner->pid));
        }
    }
    auto outcome = attempt.acquire("not holding it");
    figures.waited_ms = attempt.waited().count();
    if (const int* status = std::get_if<int>(&outcome)) {
        figures.outcome = attempt.was_busy() ? telemetry::Outcome::busy : telemetry::Outcome::error;
        // -E 0 (skip quietly): `eval` must stop the script with status 0, not go on unlocked.
        if (*status == 0 && !options.json) {
            print("exit 0\n");
        }
        return *status;
    }
    attempt.stop_giving_up();
    const auto& acquired = std::get<lock::Acquired>(outcome);
    const SteadyTime acquired_at = steady_now();
    run::say_acquired(options.key, options.note, acquired, attempt.policy, log);
    if (!options.owner && in_ci_job(getenv)) { // said of a hold taken, not of one refused
        log.notice("in a CI job, a hold ends with the shell that took it (this step's): to keep "
                   "{} across steps, take it with --owner none --max-hold DURATION",
                   options.key);
    }

    HoldRecord record;
    record.key = options.key;
    record.fence = acquired.grant.fence;
    record.owner = owner ? owner->pid : 0;
    record.owner_start = owner ? owner->start_time : 0;
    record.taken_ms = epoch_ms();
    record.token = attempt.lock.token();
    record.unit = std::string(lock::unit_name(options.timestamp_unit));
    record.mode = options.shared ? std::string("shared") : std::to_string(options.limit);

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
        KeeperStart start{options,
                          attempt,
                          acquired,
                          acquired_at,
                          owner,
                          std::move(listener),
                          paths,
                          record,
                          std::move(ready_write),
                          keeps_stderr(owner.has_value()),
                          figures};
        socket_file.keep = true;
        figures.keeper_counts = true; // in keep_hold(), if it keeps the hold; else --hold does
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
        figures.outcome = status == options.conflict_exit_code ? telemetry::Outcome::busy
                                                               : telemetry::Outcome::error;
        log.error("{}", message);
        return status;
    }
    figures.keeper_counts = true;
    if (!print(hold_output(options, record, paths.handle, acquired.grant.slot))) {
        // No one got the handle: the hold would only keep others out.
        const int error = errno;
        ask_keeper(paths.socket, "release", Millis{10000});
        ::unlink(paths.socket.c_str());
        ::unlink(paths.handle.c_str());
        throw Fatal(ExitStatus::os_error, fmt::format("cannot write the hold's handle: {}; "
                                                      "released {}",
                                                      std::strerror(error), options.key));
    }
    return 0;
}

int end_or_check_hold(const Options& options, const Logger& log, const Getenv& getenv,
                      const SettingsSource& settings) {
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
    // Once answered: the release, which a waiter waits for, comes first.
    struct CleanAfterwards {
        std::string folder;
        ~CleanAfterwards() { clean_stale_holds(folder, still_running); }
    } clean_afterwards{paths->handle.substr(0, paths->handle.rfind('/'))};
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
    const Asked asked = ask_keeper(paths->socket, releasing ? "release" : "check", Millis{10000});
    const std::string& key = record->key;
    if (!asked.reached) {
        forget();
        if (record->ended == "released") {
            if (releasing) {
                log.info("{} was released {} ({})", key, ago(record->ended_ms), record->why);
                return 0;
            }
            log.error("the hold on {} is not held: {} {}", key, record->why, ago(record->ended_ms));
            return options.lost_exit_code;
        }
        // Said as it will be once the record is marked so (clean_stale_holds(), afterwards).
        HoldRecord ended = *record;
        if (ended.ended.empty()) {
            mark_keeper_gone(ended);
        }
        log.error("the hold on {} {} {}: {}", key, ended.ended == "lost" ? "was lost" : "ended",
                  ago(ended.ended_ms), ended.why);
        return options.lost_exit_code;
    }
    if (!asked.reply) {
        // A keeper that does not answer within 10 s (stopped, or starved) is not renewing: the
        // hold cannot be counted on. A --release ends it, so that it cannot wake up later and
        // stop a script that has moved on; the lock then lapses within its TTL.
        if (releasing && record->keeper > 0 &&
            still_running(record->keeper, record->keeper_start)) {
            // A SIGKILL ends even a stopped process before it can run again: the keeper cannot
            // renew or release after this, and the lock is this --release's to let go.
            ::kill(record->keeper, SIGKILL);
            forget();
            if (!record->token.empty()) {
                auto found = settings();
                if (!found) {
                    throw Fatal(ExitStatus::usage, found.error());
                }
                return release_without_keeper(*record, *found, options.lost_exit_code, log);
            }
            log.error("the keeper of the hold on {} (pid {}) did not answer within 10s (was it "
                      "stopped?): it was ended, and the lock, no longer renewed, lapses within "
                      "its TTL",
                      key, record->keeper);
        } else {
            log.error("the keeper of the hold on {} (pid {}) does not answer (is it stopped?): "
                      "the hold cannot be counted on",
                      key, record->keeper);
        }
        return options.lost_exit_code;
    }
    // Whatever the answer to a --release, the hold is over, and its keeper removes its files after
    // answering: removed here as well, a --check or --release that follows at once finds no hold
    // rather than the socket of a keeper on its way out, which would not answer.
    forget();
    const std::string& reply = *asked.reply;
    Logger hold_log = log; // the JSON messages name the hold's key and fence
    hold_log.set_lock(key, std::nullopt);
    hold_log.set_fence(record->fence);
    if (reply == "intact") {
        log.info("{} is held (fence {}), taken {}", key, record->fence, ago(record->taken_ms));
        return 0;
    }
    if (reply == "released") {
        const Millis held{std::max(0LL, epoch_ms() - record->taken_ms)};
        hold_log.with(LogEvent("released").held(held).exit_status(0))
            .info("released {} after holding it for {}", key, format_duration(held));
        return 0;
    }
    if (reply.starts_with("lost ")) {
        const auto space = reply.find(' ', 5);
        const long long when = std::atoll(reply.substr(5, space - 5).c_str());
        hold_log.with(LogEvent("lost").exit_status(options.lost_exit_code))
            .error("the hold on {} was lost {}: {}", key, ago(when),
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
