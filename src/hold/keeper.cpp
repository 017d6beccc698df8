#include "hold/keeper.hpp"

#include "hold/owner_stop.hpp"
#include "hold/process_stat.hpp"
#include "run/lock_keeper.hpp"
#include "run/signals.hpp"
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

// The keeper's stdio: /dev/null, so that no pipe of its caller's is held open; stderr stays where
// the caller's was if hold.cpp found that the person will read it there. Its working folder is /,
// so that it keeps no file system busy (a CI workspace to unmount).
void detach(bool keep_stderr) {
    ::setsid();
    if (::chdir("/") != 0) {
        // Nothing to do: the folder it was in stays busy, which is all that is lost.
    }
    const int null = ::open("/dev/null", O_RDWR | O_NOCTTY);
    if (null >= 0) {
        for (int fd = 0; fd <= (keep_stderr ? 1 : 2); ++fd) {
            ::dup2(null, fd);
        }
        if (null > 2) {
            ::close(null);
        }
    }
}

// Whether all of `text` was written: a client that gave up before its answer gets none (SIGPIPE
// is ignored: the signal pipe's doing).
bool write_all(int fd, const std::string& text) {
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        written += static_cast<size_t>(n);
    }
    return true;
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
        : start_(start), lock_(start.attempt.lock), stop_(start.owner, log),
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
    bool lost() const { return keeper_.lost() || start_.record.ended == "lost"; }

private:
    void keep_lock();
    // Answers one client; true when it was a --release, which ends the hold.
    bool serve(int client);
    // Whether Redis, asked now, still holds the lock for this hold: "intact", a loss, or "failed
    // WHY" if it cannot be asked. The protocol's reply to a --check.
    std::string check();
    // Releases the lock (if it is still ours) and says how: the protocol's reply.
    std::string release();
    // The hold is to end before its owner is done (--max-hold, a signal to the keeper): its work
    // is stopped first (--on-lost term), and the lock let go once it has.
    void end_early(const std::string& why);
    // The owner's work has stopped (or the hold must end now): lets the lock go, and keeps the
    // record of how the hold ended for a later --check or --release, unless it was kept to the end.
    int finish();
    // What the owner left outlived SIGKILL: the lock is not let go, but left to lapse.
    int give_up();
    void record_ending(const std::string& ended, const std::string& why);
    // Answers a --release (the hold is over): "released", or how it ended.
    void answer_release(int client, const std::string& reply);
    void remove_files() const;
    std::string lost_reply() const {
        return fmt::format("lost {} {}", start_.record.ended_ms, start_.record.why);
    }
    bool ended_early() const { return !ending_why_.empty(); }

    KeeperStart& start_;
    lock::LockClient& lock_;
    OwnerStop stop_;
    LockKeeper keeper_;
    std::optional<ExitWatch> owner_exit_;
    Deadline max_hold_at_;
    bool loss_recorded_ = false;
    bool owner_exited_ = false;
    // A --release came while the owner's work was being stopped, and was answered.
    bool release_answered_ = false;
    // Why the hold is ending before its owner is done: empty while it lasts.
    std::string ending_why_;
};

void Keeper::keep_lock() {
    keeper_.keep(stop_);
    if (keeper_.lost() && !loss_recorded_) {
        loss_recorded_ = true;
        record_ending("lost", keeper_.lost_because());
    }
}

void Keeper::record_ending(const std::string& ended, const std::string& why) {
    if (release_answered_) {
        return; // the record says what the --release was answered, and it may be gone already
    }
    start_.record.ended = ended;
    start_.record.ended_ms = epoch_ms();
    start_.record.why = why;
    write_record(start_.paths.handle, start_.record);
}

