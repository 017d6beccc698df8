// The lock operations, each one script call (one round trip): acquire, renew, release, status, and
// the wake-up list that waiters block on.
#pragma once

#include "base/clock.hpp"
#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/server_clock.hpp"
#include "lock/timestamp.hpp"
#include "redis/connection.hpp"
#include "redis/script.hpp"

#include <optional>
#include <string>
#include <utility>

namespace redlockrun::lock {

// A waiter id for a run of this mode: its mode first ("x-", "s-" or "nN-", as the scripts read it),
// then random hex digits.
std::string waiter_id_for(int limit, bool shared);

// Who we are, as recorded in the owner hash. The token is secret: never logged.
struct Identity {
    std::string token;
    std::string host;
    std::string pid;
    // A waiter is queued, and woken, under this id: public, unlike the token. It begins with the
    // mode the queue tells waiters apart by (waiter_id_for()); empty for a run that does not wait.
    std::string waiter_id;
    // Why this holder holds the lock (--note), shown to whoever finds it held; empty: none.
    std::string note;
    // A hold's (--hold): the record says so, and its pid is the hold's owner's.
    bool hold = false;
    // --supersede: when it has to wait, this run ends the earlier waiters that asked for it too.
    bool supersede = false;
};

enum class CommandRan { no, yes };

// How long a run on its way out after a failure gives a call that only tidies up: passing on a
// wake-up token, leaving a semaphore's queue. Redis may be unreachable, and what such a call gives
// back lapses by itself (a token at the next waiter's BLPOP timeout, a queue place
// WaitPolicy::queue_place after its last request), so it must not cost --connect-timeout again.
// Long enough for a round trip to a server that answers, on a new connection if need be.
inline constexpr Millis parting_call_limit{500};

struct LockParams {
    Millis ttl{30000};
    TimestampUnit unit = TimestampUnit::milliseconds;
    Millis min_hold{0};  // --min-hold: the lock stays held at least this long after the grant
    int limit = 1;       // --limit: 1 is an exclusive lock, N a semaphore of N holders
    bool shared = false; // --shared: one of up to shared_cap holders, none of them exclusive
    // How long a waiter keeps its place in the queue after each busy answer without asking
    // again; 0 for a run that does not wait (it is not queued).
    Millis queue_place{0};
    // --replicas: every grant and renewal is followed, in the same write, by WAIT for this many
    // replicas, for up to replica_wait.
    int replicas = 0;
    Millis replica_wait{5000};
    // How often the holder renews the lock (0: --no-renew); kept in the owner record so that a run
    // that finds the lock held can say so rather than show the lease as a time left.
    Millis renew_every{0};
};

// An answer to an acquire, with the time its request was sent: no later than when the server ran
// it, so a grant's validity counts from there (lock/validity.hpp).
struct Attempt {
    AcquireAnswer answer;
    SteadyTime valid_from;
};

class LockClient {
public:
    LockClient(redis::Connection& connection, LockKeys keys, Identity identity, LockParams params);

    // If the login was refused but the acquire ran anyway (as the default user), the grant is
    // undone before the failure is returned: a refused operation leaves no lock behind. So is a
    // grant that fewer than --replicas replicas confirmed (an error_reply failure saying so).
    Expected<Attempt, redis::CallFailure> acquire();

    // Blocks (BLPOP) on the wake-up list for up to `timeout` (10 ms at least, a timeout every
    // supported server reads as one), with the acquire pipelined behind it:
    // Redis runs it the moment the BLPOP returns, token or not, which saves the round trip a waiter
    // would otherwise make after waking. Its validity counts from the send time of the pair. A
    // grant is returned even if the BLPOP failed; a BLPOP error without a grant is a failure. A
    // wake-up token taken for anything but a grant or a busy answer (a failure, a foreign key, a
    // refusal) is passed on, also when the acquire had to be sent again in full (NOSCRIPT: the
    // server lost its scripts); after a failure, within parting_call_limit. Abandoned when the
    // connection's Wakeup asks; then give_up_waiting() must run.
    Expected<Attempt, redis::CallFailure> wait_then_acquire(Millis timeout);

    // After an abandoned wait_then_acquire(): its acquire may have run, and won, just before, and
    // it may have taken a wake-up token. Releases what may be ours; otherwise leaves the queue,
    // passing on the wake-up it may have been sent. Best effort.
    void give_up_waiting(const redis::CallFailure& abandoned);

