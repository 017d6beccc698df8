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

TEST_CASE("validity: before the start, a grant is started on, renewed first, or given back") {
    const SteadyTime sent{Millis{1'000'000}};
    const Millis ttl{30000};
    const SteadyTime due = fresh_until(sent, ttl, ttl);
    const SteadyTime spent = validity_deadline(sent, ttl, ttl);
    for (bool may_wait_more : {true, false}) {
        CAPTURE(may_wait_more);
        // A fresh grant is started on.
        CHECK(before_start(sent, sent, ttl, ttl, false, may_wait_more) == BeforeStart::start);
        CHECK(before_start(due - Millis{1}, sent, ttl, ttl, false, may_wait_more) ==
              BeforeStart::start);
        // Its first renewal due: renewed first.
        CHECK(before_start(due, sent, ttl, ttl, false, may_wait_more) == BeforeStart::renew_first);
        // Its validity spent on this machine's clock: renewed too, whatever the wait allows. The
        // server may have granted it late (it stalled), for the whole TTL; given back, it would go
        // to the waiters queued behind.
        CHECK(before_start(spent, sent, ttl, ttl, false, may_wait_more) ==
              BeforeStart::renew_first);
        CHECK(before_start(spent + Millis{60000}, sent, ttl, ttl, false, may_wait_more) ==
              BeforeStart::renew_first);
        // A renewal is started on until its deadline, even with its own next renewal due.
        CHECK(before_start(due, sent, ttl, ttl, true, may_wait_more) == BeforeStart::start);
        CHECK(before_start(spent - Millis{1}, sent, ttl, ttl, true, may_wait_more) ==
              BeforeStart::start);
    }
    // A renewal whose answer came after its deadline: renewed again while the wait allows, then
    // given back.
    CHECK(before_start(spent, sent, ttl, ttl, true, true) == BeforeStart::renew_first);
    CHECK(before_start(spent, sent, ttl, ttl, true, false) == BeforeStart::give_back);
}
