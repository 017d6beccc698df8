#include "lock/waiter.hpp"

#include "base/fatal.hpp"
#include "base/random_seed.hpp"
#include "lock/validity.hpp"

#include <algorithm>
#include <random>

namespace redlockrun::lock {

namespace {

using redis::CallFailure;

// Failures that say nothing about the lock, only that Redis could not be reached: worth
// reconnecting for. The acquire script makes any retry safe: an earlier attempt's grant comes back
// as granted again.
bool unreachable(const CallFailure& failure) {
    return failure.kind == CallFailure::Kind::connect ||
           failure.kind == CallFailure::Kind::closed || failure.kind == CallFailure::Kind::io ||
           failure.kind == CallFailure::Kind::timed_out ||
           failure.kind == CallFailure::Kind::loading || // a restarted server reading its data back
           failure.kind == CallFailure::Kind::not_master || // Sentinel, in the middle of a failover
           failure.kind == CallFailure::Kind::redirected;   // Cluster nodes that disagree, still
}

// Failures of the run's first request that a wait with -w rides out: what a server restarting, or
// not yet started, looks like (a CI step whose Redis restarts for a few seconds must wait, not
// fail). Not a name that does not resolve, a refused login or a TLS certificate that is not
// accepted: no wait mends those, and the user should hear of them at once.
bool may_be_restarting(const CallFailure& failure) {
    return failure.kind == CallFailure::Kind::timed_out ||
           failure.kind == CallFailure::Kind::loading ||
           (failure.kind == CallFailure::Kind::connect && failure.no_server_answered);
}

// Failures after which the acquire may have run on the server, granting the lock, with only its
// reply lost: the request went out on a connection that then broke or spoke garbage. A new
// connection is then worth one try. Not after a timeout: a server that does not answer would be
// given --connect-timeout a second time, and that timeout bounds the whole run.
bool may_have_run(const CallFailure& failure) {
    return failure.kind == CallFailure::Kind::closed || failure.kind == CallFailure::Kind::io ||
           failure.kind == CallFailure::Kind::protocol;
}

// Who holds it, for the waiting message: an exclusive holder with its fence (and its note),
// "web1 pid 4242 (fence 17, note: deploy 42)".
std::string holder_text(const Busy& busy) {
    if (!busy.holder || busy.limit != 0) {
        return describe_holder(busy);
    }
    return busy.note.empty() ? fmt::format("{} (fence {})", describe(*busy.holder), busy.fence)
                             : fmt::format("{} (fence {}, note: {})", describe(*busy.holder),
                                           busy.fence, busy.note);
}

// A place in line: "1st", "2nd", "3rd", "4th", "11th", "21st"...
std::string place_in_line(int position) {
    const int last = position % 10;
    const bool teen = position % 100 >= 11 && position % 100 <= 13;
    const char* suffix = teen        ? "th"
                         : last == 1 ? "st"
                         : last == 2 ? "nd"
                         : last == 3 ? "rd"
                                     : "th";
    return fmt::format("{}{}", position, suffix);
}

// One run's wait for the lock.
class Waiter {
public:
    Waiter(LockClient& lock, const WaitPolicy& policy, const Interruptions& interruptions,
           const Logger& log)
        : lock_(lock), policy_(policy), interruptions_(interruptions), log_(log),
          start_(steady_now()), deadline_(start_ + policy.limit.value_or(max_duration)),
          may_wait_(policy.may_wait()), random_(random_seed()) {
        if (policy.limit) {
            lock_.set_wait_until(deadline_);
        }
    }

    WaitOutcome run();
    // Whether a busy answer has queued this waiter: one that gives up must leave the queue.
    bool queued() const { return queued_; }

private:
    using Try = Expected<Attempt, CallFailure>;

