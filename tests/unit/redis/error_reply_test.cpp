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

TEST_CASE("error reply: a command a script runs that the ACL user may not run names the ACL list") {
    Endpoint endpoint;
    endpoint.port = 7000;
    const std::string hint = "(the user lacks an ACL permission that redlockrun's scripts need: "
                             "the man page's ACL list names every command they run)";
    // Redis 6.0 to 7.0.
    CHECK(
        explain_error_reply(error_reply("ERR The user executing the script can't run this command "
                                        "or subcommand"),
                            endpoint) ==
        "Redis at 127.0.0.1:7000 answered with an error: ERR The user executing the script can't "
        "run this command or subcommand " +
            hint);
    // Redis 7.2 and Valkey, with the script's name that Redis 7 gives every script error, which is
    // left out (the first " script: " is the server's sentence).
    CHECK(explain_error_reply(
              error_reply("ERR ACL failure in script: User older has no permissions to run the "
                          "'pttl' command script: 0123456789abcdef0123456789abcdef01234567, on "
                          "@user_script:99."),
              endpoint) ==
          "Redis at 127.0.0.1:7000 answered with an error: ERR ACL failure in script: User older "
          "has no permissions to run the 'pttl' command " +
              hint);
}
