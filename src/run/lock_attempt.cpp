#include "run/lock_attempt.hpp"

#include "base/clock.hpp"
#include "base/fatal.hpp"
#include "lock/keys.hpp"
#include "lock/token.hpp"
#include "run/supervisor.hpp"
#include "run/wait_status.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

namespace redlockrun::run {

bool SignalRouter::watched_ready() const {
    pollfd readable{watched_, POLLIN, 0};
    return watched_ >= 0 && ::poll(&readable, 1, 0) > 0;
}

bool SignalRouter::handle() {
    if (stop_signal_ == 0 && watched_ready()) {
        stop_signal_ = gone;
    }
    for (int signal_number : signals_.drain()) {
        if (supervisor_ != nullptr) {
            supervisor_->on_signal(signal_number);
        } else if (asks_to_stop(signal_number) && stop_signal_ == 0) {
            stop_signal_ = signal_number;
        }
    }
    return stop_signal_ != 0;
}

void SignalRouter::pause(Millis duration) {
    const SteadyTime until = steady_now() + duration;
    while (stop_signal_ == 0 && steady_now() < until) {
        pollfd readable[2] = {{signals_.fd(), POLLIN, 0}, {watched_, POLLIN, 0}};
        if (::poll(readable, 2, poll_timeout(until, duration)) > 0) {
            handle();
        }
    }
}

bool someone_watches() {
    const char* ci = ::getenv("CI");
    return ::isatty(STDERR_FILENO) == 1 || (ci != nullptr && *ci != '\0');
}

namespace {

// How long a grant or renewal waits for --replicas: the connect timeout, but no more than a
// renewal period, so that a renewal that waits in vain leaves time to retry.
Millis replica_wait(const Options& options) {
    return std::min(options.connect_timeout, options.ttl / 3);
}

lock::Identity make_identity(const Options& options, std::string pid, bool hold) {
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) != 0) {
        host[0] = '\0';
    }
    return lock::Identity{lock::make_token(), host,
                          std::move(pid),     lock::waiter_id_for(options.limit, options.shared),
                          options.note,       hold,
                          options.supersede};
}

lock::LockKeys keys_of(const std::string& key) {
    auto keys = lock::lock_keys(key);
    if (!keys) {
        throw Fatal(ExitStatus::usage, keys.error());
    }
    return std::move(*keys);
}

lock::WaitPolicy wait_policy(const Options& options) {
    lock::WaitPolicy policy;
    policy.wait = !options.no_wait;
    policy.limit = options.wait;
    policy.announce = someone_watches();
    return policy;
}

} // namespace

LockAttempt::LockAttempt(const Options& options, const redis::ConnectionSettings& settings,
                         const Logger& log, std::string pid, bool hold)
    : wakeup{signals.fd(), [this] { return router.handle(); }}, connection(settings, &wakeup),
      policy(wait_policy(options)),
      lock(connection, keys_of(options.key), make_identity(options, std::move(pid), hold),
           lock::LockParams{options.ttl, options.timestamp_unit, options.min_hold, options.limit,
                            options.shared, policy.may_wait() ? policy.queue_place : Millis{0},
                            options.replicas, replica_wait(options),
                            options.renew ? options.ttl / 3 : Millis{0}}),
      options_(options), log_(log) {}