std::string Keeper::check() {
    if (!keeper_.lost() && !ended_early()) {
        if (start_.options.renew) {
            if (!keeper_.renew_now(stop_)) {
                return fmt::format("failed cannot ask Redis whether {} is still held: {}",
                                   start_.record.key, keeper_.last_error());
            }
        } else {
            // --no-renew: the lock's state read, not renewed; this grant's fence names it.
            auto snapshot = lock_.status();
            if (!snapshot) {
                return fmt::format("failed cannot ask Redis whether {} is still held: {}",
                                   start_.record.key, snapshot.error().message);
            }
            const bool held =
                snapshot->value == snapshot->owner_value &&
                std::any_of(snapshot->holders.begin(), snapshot->holders.end(),
                            [&](const lock::HolderRecord& holder) {
                                return holder.fence == start_.record.fence &&
                                       holder.expires_ms.value_or(0) > snapshot->now_ms;
                            });
            if (!held) {
                keeper_.found_lost("Redis no longer holds it for this hold (deleted, expired, "
                                   "broken or taken by another holder)",
                                   stop_);
            }
        }
        keep_lock();
    }
    return keeper_.lost() || ended_early() ? lost_reply() : std::string("intact");
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
        record_ending("lost", lock::describe(*lost));
        return lost_reply();
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
        write_all(client, check() + "\n");
        return false;
    }
    if (*request != "release") {
        return false;
    }
    if (stop_.stopping() && !stop_.finished()) {
        // The owner's work is being stopped (a loss, an early end, an owner that exited): the
        // answer goes out now, but the lock is let go only once that work has stopped (finish()),
        // and a process that ignores SIGTERM still gets SIGKILL.
        answer_release(client, keeper_.lost() || ended_early() ? lost_reply() : "released");
        return false;
    }
    std::string reply;
    if (ended_early()) {
        // The owner, told to stop, releases on its way out: the hold was not kept to its end.
        (void)lock_.release(lock::CommandRan::yes, keeper_.valid_until());
        reply = lost_reply();
    } else {
        reply = release();
    }
    answer_release(client, reply);
    return true;
}

void Keeper::answer_release(int client, const std::string& reply) {
    // The record says how the hold ended before the answer goes out, and stays: the --release
    // that reads the answer removes it (hold.cpp). One killed first (its caller's timeout) leaves
    // it for a later --check or --release. A write that succeeds says nothing of that: a process
    // that is being killed keeps its socket open while its memory is torn down.
    if (reply == "released") {
        record_ending("released", "it was released by a --release that did not wait for the "
                                  "answer");
    }
    ::unlink(start_.paths.socket.c_str());
    write_all(client, reply + "\n");
    release_answered_ = true;
}

void Keeper::end_early(const std::string& why) {
    if (ended_early()) {
        return;
    }
    ending_why_ = why;
    const bool stops_work = start_.owner && start_.options.on_lost == OnLost::term;
    record_ending("ended", stops_work ? why + "; its owner's work was stopped first" : why);
    if (stops_work) {
        stop_.terminate(start_.options.kill_after);
    }
}

int Keeper::finish() {
    if (!keeper_.lost()) {
        (void)lock_.release(lock::CommandRan::yes, keeper_.valid_until());
    }
    if (release_answered_) {
        return 0; // the record is the --release's to remove (answer_release())
    }
    // Lost, or ended early, with --owner (a process, or none): whoever took the hold may still
    // --release or --check it, and learns how it ended. Otherwise no one is left to ask: the
    // script that owned the hold has exited, or the hold was kept to its end.
    const bool someone_may_ask = start_.options.owner && (keeper_.lost() || ended_early());
    if (someone_may_ask) {
        ::unlink(start_.paths.socket.c_str());
    } else {
        remove_files();
    }
    return 0;
}

