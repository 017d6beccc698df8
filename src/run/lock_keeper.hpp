// Keeps the lock while the command runs (DESIGN §3). It renews every ttl/3 and keeps a validity
// deadline on the monotonic clock: the send time of the last successful renewal (or of the acquire)
// plus the TTL, minus a drift margin, so that it always falls before the key's expiry on the
// server. Failed renewals are retried with jitter until that deadline. The lock is lost when a
// renewal answers that it is not ours, or when the deadline passes; then, with --on-lost term, the
// command is stopped.
#pragma once

#include "base/log.hpp"
#include "lock/lock_client.hpp"
#include "options/options.hpp"
#include "run/supervisor.hpp"

#include <optional>
#include <random>
#include <string>

namespace redlockrun {

struct KeepPolicy {
    Millis ttl{30000};
    bool renew = true;
    OnLost on_lost = OnLost::term;
    Millis kill_after{10000};
    // What a loss stops, for its message.
    std::string protected_work = "the command";
};

class LockKeeper : public run::Watch {
public:
    // valid_from: no later than when the server granted the lock (lock::Attempt); validity: what it
    // granted, which is less than the TTL when a retried acquire found an earlier attempt's grant.
    LockKeeper(lock::LockClient& lock, const KeepPolicy& policy, SteadyTime valid_from,
               Millis validity, const Logger& log);

    Deadline next_due() const override;
    void on_due(run::Supervisor& supervisor) override;
    // The same, for what is not a supervised command (a hold's owner).
    void keep(run::Stoppable& protected_work);

    // Asks Redis at once whether the lock is still ours, by renewing it: false if Redis could not
    // be asked (last_error() says why). A loss found is handled as at any renewal.
    bool renew_now(run::Stoppable& protected_work);
    // A loss found otherwise (with --no-renew, by reading the lock's state).
    void found_lost(const std::string& why, run::Stoppable& protected_work) {
        if (!lost_) {
            declare_lost(why, protected_work);
        }
    }
    const std::string& last_error() const { return last_error_; }

    bool lost() const { return lost_; }
    // Why the lock was lost, once lost().
    const std::string& lost_because() const { return lost_because_; }
    // The local validity deadline: the lock can be counted on until then, and no longer.
    SteadyTime valid_until() const { return valid_until_; }

private:
    void renew(run::Stoppable& protected_work);
    void declare_lost(const std::string& why, run::Stoppable& protected_work);
    std::string why_deadline_passed() const;
    Millis retry_delay();

    lock::LockClient& lock_;
    KeepPolicy policy_;
    const Logger& log_;
    SteadyTime valid_until_;
    SteadyTime next_renewal_;
    std::optional<SteadyTime> failing_since_;
    std::string last_error_;
    bool lost_ = false;
    std::string lost_because_;
    std::minstd_rand random_;
};

} // namespace redlockrun