    // Gives up at not_after: a renewal that answers after the lock's validity is worthless. A
    // renewal that fewer than --replicas replicas confirmed is a failure, to be retried.
    Expected<RenewAnswer, redis::CallFailure> renew(const Deadline& not_after);
    // A release that the connection had to send twice (connection.hpp) and that finds the lock
    // gone counts as released: the first one ran, and only its answer was lost. With --min-hold,
    // the release after the command ran, if before that time, leaves the lock to expire then
    // (Released::kept_for); a grant whose command never ran is always given back at once. On Redis
    // Cluster, redirects are followed until valid_until, the lock's validity deadline, if that
    // comes later than the request's own time: a release that gives up while the nodes disagree
    // about the slot would leave the lock held until its TTL.
    Expected<ReleaseAnswer, redis::CallFailure> release(CommandRan command_ran = CommandRan::no,
                                                        const Deadline& valid_until = {});
    Expected<StatusSnapshot, redis::CallFailure> status();
    // --break: ends every holder's claim, saying `by` whom and `why` to each at its next renewal.
    Expected<BreakAnswer, redis::CallFailure> break_lock(const std::string& by,
                                                         const std::string& why);
    // A waiter that gives up, or takes a wake-up it will not use, leaves the queue, and passes on
    // the wake-up it may have been sent to the waiters that may hold the lock now, and the shared
    // list's token if it took that (`shared_token`); within not_after, if given, and then in one
    // request (the script sent in full). Best effort: a place not given up lapses by itself.
    void leave_queue(const Deadline& not_after = {}, bool shared_token = false);

    // -w's end, for the waiter's record (--status shows it); none: waiting without a limit.
    void set_wait_until(std::optional<SteadyTime> until) { wait_until_ = until; }

    const LockKeys& keys() const { return keys_; }
    const LockParams& params() const { return params_; }
    // For a hold's record, which a --release reads if the keeper does not answer.
    const std::string& token() const { return identity_.token; }
    const redis::Endpoint& endpoint() const { return connection_.endpoint(); }
    // Sentinel: what the sentinel asked before the last renewal or wait found, if it named another
    // master or did not answer; empty otherwise. For -v.
    std::string take_master_news() { return connection_.take_master_news(); }
    // A jump of the server's clock that the last grant or renewal showed (ServerClock), once;
    // empty if it showed none.
    std::string take_clock_news() { return std::exchange(clock_news_, {}); }

private:
    template <typename Answer>
    Expected<Answer, redis::CallFailure>
    run(const redis::Script& script, const std::vector<std::string>& args,
        Expected<Answer, std::string> (*decode)(const redis::Reply&),
        const redis::CallOptions& options = {});
    std::vector<std::string> with_db(const std::vector<std::string>& args) const;
    std::vector<std::string> acquire_args() const;
    // ARGV[14] of the acquire: -w's time left in ms, or empty without -w.
    std::string wait_left() const;
    // The mode, as the scripts take it: "1" (exclusive), "shared", or a semaphore's N.
    std::string limit_arg() const {
        return params_.shared ? std::string("shared") : std::to_string(params_.limit);
    }
    // The lists this run blocks on: its own, named after its waiter id, where a release wakes
    // the waiters it lets in (every waiter is queued: holders.lua), and for an exclusive waiter
    // that its last answer put first or second in line, the shared wake-up list too, whose token
    // Redis gives the live waiter that blocked longest: should the first in line have been
    // killed, the second learns at once.
    std::vector<std::string> wake_lists() const;
    // Whether a BLPOP's reply is the shared wake-up list's token.
    bool took_shared_token(const redis::Reply& woken) const;
    // Keeps what a busy answer says of this waiter's place in the queue.
    void note_place(const Expected<Attempt, redis::CallFailure>& attempt);
    // Compares the server's time in an answer to a request sent at `sent` with the last one.
    void note_server_time(const std::optional<long long>& server_ms, SteadyTime sent);
    Expected<Attempt, redis::CallFailure> acquire_once();
    Expected<Attempt, redis::CallFailure> wait_then_acquire_once(Millis timeout);
    // After a refused login, the acquire at this position of the replies may still have won.
    void undo_if_granted(const redis::CallFailure& failure, size_t acquire_index);
    // The WAIT that follows a grant or a renewal with --replicas; none without.
    std::vector<redis::Command> confirmation() const;
    // The failure to report if `wait_reply` (WAIT's answer) counts fewer replicas than asked for.
    std::optional<redis::CallFailure> unconfirmed(const redis::Reply& wait_reply,
                                                  const char* what) const;
    // A grant that the replicas did not confirm is released, and the failure returned.
    Expected<Attempt, redis::CallFailure> confirmed(Expected<Attempt, redis::CallFailure> attempt,
                                                    const redis::Reply* wait_reply);

    redis::Connection& connection_;
    LockKeys keys_;
    Identity identity_;
    LockParams params_;
    std::string db_;
    // When this waiter first asked, as the server said (Busy::since_us): its record keeps it.
    std::string since_us_;
    bool near_front_ = false; // an exclusive waiter first or second in line at its last answer
    std::optional<SteadyTime> wait_until_;
    ServerClock server_clock_;
    std::string clock_server_; // the server whose clock server_clock_ watches
    std::string clock_news_;
};

} // namespace redlockrun::lock
