// What the lock scripts answer, as plain values a caller switches on, and their decoding from
// replies. Decoding is separate from I/O so that it can be tested without a server.
#pragma once

#include "base/duration.hpp"
#include "base/expected.hpp"
#include "redis/reply.hpp"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace redlockrun::lock {

// How many shared holders (--shared) a lock lets in at once; past it, a shared request waits. The
// scripts hold the same number (common.lua's shared_cap).
inline constexpr int shared_cap = 100;

// Who holds a lock taken by redlockrun.
struct Holder {
    std::string host;
    std::string pid;
};

struct Granted {
    std::string value; // what the lock key now holds
    std::string fence; // the fencing token of this grant
    Millis validity{0};
    // The server's clock (Unix ms) when it ran the script; none from a script that does not say.
    std::optional<long long> server_ms;
    // A semaphore holder's slot, 0 to N - 1, unique among the key's holders (REDLOCKRUN_SLOT);
    // none for an exclusive or shared holder.
    std::optional<int> slot;
};

struct Busy {
    Millis remaining{0};
    std::optional<Holder> holder; // none: a client of the classic algorithm holds it
    std::string fence;            // empty for a classic holder
    // A semaphore (--limit) holds it: its limit and how many hold it now; `holder` is then the one
    // whose slot frees first. 0: an exclusive lock. Shared holders (--shared) count as a semaphore
    // of shared_cap.
    int limit = 0;
    int holders = 0;
    bool shared = false;
    // When to ask again at the latest: before `remaining` is up when a --min-hold time may free
    // the lock without waking anyone.
    Millis recheck{0};
    // The lock would let this run in but for the waiters queued before it, which have been woken
    // to take it first (or, behind shared holders, an exclusive waiter that waits for them): how
    // many are queued before it. 0: none. `remaining` is then when the first of them loses its
    // place if it does not ask again.
    int queued_ahead = 0;
    // What the holder's record says of its time, by the server's clock (of the semaphore's holder
    // whose slot frees first); none where it does not say (a client of the classic algorithm, a
    // record written by an older redlockrun).
    std::optional<Millis> held_for;    // since the grant
    std::optional<Millis> renew_every; // how often the holder renews; 0: it does not (--no-renew)
    std::optional<Millis> ended_ago;   // its command ended this long ago; --min-hold keeps the lock
    // Why that holder holds the lock (--note), as it was written: any bytes. Empty: no note.
    std::string note;
    // This waiter is in the queue: it blocks on a wake-up list of its own. An exclusive waiter
    // that is not (no one was queued, and no shared or semaphore holder held the key) blocks on
    // the shared wake-up list.
    bool queued = false;
    // How long the last holds of the lock took: the median of the last `took_count` (up to 20)
    // releases' durations; none before the first release recorded one.
    std::optional<Millis> took_median;
    int took_count = 0;
    // This waiter's place in line (1: served next) and how many wait in all; 0 where not known
    // (a run that does not wait).
    int position = 0;
    int in_line = 0;
    // When this waiter first asked, by the server's clock in microseconds, for it to say again in
    // its next requests; empty where not known.
    std::string since_us;
};

// A newer waiter with --supersede ended this waiter's wait (it asked for --supersede too): it has
// left the queue.
struct Superseded {
    std::optional<Holder> by; // none if the newer one's record named no one
    std::string note;         // the newer one's --note; empty: none
};

struct Foreign {
    std::string type; // Redis type of the key: "string" (not a timestamp), "list", "hash"...
};

// The lock is free, but the fence counter has reached the largest fence the scripts can count
// exactly (2^53 - 1): the next fence would not be larger than the last, so the lock is not granted
// and nothing is written.
struct FencesExhausted {
    std::string last_fence; // what the counter holds
};

// The lock is free, but the fence counter holds no number (someone else wrote to redlockrun's key):
// no fence can be counted from it, so the lock is not granted and nothing is written.
struct FenceUnreadable {
    // Redis type of the counter: "string" (a value that is not a number), "hash"...
    std::string type;
};

// The holders use another --limit, or are shared holders where a semaphore's were asked for, or
// the other way round: the request is refused, and nothing is written.
struct LimitMismatch {
    std::string held_limit; // "shared", or the semaphore's N
};

enum class LossReason {
    gone,    // the key and the owner record are both gone: expired (or deleted together)
    deleted, // the key was deleted while our owner record remained
    changed, // the key was overwritten, e.g. by a client of the classic algorithm
    taken,   // another redlockrun holds it now
    expired, // the key still holds our timestamp, but its time has passed
    record,  // the owner record was overwritten with another type: nothing proves the lock ours
    broken,  // an operator ended it with --break
};

struct Lost {
    LossReason reason = LossReason::gone;
    std::optional<Holder> taker;        // for taken
    std::string broken_by;              // for broken: "USER@HOST pid PID"
    std::string broken_because;         // for broken: the reason the operator gave, or ""
    std::optional<long long> server_ms; // as in Granted
};

// What --break ended: each holder as its record described it.
struct BrokenHolder {
    std::optional<Holder> holder; // none: a client of the classic algorithm
    std::string fence;
    std::string note;
};

struct Broken {
    std::vector<BrokenHolder> holders; // empty: the lock was free
};

using BreakAnswer = std::variant<Broken, Foreign>;

struct Renewed {
    std::string value;
    Millis validity{0};
    std::optional<long long> server_ms; // as in Granted
};

struct Released {
    // --min-hold: the command ended early, so the lock stays held this much longer.
    std::optional<Millis> kept_for;
};

using AcquireAnswer = std::variant<Granted, Busy, Foreign, FencesExhausted, FenceUnreadable,
                                   LimitMismatch, Superseded>;
