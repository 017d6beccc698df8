#include "hold/keeper.hpp"

#include "run/lock_keeper.hpp"
#include "run/wait_status.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace redlockrun::hold {

long long epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

namespace {

// Stops the owner when the lock is lost: SIGTERM, then SIGKILL. An owner that leads its own
// process group (a script started by cron, a CI runner or an interactive shell's job control) is
// stopped with its group, so that the command it waits for stops too; any other owner alone, so
// that a calling script in the same group is spared.
class OwnerStop : public run::Stoppable {
public:
    explicit OwnerStop(const std::optional<Process>& owner) : owner_(owner) {}

    void terminate(Millis kill_after) override {
        if (send(SIGTERM)) {
            kill_at_ = steady_now() + kill_after;
        }
    }

    Deadline due() const { return kill_at_; }

    void on_due() {
        if (kill_at_ && steady_now() >= *kill_at_) {
            kill_at_.reset();
            send(SIGKILL);
        }
    }

private:
    bool send(int signal_number) {
        if (!owner_ || !is_running(*owner_)) {
            return false;
        }
        const pid_t pid = owner_->pid;
        return ::kill(::getpgid(pid) == pid ? -pid : pid, signal_number) == 0;
    }

    std::optional<Process> owner_;
    Deadline kill_at_;
};

// The keeper's stdio: /dev/null, so that no pipe of its caller's is held open.
void detach() {
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR | O_NOCTTY);
    if (null >= 0) {
        for (int fd = 0; fd <= 2; ++fd) {
            ::dup2(null, fd);
        }
        if (null > 2) {
            ::close(null);
        }
    }
}

void write_all(int fd, const std::string& text) {
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        written += static_cast<size_t>(n);
    }
}

// One line from a client (`fd` does not block), read within `limit`: a client that says nothing
// must not keep the keeper from renewing. A client sends its line as it connects, so it is read
// before it is waited for: a --release is waited on by whoever waits for the lock.
std::optional<std::string> read_request(int fd, Millis limit) {
    const SteadyTime until = steady_now() + limit;
    std::string line;
    char buffer[64];
    while (line.find('\n') == std::string::npos && line.size() < 256) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            line.append(buffer, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            return std::nullopt;
        }
        pollfd readable{fd, POLLIN, 0};
        if (::poll(&readable, 1, poll_timeout(until, limit)) <= 0) {
            return std::nullopt;
        }
    }
    const auto end = line.find('\n');
    return end == std::string::npos ? std::nullopt : std::optional(line.substr(0, end));
}

bool same_user(int fd) {
    ucred peer{};
    socklen_t size = sizeof peer;
    return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
           (peer.uid == ::geteuid() || peer.uid == 0);
}

class Keeper {
public:
    Keeper(KeeperStart& start, const Logger& log)
        : start_(start), lock_(start.attempt.lock), stop_(start.owner),
          keeper_(lock_,
                  KeepPolicy{start.options.ttl, start.options.renew,
                             start.owner ? start.options.on_lost : OnLost::ignore,
                             start.options.kill_after, "the hold's owner"},
                  start.acquired.valid_from, start.acquired.grant.validity, log) {
        if (start.options.max_hold) {
            max_hold_at_ = start.acquired_at + *start.options.max_hold;
        }
        if (start.owner) {
            owner_exit_.emplace(*start.owner);
        }
    }

    int run();

private:
    enum class Ending { owner_exited, max_hold, signal };

    void keep_lock();
    // Answers one client; true when it was a --release, which ends the hold.
    bool serve(int client);
    // Releases the lock (if it is still ours) and says how: the protocol's reply.
    std::string release();
    // The hold ends without a --release; the record says how, for a later --check or --release,
    // unless no one is left to ask (the owner has exited).
    int end(Ending ending, const std::string& why);
    // Ends the hold early: with an owner to stop (--on-lost term), it is stopped first and the
    // lock released once it has exited; returns false then. Otherwise ends at once: true.
    bool end_early(Ending ending, const std::string& why);
    void remove_files() const;
    std::string lost_reply() const {
        return fmt::format("lost {} {}", start_.record.ended_ms, start_.record.why);
    }
    bool ended_early() const { return !stopping_because_.empty(); }

    KeeperStart& start_;
    lock::LockClient& lock_;
    OwnerStop stop_;
    LockKeeper keeper_;
    std::optional<ExitWatch> owner_exit_;
    Deadline max_hold_at_;
    bool loss_recorded_ = false;
    // Why the hold is ending before its owner is done (--max-hold, a signal to the keeper): the
    // owner is being stopped, and the lock is kept until it has exited, as a run keeps it until
    // its command has. Empty while the hold lasts.
    std::string stopping_because_;
};

void Keeper::keep_lock() {
    keeper_.keep(stop_);
    if (keeper_.lost() && !loss_recorded_) {
        loss_recorded_ = true;
        start_.record.ended = "lost";
        start_.record.ended_ms = epoch_ms();
        start_.record.why = keeper_.lost_because();
        write_record(start_.paths.handle, start_.record);
    }
}

std::string Keeper::release() {
    if (keeper_.lost()) {
        // Perhaps still ours in Redis (renewals failed until the deadline): free it for the next.
        (void)lock_.release(lock::CommandRan::yes, keeper_.valid_until());
        return lost_reply();
    }
    auto answer = lock_.release(lock::CommandRan::yes, keeper_.valid_until());
    if (!answer) {
        return fmt::format("failed could not release {}: {}; it expires by itself within the TTL",
                           start_.record.key, answer.error().message);
    }
    if (auto* lost = std::get_if<lock::Lost>(&*answer)) {
        return fmt::format("lost {} {}", epoch_ms(), lock::describe(*lost));
    }
    return "released";
}

