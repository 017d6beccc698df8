#include "lock/keys.hpp"

#include <doctest/doctest.h>

#include <optional>
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

TEST_CASE("keys: a companion's name gives back its lock's key") {
    for (const std::string key :
         {"nightly", "jobs:{deploy}:prod", "backup:{tenant1}", "{tenant1}", "tenant1", "{foo}x",
          "x{foo}", "a{b", "a}b", "{a{b}c", "job:redlockrun", "redlockrun:wake:{x}",
          "redlockrun:job", "k\n\xff", "*", ":"}) {
        CAPTURE(key);
        auto names = lock_keys(key);
        REQUIRE(names);
        for (const auto& companion : {names->owner, names->fence, names->wake}) {
            CAPTURE(companion);
            CHECK(lock_key_of(companion) == std::optional<std::string>(key));
        }
        const std::string prefix = names->owner.substr(0, names->owner.size() - 5);
        CHECK(lock_key_of(prefix + "queue") == std::optional<std::string>(key));
        CHECK(lock_key_of(prefix + "wake:5f3a9c") == std::optional<std::string>(key));
    }
}

TEST_CASE("keys: names that no lock gives are no lock's") {
    for (const char* name :
         {"redlockrun", "job", "x:redlockrun:owner", "{job}:redlockrun:other",
          "{job}:redlockrun:", "{job}:redlockrun:wake:", "{}:redlockrun:owner",
          "{job}x:redlockrun:owner", "{a}:b:redlockrun:owner", "{job}:redlockrun:ownerx",
          "{a:redlockrun:b}:redlockrun:owner", "{job}:redlockrun:fence:x", ":redlockrun:owner"}) {
        CAPTURE(name);
        CHECK_FALSE(lock_key_of(name).has_value());
    }
}

TEST_CASE("keys: where two keys name the same companions, the one with a hash tag wins") {
    // a}:{a has no hash tag (no '}' after its '{'), and names its companions {a}:{a}..., as {a}
    // does; so does {a}:{a}'s tagged reading.
    CHECK(lock_keys("a}:{a")->owner == lock_keys("{a}")->owner);
    CHECK(lock_key_of("{a}:{a}:redlockrun:owner") == std::optional<std::string>("{a}"));
}
