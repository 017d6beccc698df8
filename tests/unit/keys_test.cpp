#include "lock/keys.hpp"

#include <doctest/doctest.h>

#include <set>

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

TEST_CASE("keys: a key without a hash tag names its companions in braces") {
    auto plain = lock_keys("nightly");
    REQUIRE(plain);
    CHECK(plain->lock == "nightly");
    CHECK(plain->owner == "{nightly}:redlockrun:owner");
    CHECK(plain->fence == "{nightly}:redlockrun:fence");
    CHECK(plain->wake == "{nightly}:redlockrun:wake");
    CHECK(plain->queue == "{nightly}:redlockrun:queue");
    CHECK(hash_tag(plain->owner) == "nightly");
    CHECK(plain->all() == std::vector<std::string>{plain->lock, plain->owner, plain->fence,
                                                   plain->wake, plain->queue});
}

TEST_CASE("keys: a tagged key's companions carry the tag and the whole key") {
    auto tagged = lock_keys("jobs:{deploy}:prod");
    REQUIRE(tagged);
    CHECK(tagged->owner == "{deploy}:jobs:{deploy}:prod:redlockrun:owner");
    CHECK(tagged->fence == "{deploy}:jobs:{deploy}:prod:redlockrun:fence");
    CHECK(tagged->wake == "{deploy}:jobs:{deploy}:prod:redlockrun:wake");
    CHECK(tagged->queue == "{deploy}:jobs:{deploy}:prod:redlockrun:queue");
    for (const auto& companion : {tagged->owner, tagged->fence, tagged->wake, tagged->queue}) {
        CHECK(hash_tag(companion) == hash_tag(tagged->lock)); // one Cluster slot
    }
}

TEST_CASE("keys: locks that share a hash tag never share a companion") {
    std::set<std::string> owners;
    const char* keys[] = {"backup:{tenant1}",
                          "report:{tenant1}",
                          "{tenant1}",
                          "tenant1",
                          "foo",
                          "{foo}",
                          "{foo}x",
                          "x{foo}"};
    for (const char* key : keys) {
        auto names = lock_keys(key);
        REQUIRE(names);
        CHECK(owners.insert(names->owner).second);
    }
}

TEST_CASE("keys: a key containing :redlockrun: is refused") {
    for (const char* key : {"{job}:redlockrun:owner", "a:redlockrun:b", ":redlockrun:"}) {
        CAPTURE(key);
        auto names = lock_keys(key);
        REQUIRE_FALSE(names);
        CHECK(names.error().find("contains \":redlockrun:\"") != std::string::npos);
    }
    CHECK(lock_keys("redlockrun"));
    CHECK(lock_keys("job:redlockrun"));
    CHECK(lock_keys("redlockrun:job"));
}
