#include "lock/validity.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;
using namespace redlockrun::lock;

TEST_CASE("validity: the drift margin grows with the TTL") {
    CHECK(drift_margin(Millis{100}) == Millis{52});
    CHECK(drift_margin(Millis{1000}) == Millis{70});
    CHECK(drift_margin(Millis{30000}) == Millis{650});
    for (long long ttl : {100LL, 1000LL, 30000LL, 86'400'000LL}) {
        CAPTURE(ttl);
        CHECK(drift_margin(Millis{ttl}) < Millis{ttl}); // some validity is always left
    }
}

TEST_CASE("validity: the deadline counts from the request, never past what the server granted") {
    const SteadyTime sent{Millis{1'000'000}};
    const Millis ttl{30000};
    // A fresh grant: the full TTL.
    CHECK(validity_deadline(sent, ttl, ttl) == sent + ttl - drift_margin(ttl));
    // A retried acquire that found an earlier attempt's grant: only what is left of it.
    CHECK(validity_deadline(sent, Millis{12000}, ttl) == sent + Millis{12000} - drift_margin(ttl));
    // Rounded up to whole seconds on the server: the extra is not counted on.
    CHECK(validity_deadline(sent, Millis{30900}, ttl) == sent + ttl - drift_margin(ttl));
}

TEST_CASE("validity: a renewal is due a third of the way through what was granted") {
    const SteadyTime sent{Millis{1'000'000}};
    const Millis ttl{30000};
    CHECK(renewal_due(sent, ttl, ttl) == sent + Millis{10000});
    CHECK(renewal_due(sent, Millis{12000}, ttl) == sent + Millis{4000});
    CHECK(renewal_due(sent, Millis{30900}, ttl) == sent + Millis{10000});
    CHECK(renewal_due(sent, ttl, ttl) < validity_deadline(sent, ttl, ttl));
}

TEST_CASE("validity: a grant is fresh until less is left than at a fresh grant's first renewal") {
    const SteadyTime sent{Millis{1'000'000}};
    const Millis ttl{30000};
    // A fresh grant: a third of the TTL after it was requested, when its renewal is due.
    CHECK(fresh_until(sent, ttl, ttl) == sent + Millis{10000});
    CHECK(fresh_until(sent, ttl, ttl) == renewal_due(sent, ttl, ttl));
    CHECK(fresh_until(sent, Millis{30900}, ttl) == sent + Millis{10000});
    // An earlier attempt's grant with 25 s left: 5 s of slack; with 12 s left, none.
    CHECK(fresh_until(sent, Millis{25000}, ttl) == sent + Millis{5000});
    CHECK(fresh_until(sent, Millis{12000}, ttl) < sent);
    // Even the shortest TTL leaves a fresh grant some time before it must be renewed.
    CHECK(fresh_until(sent, Millis{100}, Millis{100}) > sent);
    CHECK(fresh_until(sent, Millis{100}, Millis{100}) <
          validity_deadline(sent, Millis{100}, Millis{100}));
}
