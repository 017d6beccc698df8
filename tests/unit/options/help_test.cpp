#include "options/help.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;

TEST_CASE("help: options under their group's heading, groups in the order they first appear") {
    const std::string help = format_help({
        {"Lock", "k", {"key"}, "<key>", false, "lock name"},
        {"Connection", "u", {"url"}, "<url>", false, "where Redis is"},
        {"Lock", "n", {"no-wait", "nb"}, "", false, "fail at once"},
    });
    const auto lock = help.find("Lock:\n");
    const auto connection = help.find("Connection:\n");
    REQUIRE(lock != std::string::npos);
    REQUIRE(connection != std::string::npos);
    CHECK(lock < connection);
    CHECK(help.find("Lock:\n -k, --key <key>               lock name\n"
                    " -n, --no-wait, --nb           fail at once\n\n") == lock);
    CHECK(help.find("Connection:\n -u, --url <url>               where Redis is\n") == connection);
    CHECK(help.starts_with("Usage:\n redlockrun [options] -k <key>"));
    CHECK(help.ends_with("For more details see redlockrun(1).\n"));
}

TEST_CASE("help: an optional value in brackets, long names on a line of their own, and the "
          "description's later lines indented further") {
    const std::string help = format_help({
        {"Status", "", {"list"}, "<pattern>", true, "every lock\nmatching it"},
        {"Status", "", {"a-very-long-option-name"}, "<duration>", false, "short"},
    });
    CHECK(help.find("     --list [<pattern>]        every lock\n"
                    "                                 matching it\n") != std::string::npos);
    CHECK(help.find("     --a-very-long-option-name <duration>\n"
                    "                               short\n") != std::string::npos);
}
