#include "run/run_locked.hpp"

#include "base/clock.hpp"
#include "base/fatal.hpp"
#include "lock/keys.hpp"
#include "lock/token.hpp"
#include "lock/waiter.hpp"
#include "run/child.hpp"
#include "run/lock_keeper.hpp"
#include "run/supervisor.hpp"
#include "run/wait_status.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <poll.h>
#include <unistd.h>

extern char** environ;

namespace redlockrun {

namespace {

// Routes the signals that arrive while redlockrun talks to Redis. Before the command runs, any
// forwarded signal asks redlockrun to stop; once it runs, they are the command's.
class SignalRouter {
public:
    explicit SignalRouter(run::SignalPipe& signals) : signals_(signals) {}

    // The connection's Wakeup: true when redlockrun should stop waiting.
    bool handle() {
        for (int signal_number : signals_.drain()) {
            if (supervisor_ != nullptr) {
                supervisor_->on_signal(signal_number);
            } else if (signal_number != SIGCHLD && stop_signal_ == 0) {
                stop_signal_ = signal_number;
            }
        }
        return stop_signal_ != 0;
    }

    int stop_signal() const { return stop_signal_; }
    void supervise(run::Supervisor* supervisor) { supervisor_ = supervisor; }

    // Sleeps for up to `duration`, cut short by a signal that asks redlockrun to stop.
    void pause(Millis duration) {
        const SteadyTime until = steady_now() + duration;
        while (stop_signal_ == 0 && steady_now() < until) {
            pollfd readable{signals_.fd(), POLLIN, 0};
            if (::poll(&readable, 1, poll_timeout(until, duration)) > 0) {
                handle();
            }
        }
    }

private:
    run::SignalPipe& signals_;
    run::Supervisor* supervisor_ = nullptr;
    int stop_signal_ = 0;
};

// How long a grant or renewal waits for --replicas: the connect timeout, but no more than a
// renewal period, so that a renewal that waits in vain leaves time to retry.
Millis replica_wait(const Options& options) {
    return std::min(options.connect_timeout, options.ttl / 3);
}

lock::Identity make_identity(int limit, const std::string& note) {
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) != 0) {
        host[0] = '\0';
    }
    return lock::Identity{lock::make_token(), host, std::to_string(::getpid()),
                          limit > 1 ? lock::make_token() : std::string(), note};
}

// The command to run, found before the lock is taken: a mistyped name must not cost a wait. Its
// environment is completed once the fence is known.
run::ChildSpec find_child(const Options& options) {
    run::ChildSpec spec;
    if (options.shell_command) {
        spec.path = "/bin/sh";
        spec.argv = {"sh", "-c", *options.shell_command};
        return spec;
    }
    auto path = run::find_command(options.command.front(), ::getenv("PATH"));
    if (!path) {
        throw Fatal(path.error().status, path.error().message);
    }
    spec.path = *path;
    spec.argv = options.command;
    return spec;
}

// A word of a command as a shell would read it back: in single quotes if it holds anything but
// the characters that never need them.
std::string quoted_word(const std::string& word) {
    const bool plain =
        !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
        return word;
    }
    std::string quoted = "'";
    for (char c : word) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

// Whether someone watches this run wait: stderr is a terminal, or a CI system's log ($CI is set
// to anything, as GitHub Actions, GitLab CI and most others do). Cron is neither, and stays quiet.
bool someone_watches() {
    const char* ci = ::getenv("CI");
    return ::isatty(STDERR_FILENO) == 1 || (ci != nullptr && *ci != '\0');
}

// The command as a reader of the message would type it, shortened if very long: "./report.sh
// --full", "'my job' x". The logger escapes what is not printable.
std::string command_for_message(const Options& options) {
    constexpr size_t longest = 160;
    std::string text;
    if (options.shell_command) {
        text = "sh -c " + quoted_word(*options.shell_command);
    } else {
        for (const auto& word : options.command) {
            text += (text.empty() ? "" : " ") + quoted_word(word);
        }
    }
    if (text.size() > longest) {
        text.resize(longest - 3);
        text += "...";
    }
    return text;
}

// Releases the lock if it is still ours; returns true if it found that the lock had been lost. A
// loss the keeper has reported already is not reported again. Only after the command ran does
// --min-hold keep the lock. valid_until: the lock's validity deadline, if known (a Cluster's
// redirects are followed until then).
bool release(lock::LockClient& lock, const Logger& log, const SteadyTime& acquired_at,
             lock::CommandRan command_ran = lock::CommandRan::no, bool known_lost = false,
             const Deadline& valid_until = {}) {
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
    if (auto* lost = std::get_if<lock::Lost>(&*answer)) {
        if (known_lost) {
            log.info("{} was not ours to release any more: {}", key, lock::describe(*lost));
        } else {
            log.error("the lock on {} was lost before the command finished: {}", key,
                      lock::describe(*lost));
        }
        return true;
    }
    const auto& released = std::get<lock::Released>(*answer);
    if (released.kept_for) {
        log.info("let go of {} after holding it for {}; --min-hold keeps it held for another {}",
                 key, format_duration(steady_now() - acquired_at),
                 format_duration(*released.kept_for));
    } else {
        log.info("released {} after holding it for {}", key,
                 format_duration(steady_now() - acquired_at));
    }
    return false;
}