int Keeper::give_up() {
    record_ending(keeper_.lost() ? "lost" : "ended",
                  fmt::format("{}; what its owner left running outlived SIGKILL, so the lock was "
                              "not let go but left to lapse within its TTL",
                              keeper_.lost() ? keeper_.lost_because()
                                             : (ended_early() ? ending_why_
                                                              : std::string("its owner exited"))));
    ::unlink(start_.paths.socket.c_str());
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
        if (owner_exit_ && !owner_exited_ && owner_exit_->exited()) {
            owner_exited_ = true;
            // Whatever the owner left running must stop before the lock is let go.
            stop_.terminate(start_.options.kill_after);
        }
        if (stop_.stopping()) {
            stop_.on_due();
            if (stop_.finished() && (owner_exited_ || ended_early() || release_answered_)) {
                return finish();
            }
            if (stop_.unstoppable()) {
                return give_up();
            }
        }
        if (max_hold_at_ && steady_now() >= *max_hold_at_ && !ended_early()) {
            end_early(fmt::format("it was released when its --max-hold of {} ran out",
                                  format_duration(*start_.options.max_hold)));
            continue;
        }
        if (ended_early() && !stop_.stopping()) {
            return finish(); // nothing to stop: no owner, or --on-lost ignore
        }
        Deadline next = keeper_.next_due();
        for (const Deadline& other : {ended_early() ? Deadline{} : max_hold_at_, stop_.due()}) {
            if (other && (!next || *other < *next)) {
                next = other;
            }
        }
        const bool watch_owner = owner_exit_ && !owner_exited_;
        if (watch_owner && owner_exit_->fd() < 0) {
            const SteadyTime check = steady_now() + Millis{ExitWatch::poll_period_ms};
            next = next ? std::min(*next, check) : check;
        }
        pollfd fds[3] = {{signals.fd(), POLLIN, 0},
                         {start_.listener.get(), POLLIN, 0},
                         {watch_owner ? owner_exit_->fd() : -1, POLLIN, 0}};
        const int timeout = next ? poll_timeout(*next, Millis{60000}) : 60000;
        if (::poll(fds, 3, timeout) < 0 && errno != EINTR) {
            end_early(fmt::format("its keeper failed: poll: {}", std::strerror(errno)));
            return finish();
        }
        std::vector<int> arrived;
        if ((fds[0].revents & POLLIN) != 0) {
            arrived = signals.drain();
        }
        // One that came while a call to Redis waited was drained by the connection's wakeup.
        if (const int during_a_call = start_.attempt.router.take_stop_signal()) {
            arrived.push_back(during_a_call);
        }
        for (int signal_number : arrived) {
            if (run::asks_to_stop(signal_number)) {
                end_early(fmt::format("its keeper was sent {}", run::signal_name(signal_number)));
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
    detach(start.keep_stderr);
    start.record.keeper = ::getpid();
    if (const auto self = stat_of(start.record.keeper)) {
        start.record.keeper_start = self->start_time;
    }
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
    // A --hold paused past its --max-hold must not report a hold that is over already.
    if (start.options.max_hold && steady_now() >= start.acquired_at + *start.options.max_hold) {
        (void)start.attempt.lock.release(lock::CommandRan::no, {});
        ::unlink(start.paths.socket.c_str());
        write_all(start.ready.get(),
                  fmt::format("{} the hold on {} ended before it could be reported: its "
                              "--max-hold of {} ran out (was redlockrun suspended?); released",
                              start.options.lost_exit_code, start.record.key,
                              format_duration(*start.options.max_hold)));
        return start.options.lost_exit_code;
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
    // What holds that ended unseen left: the keeper's to clean, once --hold has returned.
    clean_stale_holds(start.paths.handle.substr(0, start.paths.handle.rfind('/')), still_running);
    Keeper keeper(start, log);
    const int status = keeper.run();
    if (start.options.metrics_file) {
        telemetry::RunFigures& figures = start.figures;
        figures.held_ms = (steady_now() - start.acquired_at).count();
        figures.outcome = keeper.lost() ? telemetry::Outcome::lost : telemetry::Outcome::ran;
        figures.exit_status = keeper.lost() ? start.options.lost_exit_code : 0;
        if (auto failed = telemetry::update_metrics_file(*start.options.metrics_file, figures)) {
            log.notice("--metrics-file: {}", *failed);
        }
    }
    return status;
}

} // namespace redlockrun::hold
