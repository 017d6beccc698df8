// Getting the lock, waiting for it if need be (DESIGN §2). Waiting blocks on the wake-up list that
// a release pushes to, so a waiter wakes the moment the lock is free; a holder that crashed is
// caught by the BLPOP timeout (the holder's remaining validity, plus jitter, capped). Nothing
// polls.
//
// A grant is handed over only while it can be counted on: its validity counts from the send time of
// the request the server granted (lock/validity.hpp). A grant whose first renewal is already due
// by then is renewed first, and so is one whose validity has run out on the local clock: the
// server may have run the request late (it stalled), and granted the lock for the whole TTL. The
// renewal counts from its own send time, and succeeds only if the lock has been ours since the
// grant: the waiter then keeps the lock it waited for in turn, rather than giving it to those
// queued behind it. A grant the renewal finds lost (redlockrun was paused past the TTL, and the
// server let it expire) is waited for again.
//
// A wait survives a lost connection or a restarted server: once Redis has answered, a broken
// connection is reconnected with jittered backoff for as long as the wait allows. The run's first
// request is tried again so too, within -w only, when the server refused the connection, did not
// answer or is LOADING (a CI step whose Redis restarts should wait, not fail); without -w, and for
// a name that does not resolve, a refused login or a TLS failure, it fails at once.
#pragma once

#include "base/clock.hpp"
#include "base/log.hpp"
#include "lock/lock_client.hpp"

#include <functional>
#include <optional>
#include <variant>

namespace redlockrun::lock {

struct WaitPolicy {
    bool wait = true;            // false: -n
    std::optional<Millis> limit; // -w; none: wait forever
    Millis longest_block{5000};  // cap on one BLPOP, so that renewals and lost tokens are seen
    // How long a semaphore's waiter keeps its place in the queue after asking: it asks again
    // within longest_block, so only a waiter that is gone (or paused, or cut off) loses it.
    Millis queue_place{10000};
    // A client of the classic algorithm releases with a plain DEL, which wakes no one: a lock it
    // holds is checked again this often.
    Millis classic_recheck{100};
    // Reconnecting while Redis is unreachable: jittered delays that double from the first to the
    // longest, so that waiters neither hammer a restarting server nor reconnect in step.
    Millis first_reconnect_delay{100};
    Millis longest_reconnect_delay{2000};
    // How long Redis may stay unreachable during a wait before a notice says so (-v says at once).
    Millis outage_notice_after{10000};
    // Say once, unless -q, that the run waits and for whom: where someone watches it wait (stderr
    // is a terminal, or a CI system's log). Otherwise only -v says so: cron mail stays empty.
    bool announce = false;

    // Whether a busy lock is waited for at all: not with -n, nor with -w 0.
    bool may_wait() const { return wait && (!limit || limit->count() > 0); }
};

struct Acquired {
    Granted grant; // its validity as last confirmed: by the grant, or by a renewal before the start
    Millis waited{0};
    SteadyTime valid_from;   // the send time of the request that confirmed that validity
    bool after_busy = false; // the lock was held when this run first asked: it waited for it
};

struct GaveUp {
    Busy last;
    Millis waited{0};
};

// The lock was granted, but its validity ran out on the local clock before the command could start
// (redlockrun was suspended or starved) and a renewal found it lost, or came too late as well, and
// the wait allowed no further attempt. Nothing is left locked.
struct TooLate {
    Millis waited{0};
};

struct Stopped {
    int signal_number = 0;
};

// A newer waiter with --supersede ended the wait (this run asked for --supersede too). Nothing is
// left locked or queued.
struct SupersededWait {
    Superseded by;
    Millis waited{0};
};

using WaitOutcome = std::variant<Acquired, GaveUp, TooLate, Foreign, Stopped, SupersededWait>;

// What the wait needs from the run around it. The lock client's connection is expected to abandon a
// BLPOP when a signal asks redlockrun to stop.
struct Interruptions {
    // The signal that asks redlockrun to stop, or 0.
    std::function<int()> stop;
    // Sleeps for up to the duration; returns early when a signal arrives.
    std::function<void(Millis)> pause;
};

// Redis failures before Redis has answered once (but for those above, within -w), and errors it
// answers with, end the run: Fatal(unavailable); so does a fence counter that is used up. A wait
// that runs out while Redis is unreachable is Fatal(unavailable) too, saying for how long it was. A
// wait abandoned for a signal leaves nothing behind (LockClient::give_up_waiting). Whatever ends a
// semaphore's wait without the lock, its waiter leaves the queue, passing on a wake-up it was sent;
// after a failure that is given parting_call_limit, and a place not given up lapses by itself.
WaitOutcome acquire_lock(LockClient& lock, const WaitPolicy& policy,
                         const Interruptions& interruptions, const Logger& log);

} // namespace redlockrun::lock
