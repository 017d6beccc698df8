// The lock operations, each one script call (one round trip): acquire, renew, release, status, and
// the wake-up list that waiters block on.
#pragma once

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/timestamp.hpp"
#include "redis/connection.hpp"
#include "redis/script.hpp"

#include <string>

namespace redlockrun::lock {

// Who we are, as recorded in the owner hash. The token is secret: never logged.
struct Identity {
    std::string token;
    std::string host;
    std::string pid;
};

struct LockParams {
    Millis ttl{30000};
    TimestampUnit unit = TimestampUnit::milliseconds;
};

class LockClient {
public:
    LockClient(redis::Connection& connection, LockKeys keys, Identity identity, LockParams params);

    // If the login was refused but the acquire ran anyway (as the default user), the grant is
    // undone before the failure is returned: a refused operation leaves no lock behind.
    Expected<AcquireAnswer, redis::CallFailure> acquire();
    // Gives up at not_after: a renewal that answers after the lock's validity is worthless.
    Expected<RenewAnswer, redis::CallFailure> renew(const Deadline& not_after);
    Expected<ReleaseAnswer, redis::CallFailure> release();
    Expected<StatusSnapshot, redis::CallFailure> status();

    // Blocks (BLPOP) on the wake-up list for up to `timeout`; true if a token was taken. Abandoned
    // when the connection's Wakeup asks: then abandoned_with_token() says if a token had arrived.
    Expected<bool, redis::CallFailure> wait_for_wake(Millis timeout);
    // Hands a token taken by wait_for_wake() to the next waiter.
    Expected<bool, redis::CallFailure> pass_on_wake();
    static bool abandoned_with_token(const redis::CallFailure& failure);

    const LockKeys& keys() const { return keys_; }
    const redis::Endpoint& endpoint() const { return connection_.endpoint(); }

private:
    template <typename Answer>
    Expected<Answer, redis::CallFailure>
    run(const redis::Script& script, const std::vector<std::string>& args,
        Expected<Answer, std::string> (*decode)(const redis::Reply&),
        const redis::CallOptions& options = {});

    redis::Connection& connection_;
    LockKeys keys_;
    Identity identity_;
    LockParams params_;
    std::string db_;
};

} // namespace redlockrun::lock