using RenewAnswer = std::variant<Renewed, Lost>;
using ReleaseAnswer = std::variant<Released, Lost>;

// One holder as the owner record describes it (the status script). Times are Unix times in ms by
// the server's clock; none where the record does not say.
struct HolderRecord {
    Holder holder;
    std::string fence;
    std::optional<long long> acquired_ms;
    std::optional<long long> expires_ms;
    // --min-hold: the lock is kept until then, whatever the command does.
    std::optional<long long> hold_until_ms;
    // The command ended then, and the lock is kept for --min-hold.
    std::optional<long long> ended_ms;
    // How often the holder renews, in ms: 0 for --no-renew; none where the record does not say.
    std::optional<long long> renew_ms;
    // Why it holds the lock (--note), as it was written: any bytes. Empty: no note.
    std::string note;
    // A hold (--hold): pid is the hold's owner's.
    bool hold = false;
    // A semaphore holder's slot, as its record says it (any text); empty: none.
    std::string slot;
};

// One waiter as its record describes it (the status script). Times are Unix times in ms by the
// server's clock; none where the record does not say (a waiter queued with no record, of an
// earlier version or of an ACL user without PTTL, shows only its mode).
struct WaiterRecord {
    Holder waiter;
    std::string mode; // "1" (exclusive), "shared", or a semaphore's N
    std::optional<long long> since_ms;
    std::optional<long long> deadline_ms; // -w's end; none: it waits until the lock is free
    std::string note;
    bool supersede = false;
    bool hold = false;
};

// The raw state of a lock, as the status script reads it; lock_state.cpp interprets it.
struct StatusSnapshot {
    long long now_ms = 0;
    std::string type; // "none", "string", ...
    std::string value;
    std::string owner_value; // the value the owner record says redlockrun wrote
    std::string last_fence;  // the fence counter
    // A semaphore's N (--limit), shared_cap for shared holders; none for an exclusive lock.
    std::optional<long long> limit;
    bool shared = false; // held by shared holders (--shared)
    // How long the last holds took: the median and the longest of the last `took_count`
    // releases' durations (up to 20); none before the first release recorded one.
    std::optional<long long> took_median_ms;
    std::optional<long long> took_longest_ms;
    int took_count = 0;
    // The owner record's holders, in no particular order: one for an exclusive lock, the live ones
    // of a semaphore. They hold the key only if owner_value is its value.
    std::vector<HolderRecord> holders;
    // Who waits, in the order they will be served.
    std::vector<WaiterRecord> waiters;
};

// Each fails with a description of the unexpected reply.
Expected<AcquireAnswer, std::string> decode_acquire(const redis::Reply& reply);
Expected<RenewAnswer, std::string> decode_renew(const redis::Reply& reply);
Expected<ReleaseAnswer, std::string> decode_release(const redis::Reply& reply);
Expected<BreakAnswer, std::string> decode_break(const redis::Reply& reply);
Expected<StatusSnapshot, std::string> decode_status(const redis::Reply& reply);

// "web1 pid 4242"
std::string describe(const Holder& holder);
// A holder's --note, to follow its name in a message: " (note: deploy 42)"; "" for no note. The
// logger and the status line make its bytes printable.
std::string describe_note(const std::string& note);
// The newer waiter that superseded this one: "web1 pid 4242 (note: deploy 43)".
std::string describe_superseding(const Superseded& superseded);
// "; holds of deploy took 4m12s (median of the last 20)", or nothing before a release recorded one.
std::string describe_took(const std::string& key, const Busy& busy);
// Who holds a busy lock, with the holder's note: "web1 pid 4242 (note: deploy 42)", "a client
// of the classic algorithm", or "3 holders of a --limit 3 semaphore (the note of web1 pid 4242,
// whose slot frees first: deploy 42)".
std::string describe_holder(const Busy& busy);
// What keeps the lock named `key` from a run, for a message, where `holder` says who
// (describe_holder(), or more). The time left on a renewed lock is only its lease until the next
// renewal, which says nothing of when it frees, so the message says how long it has been held and
// that it is renewed: "KEY is held by HOLDER since 3m12s ago, renewed every 10s". A lock that is
// not renewed (--no-renew, a client of the classic algorithm) says when it expires; one kept by
// --min-hold that its command ended, and when it is let go. Where a semaphore's free slot is kept
// for a waiter queued before the run: "KEY is held by 1 holder of a --limit 2 semaphore, and its
// free slot is kept for a waiter queued before this run".
std::string describe_busy(const std::string& key, const Busy& busy, const std::string& holder);
// How a holder holds the lock, after its name: " since 3m12s ago, renewed every 10s", " since 5s
// ago, until it expires in 25s (not renewed)", ", whose command ended 5s ago; --min-hold lets the
// lock go in 55s". `remaining`: the time left on the lock, by the server's clock.
std::string describe_tenure(std::optional<Millis> held_for, std::optional<Millis> renew_every,
                            std::optional<Millis> ended_ago, Millis remaining);
// "the lock key was deleted", "another redlockrun took it over (web1 pid 4242)"...
std::string describe(const Lost& lost);
// "KEY holds a list, not a timestamp lock; nothing was changed" for what refuses it; without the
// end for a read (--status, --list), which changes nothing in any case.
enum class Refused { yes, no };
std::string describe_foreign(const std::string& key, const Foreign& foreign,
                             Refused refused = Refused::yes);
// Why a free lock was not granted: the fence counter named `fence_key` is used up.
std::string describe_exhausted(const std::string& key, const std::string& fence_key,
                               const FencesExhausted& exhausted);
// Why a free lock was not granted: the fence counter named `fence_key` holds no number.
std::string describe_unreadable_fence(const std::string& key, const std::string& fence_key,
                                      const FenceUnreadable& unreadable);

} // namespace redlockrun::lock
