#include "lock/waiter.hpp"

#include "clock.hpp"
#include "fatal.hpp"

#include <algorithm>
#include <random>

namespace redlockrun::lock {

namespace {

using redis::CallFailure;

// Failures worth one reconnect: the connection had worked and then broke or stalled.
bool worth_retrying(const CallFailure& failure) {
    return failure.kind == CallFailure::Kind::closed || failure.kind == CallFailure::Kind::io ||
           failure.kind == CallFailure::Kind::timed_out;
}

[[noreturn]] void unavailable(const CallFailure& failure) {
    throw Fatal(ExitStatus::unavailable, failure.message);
}

std::string holder_text(const Busy& busy) {
    if (!busy.holder) {
        return "a client of the classic algorithm";
    }
    return fmt::format("{} (fence {})", describe(*busy.holder), busy.fence);
}

} // namespace

WaitOutcome acquire_lock(LockClient& lock, const WaitPolicy& policy, const StopRequest& stop,
                         const Logger& log) {
    const SteadyTime start = steady_now();
    // Waiting forever is a deadline far beyond any run.
    const SteadyTime deadline = start + policy.limit.value_or(max_duration);
    const bool may_wait = policy.wait && (!policy.limit || policy.limit->count() > 0);
    std::minstd_rand random(std::random_device{}());
    std::uniform_int_distribution<int> jitter_ms(0, 50);
    bool retried = false;
    bool announced = false;

    for (;;) {
        const SteadyTime requested_at = steady_now();
        auto answer = lock.acquire();
        if (!answer) {
            if (worth_retrying(answer.error()) && !retried) {
                retried = true;
                continue;
            }
            unavailable(answer.error());
        }
        retried = false;
        if (int signal_number = stop()) {
            if (std::holds_alternative<Granted>(*answer)) {
                lock.release();
            }
            return Stopped{signal_number};
        }
        const Millis waited = steady_now() - start;
        if (auto* granted = std::get_if<Granted>(&*answer)) {
            return Acquired{*granted, waited, requested_at};
        }
        if (auto* foreign = std::get_if<Foreign>(&*answer)) {
            return *foreign;
        }
        const Busy& busy = std::get<Busy>(*answer);
        if (!may_wait || steady_now() >= deadline) {
            return GaveUp{busy, waited};
        }
        if (!announced) {
            log.info("{} is held by {} for another {}; waiting", lock.keys().lock,
                     holder_text(busy), format_duration(busy.remaining));
            announced = true;
        }

        const Millis cap = busy.holder ? policy.longest_block : policy.classic_recheck;
        Millis block = std::min(busy.remaining, cap) + Millis{jitter_ms(random)};
        block = std::min(block, deadline - steady_now());
        auto woken = lock.wait_for_wake(std::max(block, Millis{1}));
        if (woken) {
            continue;
        }
        if (woken.error().kind == CallFailure::Kind::abandoned) {
            if (LockClient::abandoned_with_token(woken.error())) {
                lock.pass_on_wake(); // best effort: we are leaving anyway
            }
            return Stopped{stop()};
        }
        if (worth_retrying(woken.error()) && !retried) {
            retried = true;
            continue;
        }
        unavailable(woken.error());
    }
}

} // namespace redlockrun::lock
