#include "options/habits.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;

namespace {

const std::vector<std::string> known{"--timeout", "--wait", "--release", "--status", "--nonblock",
                                     "--list",    "--json", "--hold",    "--check",  "--ttl",
                                     "--key",     "--url",  "--limit",   "--shared", "--note"};

} // namespace

TEST_CASE("habits: a typo of a long option gets the nearest real one") {
    CHECK(nearest_option("--timout", known) == "--timeout");
    CHECK(nearest_option("--relase", known) == "--release");
    CHECK(nearest_option("--stauts", known) == "--status");
    CHECK(nearest_option("--nonblocking", known) == "--nonblock");
    CHECK(nearest_option("--lsit", known) == "--list");
    CHECK(nearest_option("--jsno", known) == "--json");
    CHECK(nearest_option("--relaese", known) == "--release");
    // Two edits only where the name is long enough to stay recognisable.
    CHECK(nearest_option("--timeuot", known) == "--timeout");
    CHECK_FALSE(nearest_option("--kye2", known));
    // Nothing close, or not a long option: no guess.
    CHECK_FALSE(nearest_option("--bogus", known));
    CHECK_FALSE(nearest_option("--frobnicate", known));
    CHECK_FALSE(nearest_option("-x", known));
    CHECK_FALSE(nearest_option("--", known));
}

TEST_CASE("habits: the unknown-option message") {
    CHECK(unknown_option_message("--timout", known) ==
          "unknown option --timout: did you mean --timeout?");
    CHECK(unknown_option_message("--bogus", known) == "unknown option --bogus");
    CHECK(unknown_option_message("-p", known).find("-u redis://HOST:PORT") != std::string::npos);
    const std::string password = unknown_option_message("-a", known);
    CHECK(password.find("--password-file") != std::string::npos);
    CHECK(password.find("$REDISCLI_AUTH") != std::string::npos);
}

TEST_CASE("habits: --help and --version among other words") {
    CHECK(not_alone_message(true, {"-h", "10.0.0.5", "-p", "6380", "-k", "x", "--", "true"}) ==
          "-h is --help here, and it runs nothing: to name a Redis server, write -u "
          "redis://10.0.0.5:6380");
    CHECK(not_alone_message(true, {"-h", "db1", "-k", "x"}).ends_with("-u redis://db1:6379"));
    // A host word that may hold a password is not repeated.
    const std::string login = not_alone_message(true, {"-h", "redis://:pw@db1", "-k", "x"});
    CHECK(login.ends_with("-u redis://HOST:6379"));
    CHECK(login.find("pw") == std::string::npos);
    // A port that is not a number is not repeated; an -h with no host is plain --help.
    CHECK(not_alone_message(true, {"-h", "db1", "-p", "x"}).ends_with("-u redis://db1:6379"));
    CHECK(not_alone_message(true, {"-k", "x", "--help"}) ==
          "--help takes nothing else, and runs nothing: write redlockrun --help alone");
    CHECK(not_alone_message(false, {"-V", "-k", "x"}) ==
          "--version takes nothing else, and runs nothing: write redlockrun --version alone");
}

TEST_CASE("habits: -n followed by a database number") {
    const auto message = database_after_no_wait("-n", "2");
    REQUIRE(message);
    CHECK(message->find("-u redis://HOST:PORT/2") != std::string::npos);
    CHECK_FALSE(database_after_no_wait("-n", "make"));
    CHECK_FALSE(database_after_no_wait("-n", "12345")); // a command named so, not a database
    CHECK_FALSE(database_after_no_wait("--nonblock", "2"));
    CHECK_FALSE(database_after_no_wait("-k", "2"));
}

TEST_CASE("habits: a duration written with a space in a config file") {
    CHECK(spaced_duration_message({"15", "m"}) == "'15 m' is not a duration: write 15m");
    CHECK(spaced_duration_message({"1m", "30s"}) == "'1m 30s' is not a duration: write 1m30s");
    // Two values that make no duration together: the "one value" message stays.
    CHECK_FALSE(spaced_duration_message({"1s", "2s"}));
    CHECK_FALSE(spaced_duration_message({"soon", "please"}));
}
