#include "redis/endpoint.hpp"
#include "redis/script.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::redis;

namespace {

Reply error_reply(std::string text) {
    Reply reply;
    reply.kind = Reply::Kind::error;
    reply.text = std::move(text);
    return reply;
}

} // namespace

// A restarted server that is still reading its data back answers LOADING to every script: a waiter
// keeps waiting through that as through a refused connection (lock/waiter.cpp), so it must not be
// an error like any other.
TEST_CASE("script: LOADING is told apart from other error replies, by its first word only") {
    auto endpoint = parse_url("redis://127.0.0.1:6379");
    REQUIRE(endpoint);
    auto loading =
        script_result(error_reply("LOADING Redis is loading the dataset in memory"), *endpoint);
    REQUIRE_FALSE(loading);
    CHECK(loading.error().kind == CallFailure::Kind::loading);
    CHECK(loading.error().message.find("still loading its data") != std::string::npos);
    for (const char* text :
         {"ERR LOADING is not the first word", "WRONGTYPE Operation against a key",
          "READONLY You can't write against a read only replica."}) {
        auto other = script_result(error_reply(text), *endpoint);
        REQUIRE_FALSE(other);
        CHECK(other.error().kind == CallFailure::Kind::error_reply);
    }
    Reply fine;
    fine.kind = Reply::Kind::integer;
    fine.integer = 1;
    CHECK(script_result(fine, *endpoint));
}