bool Keeper::serve(int client) {
    UniqueFd connection(client);
    if (!same_user(client)) {
        return false;
    }
    const auto request = read_request(client, Millis{1000});
    if (!request) {
        return false;
    }
    keep_lock(); // a keeper that was paused finds out first whether the lock outlived the pause
    if (*request == "check") {
        write_all(client,
                  (keeper_.lost() || ended_early() ? lost_reply() : std::string("intact")) + "\n");
    } else if (*request == "release" && ended_early()) {
        // The owner, told to stop, releases on its way out: the hold was not kept to its end.
        (void)lock_.release(lock::CommandRan::yes, keeper_.valid_until());
        write_all(client, lost_reply() + "\n");
        remove_files();
        return true;
    } else if (*request == "release") {
        // The answer goes out first: the files are the --release's to remove too (hold.cpp).
        write_all(client, release() + "\n");
        remove_files();
        return true;
    }
    return false;
}

bool Keeper::end_early(Ending ending, const std::string& why) {
    const bool owner_to_stop = start_.owner && start_.options.on_lost == OnLost::term &&
                               is_running(*start_.owner) && !keeper_.lost();
    if (!owner_to_stop || ended_early()) {
        end(ending, why);
        return true;
    }
    stopping_because_ = why;
    start_.record.ended = "ended";
    start_.record.ended_ms = epoch_ms();
    start_.record.why = why + "; its owner was stopped";
    write_record(start_.paths.handle, start_.record);
    stop_.terminate(start_.options.kill_after);
    return false;
}

int Keeper::end(Ending ending, const std::string& why) {
    if (!keeper_.lost()) {
        (void)lock_.release(lock::CommandRan::yes, keeper_.valid_until());
    }
    if (ending == Ending::owner_exited) {
        remove_files();
        return 0;
    }
    ::unlink(start_.paths.socket.c_str());
    if (!keeper_.lost()) {
        start_.record.ended = "ended";
        start_.record.ended_ms = epoch_ms();
        start_.record.why = why;
        write_record(start_.paths.handle, start_.record);
    }
    return 0;
}

void Keeper::remove_files() const {
    ::unlink(start_.paths.socket.c_str());
    ::unlink(start_.paths.handle.c_str());
}

int Keeper::run() {
    auto& signals = start_.attempt.signals;
    while (true) {
        keep_lock();
        stop_.on_due();
        if (owner_exit_ && owner_exit_->exited()) {
            return end(Ending::owner_exited, "");
        }
        if (max_hold_at_ && steady_now() >= *max_hold_at_ && !ended_early() &&
            end_early(Ending::max_hold,
                      fmt::format("it was released when its --max-hold of {} ran out",
                                  format_duration(*start_.options.max_hold)))) {
            return 0;
        }
        Deadline next = keeper_.next_due();
        for (const Deadline& other : {ended_early() ? Deadline{} : max_hold_at_, stop_.due()}) {
            if (other && (!next || *other < *next)) {
                next = other;
            }
        }
        if (owner_exit_ && owner_exit_->fd() < 0) {
            const SteadyTime check = steady_now() + Millis{ExitWatch::poll_period_ms};
            next = next ? std::min(*next, check) : check;
        }
        pollfd fds[3] = {{signals.fd(), POLLIN, 0},
                         {start_.listener.get(), POLLIN, 0},
                         {owner_exit_ ? owner_exit_->fd() : -1, POLLIN, 0}};
        const int timeout = next ? poll_timeout(*next, Millis{60000}) : 60000;
        if (::poll(fds, 3, timeout) < 0 && errno != EINTR) {
            return end(Ending::signal,
                       fmt::format("its keeper failed: poll: {}", std::strerror(errno)));
        }
        if ((fds[0].revents & POLLIN) != 0) {
            for (int signal_number : signals.drain()) {
                if ((signal_number == SIGTERM || signal_number == SIGINT ||
                     signal_number == SIGHUP || signal_number == SIGQUIT) &&
                    end_early(Ending::signal, fmt::format("its keeper was sent {}",
                                                          run::signal_name(signal_number)))) {
                    return 0;
                }
            }
        }
        if ((fds[1].revents & POLLIN) != 0) {
            const int client =
                ::accept4(start_.listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (client >= 0 && serve(client)) {
                return 0;
            }
        }
    }
}

} // namespace

int keep_hold(KeeperStart& start, const Logger& log) {
    detach();
    start.record.keeper = ::getpid();
    // The owner may have exited while the lock was waited for: a hold reported as taken must not
    // be released a moment later.
    if (start.owner && !is_running(*start.owner)) {
        (void)start.attempt.lock.release(lock::CommandRan::no, {});
        ::unlink(start.paths.socket.c_str());
        write_all(start.ready.get(), fmt::format("{} not holding {}: its owner, pid {}, has exited",
                                                 start.options.conflict_exit_code, start.record.key,
                                                 start.owner->pid));
        return start.options.conflict_exit_code;
    }
    if (const int error = write_record(start.paths.handle, start.record); error != 0) {
        (void)start.attempt.lock.release(lock::CommandRan::no, {});
        ::unlink(start.paths.socket.c_str());
        write_all(start.ready.get(),
                  fmt::format("{} cannot write {}: {}", to_int(ExitStatus::os_error),
                              start.paths.handle, std::strerror(error)));
        return to_int(ExitStatus::os_error);
    }
    write_all(start.ready.get(), "ok");
    start.ready.reset();
    Keeper keeper(start, log);
    return keeper.run();
}

} // namespace redlockrun::hold
