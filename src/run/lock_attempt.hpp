// Taking the lock as the options say (waiting, -n, -w, -E), for a run and for a hold alike: the
// signal pipe, the connection and the lock client that keep it afterwards, and the messages of
// every way the lock can be not taken.
#pragma once

#include "base/log.hpp"
#include "lock/lock_client.hpp"
#include "lock/waiter.hpp"
#include "options/options.hpp"
#include "redis/connection.hpp"
#include "redis/settings.hpp"
#include "run/signals.hpp"

#include <string>
#include <utility>
#include <variant>

namespace redlockrun::run {

class Supervisor;

// Routes the signals that arrive while redlockrun talks to Redis. Before the command runs, any
// signal that asks to stop (signals.hpp) stops redlockrun; once it runs, they are the command's.
class SignalRouter {
public:
    explicit SignalRouter(SignalPipe& signals) : signals_(signals) {}

    // The connection's Wakeup: true when redlockrun should stop waiting.
    bool handle();

    int stop_signal() const { return stop_signal_; }
    // The stop signal, once: for a loop that drains the signal pipe itself and must not miss one
    // that handle() drained during a call to Redis.
    int take_stop_signal() { return std::exchange(stop_signal_, 0); }
    void supervise(Supervisor* supervisor) { supervisor_ = supervisor; }

    // Sleeps for up to `duration`, cut short by a signal that asks redlockrun to stop.
    void pause(Millis duration);

    // Also stops when `fd` becomes readable (a hold's owner exits: its pidfd), as if by the
    // signal `gone`, which no real signal is.
    void stop_when_readable(int fd) { watched_ = fd; }
    static constexpr int gone = 0x100;

private:
    bool watched_ready() const;

    SignalPipe& signals_;
    Supervisor* supervisor_ = nullptr;
    int stop_signal_ = 0;
    int watched_ = -1;
};

// Whether someone watches this run wait: stderr is a terminal, or a CI system's log ($CI is set).
bool someone_watches();

class LockAttempt {
public:
    // pid: what the lock's record names as its holder's process (a run's own pid; a hold's owner);
    // hold: the record marks it as a hold's.
    LockAttempt(const Options& options, const redis::ConnectionSettings& settings,
                const Logger& log, std::string pid, bool hold = false);

    // Takes the lock, waiting if the options say so. Anything but a grant has been said in a
    // message that ends with `not_done` ("not running ./deploy.sh") and is returned as the exit
    // status to end with; a foreign key throws Fatal.
    std::variant<lock::Acquired, int> acquire(const std::string& not_done);

    // Gives up waiting, with `why` said and nothing left locked or queued, once `fd` is readable:
    // a hold's owner that exits while --hold waits (its pidfd).
    void give_up_when_readable(int fd, std::string why);
    // Once the lock is taken: only signals interrupt calls to Redis again.
    void stop_giving_up();

    // After acquire(): whether the lock was not acquired because it was held (as against a
    // signal), and how long it was waited for, for --metrics-file.
    bool was_busy() const { return busy_; }
    Millis waited() const { return waited_; }

    SignalPipe signals;
    SignalRouter router{signals};
    redis::Wakeup wakeup;
    redis::Connection connection;
    lock::WaitPolicy policy;
    lock::LockClient lock;

private:
    const Options& options_;
    const Logger& log_;
    // Both the signal pipe and a descriptor given to give_up_when_readable(): what the connection
    // waits on beside Redis.
    UniqueFd watch_both_;
    std::string gave_up_because_;
    bool busy_ = false;
    Millis waited_{0};
};

// Releases the lock if it is still ours; returns true if it found that the lock had been lost. A
// loss the keeper has reported already is not reported again. Only after the command ran does
// --min-hold keep the lock. valid_until: the lock's validity deadline, if known (a Cluster's
// redirects are followed until then).
bool release(lock::LockClient& lock, const Logger& log, const SteadyTime& acquired_at,
             lock::CommandRan command_ran = lock::CommandRan::no, bool known_lost = false,
             const Deadline& valid_until = {});

// The "got KEY (fence N, note: …) after waiting …" line, a notice where someone watches, -v
// otherwise.
void say_acquired(const std::string& key, const std::string& note, const lock::Acquired& acquired,
                  const lock::WaitPolicy& policy, const Logger& log);

} // namespace redlockrun::run