    // A grant made ready to hand over: renewed first if its first renewal is due already, or if
    // its validity ran out on the local clock (the server may have granted it late, for the whole
    // TTL). Nothing when a renewal finds it lost, or when a renewal's answer, too, comes after its
    // validity ran out and the wait allows no more (the lock was then released).
    Expected<std::optional<Acquired>, CallFailure> ready(const Granted& grant, SteadyTime sent);
    // Sits out a spell of Redis being unreachable: pauses before the next attempt, or ends the
    // wait. A signal during the pause stops it.
    std::optional<Stopped> ride_out(const CallFailure& failure);
    // Ends the wait on a failure. A grant whose reply was lost must not outlive the run: a release
    // on a new connection removes it, and deletes nothing that is not ours. A semaphore's waiter
    // queued by an earlier answer leaves the queue, and passes on a wake-up it may have been sent,
    // or the waiters behind it would wait until its place lapses; Redis may be unreachable, so
    // that is given parting_call_limit, not the connect timeout.
    [[noreturn]] void fail(const CallFailure& failure, ExitStatus status, std::string message);
    // Ends the wait on a refusal Redis has just answered with. A semaphore's waiter may be queued
    // from an earlier answer, and may have been sent a wake-up since its last BLPOP: it leaves the
    // queue and passes that on, or the waiters behind it would wait until its place lapses.
    [[noreturn]] void refuse(ExitStatus status, std::string message);
    void reachable_again();
    // Why a run was refused a lock held in another mode, or with another --limit.
    std::string describe_mismatch(const LimitMismatch& mismatch) const;
    Millis waited() const { return steady_now() - start_; }
    bool time_left() const { return may_wait_ && steady_now() < deadline_; }
    const std::string& key() const { return lock_.keys().lock; }

