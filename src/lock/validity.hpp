// How long a grant or a renewal can be counted on, on this machine's monotonic clock (DESIGN §2,
// §3). The server counts a lock's validity from the moment it ran the script; all this machine
// knows of that moment is that it came after the request was sent. So validity is counted from a
// send time, never from a reply's arrival: a reply can sit unread for any time (a paused process, a
// stalled VM, swapping), and counting from its arrival could start a command after the lock
// expired.
#pragma once

#include "base/clock.hpp"

namespace redlockrun::lock {

// How much earlier than the server's expiry the local deadline falls: covers clock-rate differences
// between this machine and the server, and the time the command takes to stop.
Millis drift_margin(Millis ttl);

// The local deadline for a validity the server confirmed in answer to a request sent at `sent`.
// Validity beyond the TTL (rounding up to whole seconds) is not counted on; validity below it (a
// retried acquire that found the grant of an earlier attempt) is.
SteadyTime validity_deadline(SteadyTime sent, Millis validity, Millis ttl);

// When such a grant or renewal is next due for renewal: a third of its validity after it was sent.
SteadyTime renewal_due(SteadyTime sent, Millis validity, Millis ttl);

// Until when a grant leaves at least as much validity as a fresh grant has left at its first
// renewal (two thirds of the TTL). A command is not started on a grant after that without renewing
// it first: a third of the TTL after a fresh grant was requested, at once for a retried acquire
// that found an earlier attempt's grant with less than two thirds of it left.
SteadyTime fresh_until(SteadyTime sent, Millis validity, Millis ttl);

// What a waiter does at `now` with a grant, or with the renewal of one, before its command starts.
enum class BeforeStart { start, renew_first, give_back };

// A grant (`renewed` false) is started on while it is fresh, and renewed first otherwise: when its
// first renewal is due, and also once its validity has run out on this machine's clock, since the
// server may have run the request late (it stalled) and granted the whole TTL, which only a
// renewal can tell; given back, the lock would go to the waiters queued behind this one. A
// renewal is started on until its deadline; one whose answer came after that is renewed again if
// the wait allows more (`may_wait_more`), and given back otherwise.
BeforeStart before_start(SteadyTime now, SteadyTime sent, Millis validity, Millis ttl, bool renewed,
                         bool may_wait_more);

} // namespace redlockrun::lock
