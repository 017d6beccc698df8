// Getting the lock, waiting for it if need be (DESIGN §2). Waiting blocks on the wake-up list that
// a release pushes to, so a waiter wakes the moment the lock is free; a holder that crashed is
// caught by the BLPOP timeout (the holder's remaining validity, plus jitter, capped). Nothing
// polls.
#pragma once

#include "clock.hpp"
#include "lock/lock_client.hpp"
#include "log.hpp"

#include <functional>
#include <optional>
#include <variant>

namespace redlockrun::lock {

struct WaitPolicy {
    bool wait = true;            // false: -n
    std::optional<Millis> limit; // -w; none: wait forever
    Millis longest_block{5000};  // cap on one BLPOP, so that renewals and lost tokens are seen
    // A client of the classic algorithm releases with a plain DEL, which wakes no one: a lock it
    // holds is checked again this often.
    Millis classic_recheck{100};
};

struct Acquired {
    Granted grant;
    Millis waited{0};
    SteadyTime valid_from; // the grant's validity counts from here (Attempt::valid_from)
};

struct GaveUp {
    Busy last;
    Millis waited{0};
};

struct Stopped {
    int signal_number = 0;
};

using WaitOutcome = std::variant<Acquired, GaveUp, Foreign, Stopped>;

// Returns the signal that asks redlockrun to stop, or 0. The lock client's connection is expected
// to abandon a BLPOP when such a signal arrives.
using StopRequest = std::function<int()>;

// Redis failures end the run: Fatal(unavailable). A connection that breaks after it has worked is
// reconnected once; the acquire script makes the retry safe. A wait abandoned for a signal leaves
// nothing behind (LockClient::give_up_waiting).
WaitOutcome acquire_lock(LockClient& lock, const WaitPolicy& policy, const StopRequest& stop,
                         const Logger& log);

} // namespace redlockrun::lock
