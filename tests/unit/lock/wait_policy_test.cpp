#include "lock/waiter.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;
using namespace redlockrun::lock;

TEST_CASE("wait policy: a busy lock is waited for unless -n or -w 0 says not to") {
    WaitPolicy policy;
    CHECK(policy.may_wait()); // by default, forever

    policy.limit = Millis{1};
    CHECK(policy.may_wait()); // -w 1ms

    policy.limit = Millis{0};
    CHECK_FALSE(policy.may_wait()); // -w 0: the same as -n

    policy.limit.reset();
    policy.wait = false;
    CHECK_FALSE(policy.may_wait()); // -n
    policy.limit = Millis{5000};
    CHECK_FALSE(policy.may_wait()); // -n wins over -w
}
