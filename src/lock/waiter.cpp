#include "lock/waiter.hpp"

#include "clock.hpp"
#include "fatal.hpp"
#include "random_seed.hpp"

#include <algorithm>
#include <random>

namespace redlockrun::lock {

namespace {

using redis::CallFailure;

// Failures worth one reconnect: the connection had worked and then broke or stalled.
bool worth_retrying(const CallFailure& failure) {
    return failure.connection_had_worked &&
           (failure.kind == CallFailure::Kind::closed || failure.kind == CallFailure::Kind::io ||
            failure.kind == CallFailure::Kind::timed_out);
}

[[noreturn]] void unavailable(const CallFailure& failure) {
    throw Fatal(redis::exit_status_of(failure), failure.message);
}

std::string holder_text(const Busy& busy) {
    const std::string holder = describe_holder(busy);
    return busy.holder ? fmt::format("{} (fence {})", holder, busy.fence) : holder;
}

} // namespace

WaitOutcome acquire_lock(LockClient& lock, const WaitPolicy& policy, const StopRequest& stop,
                         const Logger& log) {
    const SteadyTime start = steady_now();
    // Waiting forever is a deadline far beyond any run.
    const SteadyTime deadline = start + policy.limit.value_or(max_duration);
    const bool may_wait = policy.wait && (!policy.limit || policy.limit->count() > 0);
    std::minstd_rand random(random_seed());
    std::uniform_int_distribution<int> jitter_ms(0, 50);
    bool retried = false;
    bool announced = false;

    auto attempt = lock.acquire();
    for (;;) {
        if (!attempt) {
            const CallFailure& failure = attempt.error();
            if (failure.kind == CallFailure::Kind::abandoned) {
                lock.give_up_waiting(failure);
                return Stopped{stop()};
            }
            if (worth_retrying(failure) && !retried) {
                retried = true;
                attempt = lock.acquire(); // on a new connection
                continue;
            }
            unavailable(failure);
        }
        retried = false;
        const AcquireAnswer& answer = attempt->answer;
        if (int signal_number = stop()) {
            if (std::holds_alternative<Granted>(answer)) {
                lock.release();
            }
            return Stopped{signal_number};
        }
        const Millis waited = steady_now() - start;
        if (auto* granted = std::get_if<Granted>(&answer)) {
            return Acquired{*granted, waited, attempt->valid_from};
        }
        if (auto* foreign = std::get_if<Foreign>(&answer)) {
            return *foreign;
        }
        const Busy& busy = std::get<Busy>(answer);
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
        attempt = lock.wait_then_acquire(std::max(block, Millis{1}));
    }
}

} // namespace redlockrun::lock
