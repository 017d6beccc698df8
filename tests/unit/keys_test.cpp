#include "lock/keys.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::lock;

TEST_CASE("keys: hash tags follow the Redis Cluster rule") {
    CHECK(hash_tag("job") == "");
    CHECK(hash_tag("{user1}.job") == "user1");
    CHECK(hash_tag("a{b}c{d}") == "b");
    CHECK(hash_tag("a{}b{c}") == "");
    CHECK(hash_tag("a{b") == "");
    CHECK(hash_tag("a}b{c") == "");
    CHECK(hash_tag("{a{b}c") == "a{b");
}

TEST_CASE("keys: companions share the lock key's slot") {
    auto plain = lock_keys("nightly");
    CHECK(plain.lock == "nightly");
    CHECK(plain.owner == "{nightly}:redlockrun:owner");
    CHECK(plain.fence == "{nightly}:redlockrun:fence");
    CHECK(plain.wake == "{nightly}:redlockrun:wake");
    CHECK(hash_tag(plain.owner) == "nightly");

    auto tagged = lock_keys("jobs:{deploy}:prod");
    CHECK(tagged.owner == "{deploy}:redlockrun:owner");
    CHECK(hash_tag(tagged.wake) == hash_tag(tagged.lock));
    CHECK(tagged.all() ==
          std::vector<std::string>{tagged.lock, tagged.owner, tagged.fence, tagged.wake});
}