std::variant<lock::Acquired, int> LockAttempt::acquire(const std::string& not_done) {
    const lock::Interruptions interruptions{[this] { return router.stop_signal(); },
                                            [this](Millis d) { router.pause(d); }};
    auto outcome = lock::acquire_lock(lock, policy, interruptions, log_);

    if (auto* foreign = std::get_if<lock::Foreign>(&outcome)) {
        throw Fatal(ExitStatus::foreign_value, lock::describe_foreign(options_.key, *foreign));
    }
    if (auto* gave_up = std::get_if<lock::GaveUp>(&outcome)) {
        busy_ = true;
        waited_ = gave_up->waited;
        const auto& busy = gave_up->last;
        const bool waited = gave_up->waited.count() > 0 && options_.wait;
        log_.with(LogEvent("busy").waited(gave_up->waited).exit_status(options_.conflict_exit_code))
            .notice("{}{}; {}",
                    lock::describe_busy(options_.key, busy, lock::describe_holder(busy)),
                    waited ? "; gave up after waiting " + format_duration(gave_up->waited) : "",
                    not_done);
        return options_.conflict_exit_code;
    }
    if (auto* superseded = std::get_if<lock::SupersededWait>(&outcome)) {
        busy_ = true;
        waited_ = superseded->waited;
        log_.with(LogEvent("superseded")
                      .waited(superseded->waited)
                      .exit_status(options_.conflict_exit_code))
            .notice("gave up waiting for {} after {}: superseded by a newer waiter, {}; {}",
                    options_.key, format_duration(superseded->waited),
                    lock::describe_superseding(superseded->by), not_done);
        return options_.conflict_exit_code;
    }
    if (auto* too_late = std::get_if<lock::TooLate>(&outcome)) {
        busy_ = true;
        waited_ = too_late->waited;
        log_.with(
                LogEvent("busy").waited(too_late->waited).exit_status(options_.conflict_exit_code))
            .notice("{} was granted, but could not be used before its validity ran out on this "
                    "machine's clock (was redlockrun suspended?){}; nothing was left locked; {}",
                    options_.key,
                    options_.wait ? "; gave up after waiting " + format_duration(too_late->waited)
                                  : "",
                    not_done);
        return options_.conflict_exit_code;
    }
    if (auto* stopped = std::get_if<lock::Stopped>(&outcome);
        stopped != nullptr && stopped->signal_number == SignalRouter::gone) {
        busy_ = true;
        log_.with(LogEvent("busy").exit_status(options_.conflict_exit_code))
            .notice("{} while waiting for {}; nothing was left locked; {}", gave_up_because_,
                    options_.key, not_done);
        return options_.conflict_exit_code;
    }
    if (auto* stopped = std::get_if<lock::Stopped>(&outcome)) {
        log_.with(LogEvent("stopped").exit_status(signal_exit_status(stopped->signal_number)))
            .error("{} while waiting for {}; nothing was left locked",
                   signal_name(stopped->signal_number), options_.key);
        return signal_exit_status(stopped->signal_number);
    }
    waited_ = std::get<lock::Acquired>(outcome).waited;
    return std::get<lock::Acquired>(outcome);
}

void LockAttempt::give_up_when_readable(int fd, std::string why) {
    watch_both_.reset(::epoll_create1(EPOLL_CLOEXEC));
    epoll_event readable{};
    readable.events = EPOLLIN;
    if (!watch_both_.valid() ||
        ::epoll_ctl(watch_both_.get(), EPOLL_CTL_ADD, signals.fd(), &readable) != 0 ||
        ::epoll_ctl(watch_both_.get(), EPOLL_CTL_ADD, fd, &readable) != 0) {
        watch_both_.reset(); // the owner's exit is then found once the lock is taken, as before
        return;
    }
    wakeup.fd = watch_both_.get();
    router.stop_when_readable(fd);
    gave_up_because_ = std::move(why);
}

void LockAttempt::stop_giving_up() {
    wakeup.fd = signals.fd();
    router.stop_when_readable(-1);
    watch_both_.reset();
}

bool release(lock::LockClient& lock, const Logger& log, const SteadyTime& acquired_at,
             lock::CommandRan command_ran, bool known_lost, const Deadline& valid_until) {
    const auto& key = lock.keys().lock;
    auto answer = lock.release(command_ran, valid_until);
    if (!answer) {
        if (known_lost) {
            log.info("could not release {}: {}", key, answer.error().message);
        } else {
            log.error("could not release {}: {}; it expires by itself within the TTL", key,
                      answer.error().message);
        }
        return false;
    }
    const Millis held = steady_now() - acquired_at;
    if (auto* lost = std::get_if<lock::Lost>(&*answer)) {
        if (known_lost) {
            log.info("{} was not ours to release any more: {}", key, lock::describe(*lost));
        } else {
            log.with(LogEvent("lost").held(held))
                .error("the lock on {} was lost before the command finished: {}", key,
                       lock::describe(*lost));
        }
        return true;
    }
    const auto& released = std::get<lock::Released>(*answer);
    if (released.kept_for) {
        log.with(LogEvent("released").held(held))
            .info("let go of {} after holding it for {}; --min-hold keeps it held for another {}",
                  key, format_duration(held), format_duration(*released.kept_for));
    } else {
        log.with(LogEvent("released").held(held))
            .info("released {} after holding it for {}", key, format_duration(held));
    }
    return false;
}

void say_acquired(const std::string& key, const std::string& note, const lock::Acquired& acquired,
                  const lock::WaitPolicy& policy, const Logger& log) {
    // "(fence 17, note: deploy 42)": the note this run holds the lock for, if any.
    const std::string grant = note.empty()
                                  ? fmt::format("(fence {})", acquired.grant.fence)
                                  : fmt::format("(fence {}, note: {})", acquired.grant.fence, note);
    log.set_fence(acquired.grant.fence);
    const auto said = log.with(LogEvent("acquired").waited(acquired.waited));
    if (acquired.after_busy && policy.announce) {
        said.notice("got {} {} after waiting {}", key, grant, format_duration(acquired.waited));
    } else if (acquired.after_busy) {
        said.info("got {} {} after waiting {}", key, grant, format_duration(acquired.waited));
    } else {
        said.info("acquired {} {} without waiting, in {}", key, grant,
                  format_duration(acquired.waited));
    }
}

} // namespace redlockrun::run