// Runs `start_command` (everything between the grant and the running command); if it throws (out
// of memory, above all), releases the lock before the failure ends the run: a lock taken for a
// command that never started must not stay held for its whole TTL. Past this point the command
// runs, and a failure that ends redlockrun kills it (PR_SET_PDEATHSIG) but leaves the lock to
// expire: releasing it first would let the next holder start beside a command not yet dead.
template <typename StartCommand>
auto release_if_it_throws(lock::LockClient& lock, const Logger& log, SteadyTime acquired_at,
                          StartCommand start_command) {
    try {
        return start_command();
    } catch (...) {
        try {
            release(lock, log, acquired_at);
        } catch (...) {
            // Too little memory even for that: the lock expires by itself. The first failure is
            // the one to report.
        }
        throw;
    }
}

} // namespace

int run_locked(const Options& options, const redis::ConnectionSettings& settings,
               const Logger& log) {
    auto keys = lock::lock_keys(options.key);
    if (!keys) {
        throw Fatal(ExitStatus::usage, keys.error());
    }
    run::ChildSpec spec = find_child(options);
    run::SignalPipe signals;
    SignalRouter router(signals);
    const redis::Wakeup wakeup{signals.fd(), [&router] { return router.handle(); }};
    redis::Connection connection(settings, &wakeup);
    lock::WaitPolicy policy;
    policy.wait = !options.no_wait;
    policy.limit = options.wait;
    policy.announce = someone_watches();
    lock::LockClient lock(
        connection, std::move(*keys), make_identity(options.limit, options.note),
        lock::LockParams{options.ttl, options.timestamp_unit, options.min_hold, options.limit,
                         policy.may_wait() ? policy.queue_place : Millis{0}, options.replicas,
                         replica_wait(options), options.renew ? options.ttl / 3 : Millis{0}});
    const lock::Interruptions interruptions{[&router] { return router.stop_signal(); },
                                            [&router](Millis d) { router.pause(d); }};
    auto outcome = lock::acquire_lock(lock, policy, interruptions, log);

    if (auto* foreign = std::get_if<lock::Foreign>(&outcome)) {
        throw Fatal(ExitStatus::foreign_value, lock::describe_foreign(options.key, *foreign));
    }
    if (auto* gave_up = std::get_if<lock::GaveUp>(&outcome)) {
        const auto& busy = gave_up->last;
        const bool waited = gave_up->waited.count() > 0 && options.wait;
        log.notice("{}{}; not running {}",
                   lock::describe_busy(options.key, busy, lock::describe_holder(busy)),
                   waited ? "; gave up after waiting " + format_duration(gave_up->waited) : "",
                   command_for_message(options));
        return options.conflict_exit_code;
    }
    if (auto* too_late = std::get_if<lock::TooLate>(&outcome)) {
        log.notice("{} was granted, but could not be used before its validity ran out on this "
                   "machine's clock (was redlockrun suspended?){}; nothing was left locked; not "
                   "running {}",
                   options.key,
                   options.wait ? "; gave up after waiting " + format_duration(too_late->waited)
                                : "",
                   command_for_message(options));
        return options.conflict_exit_code;
    }
    if (auto* stopped = std::get_if<lock::Stopped>(&outcome)) {
        log.error("{} while waiting for {}; nothing was left locked",
                  run::signal_name(stopped->signal_number), options.key);
        return signal_exit_status(stopped->signal_number);
    }
    const auto& acquired = std::get<lock::Acquired>(outcome);
    const SteadyTime acquired_at = steady_now();
    const run::Terminal terminal = run::Terminal::foreground();
    auto child = release_if_it_throws(lock, log, acquired_at, [&] {
        // "(fence 17, note: deploy 42)": the note this run holds the lock for, if any.
        const std::string grant =
            options.note.empty()
                ? fmt::format("(fence {})", acquired.grant.fence)
                : fmt::format("(fence {}, note: {})", acquired.grant.fence, options.note);
        if (acquired.after_busy && policy.announce) {
            log.notice("got {} {} after waiting {}", options.key, grant,
                       format_duration(acquired.waited));
        } else if (acquired.after_busy) {
            log.info("got {} {} after waiting {}", options.key, grant,
                     format_duration(acquired.waited));
        } else {
            log.info("acquired {} {} without waiting, in {}", options.key, grant,
                     format_duration(acquired.waited));
        }
        spec.inherited_environment = environ;
        spec.environment_overrides = {"REDLOCKRUN_KEY=" + options.key,
                                      "REDLOCKRUN_FENCE=" + acquired.grant.fence};
        return run::spawn_child(spec, signals, terminal);
    });
    if (!child) {
        release(lock, log, acquired_at);
        throw Fatal(child.error().status, child.error().message);
    }
    run::Supervisor supervisor(*child, terminal, log);
    router.supervise(&supervisor);
    LockKeeper keeper(lock,
                      KeepPolicy{options.ttl, options.renew, options.on_lost, options.kill_after},
                      acquired.valid_from, acquired.grant.validity, log);
    const int wait_status = supervisor.wait(signals, &keeper);
    log.info("the command {} after running for {}", run::describe_wait_status(wait_status),
             format_duration(steady_now() - acquired_at));

    const bool found_lost =
        release(lock, log, acquired_at, lock::CommandRan::yes, keeper.lost(), keeper.valid_until());
    if ((keeper.lost() || found_lost) && options.on_lost == OnLost::term) {
        return options.lost_exit_code;
    }
    return run::exit_status_from_wait(wait_status);
}

} // namespace redlockrun
