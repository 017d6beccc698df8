#include "redis/error_reply.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace redlockrun::redis;

namespace {

Reply error_reply(const char* text) {
    Reply reply;
    reply.kind = Reply::Kind::error;
    reply.text = text;
    return reply;
}

} // namespace

TEST_CASE("error reply: a server that needs a password, none given, says so and how to give one") {
    Endpoint endpoint;
    endpoint.port = 7000;
    const std::string needs =
        "Redis at 127.0.0.1:7000 needs a password, and none was given: give one with "
        "--password-file, $REDISCLI_AUTH, the URL (redis://:PASSWORD@host, or "
        "redis://USER:PASSWORD@host for an ACL user) or a config file's password-file";
    CHECK(explain_error_reply(error_reply("NOAUTH Authentication required."), endpoint) == needs);
    // Redis 7's answer to a pipelined request without AUTH.
    CHECK(explain_error_reply(error_reply("ERR Protocol error: unauthenticated multibulk length"),
                              endpoint) == needs);
    CHECK(explain_error_reply(error_reply("ERR Protocol error: unauthenticated bulk length"),
                              endpoint) == needs);
    // Other protocol errors are the server's own.
    CHECK(
        explain_error_reply(error_reply("ERR Protocol error: invalid bulk length"), endpoint) ==
        "Redis at 127.0.0.1:7000 answered with an error: ERR Protocol error: invalid bulk length");

    Endpoint sentinel = endpoint;
    sentinel.is_sentinel = true;
    CHECK(explain_error_reply(error_reply("NOAUTH Authentication required."), sentinel) ==
          "the sentinel 127.0.0.1:7000 needs a password, and none was given: give one with "
          "--sentinel-password-file, $REDLOCKRUN_SENTINEL_PASSWORD or a config file's "
          "sentinel-password-file (and the user with --sentinel-user for an ACL user)");

    // A password was given (and never shown): the server's words, with the advice.
    endpoint.password = "Hunter2";
    const auto given =
        explain_error_reply(error_reply("NOAUTH Authentication required."), endpoint);
    CHECK(given.starts_with("Redis at 127.0.0.1:7000 answered with an error: NOAUTH"));
    CHECK(given.find("Hunter2") == std::string::npos);
}
