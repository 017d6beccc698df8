#include "lock/keys.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

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
    CHECK(plain->broken == "{nightly}:redlockrun:broken");
    CHECK(plain->durations == "{nightly}:redlockrun:durations");
    CHECK(plain->waiters == "{nightly}:redlockrun:waiters");
    CHECK(hash_tag(plain->owner) == "nightly");
    CHECK(plain->all() == std::vector<std::string>{plain->lock, plain->owner, plain->fence,
                                                   plain->wake, plain->queue, plain->broken,
                                                   plain->durations, plain->waiters});
}

TEST_CASE("keys: a tagged key's companions carry the tag and the whole key") {
    auto tagged = lock_keys("jobs:{deploy}:prod");
    REQUIRE(tagged);
    CHECK(tagged->owner == "{deploy}:jobs:{deploy}:prod:redlockrun:owner");
    CHECK(tagged->fence == "{deploy}:jobs:{deploy}:prod:redlockrun:fence");
    CHECK(tagged->wake == "{deploy}:jobs:{deploy}:prod:redlockrun:wake");
    CHECK(tagged->queue == "{deploy}:jobs:{deploy}:prod:redlockrun:queue");
    CHECK(tagged->broken == "{deploy}:jobs:{deploy}:prod:redlockrun:broken");
    for (const auto& companion :
         {tagged->owner, tagged->fence, tagged->wake, tagged->queue, tagged->broken}) {
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
        for (const auto& companion : {names->owner, names->fence, names->wake, names->broken}) {
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

TEST_CASE("keys: a key without a hash tag whose companions would be a tagged key's is refused") {
    // a}:{a has no hash tag (no '}' after its '{'); {a}:{a}, its C, is also {a}'s.
    // No structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    for (const auto& pair : std::vector<std::pair<std::string, std::string>>{
             {"a}:{a", "{a}"}, {"job}:x{job", "x{job}"}, {"x{}:{x{", "{x{}"}, {"a}::{a", ":{a}"}}) {
        const std::string& key = pair.first;
        const std::string& other = pair.second;
        CAPTURE(key);
        const auto names = lock_keys(key);
        REQUIRE_FALSE(names);
        CHECK(names.error() == "the key " + key + " has no hash tag, and its other keys ({" + key +
                                   "}:redlockrun:*) would be those of the key " + other +
                                   "; put a hash tag in it, or leave out its braces");
        REQUIRE(lock_keys(other));
        CHECK(lock_keys(other)->owner == "{" + key + "}:redlockrun:owner");
        CHECK(lock_key_of(lock_keys(other)->owner) == std::optional<std::string>(other));
    }
    // Braces that cannot read so: no other key's C.
    for (const char* key : {"a}b", "a}:b", "a}:{b", "a}:{}a}", "{}:{a", "a}{a", "a:}{a", "}:{a"}) {
        CAPTURE(key);
        CHECK(lock_keys(key));
    }
}

namespace {

// The naming without any key refused: C for every key (lock/keys.hpp).
std::string companion_prefix_of(const std::string& key) {
    const auto tag = hash_tag(key);
    return tag.empty() ? "{" + key + "}" : "{" + std::string(tag) + "}:" + key;
}

// Every string of up to `max_length` of these bytes.
std::vector<std::string> every_string(std::string_view bytes, size_t max_length) {
    std::vector<std::string> strings{""};
    for (size_t at = 0; at < strings.size(); ++at) {
        if (strings[at].size() < max_length) {
            for (const char byte : bytes) {
                strings.push_back(strings[at] + byte);
            }
        }
    }
    return strings;
}

} // namespace

TEST_CASE("keys: no two keys share a companion, and only keys that would are refused") {
    // Every key of up to 7 bytes from the bytes that make hash tags and the prefixes: collisions
    // such as a}:{a and {a} need 5, x{}:{x{ and {x{} 7.
    const std::vector<std::string> keys = every_string("{}:a", 7);
    std::map<std::string, std::string> key_of_prefix;    // of every accepted key
    std::map<std::string, std::string> unrefused_naming; // C -> a key, as if none were refused
    for (const std::string& key : keys) {
        if (!key.empty()) {
            unrefused_naming.emplace(companion_prefix_of(key), key);
        }
    }
    size_t refused = 0;
    for (const std::string& key : keys) {
        if (key.empty()) {
            continue;
        }
        CAPTURE(key);
        const auto names = lock_keys(key);
        const std::string prefix = companion_prefix_of(key);
        if (!names) {
            ++refused;
            // Refused only if another key, which is accepted, has the same C.
            const std::string& other = unrefused_naming.at(prefix);
            CHECK(other != key);
            CHECK(hash_tag(key).empty());
            CHECK_FALSE(hash_tag(other).empty());
            CHECK(lock_keys(other));
            continue;
        }
        // The naming itself is unchanged for every accepted key.
        CHECK(names->owner == prefix + ":redlockrun:owner");
        const auto emplaced = key_of_prefix.emplace(prefix, key);
        CAPTURE(emplaced.first->second); // not a structured binding: clang 14 cannot capture one
        CHECK(emplaced.second);
        // Each companion gives back its key.
        for (const std::string& companion : {names->owner, names->fence, names->wake, names->queue,
                                             prefix + ":redlockrun:wake:1f"}) {
            CAPTURE(companion);
            CHECK(lock_key_of(companion) == std::optional<std::string>(key));
            // In the key's Cluster slot, unless no name can be: a '}' and no hash tag.
            if (!hash_tag(key).empty()) {
                CHECK(hash_tag(companion) == hash_tag(key));
            } else if (key.find('}') == std::string::npos) {
                CHECK(hash_tag(companion) == key);
            }
        }
    }
    CHECK(refused > 0);
    // A name that no accepted key gives is no key's; one that lock_key_of reads is that key's.
    for (const std::string& prefix : every_string("{}:a", 7)) {
        CAPTURE(prefix);
        const auto key = lock_key_of(prefix + ":redlockrun:fence");
        const auto named = key_of_prefix.find(prefix);
        if (named == key_of_prefix.end()) {
            CHECK_FALSE(key.has_value());
        } else {
            CHECK(key == std::optional<std::string>(named->second));
        }
    }
}
