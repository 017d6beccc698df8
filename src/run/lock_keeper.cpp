#include "run/lock_keeper.hpp"

#include "base/random_seed.hpp"
#include "lock/validity.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace redlockrun {

using lock::validity_deadline;

LockKeeper::LockKeeper(lock::LockClient& lock, const KeepPolicy& policy, SteadyTime valid_from,
                       Millis validity, const Logger& log)
    : lock_(lock), policy_(policy), log_(log),
      valid_until_(validity_deadline(valid_from, validity, policy.ttl)),
      next_renewal_(lock::renewal_due(valid_from, validity, policy.ttl)), random_(random_seed()) {}

Deadline LockKeeper::next_due() const {
    if (lost_) {
        return std::nullopt;
    }
    return policy_.renew ? std::min(next_renewal_, valid_until_) : valid_until_;
}

void LockKeeper::on_due(run::Supervisor& supervisor) {
    keep(supervisor);
}

void LockKeeper::keep(run::Stoppable& protected_work) {
    if (lost_) {
        return;
    }
    if (steady_now() >= valid_until_) {
        declare_lost(why_deadline_passed(), protected_work);
        return;
    }
    if (policy_.renew && steady_now() >= next_renewal_) {
        renew(protected_work);
    }
}

bool LockKeeper::renew_now(run::Stoppable& protected_work) {
    if (!lost_ && steady_now() >= valid_until_) {
        declare_lost(why_deadline_passed(), protected_work);
    }
    if (!lost_) {
        renew(protected_work);
    }
    return lost_ || !failing_since_;
}

void LockKeeper::renew(run::Stoppable& protected_work) {
    const auto& key = lock_.keys().lock;
    const SteadyTime sent = steady_now();
    auto answer = lock_.renew(valid_until_);
    if (auto news = lock_.take_master_news(); !news.empty()) {
        log_.info("before renewing {}: {}", key, news);
    }
    // Redis expires keys by its clock: a jump forward can end the lock, and the loss says why.
    const std::string jump = lock_.take_clock_news();
    if (!answer) {
        const bool first_failure = !failing_since_;
        if (first_failure) {
            failing_since_ = sent;
        }
        last_error_ = answer.error().message;
        // What is left is counted from now, after the attempt, which may have used up the rest.
        const SteadyTime now = steady_now();
        if (now >= valid_until_) {
            declare_lost(why_deadline_passed(), protected_work);
            return;
        }
        if (first_failure) {
            log_.notice("cannot renew {}: {}; retrying for up to {}", key, answer.error().message,
                        format_duration(valid_until_ - now));
        } else {
            log_.info("renewing {} failed again: {}", key, answer.error().message);
        }
        next_renewal_ = now + retry_delay();
        return;
    }
    if (auto* lost = std::get_if<lock::Lost>(&*answer)) {
        declare_lost(jump.empty() ? lock::describe(*lost)
                                  : fmt::format("{}, and {}", lock::describe(*lost), jump),
                     protected_work);
        return;
    }
    if (!jump.empty()) {
        log_.info("renewing {}: {}", key, jump);
    }
    const auto& renewed = std::get<lock::Renewed>(*answer);
    valid_until_ = validity_deadline(sent, renewed.validity, policy_.ttl);
    next_renewal_ = sent + policy_.ttl / 3;
    if (failing_since_) {
        log_.notice("renewed {} again after {} of failures", key,
                    format_duration(sent - *failing_since_));
        failing_since_.reset();
    }
    log_.with(LogEvent("renewed"))
        .info("renewed {} in {}", key, format_duration(steady_now() - sent));
}

std::string LockKeeper::why_deadline_passed() const {
    if (!policy_.renew) {
        return fmt::format("its TTL of {} ran out (--no-renew)", format_duration(policy_.ttl));
    }
    if (failing_since_) {
        return fmt::format("no renewal succeeded for {} ({})",
                           format_duration(steady_now() - *failing_since_), last_error_);
    }
    // Renewals were not even attempted in time: redlockrun itself was stopped or starved.
    return "it could not be renewed in time (was redlockrun suspended?)";
}

void LockKeeper::declare_lost(const std::string& why, run::Stoppable& protected_work) {
    lost_ = true;
    lost_because_ = why;
    const auto& key = lock_.keys().lock;
    if (policy_.on_lost == OnLost::ignore) {
        log_.with(LogEvent("lost"))
            .error("lost the lock on {}: {}; {} runs on without it (--on-lost ignore)", key, why,
                   policy_.protected_work);
        return;
    }
    log_.with(LogEvent("lost"))
        .error("lost the lock on {}: {}; stopping {} (SIGTERM, SIGKILL after {})", key, why,
               policy_.protected_work, format_duration(policy_.kill_after));
    protected_work.terminate(policy_.kill_after);
}

Millis LockKeeper::retry_delay() {
    // A tenth to a twentieth of the TTL, so that several retries fit before the deadline; jittered
    // so that holders of many locks on one server do not retry in step.
    const auto low = std::clamp(policy_.ttl / 20, Millis{10}, Millis{500});
    const auto high = std::clamp(policy_.ttl / 10, Millis{20}, Millis{1000});
    std::uniform_int_distribution<long long> pick(low.count(), high.count());
    return Millis{pick(random_)};
}

} // namespace redlockrun