    LockClient& lock_;
    const WaitPolicy& policy_;
    const Interruptions& interruptions_;
    const Logger& log_;
    const SteadyTime start_;
    const SteadyTime deadline_; // waiting forever is a deadline far beyond any run
    const bool may_wait_;
    std::minstd_rand random_;
    bool answered_ = false; // Redis has answered once in this run
    bool announced_ = false;
    bool queued_ = false; // a busy answer has queued this waiter
    int position_ = 0;    // its place in line, as the last busy answer said; 0: not known
    std::optional<SteadyTime> unreachable_since_;
    bool outage_noticed_ = false;
    Millis reconnect_delay_{0};
};

WaitOutcome Waiter::run() {
    std::uniform_int_distribution<int> jitter_ms(0, 50);
    Try attempt = lock_.acquire();
    for (;;) {
        if (!attempt) {
            const CallFailure& failure = attempt.error();
            if (failure.kind == CallFailure::Kind::abandoned) {
                lock_.give_up_waiting(failure);
                return Stopped{interruptions_.stop()};
            }
            if (!may_wait_ || !unreachable(failure) ||
                (!answered_ && !(policy_.limit && may_be_restarting(failure)))) {
                fail(failure, redis::exit_status_of(failure), failure.message);
            }
            if (auto stopped = ride_out(failure)) {
                return *stopped;
            }
            attempt = lock_.acquire(); // on a new connection
            continue;
        }
        answered_ = true;
        reachable_again();
        const AcquireAnswer& answer = attempt->answer;
        if (std::holds_alternative<Busy>(answer)) {
            // Queued by it (every run that may wait is): a signal now leaves the queue too.
            queued_ = lock_.params().queue_place.count() > 0;
        }
        if (int signal_number = interruptions_.stop()) {
            if (std::holds_alternative<Granted>(answer)) {
                lock_.release();
            }
            return Stopped{signal_number};
        }
        if (auto* granted = std::get_if<Granted>(&answer)) {
            auto acquired = ready(*granted, attempt->valid_from);
            if (!acquired) {
                attempt = unexpected(std::move(acquired.error()));
                continue;
            }
            if (*acquired) {
                if (int signal_number = interruptions_.stop()) { // while it renewed
                    lock_.release();
                    return Stopped{signal_number};
                }
                return **acquired;
            }
            if (!time_left()) {
                return TooLate{waited()};
            }
            attempt = lock_.acquire();
            continue;
        }
        if (auto* foreign = std::get_if<Foreign>(&answer)) {
            return *foreign;
        }
        if (auto* mismatch = std::get_if<LimitMismatch>(&answer)) {
            refuse(ExitStatus::usage, describe_mismatch(*mismatch));
        }
        if (auto* exhausted = std::get_if<FencesExhausted>(&answer)) {
            refuse(ExitStatus::unavailable,
                   describe_exhausted(key(), lock_.keys().fence, *exhausted));
        }
        if (auto* unreadable = std::get_if<FenceUnreadable>(&answer)) {
            refuse(ExitStatus::unavailable,
                   describe_unreadable_fence(key(), lock_.keys().fence, *unreadable));
        }
        if (auto* superseded = std::get_if<Superseded>(&answer)) {
            queued_ = false; // the acquire took it out of the queue
            return SupersededWait{*superseded, waited()};
        }
        const Busy& busy = std::get<Busy>(answer);
        if (!time_left()) {
            return GaveUp{busy, waited()};
        }
        if (announced_ && busy.position > 0 && busy.position < position_) {
            log_.info("waiting for {}: now {} in line", key(), place_in_line(busy.position));
        }
        if (busy.position > 0) {
            position_ = busy.position;
        }
        if (!announced_) {
            std::string how_long =
                policy_.limit ? fmt::format("waiting up to {}", format_duration(*policy_.limit))
                              : std::string("waiting until it is free");
            if (busy.position > 0) {
                how_long += fmt::format(", {} in line", place_in_line(busy.position));
            }
            const auto said = log_.with(LogEvent("waiting"));
            const std::string took = describe_took(key(), busy);
            if (policy_.announce) {
                said.notice("{}; {}{}", describe_busy(key(), busy, holder_text(busy)), how_long,
                            took);
            } else {
                said.info("{}; {}{}", describe_busy(key(), busy, holder_text(busy)), how_long,
                          took);
            }
            announced_ = true;
        }
        // A redlockrun holder's release wakes a waiter; a classic client's plain DEL wakes no one.
        const bool wakes = busy.holder || busy.limit > 1 || busy.queued_ahead > 0;
        const Millis cap = wakes ? policy_.longest_block : policy_.classic_recheck;
        Millis block = std::min({busy.remaining, busy.recheck, cap}) + Millis{jitter_ms(random_)};
        block = std::min(block, deadline_ - steady_now());
        attempt = lock_.wait_then_acquire(std::max(block, Millis{1}));
        if (auto news = lock_.take_master_news(); !news.empty()) {
            log_.info("waiting for {}: {}", key(), news);
        }
    }
}

Expected<std::optional<Acquired>, CallFailure> Waiter::ready(const Granted& grant,
                                                             SteadyTime sent) {
    const Millis ttl = lock_.params().ttl;
    Acquired acquired{grant, Millis{0}, sent};
    for (bool renewed = false;; renewed = true) {
        const SteadyTime now = steady_now();
        const BeforeStart step = before_start(now, acquired.valid_from, acquired.grant.validity,
                                              ttl, renewed, time_left());
        if (step == BeforeStart::start) {
            break;
        }
        const Millis requested_ago = now - acquired.valid_from;
        if (step == BeforeStart::give_back) {
            // A renewal whose answer came too late as well, and no more waiting: never start the
            // command on a grant that cannot be counted on; the release deletes nothing that is
            // not ours.
            log_.info("{} was renewed, but the renewal's validity ran out on this machine's clock "
                      "{} after it was requested, before the command could start; releasing it",
                      key(), format_duration(requested_ago));
            lock_.release();
            return std::optional<Acquired>{};
        }
        if (now < validity_deadline(acquired.valid_from, acquired.grant.validity, ttl)) {
            // The BLPOP blocked, or the reply waited unread, for a third of the TTL or more (or a
            // retried acquire found little left of an earlier grant): the command would start
            // with its first renewal overdue.
            log_.info("renewing {} before the command starts: it was requested {} ago", key(),
                      format_duration(requested_ago));
        } else {
            // Nothing this machine knows says that the lock is still ours, but the server may
            // well have granted it late, for the whole TTL: a server that stalled, or a request
            // that took long to reach it. A renewal asks, and counts from its own send time; it
            // succeeds only if the lock has been ours on the server since the grant. Given back
            // instead, the lock would go to the waiters the release wakes, who came after this
            // one, and this waiter would queue behind them (docs/lock.md, "The queue").
            log_.info("{} was {}, but its validity ran out on this machine's clock {} after it "
                      "was requested, before the command could start; renewing it, in case the "
                      "server {} late",
                      key(), renewed ? "renewed" : "granted", format_duration(requested_ago),
                      renewed ? "renewed it" : "granted it");
        }
        const SteadyTime renewal_sent = steady_now();
        // An answer is of use until the renewal's own validity would have run out.
        auto renewal = lock_.renew(validity_deadline(renewal_sent, ttl, ttl));
        if (!renewal) {
            lock_.release(); // best effort: a grant that will not be used is not left behind
            return unexpected(std::move(renewal.error()));
        }
        if (auto* lost = std::get_if<Lost>(&*renewal)) {
            log_.info("{} was lost before the command could start: {}", key(), describe(*lost));
            return std::optional<Acquired>{};
        }
        const auto& renewed_grant = std::get<Renewed>(*renewal);
        acquired.grant.value = renewed_grant.value;
        acquired.grant.validity = renewed_grant.validity;
        acquired.valid_from = renewal_sent;
    }
    acquired.waited = waited();
    acquired.after_busy = announced_;
    return std::optional<Acquired>{acquired};
}

void Waiter::fail(const CallFailure& failure, ExitStatus status, std::string message) {
    const bool ran = may_have_run(failure);
    if (ran) {
        lock_.release();
    }
    // An acquire whose answer was lost may have queued this run (every run that may wait is
    // queued when it finds the lock held): its place would hold up the waiters behind it, and
    // keep a free lock from runs with -n, until it lapsed.
    if (queued_ || (ran && lock_.params().queue_place.count() > 0)) {
        lock_.leave_queue(steady_now() + parting_call_limit);
    }
    throw Fatal(status, std::move(message));
}

void Waiter::refuse(ExitStatus status, std::string message) {
    if (queued_) {
        lock_.leave_queue();
    }
    throw Fatal(status, std::move(message));
}

std::optional<Stopped> Waiter::ride_out(const CallFailure& failure) {
    const SteadyTime now = steady_now();
    if (!unreachable_since_) {
        unreachable_since_ = now;
        reconnect_delay_ = policy_.first_reconnect_delay;
        if (answered_) {
            log_.info("{}; reconnecting, to keep waiting for {}", failure.message, key());
        } else {
            log_.info("{}; trying again until -w's {} are up, as Redis may be restarting",
                      failure.message, format_duration(*policy_.limit));
        }
    } else if (!outage_noticed_ && now - *unreachable_since_ >= policy_.outage_notice_after) {
        outage_noticed_ = true;
        log_.notice("Redis has been unreachable for {} while waiting for {} ({}); still trying",
                    format_duration(now - *unreachable_since_), key(), failure.message);
    }
    if (now >= deadline_) {
        fail(failure, ExitStatus::unavailable,
             fmt::format("gave up waiting for {} after {}: Redis was unreachable for the last {} "
                         "({})",
                         key(), format_duration(waited()),
                         format_duration(now - *unreachable_since_), failure.message));
    }
    std::uniform_int_distribution<long long> jittered(reconnect_delay_.count() / 2,
                                                      reconnect_delay_.count());
    interruptions_.pause(std::min(Millis{jittered(random_)}, deadline_ - now));
    reconnect_delay_ = std::min(reconnect_delay_ * 2, policy_.longest_reconnect_delay);
    if (int signal_number = interruptions_.stop()) {
        return Stopped{signal_number};
    }
    return std::nullopt;
}

std::string Waiter::describe_mismatch(const LimitMismatch& mismatch) const {
    const std::string ours = lock_.params().shared
                                 ? std::string("a --shared run")
                                 : fmt::format("a run with --limit {}", lock_.params().limit);
    if (mismatch.held_limit == "shared") {
        return fmt::format("{} is held by shared holders (--shared); {} cannot share it (shared "
                           "holders and a semaphore's never mix on one key); nothing was changed",
                           key(), ours);
    }
    const std::string why = lock_.params().shared
                                ? "shared holders and a semaphore's never mix on one key"
                                : "every holder must use the same limit";
    return fmt::format("{} is held as a --limit {} semaphore; {} cannot share it ({}); nothing "
                       "was changed",
                       key(), mismatch.held_limit, ours, why);
}

void Waiter::reachable_again() {
    if (!unreachable_since_) {
        return;
    }
    const Millis outage = steady_now() - *unreachable_since_;
    if (outage_noticed_) {
        log_.notice("reached Redis again after {}", format_duration(outage));
    } else {
        log_.info("reached Redis again after {}", format_duration(outage));
    }
    unreachable_since_.reset();
    outage_noticed_ = false;
}

} // namespace

WaitOutcome acquire_lock(LockClient& lock, const WaitPolicy& policy,
                         const Interruptions& interruptions, const Logger& log) {
    Waiter waiter(lock, policy, interruptions, log);
    WaitOutcome outcome = waiter.run();
    if (waiter.queued() && !std::holds_alternative<Acquired>(outcome)) {
        lock.leave_queue(); // a waiter that gives up must not hold up those behind it
    }
    return outcome;
}

} // namespace redlockrun::lock
